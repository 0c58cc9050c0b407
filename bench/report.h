/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Results: a table on stdout and the same rows in a CSV file. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <glib.h>
#include "gcv-tools.h"
#include "timing.h"

G_BEGIN_DECLS

typedef struct {
  const char *section;          /* "limit" or "kernel" */
  GcvFormat format;
  guint width, height;
  guint kw, kh;                 /* 0: not a convolution */
  const char *form;             /* "2d", "sep" or "" */
  int rank1;                    /* 1, 0, or -1: not a convolution */
  const char *impl;             /* engine, npp, npp-sep, cufft, or a limit */
  const char *requested;        /* the engine family asked for, or "" */
  const char *description;      /* what actually ran */
  BenchStats stats;             /* runs == 0: not measured */
  double gflops, pct_peak, gbps, x_copy;        /* NAN: not applicable */
  double max_diff, tolerance;   /* NAN: not checked */
  const char *check;            /* ok, FAIL, n/a, error */
  const char *note;
} BenchRow;

typedef struct _BenchReport BenchReport;

/* csv_path NULL or "": no CSV. */
BenchReport *bench_report_new (const char *csv_path, GError ** error);
/* A heading line and the column titles on stdout. */
void bench_report_section (BenchReport * r, const char *format, ...)
    G_GNUC_PRINTF (2, 3);
void bench_report_row (BenchReport * r, const BenchRow * row);
/* Rows whose check is FAIL or error. */
guint bench_report_failures (BenchReport * r);
void bench_report_free (BenchReport * r);

/* A row with every optional value unset. */
void bench_row_init (BenchRow * row, const char *section);

G_END_DECLS

#endif /* BENCH_REPORT_H */
