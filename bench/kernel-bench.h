/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel-level benchmark: every configuration of one frame through the
 * engine's families (device frames, used in place) and through the peers,
 * each output checked. */
#ifndef BENCH_KERNEL_BENCH_H
#define BENCH_KERNEL_BENCH_H

#include "configs.h"
#include "hw-limits.h"
#include "report.h"

G_BEGIN_DECLS

typedef struct {
  GcvEngine *engine;
  const BenchPlan *plan;
  BenchReport *report;
  guint warmup, runs;
  guint32 seed;
  double fma_gflops;            /* measured FMA peak */
} BenchKernelContext;

/* Runs every shape, form, family and peer of the plan on `frame`; `copy` is
 * that frame's measured copy floor. */
void bench_kernels_run_frame (const BenchKernelContext * ctx,
    const BenchFrame * frame, const BenchCopyLimit * copy);

G_END_DECLS

#endif /* BENCH_KERNEL_BENCH_H */
