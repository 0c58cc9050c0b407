/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics on the CPU backend. The backend hands over each
 * output row of a strip as it is about to be stored (the values after
 * scale, bias and conversion, before rounding to 8 bits); its samples are
 * taken in runs of up to RUN, in 24 lanes (a whole number of pixels of 1, 3
 * or 4 channels), eight at a time: sums and sums of
 * squares in float within a run, in double across runs, smallest and
 * largest per lane. Where a run's extreme beats the band's (or ties it at
 * a place earlier in row order), the run is scanned for where it is first
 * met. Each band has accumulators of its own, written by the worker that
 * runs it, and the bands are merged in band order: positions are exact
 * whatever the number of threads, sums may differ in the last bits. */
#include "gcv-cpu-stats.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "gcv-cpu-simd.h"

/* Samples summed in float before the sum goes to double (a run is a
 * whole number of pixels: RUN / channels of them). */
#define RUN 1024

#define PERIOD GCV_CPU_STATS_LANES
#define VECTORS (PERIOD / LANES)

/* Each lane's sum, sum of squares, smallest and largest sample (NaN is
 * skipped: it compares false) and count above the threshold: lane i is
 * element i % LANES of vector i / LANES. */
typedef struct {
  vf8 sum[VECTORS], squares[VECTORS], min[VECTORS], max[VECTORS];
  vi8 above[VECTORS];
} Lanes;

/* The lanes of n samples of v, sample i in lane i % PERIOD: a vector of
 * sums each, which also keeps the adds' latency hidden. */
GCV_SIMD_CLONES static void
lanes_add (Lanes * restrict l, const gfloat * restrict v, gsize n,
    gfloat threshold)
{
  const vi8 magnitude = (vi8) { 0 } + 0x7fffffff;
  const vf8 z = (vf8) { 0 }, t = z + threshold;
  vf8 s0 = z, s1 = z, s2 = z, q0 = z, q1 = z, q2 = z;
  vf8 mn0 = z + INFINITY, mn1 = mn0, mn2 = mn0;
  vf8 mx0 = z - INFINITY, mx1 = mx0, mx2 = mx0;
  vi8 above0 = (vi8) { 0 }, above1 = above0, above2 = above0;
  gsize x = 0;

#define ADD(k, a) do {                                                  \
    const vf8 a_ = (a);                                                 \
    const vi8 lt_ = a_ < mn##k, gt_ = a_ > mx##k;                       \
    s##k += a_;                                                         \
    q##k += a_ * a_;                                                    \
    mn##k = (vf8) (((vi8) a_ & lt_) | ((vi8) mn##k & ~lt_));            \
    mx##k = (vf8) (((vi8) a_ & gt_) | ((vi8) mx##k & ~gt_));            \
    /* a true compare is -1 */                                          \
    above##k -= (vf8) ((vi8) a_ & magnitude) > t;                       \
  } while (0)
  for (; x + PERIOD <= n; x += PERIOD) {
    ADD (0, LOAD (v + x));
    ADD (1, LOAD (v + x + LANES));
    ADD (2, LOAD (v + x + 2 * LANES));
  }
#undef ADD
  l->sum[0] = s0;
  l->sum[1] = s1;
  l->sum[2] = s2;
  l->squares[0] = q0;
  l->squares[1] = q1;
  l->squares[2] = q2;
  l->min[0] = mn0;
  l->min[1] = mn1;
  l->min[2] = mn2;
  l->max[0] = mx0;
  l->max[1] = mx1;
  l->max[2] = mx2;
  l->above[0] = above0;
  l->above[1] = above1;
  l->above[2] = above2;
  for (guint i = 0; x < n; x++, i++) {
    const gfloat a = v[x];
    const guint k = i / LANES, j = i % LANES;
    l->sum[k][j] += a;
    l->squares[k][j] += a * a;
    l->min[k][j] = a < l->min[k][j] ? a : l->min[k][j];
    l->max[k][j] = a > l->max[k][j] ? a : l->max[k][j];
    l->above[k][j] += fabsf (a) > threshold;
  }
}

/* Where channel c of the n pixels at v first holds `m` (its smallest or
 * largest, `first` the first pixel's position): TRUE where the band takes
 * it, smaller (larger) than `best`, or equal and earlier in row order. */
static gboolean
take_extreme (const gfloat * v, guint n, guint channels, guint c, gfloat m,
    guint64 first, gboolean is_min, gfloat * best, guint64 * best_at)
{
  const gboolean beats = is_min ? m < *best : m > *best;

  /* no sample of the run can come before the one held */
  if (!beats && !(m == *best && first < *best_at))
    return FALSE;
  for (guint i = 0; i < n; i++) {
    const gfloat s = v[(gsize) i * channels + c];
    if (s == m) {
      if (!beats && first + i >= *best_at)
        return FALSE;
      *best = s;
      *best_at = first + i;
      return TRUE;
    }
  }
  return FALSE;                 /* m is the lanes' starting infinity: every
                                 * sample was NaN */
}

/* The channel's lanes all hold its extreme. */
static void
spread (gfloat * lanes, guint c, guint channels)
{
  for (guint i = c + channels; i < PERIOD; i += channels)
    lanes[i] = lanes[c];
}

/* A run of n pixels (n * channels <= RUN) whose first is at `first`. */
static void
add_run (const GcvCpuStats * st, GcvCpuStatsAcc * acc, guint64 first,
    const gfloat * v, guint n)
{
  const guint ch = st->channels;
  gboolean reach = FALSE;
  Lanes l;

  lanes_add (&l, v, (gsize) n * ch, st->threshold);
  for (guint i = 0; i < PERIOD; i++) {
    const guint k = i / LANES, j = i % LANES;
    acc->sum[i] += l.sum[k][j];
    acc->sum_squares[i] += l.squares[k][j];
    acc->above[i] += (guint32) l.above[k][j];
    /* ties too, the run may hold an earlier one (lanes not measured
     * never reach: begin() set them to the other infinity) */
    reach |= (l.min[k][j] <= acc->min[i]) | (l.max[k][j] >= acc->max[i]);
  }
  if (!reach)
    return;
  for (guint c = 0; c < st->n_channels; c++) {
    gfloat mn = INFINITY, mx = -INFINITY;

    /* lane i holds channel i % channels */
    for (guint i = c; i < PERIOD; i += ch) {
      const gfloat lo = l.min[i / LANES][i % LANES],
          hi = l.max[i / LANES][i % LANES];
      mn = lo < mn ? lo : mn;
      mx = hi > mx ? hi : mx;
    }
    if (take_extreme (v, n, ch, c, mn, first, TRUE, &acc->min[c],
            &acc->min_at[c]))
      spread (acc->min, c, ch);
    if (take_extreme (v, n, ch, c, mx, first, FALSE, &acc->max[c],
            &acc->max_at[c]))
      spread (acc->max, c, ch);
  }
}

void
gcv_cpu_stats_floats (const GcvCpuStats * st, GcvCpuStatsAcc * acc, guint y,
    guint x0, const gfloat * v, guint n)
{
  const guint per_run = RUN / st->channels;
  const guint64 first = (guint64) y * st->width + x0;

  for (guint p = 0; p < n; p += per_run)
    add_run (st, acc, first + p, v + (gsize) p * st->channels,
        MIN (per_run, n - p));
}

void
gcv_cpu_stats_begin (GcvCpuStats * st, guint n_bands, guint n_channels,
    guint channels, guint width, guint height, guint64 count,
    gdouble threshold)
{
  g_return_if_fail (n_channels <= GCV_MAX_CHANNELS && n_channels <= channels
      && PERIOD % channels == 0);
  if (n_bands > st->n_allocated) {
    g_free (st->acc);
    st->acc = g_new (GcvCpuStatsAcc, n_bands);
    st->n_allocated = n_bands;
  }
  for (guint b = 0; b < n_bands; b++) {
    GcvCpuStatsAcc *a = &st->acc[b];
    memset (a, 0, sizeof (*a));
    for (guint i = 0; i < PERIOD; i++) {
      const gboolean measured = i % channels < n_channels;
      a->min[i] = measured ? INFINITY : -INFINITY;
      a->max[i] = measured ? -INFINITY : INFINITY;
    }
    for (guint c = 0; c < GCV_MAX_CHANNELS; c++)
      a->min_at[c] = a->max_at[c] = GCV_CPU_STATS_NONE;
  }
  st->n_bands = n_bands;
  st->n_channels = n_channels;
  st->channels = channels;
  st->width = width;
  st->height = height;
  st->count = count;
  /* for a float v, v > t (in double) is v > the largest float <= t */
  if (threshold >= FLT_MAX) {
    st->threshold = FLT_MAX;
  } else {
    st->threshold = (gfloat) threshold;
    if ((gdouble) st->threshold > threshold)
      st->threshold = nextafterf (st->threshold, -INFINITY);
  }
}

/* An extreme of one band into the frame's: smaller (larger), or equal and
 * earlier in row order. */
static void
merge_extreme (gfloat v, guint64 at, gboolean is_min, gfloat * best,
    guint64 * best_at)
{
  if (at == GCV_CPU_STATS_NONE)
    return;
  if (*best_at == GCV_CPU_STATS_NONE || (is_min ? v < *best : v > *best)
      || (v == *best && at < *best_at)) {
    *best = v;
    *best_at = at;
  }
}

void
gcv_cpu_stats_end (const GcvCpuStats * st, GcvFrameStats * out)
{
  out->n_channels = st->n_channels;
  for (guint c = 0; c < st->n_channels; c++) {
    GcvChannelStats *o = &out->channel[c];
    gfloat mn = INFINITY, mx = -INFINITY;
    guint64 min_at = GCV_CPU_STATS_NONE, max_at = GCV_CPU_STATS_NONE;

    memset (o, 0, sizeof (*o));
    for (guint b = 0; b < st->n_bands; b++) {
      const GcvCpuStatsAcc *a = gcv_cpu_stats_band (st, b);
      for (guint i = c; i < PERIOD; i += st->channels) {
        o->sum += a->sum[i];
        o->sum_squares += a->sum_squares[i];
        o->above += a->above[i];
      }
      merge_extreme (a->min[c], a->min_at[c], TRUE, &mn, &min_at);
      merge_extreme (a->max[c], a->max_at[c], FALSE, &mx, &max_at);
    }
    o->count = st->count;
    /* every sample NaN: no extremes, at (0, 0) */
    o->min = min_at == GCV_CPU_STATS_NONE ? NAN : mn;
    o->max = max_at == GCV_CPU_STATS_NONE ? NAN : mx;
    if (min_at != GCV_CPU_STATS_NONE) {
      o->min_x = min_at % st->width;
      o->min_y = min_at / st->width;
    }
    if (max_at != GCV_CPU_STATS_NONE) {
      o->max_x = max_at % st->width;
      o->max_y = max_at / st->width;
    }
  }
}

void
gcv_cpu_stats_clear (GcvCpuStats * st)
{
  g_clear_pointer (&st->acc, g_free);
  st->n_allocated = 0;
}
