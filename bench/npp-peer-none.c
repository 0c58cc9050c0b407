/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The NPP peer where NPP was not found at build time. */
#include "npp-peer.h"

gboolean
bench_npp_built (void)
{
  return FALSE;
}

gchar *
bench_npp_describe_library (void)
{
  return g_strdup ("NPP: not built");
}

BenchNppPeer *
bench_npp_peer_new (GcvFormat format, guint width, guint height,
    const GcvFilter * filter, gboolean separable, gboolean reversed,
    cudaStream_t stream, GError ** error)
{
  g_set_error_literal (error, BENCH_NPP_ERROR, 0,
      "NPP: not built");
  return NULL;
}

void
bench_npp_peer_enqueue (BenchNppPeer * peer, const void *src,
    size_t src_pitch, void *dst, size_t dst_pitch)
{
}

const char *
bench_npp_peer_describe (BenchNppPeer * peer)
{
  return "NPP: not built";
}

gboolean
bench_npp_peer_filters_alpha (BenchNppPeer * peer)
{
  return FALSE;
}

void
bench_npp_peer_free (BenchNppPeer * peer)
{
}
