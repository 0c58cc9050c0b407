/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The dispatcher's candidates timed at one point (input format, frame size,
 * kernel shape and form), shared by gpuconvolve-tune and
 * gpuconvolve-bench --check-dispatch.
 *
 * One plan per format and frame size; its filter is changed per point with
 * gcv_plan_set_filter() and its variant per candidate with
 * gcv_plan_set_variant(). Every run submits the slot's device input in place
 * (gcv_plan_get_device_input()) to a pitched device output, between CUDA
 * events on the plan's stream, so no transfer over PCIe is timed. What ran
 * is read back from the plan's choice: the engine may run something else
 * than asked, and a candidate that runs what another one already ran is
 * not timed twice. */
#ifndef BENCH_SWEEP_H
#define BENCH_SWEEP_H

#include "configs.h"
#include "timing.h"
#include "gcv-tools.h"

G_BEGIN_DECLS

/* Every variant string the sweep tries, in the order tried: the families
 * likely fastest where they apply first (separable, then tiled), so that
 * the early drop cuts the slow ones short; fft after the 2D kernels, so
 * that where it is far slower its plans are not made three times.
 * NULL-terminated. Entries gcv_variant_parse() rejects are left out at run
 * time (sweep_candidates_usable()). */
extern const char *const sweep_candidates[];

/* The candidates of sweep_candidates this engine accepts; the others are
 * appended to `rejected` (may be NULL), one per line with the reason. */
const char *const *sweep_candidates_usable (GString * rejected);

/* How each candidate is timed: `warmup` runs first, the first untimed and
 * the last one timed (the probe); a probe more than `drop_factor` times the
 * best median so far drops the candidate (0: never); then the median of
 * `runs` timed runs. */
typedef struct {
  guint warmup;                 /* at least 1 */
  guint runs;
  double drop_factor;
  gboolean prune;               /* apply sweep_worth_timing() */
  gboolean drop_family;         /* a drop skips the rest of its family */
} SweepTiming;

/* 2 warm-ups, median of 7, drop at 3 times the best (with the rest of the
 * family), pruned. */
#define SWEEP_TIMING_DEFAULT { 2, 7, 3.0, TRUE, TRUE }

/* The pruning rules, with k = sqrt(kw * kh): separable variants only for
 * separable keys; no fft where k <= 9; no direct where k >= 9; no register
 * where kw > 17. */
gboolean sweep_worth_timing (const GcvVariant * v, const GcvDispatchKey * key);
/* Whether the dispatcher may pick this family for the key (rank-1 kernels
 * take separable variants, others not). */
gboolean sweep_family_allowed (const GcvVariant * v,
    const GcvDispatchKey * key);

typedef struct {
  gchar *variant;               /* what ran (the plan's choice) */
  gchar *source;                /* where the choice came from */
  gchar *description;           /* gcv_plan_describe() */
  double ms;                    /* the median; the probe when dropped */
  gboolean dropped;
} SweepResult;

typedef struct {
  GcvDispatchKey key;
  GArray *results;              /* SweepResult, in the order timed */
  gint best;                    /* fastest not dropped; -1: nothing ran */
  guint n_timed;                /* candidates that ran, dropped included */
  guint n_dropped;
  guint n_duplicates;           /* ran what an earlier one ran */
  guint n_pruned;
  GString *errors;              /* candidates that failed, with why */
} SweepPoint;

void sweep_point_init (SweepPoint * pt);
void sweep_point_clear (SweepPoint * pt);
const SweepResult *sweep_point_best (const SweepPoint * pt);
/* The result whose variant is `variant`, or NULL. */
const SweepResult *sweep_point_find (const SweepPoint * pt,
    const char *variant);

/* A frame size and format on one engine: a random frame kept on the device,
 * an output buffer, and the plan (made by the first set_filter). */
typedef struct _SweepFrame SweepFrame;

SweepFrame *sweep_frame_new (GcvEngine * engine, GcvFormat format,
    guint width, guint height, guint32 seed);
void sweep_frame_free (SweepFrame * sf);
GcvPlan *sweep_frame_get_plan (SweepFrame * sf);
/* Takes `filter` (the plan keeps its variant setting); makes the plan, with
 * algorithm auto and one slot, on the first call. The key follows the
 * filter: its size and whether the separable path may be used. */
gboolean sweep_frame_set_filter (SweepFrame * sf, const GcvFilter * filter,
    GError ** error);
/* The key of the frame and its current filter. */
void sweep_frame_key (SweepFrame * sf, GcvDispatchKey * key);
/* gcv_plan_set_variant(); NULL hands the choice back to the dispatcher. */
gboolean sweep_frame_set_variant (SweepFrame * sf, const char *variant,
    GError ** error);
/* Times the plan as it is set, as SweepTiming says; `best_ms` (0: none) is
 * what the probe is compared with. FALSE when a run fails. */
gboolean sweep_frame_time (SweepFrame * sf, const SweepTiming * t,
    double best_ms, SweepResult * r, GError ** error);
/* Runs the plan as it is set for about `seconds`, so that the GPU's clocks
 * are up before anything is timed. */
void sweep_frame_warm_up (SweepFrame * sf, double seconds);

/* Every candidate at the frame's current filter, into `pt` (made with
 * sweep_point_init(); its key is set here). The plan is left with "direct"
 * forced, the cheapest variant to change the filter under. */
void sweep_measure (SweepFrame * sf, const char *const *candidates,
    const SweepTiming * t, SweepPoint * pt);

/* "GRAY32F 1920x1080 15x15 sep=0" */
gchar *sweep_key_to_string (const GcvDispatchKey * key);

/* "3,5,9-15,3x15" -> shapes; "A-B" is every odd size from A to B (square).
 * "none" or "" is no shape. */
gboolean sweep_parse_kernels (const char *text, GArray * shapes,
    GError ** error);
/* "GRAY32F,RGBA" -> GcvFormat array. */
gboolean sweep_parse_formats (const char *text, GArray * formats,
    GError ** error);
/* "1280x720,1920x1080" -> BenchFrame array (format unset). */
gboolean sweep_parse_sizes (const char *text, GArray * sizes,
    GError ** error);

/* The device name and "sm_XY" of a CUDA device. */
void sweep_device_name (gint device, gchar ** name, gchar ** arch);

G_END_DECLS

#endif /* BENCH_SWEEP_H */
