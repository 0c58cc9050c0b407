/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --statistics: what per-frame statistics add to a frame's time, each
 * configuration timed with and without them in the same run. */
#ifndef BENCH_STATS_BENCH_H
#define BENCH_STATS_BENCH_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gint device;
  guint32 seed;
  const char *formats;          /* NULL: RGBA,NV12 */
  const char *sizes;            /* NULL: 3840x2160 */
  const char *kernels;          /* NULL: 3,9 */
  const char *families;         /* NULL: auto */
  gboolean forms[2];            /* by BenchForm */
  gboolean planes_all;          /* NV12 and I420: U and V filtered too */
  guint warmup, runs;
} BenchStatsRun;

/* Prints one row per configuration; returns the exit status: 0, or 1
 * where a frame's statistics did not come back or changed its output. */
int bench_stats (const BenchStatsRun * run);

G_END_DECLS

#endif /* BENCH_STATS_BENCH_H */
