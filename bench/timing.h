/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Timing with CUDA events on a stream: warm-up runs, then the median, minimum
 * and maximum of the timed runs. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <glib.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double median, min, max;      /* milliseconds */
  guint runs;
} BenchStats;

/* Work to time: `enqueue` puts one run on the stream; `finish`, when given,
 * runs on the host after the stop event is recorded (e.g. gcv_plan_wait). */
typedef void (*BenchFn) (gpointer user);

/* Each run: start event, enqueue, stop event, finish, then the host waits for
 * the stop event, so runs do not overlap. */
void bench_time (cudaStream_t stream, BenchFn enqueue, BenchFn finish,
    gpointer user, guint warmup, guint runs, BenchStats * stats);

/* The same, each run queued behind bench_hold() of `hold_us`
 * microseconds (longer than the host takes to queue a run): the GPU's
 * own time for the run, where bench_time() counts the gaps in which the
 * GPU waits for the host to queue more too. */
void bench_time_held (cudaStream_t stream, BenchFn enqueue, BenchFn finish,
    gpointer user, guint warmup, guint runs, guint hold_us,
    BenchStats * stats);
/* hold.cu: keeps `stream` busy for `usec` microseconds. */
cudaError_t bench_hold (cudaStream_t stream, unsigned int usec);

/* Median, minimum and maximum of n samples (sorts them). */
void bench_stats_from (double *ms, guint n, BenchStats * stats);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_TIMING_H */
