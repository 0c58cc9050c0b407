/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The engine's tools API: what the benchmark (bench/), the tuner
 * (gpuconvolve-tune), the fuzz targets and the engine's own tests use
 * beyond the public gcv.h and gcv-interop.h. Not installed and not
 * exported from the shared library: the tools link the engine's internal
 * static library (cuda/meson.build, engine_internal_dep).
 *
 *  - the record of what a plan runs (GcvChoice, gcv-choice.h) and its text;
 *  - forcing a variant ("tiled ty=2", gcv-variant.h) on a plan;
 *  - the dispatcher: its key, the heuristic, the choice from plain data
 *    (gcv-dispatch.h), so a listing of choices needs no GPU;
 *  - tuning tables: load, save, parse, look up, find (gcv-tuning.h);
 *  - a filter's taps as the backends run them, through accessors;
 *  - format facts (gcv-format.h);
 *  - the CPU backend's worker pool (cpu/gcv-cpu-pool.h), which the CPU
 *    benchmark times its copy of a frame on. */
#ifndef GCV_TOOLS_H
#define GCV_TOOLS_H

#include "gcv.h"
#include "gcv-interop.h"
#include "gcv-format.h"
#include "dispatch/gcv-dispatch.h"
#include "dispatch/gcv-tuning.h"
#include "cpu/gcv-cpu-pool.h"

G_BEGIN_DECLS

/* --- plans ---------------------------------------------------------------- */

/* What runs: the record the dispatcher settled for the plan (for NV12 and
 * I420, the Y plane's). Owned by the plan, valid until its filter or
 * variant changes. Its text is gcv_plan_describe(). */
const GcvChoice *gcv_plan_get_choice (GcvPlan * plan);
/* The family the plan runs (gcv_plan_get_choice()->variant.family). */
GcvFamily gcv_plan_get_family (GcvPlan * plan);
/* Forces a family with its parameters, written as the tuning tables write
 * them: "tiled ty=2", "register p=8 block=128", "separable fused ty=4",
 * "separable two-pass", "direct", "fft". NULL gives the choice back to the
 * dispatcher. The CPU backend ignores it. */
gboolean gcv_plan_set_variant (GcvPlan * plan, const gchar * variant,
    GError ** error);

/* --- filters -------------------------------------------------------------- */

/* A filter as the backends run it: correlation taps with the scale folded
 * in. The arrays belong to the filter. */
typedef struct {
  guint kw, kh;
  guint ax, ay;                 /* the anchor */
  const gfloat *taps;           /* kh * kw, row-major */
  const gfloat *taps_y;         /* a gradient magnitude's gy taps, or NULL */
  gboolean rank1;               /* taps == column (x) row within tolerance */
  const gfloat *row, *column;   /* the factors when rank1, else NULL */
  gboolean use_separable;       /* rank1, and separable=never not set */
  gfloat bias;
  GcvBorder border;
  gfloat border_value;
} GcvFilterTaps;

void gcv_filter_get_taps (const GcvFilter * filter, GcvFilterTaps * taps);
/* NV12 and I420: which planes are filtered. */
void gcv_filter_set_planes (GcvFilter * filter, GcvPlanes planes);
GcvFilter *gcv_filter_copy (const GcvFilter * filter);
gboolean gcv_filter_equal (const GcvFilter * a, const GcvFilter * b);

G_END_DECLS

#endif /* GCV_TOOLS_H */
