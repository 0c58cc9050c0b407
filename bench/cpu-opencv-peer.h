/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* OpenCV as the CPU engine's peer: GaussianBlur and sepFilter2D for
 * separable kernels, filter2D for dense ones, on the same host frames and
 * with the same border. Built where OpenCV's development files are found
 * (cpu-opencv-peer.cpp); elsewhere cpu-opencv-peer-none.c says it is not. */
#ifndef BENCH_CPU_OPENCV_PEER_H
#define BENCH_CPU_OPENCV_PEER_H

#include <glib.h>
#include "gcv-tools.h"

G_BEGIN_DECLS

typedef enum {
  CPU_PEER_GAUSSIAN_BLUR,       /* cv::GaussianBlur (size, sigma) */
  CPU_PEER_SEP_FILTER_2D,       /* cv::sepFilter2D (the filter's row, column) */
  CPU_PEER_FILTER_2D,           /* cv::filter2D (the filter's taps) */
  CPU_PEER_N_OPS
} CpuPeerOp;

#define CPU_PEER_ERROR (g_quark_from_static_string ("cpu-peer-error"))

/* Whether this build has the OpenCV peer. */
gboolean cpu_peer_built (void);
/* "OpenCV 4.6.0, pthreads, 2 threads" or "OpenCV: not built". */
gchar *cpu_peer_describe (void);
/* Threads OpenCV's parallel loops use. */
void cpu_peer_set_threads (guint n);

/* One call of `op` from src to dst (rows packed or strided; 4-byte pixels
 * are CV_8UC4, all four bytes filtered), with OpenCV's border named as
 * `border`; gaussian_size and sigma are for GaussianBlur. FALSE with
 * `error` set where the peer cannot run it. */
gboolean cpu_peer_run (CpuPeerOp op, GcvFormat format, guint width,
    guint height, const void *src, gsize src_stride, void *dst,
    gsize dst_stride, const GcvFilter * filter, guint gaussian_size,
    gdouble sigma, GError ** error);

G_END_DECLS

#endif /* BENCH_CPU_OPENCV_PEER_H */
