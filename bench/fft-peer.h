/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A cuFFT reference convolution: replicate-pad, R2C, multiply by the
 * filter's spectrum, C2R, crop. Plans and the filter's spectrum are made
 * once, outside the timed part. */
#ifndef BENCH_FFT_PEER_H
#define BENCH_FFT_PEER_H

#include <glib.h>
#include <cuda_runtime_api.h>
#include "gcv-tools.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _BenchFftPeer BenchFftPeer;

/* GRAY32F (one plane) or RGBA (three planes, alpha copied from the input). */
BenchFftPeer *bench_fft_peer_new (GcvFormat format, guint width,
    guint height, const GcvFilter * filter, cudaStream_t stream);
/* One frame: pitched device input to pitched device output, on the stream. */
void bench_fft_peer_enqueue (BenchFftPeer * peer, const void *src,
    size_t src_pitch, void *dst, size_t dst_pitch);
const char *bench_fft_peer_describe (BenchFftPeer * peer);
void bench_fft_peer_free (BenchFftPeer * peer);
/* "cuFFT 12.0.0" */
gchar *bench_fft_version (void);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_FFT_PEER_H */
