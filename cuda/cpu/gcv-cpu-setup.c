/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a filter and a geometry come to on the CPU backend (Setup): the
 * path (separable, direct, fixed point), the taps as the row loops take
 * them, strips and bands, the border's column map, and the size and
 * layout of each worker's scratch.
 *
 * Separable kernels from 8-bit to 8-bit whose taps are all >= 0 (blurs)
 * run in 16-bit fixed point, as OpenCV's GaussianBlur does, where the
 * error bound worked out for the taps here keeps the result within the
 * bound of docs/filters.md. A 16-bit lane holds twice the samples of a
 * float one, and 8-bit input and output convert to it in a step. Which
 * path runs is settled by the dispatcher (gcv_dispatch_choose_cpu()) into
 * the plan's record, from what the fixed-point bound allows here: on
 * GRAY32F input, which may hold NaN and infinities, the separable path
 * runs only where its factors keep the kernel's zeros and signs. There the
 * direct path keeps a second TapSet with every tap of the footprint. */
#include "gcv-cpu-private.h"
#include "gcv-border.h"

#include <math.h>
#include <stdarg.h>

#include "gcv-cpu-simd.h"

/* Bytes of kept rows a strip may have; below the 32 KiB L1 data cache of
 * current x86 cores, leaving room for the output row and the input that
 * streams past. */
#define STRIP_BUDGET (24 * 1024)
/* Samples in a strip's row: at least enough to amortise a strip's set-up,
 * at most what keeps the budget with small kernels. */
#define STRIP_MIN_SAMPLES 256
#define STRIP_MAX_SAMPLES 1024
/* The direct path's strips are narrower where a pair of output rows would
 * take more multiply-adds than this (kernels above about 700x700): a row
 * then ends within milliseconds, and gcv_engine_interrupt() is seen
 * between rows. */
#define PAIR_MAX_FMAS ((gsize) 1 << 28)
/* Output rows per task: a band reads kh - 1 rows more than it writes, so
 * bands grow with the kernel; their number is a multiple of the workers'
 * so that they share the frame evenly. */
#define BAND_MIN_ROWS 64
#define BAND_HALO_FACTOR 16
/* The fixed-point path is taken where its worst-case error before the
 * final rounding stays below this (in 8-bit units); with the rounding's
 * 0.5 that keeps the result within 1 of the exact value, the float
 * rounding of the taps included. */
#define FIXED_MAX_ERROR 0.45
/* g_try_malloc() of `bytes` (at least one), with an error that says what
 * they were for when they cannot be had. */
static gpointer G_GNUC_PRINTF (3, 4)
try_alloc (gsize bytes, GError ** error, const gchar * format, ...)
{
  gpointer p = g_try_malloc (MAX (bytes, 1));

  if (!p) {
    va_list args;
    gchar *what;
    va_start (args, format);
    what = g_strdup_vprintf (format, args);
    va_end (args);
    g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "could not allocate %"
        G_GSIZE_FORMAT " bytes of memory for %s", bytes, what);
    g_free (what);
  }
  return p;
}

void
gcv_cpu_setup_free (Setup * s)
{
  if (!s)
    return;
  gcv_cpu_setup_free (s->exact);
  g_free (s->row);
  g_free (s->column);
  g_free (s->sparse.taps);
  g_free (s->sparse.weights0);
  g_free (s->full.taps);
  g_free (s->full.weights0);
  g_free (s->row_fixed);
  g_free (s->column_fixed);
  g_free (s->xmap);
  g_free (s);
}

static gsize
round_up (gsize v, gsize m)
{
  return (v + m - 1) / m * m;
}

/* 0.16 fixed-point taps for `v` (each >= 0) scaled by `k`, and the most
 * they are off in sum; FALSE where one does not fit. */
static gboolean
quantize (const gfloat * v, guint n, gdouble k, guint16 * q, gdouble * sum,
    gdouble * error)
{
  *sum = *error = 0.0;
  for (guint i = 0; i < n; i++) {
    gdouble t = v[i] * k * 65536.0, r = floor (t + 0.5);
    if (r > 65535.0)
      return FALSE;
    q[i] = (guint16) r;
    *sum += r;
    *error += fabs (r - t) / 65536.0;
  }
  return TRUE;
}

/* The fixed-point taps where the path's error bound holds (TRUE), were
 * the filter to run separable: the same 8-bit format in and out (of any
 * number of channels: the passes are channel-generic), a rank-1 kernel with no
 * negative tap and no bias, a constant border (if any) a whole 8-bit
 * value. The row taps are scaled to sum to 1 and the column taps take the
 * scale, so that every row-pass sum fits 16 bits.
 *
 * In 1/256 units, with H a row-pass sum, V a column-pass sum and the taps'
 * rounding dr, dc (sums of |quantized - exact|):
 *   |H - exact| <= ceil(kw/2) + 255 * 256 * dr   (dropped fractions,
 *     centred by starting from kw/2, and the taps' rounding)
 *   |V - exact| <= ceil(kh/2) + max(H) * dc + sum(column) * |H error|
 * and the path is taken where that is below FIXED_MAX_ERROR * 256. */
static gboolean
setup_fixed (Setup * s, const GcvFilter * f, const GcvGeometry * g)
{
  gdouble sum_row = 0.0, sum_column = 0.0, q_row, q_column, d_row, d_column;
  gdouble h_max, v_max, e_row, e_column;

  /* bytes, one a sample (GRAY8, RGB, BGR, the RGBA family, NV12's and
   * I420's planes): not floats nor 16-bit samples */
  if (!f->use_separable || g->in_format != g->out_format
      || gcv_format_pixel_size (g->in_format)
      != gcv_format_channels (g->in_format) || f->bias != 0.0f)
    return FALSE;
  if (f->border == GCV_BORDER_CONSTANT && !(f->border_value >= 0.0f
          && f->border_value <= 255.0f
          && f->border_value == floorf (f->border_value)))
    return FALSE;
  for (guint i = 0; i < f->kw; i++) {
    if (!(f->row[i] >= 0.0f))
      return FALSE;
    sum_row += f->row[i];
  }
  for (guint j = 0; j < f->kh; j++) {
    if (!(f->column[j] >= 0.0f))
      return FALSE;
    sum_column += f->column[j];
  }
  if (sum_row == 0.0 || sum_column == 0.0)
    return FALSE;

  s->row_fixed = g_new (guint16, f->kw);
  s->column_fixed = g_new (guint16, f->kh);
  if (!quantize (f->row, f->kw, 1.0 / sum_row, s->row_fixed, &q_row, &d_row)
      || !quantize (f->column, f->kh, sum_row, s->column_fixed, &q_column,
          &d_column))
    goto no;
  s->row_start = f->kw / 2;
  s->column_start = f->kh / 2 + FIXED_ROUND;
  h_max = floor (255.0 * 256.0 * q_row / 65536.0) + s->row_start;
  v_max = floor (h_max * q_column / 65536.0) + s->column_start;
  if (h_max > 65535.0 || v_max > 255.0 * 256.0 + 255.0)
    goto no;
  e_row = (f->kw - f->kw / 2) + 255.0 * 256.0 * d_row;
  e_column = (f->kh - f->kh / 2) + h_max * d_column
      + (sum_row * sum_column + d_column) * e_row;
  if (e_column > FIXED_MAX_ERROR * 256.0)
    goto no;
  /* border-value is only checked, and only used, for the constant border */
  s->border_fixed = f->border == GCV_BORDER_CONSTANT ?
      (guint16) (f->border_value * 256.0f) : 0;
  return TRUE;

no:
  g_clear_pointer (&s->row_fixed, g_free);
  g_clear_pointer (&s->column_fixed, g_free);
  return FALSE;
}

/* Strips as wide as the budget allows for the rows they keep, then evened
 * out over the frame's width. */
static void
choose_strips (Setup * s, guint w)
{
  /* samples per kept row; the direct path keeps input rows, kw - 1
   * columns wider than the strip */
  gsize samples = STRIP_BUDGET / ((s->separable ? s->kh : s->kh + 1)
      * s->sample);
  guint strip, n_strips, quantum = MAX (1, 8 * LANES / s->channels);

  if (!s->separable)
    samples = samples > (gsize) (s->kw - 1) * s->channels + STRIP_MIN_SAMPLES
        ? samples - (gsize) (s->kw - 1) * s->channels : STRIP_MIN_SAMPLES;
  samples = CLAMP (samples, STRIP_MIN_SAMPLES, STRIP_MAX_SAMPLES);
  if (!s->separable) {
    /* a magnitude's taps each take two multiply-adds */
    gsize pair = (s->sparse.weights0_y ? 4 : 2) * MAX (1,
        MAX (s->sparse.n_taps, s->full.n_taps));
    samples = MIN (samples, MAX (quantum * s->channels, PAIR_MAX_FMAS / pair));
  }
  strip = MAX (1, samples / s->channels / quantum * quantum);
  n_strips = (w + strip - 1) / strip;
  s->strip = MIN (strip, round_up ((w + n_strips - 1) / n_strips, quantum));
  s->strip = MIN (s->strip, w);
}

static void
choose_bands (Setup * s, guint h, guint workers)
{
  guint target = MAX (BAND_MIN_ROWS, BAND_HALO_FACTOR * (s->kh - 1));
  guint per_worker = MAX (1, (h + workers * target / 2) / (workers * target));
  guint tasks = MIN (h, workers * per_worker);

  s->band = (h + tasks - 1) / tasks;
}

/* K[row][i] of `taps` (NULL: none), 0 outside the kernel's rows. */
static gfloat
direct_weight (const GcvFilter * f, const gfloat * taps, guint row, guint i)
{
  return taps && row < f->kh ? taps[(gsize) row * f->kw + i] : 0.0f;
}

/* Whether tap i of row r of the kh + 1 rows weighs something for one of
 * the two output rows, in either kernel of a magnitude. */
static gboolean
direct_weighs (const GcvFilter * f, guint r, guint i)
{
  /* row 0 weighs nothing for row y + 1, row kh nothing for row y */
  return direct_weight (f, f->taps, r, i) != 0.0f
      || direct_weight (f, f->taps, r - 1, i) != 0.0f
      || direct_weight (f, f->taps_y, r, i) != 0.0f
      || direct_weight (f, f->taps_y, r - 1, i) != 0.0f;
}

/* The direct path's taps (TapSet) of `f`: every tap of each row's
 * footprint when `all`, else those that weigh something for one of the
 * two rows (zero taps, as in Laplacians, sharpen and the corners of round
 * kernels, then cost nothing). FALSE and an error where memory runs out. */
static gboolean
tap_set_init (TapSet * ts, const GcvFilter * f, guint channels,
    gfloat out_scale, gboolean all, GError ** error)
{
  const guint n_sets = f->taps_y ? 4 : 2;
  guint t = 0;

  for (guint r = 0; r <= f->kh; r++)
    for (guint i = 0; i < f->kw; i++) {
      if (!all && !direct_weighs (f, r, i))
        continue;
      ts->n_taps++;
      ts->n_first += r == 0;
      ts->n_last += r == f->kh;
    }
  ts->taps = try_alloc (ts->n_taps * sizeof (Tap), error, "the %u taps of "
      "a %ux%u kernel", ts->n_taps, f->kw, f->kh);
  ts->weights0 = ts->taps ? try_alloc (n_sets * ts->n_taps * sizeof
      (gfloat), error, "the %u taps of a %ux%u kernel", ts->n_taps, f->kw,
      f->kh) : NULL;
  if (!ts->weights0)
    return FALSE;
  ts->weights1 = ts->weights0 + ts->n_taps;
  if (f->taps_y) {
    ts->weights0_y = ts->weights1 + ts->n_taps;
    ts->weights1_y = ts->weights0_y + ts->n_taps;
  }
  for (guint r = 0; r <= f->kh; r++)
    for (guint i = 0; i < f->kw; i++) {
      if (!all && !direct_weighs (f, r, i))
        continue;
      ts->taps[t].row = r;
      ts->taps[t].offset = i * channels;
      ts->weights0[t] = direct_weight (f, f->taps, r, i) * out_scale;
      ts->weights1[t] = direct_weight (f, f->taps, r - 1, i) * out_scale;
      if (f->taps_y) {
        ts->weights0_y[t] = direct_weight (f, f->taps_y, r, i) * out_scale;
        ts->weights1_y[t] = direct_weight (f, f->taps_y, r - 1, i)
            * out_scale;
      }
      t++;
    }
  return TRUE;
}

/* Everything but the scratch for the plan's filter on its geometry on
 * `path` (the fixed-point taps, if any, already in `s`); FALSE and an
 * error where memory runs out. */
static gboolean
setup_path (Setup * s, const GcvPlan * plan, guint workers, GcvCpuPath path,
    gboolean check_finite, GError ** error)
{
  const GcvFilter *f = plan->filter;
  const GcvGeometry *g = &plan->geometry;
  gfloat out_scale = 1.0f;

  s->fixed = path == GCV_CPU_PATH_FIXED_POINT;
  s->separable = s->fixed || path == GCV_CPU_PATH_SEPARABLE;
  if (!s->fixed) {
    g_clear_pointer (&s->row_fixed, g_free);
    g_clear_pointer (&s->column_fixed, g_free);
  }
  s->kw = f->kw;
  s->kh = f->kh;
  s->ax = f->ax;
  s->ay = f->ay;
  s->channels = gcv_format_channels (g->in_format);
  s->sample = s->fixed ? sizeof (guint16) : sizeof (gfloat);
  s->keep_alpha = s->channels == 4 && !f->filter_alpha;
  s->border = f->border;
  s->border_value = f->border_value;
  /* conversions: the input format's largest value to the output's (1.0
   * for GRAY32F) */
  if (g->in_format != g->out_format)
    out_scale = (gfloat) (gcv_format_max_value (g->out_format)
        / gcv_format_max_value (g->in_format));
  s->bias = f->bias * out_scale;
  s->magnitude_sign = f->magnitude_sign;

  if (s->separable && !s->fixed) {
    s->row = g_memdup2 (f->row, f->kw * sizeof (gfloat));
    s->column = g_new (gfloat, f->kh);
    for (guint j = 0; j < f->kh; j++)
      s->column[j] = f->column[j] * out_scale;
  } else if (!s->separable) {
    if (!tap_set_init (&s->sparse, f, s->channels, out_scale, FALSE, error))
      return FALSE;
    /* frames that may hold NaN or Inf (the record's check_finite); without
     * zero taps every row goes through all of them anyway */
    s->check_finite = check_finite
        && s->sparse.n_taps < (gsize) f->kw * (f->kh + 1);
    if (s->check_finite && !tap_set_init (&s->full, f, s->channels,
            out_scale, TRUE, error))
      return FALSE;
  }

  choose_strips (s, g->width);
  choose_bands (s, g->height, workers);

  s->xmap = g_new (gint, g->width + f->kw - 1);
  for (guint pc = 0; pc < g->width + f->kw - 1; pc++)
    s->xmap[pc] = gcv_border_index ((gint) pc - (gint) f->ax,
        (gint) g->width, f->border);

  /* each piece of a worker's scratch starts on a cache line */
  s->line_bytes = round_up ((gsize) (s->strip + s->kw - 1) * s->channels
      * s->sample, 64);
  s->out_bytes = round_up ((gsize) s->strip * s->channels * sizeof (gfloat),
      64);
  s->ring = s->separable ? s->kh : s->kh + 1;
  s->kept_row_bytes = s->separable ? round_up ((gsize) s->strip * s->channels
      * s->sample, 64) : s->line_bytes;
  s->ptr_slots = round_up (MAX (MAX (s->kw, s->kh), MAX (s->sparse.n_taps,
              s->full.n_taps)), 8);
  s->scratch_bytes = s->line_bytes + s->ring * s->kept_row_bytes
      + 2 * s->out_bytes + (s->ptr_slots + 2 * round_up (s->ring, 8))
      * sizeof (gpointer) + s->ring + 64;
  return TRUE;
}

/* Everything but the scratch for the plan's filter on its geometry, and
 * the record of what runs (`choice`, settled by the dispatcher from what
 * this backend can run); NULL and an error where memory runs out. The
 * fixed-point path also gets the float separable path as `exact`, which
 * measures the frames that ask for statistics: its values before the
 * rounding are those docs/statistics.md describes, where the 8.8 sums are
 * up to FIXED_MAX_ERROR off. */
Setup *
gcv_cpu_setup_new (const GcvPlan * plan, guint workers, GcvChoice * choice,
    GError ** error)
{
  Setup *s = g_new0 (Setup, 1);
  GcvDispatchKey key;
  GcvCpuLimits limits = { .threads = workers };

  limits.fixed_point = setup_fixed (s, plan->filter, &plan->geometry);
  gcv_dispatch_key_init (&key, &plan->geometry, plan->filter);
  gcv_dispatch_choose_cpu (&key, plan->requested, &limits, choice);
  if (!setup_path (s, plan, workers, choice->cpu_path, choice->check_finite,
          error))
    goto fail;
  if (s->fixed) {
    s->exact = g_new0 (Setup, 1);
    if (!setup_path (s->exact, plan, workers, GCV_CPU_PATH_SEPARABLE, FALSE,
            error))
      goto fail;
    /* it runs the same tasks: choose_bands() does not depend on the path */
    s->scratch_bytes = MAX (s->scratch_bytes, s->exact->scratch_bytes);
  }
  return s;

fail:
  gcv_cpu_setup_free (s);
  return NULL;
}

void
gcv_cpu_scratch_free (Scratch * sc, guint n)
{
  for (guint i = 0; sc && i < n; i++)
    g_free (sc[i].mem);
  g_free (sc);
}

/* Scratch of `bytes` for each of n workers; NULL and an error saying how
 * much could not be had when memory runs out. */
Scratch *
gcv_cpu_scratch_new (const Setup * s, gsize bytes, guint n, GError ** error)
{
  Scratch *sc = g_new0 (Scratch, n);

  for (guint i = 0; i < n; i++) {
    sc[i].mem = try_alloc (bytes, error, "the CPU scratch of worker %u of "
        "%u (a %ux%u kernel on strips of %u pixels)", i + 1, n, s->kw, s->kh,
        s->strip);
    if (!sc[i].mem) {
      gcv_cpu_scratch_free (sc, n);
      return NULL;
    }
  }
  return sc;
}

/* Points the pieces of each worker's scratch at their places for `s`. */
void
gcv_cpu_scratch_layout (Scratch * sc, guint n, const Setup * s)
{
  for (guint i = 0; i < n; i++) {
    sc[i].line = (guint8 *) round_up ((gsize) sc[i].mem, 64);
    sc[i].kept = sc[i].line + s->line_bytes;
    sc[i].out[0] = sc[i].kept + s->ring * s->kept_row_bytes;
    sc[i].out[1] = sc[i].out[0] + s->out_bytes;
    sc[i].ptr = (gconstpointer *) (sc[i].out[1] + s->out_bytes);
    sc[i].rows = sc[i].ptr + s->ptr_slots;
    sc[i].window = sc[i].rows + round_up (s->ring, 8);
    sc[i].finite = (guint8 *) (sc[i].window + round_up (s->ring, 8));
  }
}
