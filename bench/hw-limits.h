/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the hardware allows, measured in the same run as the convolutions:
 * the device-to-device copy of one frame (the floor for small filters), the
 * FP32 FMA peak, and PCIe transfers of one frame with pinned host memory. */
#ifndef BENCH_HW_LIMITS_H
#define BENCH_HW_LIMITS_H

#include "timing.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  BenchStats memcpy2d;          /* cudaMemcpy2DAsync device to device */
  BenchStats kernel;            /* a copy kernel */
  BenchStats best;              /* the faster of the two (by median) */
  const char *best_name;        /* "memcpy2d" or "kernel" */
  double gbps;                  /* read + written bytes / best median */
} BenchCopyLimit;

typedef struct {
  BenchStats stats;
  double gflops;                /* 2 flops per FMA */
} BenchFmaLimit;

typedef struct {
  BenchStats h2d, d2h;
  BenchStats duplex;            /* one H2D and one D2H at once, two streams */
  double h2d_gbps, d2h_gbps, duplex_gbps;       /* duplex: both directions */
} BenchPcieLimit;

/* A frame of `row_bytes` x `height` copied between two pitched buffers. */
void bench_limit_copy (gsize row_bytes, guint height, guint warmup,
    guint runs, BenchCopyLimit * out);
void bench_limit_fma (guint warmup, guint runs, BenchFmaLimit * out);
/* `bytes` between pinned host memory and the device. */
void bench_limit_pcie (gsize bytes, guint warmup, guint runs,
    BenchPcieLimit * out);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_HW_LIMITS_H */
