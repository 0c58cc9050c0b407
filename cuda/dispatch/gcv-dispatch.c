/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The dispatcher: the choice of what runs and its analytic heuristic. */
#include "gcv-dispatch.h"
#include "gcv-private.h"
#include "gcv-format.h"
#include "gcv-tuning.h"

#include <math.h>
#include <string.h>

/* Bytes one output sample costs in memory traffic (read + write). */
static gdouble
sample_bytes (GcvFormat f)
{
  return f == GCV_FORMAT_GRAY8 ? 2.0 : 8.0;
}

static guint
channels_of (GcvFormat f)
{
  return gcv_format_channels (f) == 4 ? 3 : 1;
}

/* The tile edge that runs for `tile` asked: a power of two from 128 (the
 * smallest measured), at least twice the kernel's longer side, so that
 * most of each plane is valid output. */
gint
gcv_dispatch_fft_edge (gint tile, guint kw, guint kh)
{
  gint t = 128;

  while (t < tile || t < 2 * (gint) MAX (kw, kh))
    t *= 2;
  return t;
}

/* Overlap-save FFT with tiles of `edge`: every channel's tiles, each
 * T x T points, at a memory traffic per point (pack, R2C, the product, C2R,
 * unpack), fitted to every tile size at 72 points (GRAY32F and RGBA, 720p
 * to 4096x4096, kernels 13 to 63) on an H200, plus what the launches cost
 * per frame, from the 1280x720 points of the dispatcher check. */
static gdouble
fft_tile_seconds (const GcvDispatchKey * key, const GcvDeviceInfo * dev,
    gint edge)
{
  gdouble across = ceil ((gdouble) key->width / (edge - key->kw + 1));
  gdouble down = ceil ((gdouble) key->height / (edge - key->kh + 1));
  gdouble points = across * down * edge * edge * channels_of (key->format);
  gdouble bytes = edge == 128 ? 77.0 : edge == 256 ? 83.0 :
      edge == 512 ? 88.0 : 80.0;

  return points * bytes / dev->bytes_per_s + 25e-6;
}

gint
gcv_dispatch_fft_tile (const GcvDispatchKey * key, const GcvDeviceInfo * dev)
{
  gint best = gcv_dispatch_fft_edge (0, key->kw, key->kh);

  for (gint t = best * 2; t <= GCV_FFT_MAX_TILE; t *= 2)
    if (fft_tile_seconds (key, dev, t) < fft_tile_seconds (key, dev, best))
      best = t;
  return best;
}

/* Direct 2D: the larger of its arithmetic and its memory traffic. The
 * arithmetic goes at the share of the FMA rate the tiled kernels reach on
 * H100 and H200: unrolled for the kernel width (the taps of the widened
 * kernel where it runs widened), 60% for one channel and 40% for the RGBA
 * family (three float accumulators per pixel crowd the registers);
 * adaptive (no instance for that width), 17% and 15%. FFT: overlap-save
 * tiles of the best size (fft_tile_seconds()). */
gboolean
gcv_dispatch_prefers_fft (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev)
{
  gdouble px = (gdouble) key->width * key->height;
  gdouble ch = channels_of (key->format);
  gdouble share = ch > 1 ? (key->unrolled ? 0.4 : 0.15) :
      (key->unrolled ? 0.6 : 0.17);
  guint kw = key->unrolled && key->unrolled_kw ? key->unrolled_kw : key->kw;
  gdouble direct = MAX (px * ch * kw * key->kh / (share * dev->fma_per_s),
      px * sample_bytes (key->format) / dev->bytes_per_s);

  return fft_tile_seconds (key, dev, gcv_dispatch_fft_tile (key, dev)) <
      direct;
}

/* Whether a rank-1 kernel runs faster as separable passes than as a 2D
 * kernel, as the full H200 tuning table (all families at every rank-1 point)
 * says: one tap wide, the column pass (either family runs it); one tap
 * tall, tiled's kernels unrolled for the width. Odd squares have a fused
 * kernel: it pays from 5x5 for one channel and from 3x3 for the RGBA family
 * (which filters three channels where alpha is copied). Other shapes take
 * two passes from 9 taps each way; below that tiled's unrolled kernels won
 * (even squares and 12x5 run widened to the next unrolled width), or from 5
 * taps where the width has no unrolled kernel at all. */
static gboolean
separable_pays (const GcvDispatchKey * key)
{
  guint least = MIN (key->kw, key->kh);
  gboolean fused = key->kw == key->kh && key->kw % 2 == 1;

  if (key->kw == 1)
    return TRUE;
  if (key->kh == 1)
    return FALSE;
  if (fused)
    return least >= (gcv_format_channels (key->format) == 4 ? 3u : 5u);
  return least >= (key->unrolled ? 9u : 5u);
}

/* Outputs down per thread for tiled's unrolled kernels, as most points of
 * the H200 table pick: for the RGBA family four, which share each input
 * row's widened window, or one where the kernel is one row tall and there
 * is nothing to share; two for one channel and for gradient magnitudes. */
static gint
tiled_rows (const GcvDispatchKey * key)
{
  /* gradient magnitudes: two, the rows of their unrolled kernels
   * (tiled.cu), whose two sums a pixel take twice the registers */
  if (key->magnitude)
    return 2;
  if (gcv_format_channels (key->format) == 4)
    return key->kh == 1 ? 1 : 4;
  return 2;
}

void
gcv_dispatch_heuristic (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev, GcvVariant * v)
{
  memset (v, 0, sizeof (*v));
  if (key->separable && (key->separable_only || separable_pays (key))) {
    v->family = GCV_FAMILY_SEPARABLE;
    v->rows = 4;                /* fused where an instance fits */
  } else if (key->kw == 1) {
    /* tiled runs a kernel one tap wide as one pass down the columns */
    v->family = GCV_FAMILY_TILED;
  } else if (!key->magnitude && gcv_dispatch_prefers_fft (key, dev)) {
    v->family = GCV_FAMILY_FFT;
    v->fft_tile = gcv_dispatch_fft_tile (key, dev);
  } else {
    /* the kernel unrolled for this width where there is one; else the
     * adaptive-tiling rule picks the tile height at plan time */
    v->family = GCV_FAMILY_TILED;
    v->rows = tiled_rows (key);
  }
}

/* --- the choice ----------------------------------------------------------- */

/* A family with the parameters it runs best with, as far as is known
 * without measuring. */
static void
family_defaults (GcvVariant * v, GcvFamily family, const GcvDispatchKey * key,
    const GcvDeviceInfo * dev)
{
  memset (v, 0, sizeof (*v));
  v->family = family;
  if (family == GCV_FAMILY_TILED)
    v->rows = tiled_rows (key);
  else if (family == GCV_FAMILY_SEPARABLE)
    v->rows = 4;
  else if (family == GCV_FAMILY_FFT)
    v->fft_tile = gcv_dispatch_fft_tile (key, dev);
}

static gboolean
has_rows (guint mask, gint rows)
{
  return rows > 0 && rows < 32 && (mask & (1u << rows));
}

/* `rows` where the mask has it, else the nearest rows it has, the fewer
 * first (fewer rows need less shared memory); 0 for none. Each pixel
 * type's unrolled kernels have three of 1, 2, 4 and 8 (tiled-kernels.cuh),
 * and a table may name the fourth. */
static gint
nearest_rows (guint mask, gint rows)
{
  if (has_rows (mask, rows))
    return rows;
  for (gint step = 2; rows > 0 && step <= 8; step *= 2) {
    if (rows % step == 0 && has_rows (mask, rows / step))
      return rows / step;
    if (has_rows (mask, rows * step))
      return rows * step;
  }
  return 0;
}

/* Settles what the limits decide: register's parameters, fused separable's
 * rows (as asked, else 4, else two passes), and tiled's kernel (unrolled
 * for the width where asked and it fits, at the nearest rows it has, else
 * adaptive, else direct). */
static void
settle (GcvChoice * c, const GcvDispatchKey * key,
    const GcvFamilyLimits * limits)
{
  GcvVariant *v = &c->variant;

  if (v->family == GCV_FAMILY_REGISTER) {
    v->lane_outputs = v->lane_outputs == 4 ? 4 : 8;
    v->block = CLAMP (v->block ? v->block / 32 * 32 : 128, 32, 256);
  }
  if (v->family == GCV_FAMILY_SEPARABLE) {
    v->adaptive = FALSE;
    if (!v->two_pass) {
      v->rows = v->rows == 8 ? 8 : 4;
      if (!has_rows (limits->fused_rows, v->rows))
        v->rows = v->rows == 8 && has_rows (limits->fused_rows, 4) ? 4 : 0;
      v->two_pass = v->rows == 0;
    }
  }
  if (v->family == GCV_FAMILY_FFT && v->fft_tile) {
    v->fft_tile = gcv_dispatch_fft_edge (v->fft_tile, key->kw, key->kh);
    v->fft_prime = 0;
  } else if (v->family == GCV_FAMILY_FFT && v->fft_prime != 2
      && v->fft_prime != 3 && v->fft_prime != 5)
    v->fft_prime = 7;
  if (v->family == GCV_FAMILY_TILED) {
    /* kernels too large for the constant bank have one unrolled instance,
     * with taps in memory: rows=2 */
    gint unrolled = nearest_rows (limits->unrolled_rows,
        limits->taps_in_memory ? 2 : v->rows);
    if (!v->adaptive && v->rows && unrolled) {
      v->rows = unrolled;
    } else if (limits->adaptive_rows > 0) {
      v->adaptive = TRUE;
      v->rows = limits->adaptive_rows;
    } else {
      memset (v, 0, sizeof (*v));
      v->family = GCV_FAMILY_DIRECT;
      c->fallback = GCV_FALLBACK_TILE_TOO_LARGE;
    }
  }
}

gboolean
gcv_dispatch_check_finite (GcvFormat format)
{
  return format == GCV_FORMAT_GRAY32F;
}

void
gcv_dispatch_key_init (GcvDispatchKey * key, const GcvGeometry * g,
    const GcvFilter * f)
{
  memset (key, 0, sizeof (*key));
  key->format = g->in_format;
  key->kw = f->kw;
  key->kh = f->kh;
  key->separable = f->use_separable;
  key->width = g->width;
  key->height = g->height;
  key->separable_only = f->separable_only;
  key->magnitude = f->taps_y != NULL;
  /* only float frames hold NaN or Inf (docs/filters.md) */
  key->factors_differ = g->in_format == GCV_FORMAT_GRAY32F
      && !gcv_filter_factors_keep_signs (f);
}

/* What follows from the family settled: the width the kernel runs at (a
 * tiled kernel unrolled for a wider instance runs the taps widened by
 * zeros on the right; a gradient magnitude never: tiled has its unrolled
 * kernels at their own widths), the column pass for a kernel one tap wide
 * in tiled or separable (their tiles and row passes would only add memory
 * traffic to what is a copy with a few taps), and the FFT's size. */
static void
finish (GcvChoice * c, const GcvDispatchKey * key,
    const GcvFamilyLimits * limits)
{
  const GcvVariant *v = &c->variant;

  c->kw = key->kw;
  c->run_kw = key->kw;
  if (v->family == GCV_FAMILY_TILED && !v->adaptive && !key->magnitude
      && limits->unrolled_kw)
    c->run_kw = limits->unrolled_kw;
  c->column_pass = key->kw == 1 && !key->magnitude
      && (v->family == GCV_FAMILY_TILED || v->family == GCV_FAMILY_SEPARABLE);
  if (v->family == GCV_FAMILY_FFT) {
    c->fft_nx = limits->fft_nx;
    c->fft_ny = limits->fft_ny;
    c->fft_tiles = limits->fft_tiles;
  }
  c->check_finite = gcv_dispatch_check_finite (key->format);
}

void
gcv_dispatch_choose (const GcvDispatchKey * key_in, const GcvDeviceInfo * dev,
    const GcvFamilyLimits * limits, const GcvTuningTable * table,
    GcvFamily requested, const GcvVariant * forced, gboolean rank1,
    GcvChoice * c)
{
  GcvDispatchKey key = *key_in, lookup;
  GcvVariant *v = &c->variant;
  const GcvTuningRow *row;

  memset (c, 0, sizeof (*c));
  c->backend = GCV_BACKEND_CUDA;
  c->requested = requested;
  key.unrolled = has_rows (limits->unrolled_rows, 2);
  key.unrolled_kw = limits->unrolled_kw;
  /* the GRAY32F guard: factors that do not keep K's zeros and signs run
   * as 2D */
  if (key.factors_differ) {
    key.separable = FALSE;
    rank1 = FALSE;
  }
  if (forced) {
    *v = *forced;
    c->source = GCV_SOURCE_FORCED;
  } else {
    /* tables are measured for GRAY32F and RGBA: the other RGBA-family
     * formats are the same work, and GRAY8 the nearest to GRAY32F */
    lookup = key;
    lookup.format = gcv_format_channels (key.format) == 4 ? GCV_FORMAT_RGBA :
        GCV_FORMAT_GRAY32F;
    /* the tables measured one kernel a frame, not a magnitude's two */
    row = table && !key.magnitude ? gcv_tuning_table_lookup (table, &lookup)
        : NULL;
    /* A nearby row's unrolled tiled kernel may not exist for this width
     * (even widths, say): its adaptive stand-in is slower than what the
     * heuristic picks with that in mind. With separable=auto the rows of
     * rank-1 kernels hold whichever family ran fastest (docs/properties.md,
     * `separable`); with separable=always only a separable one will do. */
    if (row && !(row->variant.family == GCV_FAMILY_TILED
            && !row->variant.adaptive && !key.unrolled)
        && !(key.separable_only
            && row->variant.family != GCV_FAMILY_SEPARABLE)) {
      *v = row->variant;
      c->source = GCV_SOURCE_TABLE;
      c->table_source = table->source;
    } else {
      gcv_dispatch_heuristic (&key, dev, v);
      c->source = GCV_SOURCE_HEURISTIC;
    }
    if (requested != GCV_FAMILY_AUTO && requested != v->family) {
      family_defaults (v, requested, &key, dev);
      c->source = GCV_SOURCE_REQUESTED;
      c->table_source = NULL;
    }
  }
  /* gcv-filter.c refuses separable for a magnitude; a forced variant may
   * still name it */
  if (key.magnitude && v->family != GCV_FAMILY_DIRECT
      && v->family != GCV_FAMILY_TILED) {
    c->fallback = GCV_FALLBACK_MAGNITUDE;
    family_defaults (v, GCV_FAMILY_TILED, &key, dev);
  }
  if (v->family == GCV_FAMILY_SEPARABLE && !rank1) {
    c->fallback = GCV_FALLBACK_NOT_RANK1;
    family_defaults (v, GCV_FAMILY_TILED, &key, dev);
  }
  if (v->family == GCV_FAMILY_REGISTER && !limits->register_fits) {
    c->fallback = GCV_FALLBACK_REGISTER_SIZE;
    family_defaults (v, GCV_FAMILY_TILED, &key, dev);
  }
  settle (c, &key, limits);
  /* separable asked for (or separable=always) where the guard said no:
   * the guard is the reason */
  if (key.factors_differ && (c->fallback == GCV_FALLBACK_NOT_RANK1
          || (key.separable_only && c->fallback == GCV_FALLBACK_NONE)))
    c->fallback = GCV_FALLBACK_FACTOR_SIGNS;
  /* the second call: the FFT set-up could not be made */
  if (v->family == GCV_FAMILY_FFT && limits->fft_failed) {
    c->fallback = GCV_FALLBACK_FFT_SETUP;
    g_strlcpy (c->detail, limits->fft_failed, sizeof (c->detail));
    family_defaults (v, GCV_FAMILY_TILED, &key, dev);
    settle (c, &key, limits);
  }
  finish (c, &key, limits);
}

void
gcv_dispatch_choose_cpu (const GcvDispatchKey * key, GcvFamily requested,
    const GcvCpuLimits * limits, GcvChoice * c)
{
  /* a magnitude is never rank 1 (gcv-filter.c); its two kernels run on the
   * direct path */
  gboolean separable = key->separable && !key->magnitude
      && requested != GCV_FAMILY_DIRECT && !key->factors_differ;

  memset (c, 0, sizeof (*c));
  c->backend = GCV_BACKEND_CPU;
  c->requested = requested;
  c->variant.family = separable ? GCV_FAMILY_SEPARABLE : GCV_FAMILY_DIRECT;
  c->kw = c->run_kw = key->kw;
  c->check_finite = gcv_dispatch_check_finite (key->format);
  c->threads = limits->threads;
  if (separable)
    c->cpu_path = limits->fixed_point ? GCV_CPU_PATH_FIXED_POINT :
        GCV_CPU_PATH_SEPARABLE;
  else
    c->cpu_path = key->magnitude ? GCV_CPU_PATH_MAGNITUDE :
        GCV_CPU_PATH_DIRECT;
  if (!separable && key->separable && requested != GCV_FAMILY_DIRECT)
    c->fallback = GCV_FALLBACK_FACTOR_SIGNS;
  else if (requested != GCV_FAMILY_AUTO && requested != c->variant.family)
    c->fallback = GCV_FALLBACK_CUDA_ONLY;
}
