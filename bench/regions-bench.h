/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --regions: privacy regions on a 4K NV12 device frame, inside against a
 * copy of the frame and outside against the whole frame filtered. */
#ifndef BENCH_REGIONS_BENCH_H
#define BENCH_REGIONS_BENCH_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gint device;
  guint32 seed;
  guint warmup, runs;
  const char *csv;              /* NULL or "": no CSV */
} BenchRegionsRun;

/* Prints the rows and the two ratios against their targets; returns the
 * exit status: 0, or 1 where an output failed its check (the ratios'
 * verdicts do not change it). */
int bench_regions (const BenchRegionsRun * run);

G_END_DECLS

#endif /* BENCH_REGIONS_BENCH_H */
