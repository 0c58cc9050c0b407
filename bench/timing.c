/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Event timing of work on one CUDA stream. */
#include "timing.h"
#include "common.h"

#include <stdlib.h>

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

void
bench_stats_from (double *ms, guint n, BenchStats * stats)
{
  stats->runs = n;
  if (n == 0) {
    stats->median = stats->min = stats->max = 0.0;
    return;
  }
  qsort (ms, n, sizeof (double), compare_double);
  stats->min = ms[0];
  stats->max = ms[n - 1];
  stats->median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

static void
time_runs (cudaStream_t stream, BenchFn enqueue, BenchFn finish,
    gpointer user, guint warmup, guint runs, guint hold_us,
    BenchStats * stats)
{
  cudaEvent_t start, stop;
  double *ms = g_new (double, MAX (runs, 1));

  BENCH_CUDA (cudaEventCreate (&start));
  BENCH_CUDA (cudaEventCreate (&stop));
  for (guint i = 0; i < warmup + runs; i++) {
    float t = 0.0f;
    if (hold_us)
      BENCH_CUDA (bench_hold (stream, hold_us));
    BENCH_CUDA (cudaEventRecord (start, stream));
    enqueue (user);
    BENCH_CUDA (cudaEventRecord (stop, stream));
    if (finish)
      finish (user);
    BENCH_CUDA (cudaEventSynchronize (stop));
    BENCH_CUDA (cudaEventElapsedTime (&t, start, stop));
    if (i >= warmup)
      ms[i - warmup] = t;
  }
  BENCH_CUDA (cudaEventDestroy (start));
  BENCH_CUDA (cudaEventDestroy (stop));
  bench_stats_from (ms, runs, stats);
  g_free (ms);
}

void
bench_time (cudaStream_t stream, BenchFn enqueue, BenchFn finish,
    gpointer user, guint warmup, guint runs, BenchStats * stats)
{
  time_runs (stream, enqueue, finish, user, warmup, runs, 0, stats);
}

void
bench_time_held (cudaStream_t stream, BenchFn enqueue, BenchFn finish,
    gpointer user, guint warmup, guint runs, guint hold_us,
    BenchStats * stats)
{
  time_runs (stream, enqueue, finish, user, warmup, runs, hold_us, stats);
}
