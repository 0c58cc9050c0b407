/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the benchmark programs: fatal error checks for CUDA calls, and
 * small helpers for option lists and CSV fields. Plain C, usable from .cu. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <glib.h>
#include <stdio.h>
#include <cuda_runtime_api.h>

#include "gcv-tools.h"     /* the engine as its tools see it */

#ifdef __cplusplus
extern "C" {
#endif

/* Exit status of a benchmark that cannot run here (meson's "skipped"). */
#define BENCH_EXIT_SKIP 77

/* Prints the failed call with the CUDA error string and exits non-zero. */
#define BENCH_CUDA(call) \
  bench_check_cuda ((call), #call, __FILE__, __LINE__)

void bench_check_cuda (cudaError_t err, const char *call, const char *file,
    int line);

/* Prints a message and exits non-zero. */
void bench_die (const char *format, ...) G_GNUC_PRINTF (1, 2) G_GNUC_NORETURN;

/* Exits with BENCH_EXIT_SKIP and a "SKIP: no usable CUDA device: ..." line
 * when the engine's CUDA backend cannot run here. */
void bench_require_cuda (int device_id);

/* "640x480" -> width, height. */
gboolean bench_parse_size (const char *text, guint * width, guint * height);

/* Writes `text` as one CSV field (quoted when it needs to be). */
void bench_csv_field (FILE * f, const char *text);

/* A frame's bytes per row and channel counts. */
guint bench_channels (GcvFormat format);          /* filtered channels: 1 or 3 */
gsize bench_row_bytes (GcvFormat format, guint width);

/* Random host frame, rows packed: floats in [0, 1) for GRAY32F, bytes for
 * 8-bit formats. */
guint8 *bench_random_frame (GcvFormat format, guint width, guint height,
    guint32 seed);

/* A description of the CUDA device in use ("NVIDIA H100 ..., sm_90, 132 SMs"). */
gchar *bench_describe_device (int device);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_COMMON_H */
