/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One band of output rows of the CPU backend, a task on the engine's
 * worker pool: filtered one strip of columns at a time, the strip narrow
 * enough that the rows it keeps (the separable path's row-filtered rows,
 * or the direct path's input rows) stay in the L1 cache while every output
 * row reads them. Input rows are converted once per strip (8-bit samples
 * widened, the border filled in), or read in place where they are floats
 * already and need no border. 16-bit samples are widened to floats too. Pixels stay interleaved: a tap's neighbour
 * is `channels` samples away, so four-byte pixels are filtered as four
 * samples each and the fourth byte is put back from the input where it
 * passes through, which costs less than taking the channels apart.
 *
 * GRAY32F input may hold NaN and infinities, which reach an output only
 * from its own footprint, through every tap of it (docs/filters.md): rows
 * that hold one are filtered through the zero taps too. Per-frame
 * statistics take each output row as it is stored (gcv-cpu-stats.c); on
 * the fixed-point path, whose 8.8 sums are only as close as its 8-bit
 * output needs, a measured task is run again on the float path, and that
 * path's rows are what is measured. */
#include "gcv-cpu-private.h"
#include "gcv-cpu-magnitude.h"
#include "gcv-border.h"

#include <string.h>

#include "gcv-cpu-simd.h"

/* A strip's rows are short runs of memory a frame row apart, too short for
 * the hardware's stream prefetchers to get going on; the input and output
 * rows this far ahead are asked for explicitly. */
#define PREFETCH_ROWS 2

/* n pixels of source row `row` from column sx on, as samples of `s`'s
 * path. */
static void
load_pixels (const Job * job, const Setup * s, const guint8 * row, guint sx,
    guint n, gpointer out)
{
  const GcvFormat format = job->plan->geometry.in_format;
  const guint px = gcv_format_pixel_size (format);

  if (format == GCV_FORMAT_GRAY32F)
    memcpy (out, row + (gsize) sx * px, (gsize) n * px);
  else if (gcv_format_is_16bit (format))
    gcv_cpu_widen_u16 (out, row + (gsize) sx * px, (gsize) n * s->channels,
        gcv_cpu_u16_shift (format));
  else if (s->fixed)
    gcv_cpu_widen_fixed (out, row + (gsize) sx * px, (gsize) n * px);
  else
    gcv_cpu_widen (out, row + (gsize) sx * px, (gsize) n * px);
}

/* n samples of the constant border. */
static void
fill_border (const Setup * s, gpointer out, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (s->fixed)
      ((guint16 *) out)[i] = s->border_fixed;
    else
      ((gfloat *) out)[i] = s->border_value;
}

/* Float rows are read and written in place only where they are aligned as
 * floats: a GstVideoMeta may give any offset and stride. */
static inline gboolean
float_aligned (gconstpointer p)
{
  return (guintptr) p % sizeof (gfloat) == 0;
}

/* The samples of input row sy (-1: the constant border) under padded
 * columns pc0 .. pc0 + len - 1 (padded column pc is source column pc - ax),
 * built in `buf`. The separable path reads float rows that need no border
 * in place; the direct path reads kh rows at once, which in place would be
 * a frame stride apart, often a multiple of 4 KiB, where they would evict
 * each other from the L1 cache. */
static gconstpointer
input_line (const Job * job, const Setup * s, gint sy, guint pc0, guint len,
    guint8 * buf)
{
  const guint w = job->plan->geometry.width, ch = s->channels;
  const gsize pixel = ch * s->sample;
  const guint8 *row;
  guint lo, hi;

  if (sy < 0) {
    fill_border (s, buf, (gsize) len * ch);
    return buf;
  }
  row = (const guint8 *) job->src->data + (gsize) sy * job->src->stride;
  /* the padded columns that lie inside the frame */
  lo = MAX (pc0, s->ax);
  hi = MIN (pc0 + len, s->ax + w);
  if (s->separable && job->plan->geometry.in_format == GCV_FORMAT_GRAY32F
      && lo == pc0 && hi == pc0 + len && float_aligned (row))
    return (const gfloat *) row + (pc0 - s->ax);
  if (lo < hi)
    load_pixels (job, s, row, lo - s->ax, hi - lo, buf + (lo - pc0)
        * pixel);
  for (guint pc = pc0; pc < pc0 + len; pc++) {
    guint8 *p = buf + (gsize) (pc - pc0) * pixel;
    if (pc == lo && lo < hi) {
      pc = hi - 1;              /* skip the inside */
      continue;
    }
    if (s->xmap[pc] < 0)
      fill_border (s, p, ch);
    else
      load_pixels (job, s, row, (guint) s->xmap[pc], 1, p);
  }
  return buf;
}

/* Output values of row y, columns x0 .. x0 + n - 1, to the frame. Float
 * output was written in place by the filter. */
static void
store_row (const Job * job, const Setup * s, guint y, guint x0, guint n,
    gconstpointer v)
{
  const GcvFormat format = job->plan->geometry.out_format;
  const gsize ch = s->channels;
  const guint8 *alpha = NULL;
  guint8 *q;

  if (format == GCV_FORMAT_GRAY32F) {
    q = (guint8 *) job->dst->data + (gsize) y * job->dst->stride
        + (gsize) x0 * sizeof (gfloat);
    if ((gconstpointer) q != v)         /* an unaligned row (output_row()) */
      memcpy (q, v, (gsize) n * sizeof (gfloat));
    return;
  }
  q = (guint8 *) job->dst->data + (gsize) y * job->dst->stride
      + (gsize) x0 * gcv_format_pixel_size (format);
  if (gcv_format_is_16bit (format)) {
    gcv_cpu_narrow_u16 (q, v, n * ch, gcv_format_max_value (format),
        gcv_cpu_u16_shift (format));
    return;
  }
  if (s->keep_alpha)
    alpha = (const guint8 *) job->src->data + (gsize) y * job->src->stride
        + x0 * ch;
  if (s->fixed)
    gcv_cpu_narrow_fixed (q, v, alpha, n * ch);
  else
    gcv_cpu_narrow (q, v, alpha, n * ch);
}

/* Row y of a merged cut's filtered plane, columns x0 .. x0 + n - 1: the
 * values stored where `store`, then its holes given back the input's
 * samples; the statistics measure the values between the holes only
 * (never fixed point: its frames are measured on its `exact` path). */
static void
put_row_holes (const Job * job, const Setup * s, GcvCpuStatsAcc * acc,
    gboolean store, guint y, guint x0, guint n, gconstpointer v)
{
  const gsize px = gcv_format_pixel_size (job->plan->geometry.in_format);
  const gsize value = s->channels * s->sample;  /* v's bytes a pixel */
  guint n_holes, x = x0;
  const GcvRegionSpan *h = gcv_region_split_holes (job->holes, y, x0,
      x0 + n, &n_holes);

  for (guint i = 0; acc && i <= n_holes; i++) {
    const guint end = i < n_holes ? MAX (h[i].x0, x0) : x0 + n;
    if (end > x)
      gcv_cpu_stats_floats (job->stats, acc, y, x, (const gfloat *)
          ((const guint8 *) v + (gsize) (x - x0) * value), end - x);
    if (i < n_holes)
      x = MIN (h[i].x1, x0 + n);
  }
  if (!store)
    return;
  store_row (job, s, y, x0, n, v);
  for (guint i = 0; i < n_holes; i++) {
    const guint a = MAX (h[i].x0, x0), b = MIN (h[i].x1, x0 + n);
    memcpy ((guint8 *) job->dst->data + (gsize) y * job->dst->stride
        + a * px, (const guint8 *) job->src->data
        + (gsize) y * job->src->stride + a * px, (b - a) * px);
  }
}

/* The same where `store`, and to the band's statistics `acc` where the
 * frame is measured (apart, so that store_row() costs what it did
 * without). */
static inline void
put_row (const Job * job, const Setup * s, GcvCpuStatsAcc * acc,
    gboolean store, guint y, guint x0, guint n, gconstpointer v)
{
  if (G_UNLIKELY (job->holes)) {
    put_row_holes (job, s, acc, store, y, x0, n, v);
    return;
  }
  /* never fixed point: its frames are measured on its `exact` path */
  if (G_UNLIKELY (acc))
    gcv_cpu_stats_floats (job->stats, acc, y, x0, v, n);
  if (store)
    store_row (job, s, y, x0, n, v);
}

static void
prefetch_read (const guint8 * p, gsize bytes)
{
  for (gsize i = 0; i < bytes; i += 64)
    __builtin_prefetch (p + i, 0, 3);
}

static void
prefetch_write (guint8 * p, gsize bytes)
{
  for (gsize i = 0; i < bytes; i += 64)
    __builtin_prefetch (p + i, 1, 3);
}

/* What input row k of the band and output row y (when it is in the band)
 * will read and write of the strip at x0, n pixels wide. */
static void
prefetch_rows (const Job * job, const Setup * s, guint y0, guint k, gint y,
    guint y1, guint x0, guint n)
{
  const GcvGeometry *g = &job->plan->geometry;
  const guint in_px = gcv_format_pixel_size (g->in_format),
      out_px = gcv_format_pixel_size (g->out_format);
  const gint sy = gcv_border_index ((gint) (y0 + k) - (gint) s->ay,
      (gint) g->height, s->border);
  const guint lo = MAX (x0, s->ax) - s->ax,
      hi = MIN (x0 + n + s->kw - 1 - s->ax, g->width);

  if (sy >= 0 && lo < hi)
    prefetch_read ((const guint8 *) job->src->data
        + (gsize) sy * job->src->stride + (gsize) lo * in_px,
        (gsize) (hi - lo) * in_px);
  if (y >= (gint) y0 && y < (gint) y1)
    prefetch_write ((guint8 *) job->dst->data + (gsize) y * job->dst->stride
        + (gsize) x0 * out_px, (gsize) n * out_px);
}

/* Points the window at `count` kept rows from the one in slot `first` on. */
static void
fill_window (const Scratch * sc, guint first, guint count, guint ring)
{
  for (guint j = 0, o = first % ring; j < count; j++, o = o + 1 == ring ?
      0 : o + 1)
    sc->window[j] = sc->rows[o];
}

/* The direct path's taps for the `count` kept rows from slot `first` on:
 * every tap of the footprint where one of them holds a NaN or an infinity,
 * else those that weigh something. */
static const TapSet *
choose_taps (const Setup * s, const Scratch * sc, guint first, guint count)
{
  if (s->check_finite)
    for (guint j = 0, o = first % s->ring; j < count; j++, o = o + 1 ==
        s->ring ? 0 : o + 1)
      if (!sc->finite[o])
        return &s->full;
  return &s->sparse;
}

/* Points the first `n` taps of `ts` at the window's rows. */
static void
point_taps (const Scratch * sc, const TapSet * ts, guint n)
{
  for (guint t = 0; t < n; t++)
    sc->ptr[t] = (const gfloat *) sc->window[ts->taps[t].row]
        + ts->taps[t].offset;
}

/* Where output row y of the strip at x0 goes: float output is written in
 * place where aligned, other output through the strip's row `which`. */
static gpointer
output_row (const Job * job, const Scratch * sc, guint y, guint x0,
    guint which)
{
  guint8 *row = (guint8 *) job->dst->data + (gsize) y * job->dst->stride;

  if (job->plan->geometry.out_format != GCV_FORMAT_GRAY32F
      || !float_aligned (row))
    return sc->out[which];
  return (gfloat *) row + x0;
}

/* A task outside the frame's regions: the input, copied. */
static void
copy_rows (const Job * job, const CpuTask * t)
{
  const gsize px = gcv_format_pixel_size (job->plan->geometry.in_format);

  for (guint y = t->y0; y < t->y1; y++)
    memcpy ((guint8 *) job->dst->data + (gsize) y * job->dst->stride
        + t->x0 * px, (const guint8 *) job->src->data
        + (gsize) y * job->src->stride + t->x0 * px, (t->x1 - t->x0) * px);
}

/* Task t through the path of `s` on the scratch `sc`, its output rows
 * stored where `store` and measured into `acc` (if any); FALSE where the
 * engine was interrupted. */
static gboolean
run_strips (Job * job, const CpuTask * t, const Setup * s, const Scratch * sc,
    GcvCpuStatsAcc * acc, gboolean store)
{
  const guint h = job->plan->geometry.height;
  const guint kw = s->kw, kh = s->kh, ch = s->channels, ring = s->ring;
  const guint y0 = t->y0, y1 = t->y1;
  const guint in_rows = y1 - y0 + kh - 1;

  for (guint x0 = t->x0; x0 < t->x1; x0 += s->strip) {
    const guint n = MIN (s->strip, t->x1 - x0), len = n + kw - 1;
    const gsize ns = (gsize) n * ch;

    /* input row k of the band goes to slot k % ring; output row y0 + k +
     * 1 - kh can be done once row k is in */
    for (guint k = 0, slot = 0; k < in_rows; k++, slot = slot + 1 == ring ?
        0 : slot + 1) {
      const gint sy = gcv_border_index ((gint) (y0 + k) - (gint) s->ay,
          (gint) h, s->border);
      guint8 *kept = sc->kept + slot * s->kept_row_bytes;
      const guint y = y0 + k + 1 - kh;
      gpointer out;

      /* an atomic load a row: a row takes milliseconds at most, even with
       * the largest kernels (PAIR_MAX_FMAS), so a flush or a stop is not
       * held up */
      if (G_UNLIKELY (g_atomic_int_get (&job->cp->engine->interrupted))) {
        g_atomic_int_set (&job->stopped, TRUE);
        return FALSE;
      }
      if (k + PREFETCH_ROWS < in_rows)
        prefetch_rows (job, s, y0, k + PREFETCH_ROWS,
            (gint) (y0 + k + 1 + PREFETCH_ROWS) - (gint) kh, y1, x0, n);

      if (s->separable) {
        /* the row pass, into the kept rows */
        const guint8 *line = input_line (job, s, sy, x0, len, sc->line);
        for (guint i = 0; i < kw; i++)
          sc->ptr[i] = line + (gsize) i * ch * s->sample;
        if (s->fixed)
          gcv_cpu_fir_fixed ((guint16 *) kept, sc->ptr, s->row_fixed, kw,
              s->row_start, ns);
        else
          gcv_cpu_fir ((gfloat *) kept, sc->ptr, s->row, kw, 0.0f, ns);
        sc->rows[slot] = kept;
      } else {
        sc->rows[slot] = input_line (job, s, sy, x0, len, kept);
        if (s->check_finite)
          sc->finite[slot] = gcv_cpu_all_finite (sc->rows[slot],
              (gsize) len * ch);
      }
      if (k + 1 < kh)
        continue;

      if (s->separable) {
        /* the column pass over the kh rows from the next slot on, the
         * oldest */
        fill_window (sc, slot + 1, kh, ring);
        out = output_row (job, sc, y, x0, 0);
        if (s->fixed)
          gcv_cpu_fir_fixed (out, sc->window, s->column_fixed, kh,
              s->column_start, ns);
        else
          gcv_cpu_fir (out, sc->window, s->column, kh, s->bias, ns);
        put_row (job, s, acc, store, y, x0, n, out);
      } else if ((y - y0) % 2 == 1) {
        /* rows y - 1 and y, from the kh + 1 rows from the next slot on */
        const TapSet *ts = choose_taps (s, sc, slot + 1, kh + 1);
        gpointer out1 = output_row (job, sc, y, x0, 1);
        fill_window (sc, slot + 1, kh + 1, ring);
        point_taps (sc, ts, ts->n_taps);
        out = output_row (job, sc, y - 1, x0, 0);
        if (ts->weights0_y)
          gcv_cpu_fir2_magnitude (out, out1, sc->ptr, ts->weights0,
              ts->weights1, ts->weights0_y, ts->weights1_y, ts->n_first,
              ts->n_taps, ts->n_last, s->bias, s->magnitude_sign, ns);
        else
          gcv_cpu_fir2 (out, out1, sc->ptr, ts->weights0, ts->weights1,
              ts->n_first, ts->n_taps, ts->n_last, s->bias, ns);
        put_row (job, s, acc, store, y - 1, x0, n, out);
        put_row (job, s, acc, store, y, x0, n, out1);
      } else if (y + 1 == y1) {
        /* the band's last row, alone: the kh rows from the one after next,
         * through the taps of all rows but row kh */
        const TapSet *ts = choose_taps (s, sc, slot + 2, kh);
        fill_window (sc, slot + 2, kh, ring);
        point_taps (sc, ts, ts->n_taps - ts->n_last);
        out = output_row (job, sc, y, x0, 0);
        if (ts->weights0_y)
          gcv_cpu_fir_magnitude (out, sc->ptr, ts->weights0, ts->weights0_y,
              ts->n_taps - ts->n_last, s->bias, s->magnitude_sign, ns);
        else
          gcv_cpu_fir (out, sc->ptr, ts->weights0, ts->n_taps - ts->n_last,
              s->bias, ns);
        put_row (job, s, acc, store, y, x0, n, out);
      }
    }
  }
  return TRUE;
}

void
gcv_cpu_run_band (gpointer data, guint task, guint worker)
{
  Job *job = data;
  const CpuTask *t = &job->tasks[task];
  const Setup *s = job->cp->setup;
  const Scratch *sc = &job->cp->scratch[worker];
  GcvCpuStatsAcc *acc = job->stats ? gcv_cpu_stats_band (job->stats, task) :
      NULL;

  if (t->copy) {
    copy_rows (job, t);
    return;
  }
  if (G_UNLIKELY (acc && s->exact)) {
    /* fixed point: the pixels, then the exact values measured on the
     * float path, in the same scratch laid out for it (8-bit output, so
     * that its rows go to the scratch, never to the frame) */
    Scratch exact = { sc->mem };
    if (!run_strips (job, t, s, sc, NULL, TRUE))
      return;
    gcv_cpu_scratch_layout (&exact, 1, s->exact);
    run_strips (job, t, s->exact, &exact, acc, FALSE);
    return;
  }
  run_strips (job, t, s, sc, acc, TRUE);
}
