/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Checking outputs: a double-precision reference at sampled pixels, frame
 * differences, and the tolerances of docs/filters.md. Border: replicate. */
#ifndef BENCH_COMPARE_H
#define BENCH_COMPARE_H

#include <glib.h>
#include "gcv-tools.h"

G_BEGIN_DECLS

/* Pixels to check against the reference: random ones inside the frame and
 * random ones near its edges (where the border mode matters), corners too. */
typedef struct {
  guint n;
  guint *x, *y;
} BenchSamples;

BenchSamples *bench_samples_new (guint width, guint height, guint margin,
    guint n_inner, guint n_edge, guint32 seed);
BenchSamples *bench_samples_all (guint width, guint height);
void bench_samples_free (BenchSamples * s);

/* The tolerance of one result against the double-precision reference
 * (docs/filters.md):
 * floats 1e-5 * sum|K| * max|in| + 1e-6, 8-bit 1. */
double bench_tolerance (GcvFormat format, const GcvFilter * filter,
    double max_abs_in);
/* FFT-based results round more: this many times that tolerance. */
#define BENCH_FFT_TOLERANCE_FACTOR 20.0

/* Largest |out - reference| over the samples (colour channels; alpha, when
 * `check_alpha`, must equal the input's: any other value counts as 1e30).
 * Frames are host memory with the given strides; border replicate. */
double bench_check_samples (GcvFormat format, const guint8 * in,
    gsize in_stride, const guint8 * out, gsize out_stride, guint width,
    guint height, const GcvFilter * filter, const BenchSamples * samples,
    gboolean check_alpha);

/* Largest |a - b| over the whole frame (colour channels; alpha too when
 * `compare_alpha`). NaN against anything counts as infinite. */
double bench_max_diff (GcvFormat format, const guint8 * a, gsize a_stride,
    const guint8 * b, gsize b_stride, guint width, guint height,
    gboolean compare_alpha);

/* Largest |in| of a host frame (rows packed). */
double bench_max_abs (GcvFormat format, const guint8 * frame, guint width,
    guint height);

G_END_DECLS

#endif /* BENCH_COMPARE_H */
