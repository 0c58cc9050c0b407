/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NPP as a peer: nppiFilterBorder_32f_C1R (2D, GRAY32F),
 * nppiFilterRowBorder_32f_C1R + nppiFilterColumnBorder_32f_C1R (separable,
 * GRAY32F) and nppiFilterBorder32f_8u_C4R (2D, RGBA; it filters the fourth
 * byte too). NPP has only the replicate border and applies its kernel as a
 * true convolution, so it is given the taps reversed: its output is then the
 * engine's correlation. Built only where NPP is found; see npp-peer-none.c. */
#ifndef BENCH_NPP_PEER_H
#define BENCH_NPP_PEER_H

#include <glib.h>
#include <cuda_runtime_api.h>
#include "gcv-tools.h"

G_BEGIN_DECLS

typedef struct _BenchNppPeer BenchNppPeer;

#define BENCH_NPP_ERROR (g_quark_from_static_string ("bench-npp-error"))

/* Whether this build has the NPP peer. */
gboolean bench_npp_built (void);
/* "NPP 13.0.1 (nppif)" or "NPP: not built". */
gchar *bench_npp_describe_library (void);

/* NULL with `error` set when NPP cannot run this filter (no NPP, a border
 * other than replicate, an anchor off the centre, a bias, a format it lacks,
 * or a first call that NPP refuses). `reversed`=FALSE hands NPP the taps as
 * they are, which only serves to diagnose a mismatch. */
BenchNppPeer *bench_npp_peer_new (GcvFormat format, guint width,
    guint height, const GcvFilter * filter, gboolean separable,
    gboolean reversed, cudaStream_t stream, GError ** error);
void bench_npp_peer_enqueue (BenchNppPeer * peer, const void *src,
    size_t src_pitch, void *dst, size_t dst_pitch);
const char *bench_npp_peer_describe (BenchNppPeer * peer);
/* Whether the output's fourth byte is filtered rather than copied. */
gboolean bench_npp_peer_filters_alpha (BenchNppPeer * peer);
void bench_npp_peer_free (BenchNppPeer * peer);

G_END_DECLS

#endif /* BENCH_NPP_PEER_H */
