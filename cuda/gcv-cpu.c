/* The CPU backend: direct 2D and separable paths, multithreaded over bands
 * of rows. Each task converts its input rows (plus the kernel's halo) into
 * float planes padded by the border, filters them with SIMD-friendly row
 * loops, and writes the output rows. */
#include "gcv-private.h"
#include "gcv-border.h"
#include "gcv-cpu-pool.h"

#include <math.h>
#include <string.h>

/* Hot loops get an AVX2+FMA clone (x86-64-v3, chosen by instruction set:
 * "arch=haswell" is chosen by CPU model and missed virtual CPUs) picked at
 * load time; other CPUs run the baseline build. GCC's -O2 vectorises only
 * loops with no remainder, and with trapping math it will not turn the
 * clamps of 8-bit output into selects, so this file is built at -O3 without
 * it (nothing here reads floating-point exception flags). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("O3", "no-trapping-math")
#define GCV_SIMD_CLONES __attribute__((target_clones ("arch=x86-64-v3", "default")))
#else
#define GCV_SIMD_CLONES
#endif

#define BAND_ROWS 32            /* output rows per task */

typedef struct {
  GcvCpuPool *pool;
  gchar *description;
} CpuEngine;

typedef struct {
  gfloat *band;                 /* [channel][row][padded column] */
  gfloat *tmp;                  /* [row][column], separable row pass */
  gfloat *acc;                  /* [channel][column] */
} Scratch;

typedef struct {
  CpuEngine *engine;
  guint channels;               /* filtered channels */
  guint padded_w;               /* width + kw - 1 */
  gint *xmap;                   /* padded column -> source x, -1: constant */
  guint scratch_kw, scratch_kh; /* kernel size the scratch was made for */
  Scratch *scratch;             /* one per worker */
} CpuPlan;

typedef struct {
  CpuPlan *cp;
  GcvPlan *plan;
  const GcvImage *src, *dst;
} Job;

/* --- row loops ------------------------------------------------------------ */

/* acc[x] += sum_i taps[i] * src[x + i], four taps per sweep over the row so
 * acc is loaded and stored a quarter as often. */
GCV_SIMD_CLONES static void
correlate_row (gfloat * restrict acc, const gfloat * restrict src,
    const gfloat * restrict taps, guint kw, guint n)
{
  guint i = 0;

  for (; i + 4 <= kw; i += 4) {
    const gfloat k0 = taps[i], k1 = taps[i + 1], k2 = taps[i + 2],
        k3 = taps[i + 3];
    const gfloat *s = src + i;
    if (k0 == 0.0f && k1 == 0.0f && k2 == 0.0f && k3 == 0.0f)
      continue;
    for (guint x = 0; x < n; x++)
      acc[x] += k0 * s[x] + k1 * s[x + 1] + k2 * s[x + 2] + k3 * s[x + 3];
  }
  for (; i < kw; i++) {
    const gfloat k = taps[i];
    const gfloat *s = src + i;
    if (k == 0.0f)
      continue;
    for (guint x = 0; x < n; x++)
      acc[x] += k * s[x];
  }
}

GCV_SIMD_CLONES static void
scale_add_row (gfloat * restrict acc, const gfloat * restrict src, gfloat k,
    guint n)
{
  for (guint x = 0; x < n; x++)
    acc[x] += k * src[x];
}

static inline guint8
to_u8 (gfloat v)
{
  /* saturate, then round to nearest even by adding and taking away 1.5 *
   * 2^23 (exact for 0..255, and vectorises where rintf() is a call); NaN
   * becomes 0 */
  v = v > 0.0f ? v : 0.0f;
  v = v < 255.0f ? v : 255.0f;
  return (guint8) (gint) ((v + 12582912.0f) - 12582912.0f);
}

/* --- format conversion ---------------------------------------------------- */

/* RGBA-family pixels as 32-bit words (byte c of a pixel is bits 8c..8c+7
 * on the little-endian hosts this runs on), read and written whole so the
 * loops vectorise; rows need not be 4-byte aligned. */
typedef guint32 pixel32 __attribute__((aligned (1), may_alias));

GCV_SIMD_CLONES static void
widen (gfloat * restrict out, const guint8 * restrict p, guint w)
{
  for (guint x = 0; x < w; x++)
    out[x] = p[x];
}

/* Channel c of each pixel to floats. */
GCV_SIMD_CLONES static void
widen_channel (gfloat * restrict out, const pixel32 * restrict p, guint c,
    guint w)
{
  for (guint x = 0; x < w; x++)
    out[x] = (p[x] >> (8 * c)) & 0xff;
}

/* Floats, times k, to saturated bytes. */
GCV_SIMD_CLONES static void
narrow (guint8 * restrict q, const gfloat * restrict v, gfloat k, guint w)
{
  for (guint x = 0; x < w; x++)
    q[x] = to_u8 (v[x] * k);
}

/* Three or four float planes to pixels; with three, the fourth byte comes
 * from the source pixel. */
GCV_SIMD_CLONES static void
narrow_pixels (pixel32 * restrict q, const gfloat * restrict c0,
    const gfloat * restrict c1, const gfloat * restrict c2,
    const gfloat * restrict c3, const pixel32 * restrict src, guint w)
{
  if (c3)
    for (guint x = 0; x < w; x++)
      q[x] = to_u8 (c0[x]) | (guint32) to_u8 (c1[x]) << 8
          | (guint32) to_u8 (c2[x]) << 16 | (guint32) to_u8 (c3[x]) << 24;
  else
    for (guint x = 0; x < w; x++)
      q[x] = to_u8 (c0[x]) | (guint32) to_u8 (c1[x]) << 8
          | (guint32) to_u8 (c2[x]) << 16 | (src[x] & 0xff000000u);
}

/* Source row y into `channels` float planes of `stride` floats each. */
static void
load_row (const GcvPlan * plan, const GcvImage * src, guint y, guint channels,
    gfloat * planes, gsize stride)
{
  const guint w = plan->geometry.width;
  const guint8 *p = (const guint8 *) src->data + (gsize) y * src->stride;

  switch (plan->geometry.in_format) {
    case GCV_FORMAT_GRAY8:
      widen (planes, p, w);
      break;
    case GCV_FORMAT_GRAY32F:
      memcpy (planes, p, w * sizeof (gfloat));
      break;
    default:
      for (guint c = 0; c < channels; c++)
        widen_channel (planes + c * stride, (const pixel32 *) p, c, w);
      break;
  }
}

/* Filtered values (input units) of row y to the output frame. */
static void
store_row (const GcvPlan * plan, const GcvImage * src, const GcvImage * dst,
    guint y, guint channels, const gfloat * acc, guint w)
{
  const GcvGeometry *g = &plan->geometry;
  guint8 *q = (guint8 *) dst->data + (gsize) y * dst->stride;

  switch (g->out_format) {
    case GCV_FORMAT_GRAY8:
      narrow (q, acc, g->in_format == GCV_FORMAT_GRAY32F ? 255.0f : 1.0f, w);
      break;
    case GCV_FORMAT_GRAY32F:
      if (g->in_format == GCV_FORMAT_GRAY8) {
        gfloat *f = (gfloat *) q;
        for (guint x = 0; x < w; x++)
          f[x] = acc[x] / 255.0f;
      } else {
        memcpy (q, acc, w * sizeof (gfloat));
      }
      break;
    default:{
      const guint8 *p = (const guint8 *) src->data + (gsize) y * src->stride;
      /* with three channels alpha (or x) passes through */
      narrow_pixels ((pixel32 *) q, acc, acc + w, acc + 2 * (gsize) w,
          channels == 4 ? acc + 3 * (gsize) w : NULL, (const pixel32 *) p, w);
      break;
    }
  }
}

/* --- one band of output rows ---------------------------------------------- */

/* Input rows y0-ay .. y1-1+kh-1-ay as float planes padded by the border:
 * each row is loaded into the interior and its edges filled from it. */
static void
load_band (const Job * job, Scratch * s, guint y0, guint in_rows,
    gsize plane)
{
  const CpuPlan *cp = job->cp;
  const GcvFilter *f = job->plan->filter;
  const guint w = job->plan->geometry.width, h = job->plan->geometry.height;
  const guint pw = cp->padded_w, nch = cp->channels;

  for (guint r = 0; r < in_rows; r++) {
    gint sy = gcv_border_index ((gint) (y0 + r) - (gint) f->ay, (gint) h,
        f->border);
    gfloat *row = s->band + (gsize) r * pw;
    if (sy < 0) {
      for (guint c = 0; c < nch; c++)
        for (guint px = 0; px < pw; px++)
          row[c * plane + px] = f->border_value;
      continue;
    }
    load_row (job->plan, job->src, (guint) sy, nch, row + f->ax, plane);
    for (guint c = 0; c < nch; c++) {
      gfloat *cr = row + c * plane;
      for (guint px = 0; px < pw; px++) {
        if (px == f->ax) {
          px += w - 1;          /* skip the interior */
          continue;
        }
        cr[px] = cp->xmap[px] < 0 ? f->border_value : cr[f->ax + cp->xmap[px]];
      }
    }
  }
}

static void
run_band (gpointer data, guint task, guint worker)
{
  Job *job = data;
  CpuPlan *cp = job->cp;
  const GcvPlan *plan = job->plan;
  const GcvFilter *f = plan->filter;
  const gboolean separable = plan->algorithm == GCV_ALGORITHM_SEPARABLE;
  const guint w = plan->geometry.width, h = plan->geometry.height;
  const guint y0 = task * BAND_ROWS, y1 = MIN (h, y0 + BAND_ROWS);
  const guint in_rows = y1 - y0 + f->kh - 1;
  const guint pw = cp->padded_w, nch = cp->channels;
  const gsize plane = (gsize) (BAND_ROWS + f->kh - 1) * pw;
  Scratch *s = &cp->scratch[worker];

  load_band (job, s, y0, in_rows, plane);

  if (separable) {
    /* row pass over every input row of the band */
    for (guint c = 0; c < nch; c++)
      for (guint r = 0; r < in_rows; r++) {
        gfloat *t = s->tmp + ((gsize) c * in_rows + r) * w;
        memset (t, 0, w * sizeof (gfloat));
        correlate_row (t, s->band + c * plane + (gsize) r * pw, f->row, f->kw,
            w);
      }
  }

  for (guint y = y0; y < y1; y++) {
    for (guint c = 0; c < nch; c++) {
      gfloat *acc = s->acc + (gsize) c * w;
      for (guint x = 0; x < w; x++)
        acc[x] = f->bias;
      if (separable) {
        const gfloat *t = s->tmp + ((gsize) c * in_rows + (y - y0)) * w;
        for (guint j = 0; j < f->kh; j++)
          scale_add_row (acc, t + (gsize) j * w, f->column[j], w);
      } else {
        const gfloat *band = s->band + c * plane + (gsize) (y - y0) * pw;
        for (guint j = 0; j < f->kh; j++)
          correlate_row (acc, band + (gsize) j * pw, f->taps + j * f->kw,
              f->kw, w);
      }
    }
    store_row (plan, job->src, job->dst, y, nch, s->acc, w);
  }
}

/* --- backend -------------------------------------------------------------- */

static gboolean
cpu_available (gint device_id, GError ** error)
{
  return TRUE;
}

static gpointer
cpu_engine_new (gint device_id, GError ** error)
{
  CpuEngine *e = g_new0 (CpuEngine, 1);
  guint n = g_get_num_processors ();

  e->pool = gcv_cpu_pool_new (n);
  e->description = g_strdup_printf ("cpu (%u threads)", n);
  return e;
}

static const gchar *
cpu_engine_describe (gpointer engine)
{
  return ((CpuEngine *) engine)->description;
}

static void
cpu_engine_free (gpointer engine)
{
  CpuEngine *e = engine;
  gcv_cpu_pool_free (e->pool);
  g_free (e->description);
  g_free (e);
}

static void
scratch_free (CpuPlan * cp)
{
  guint n = gcv_cpu_pool_get_n_workers (cp->engine->pool);
  for (guint i = 0; cp->scratch && i < n; i++) {
    g_free (cp->scratch[i].band);
    g_free (cp->scratch[i].tmp);
    g_free (cp->scratch[i].acc);
  }
  g_clear_pointer (&cp->scratch, g_free);
  g_clear_pointer (&cp->xmap, g_free);
}

/* Sizes buffers for the plan's filter; reused until the kernel size grows. */
static gboolean
cpu_plan_set_filter (gpointer state, GcvPlan * plan, GError ** error)
{
  CpuPlan *cp = state;
  const GcvFilter *f = plan->filter;
  const guint w = plan->geometry.width;
  guint n = gcv_cpu_pool_get_n_workers (cp->engine->pool);

  cp->channels = gcv_filtered_channels (plan->geometry.in_format,
      f->filter_alpha);
  if (!cp->scratch || f->kw > cp->scratch_kw || f->kh > cp->scratch_kh) {
    gsize rows;
    scratch_free (cp);
    cp->scratch_kw = f->kw;
    cp->scratch_kh = f->kh;
    rows = BAND_ROWS + f->kh - 1;
    cp->scratch = g_new0 (Scratch, n);
    for (guint i = 0; i < n; i++) {
      cp->scratch[i].band = g_new (gfloat, 4 * rows * (w + f->kw - 1));
      cp->scratch[i].tmp = g_new (gfloat, 4 * rows * w);
      cp->scratch[i].acc = g_new (gfloat, 4 * (gsize) w);
    }
    cp->xmap = g_new (gint, w + f->kw - 1);
  }
  cp->padded_w = w + f->kw - 1;
  for (guint px = 0; px < cp->padded_w; px++)
    cp->xmap[px] = gcv_border_index ((gint) px - (gint) f->ax, (gint) w,
        f->border);

  /* The CPU has two paths: separable for rank-1 kernels unless direct is
   * forced, else direct. GPU-only families say so in the description. */
  GcvAlgorithm algo = f->use_separable
      && plan->requested != GCV_ALGORITHM_DIRECT ?
      GCV_ALGORITHM_SEPARABLE : GCV_ALGORITHM_DIRECT;
  if (plan->requested != GCV_ALGORITHM_AUTO && plan->requested != algo)
    gcv_plan_set_description (plan, algo, "(%s runs on CUDA only)",
        gcv_algorithm_nick (plan->requested));
  else
    gcv_plan_set_description (plan, algo, "%s", "");
  return TRUE;
}

static gpointer
cpu_plan_new (gpointer engine, GcvPlan * plan, GError ** error)
{
  CpuPlan *cp = g_new0 (CpuPlan, 1);
  cp->engine = engine;
  cpu_plan_set_filter (cp, plan, error);
  return cp;
}

static gboolean
cpu_submit (gpointer state, GcvPlan * plan, guint slot, const GcvImage * src,
    const GcvImage * dst, GError ** error)
{
  CpuPlan *cp = state;
  Job job = { cp, plan, src, dst };
  guint tasks = (plan->geometry.height + BAND_ROWS - 1) / BAND_ROWS;

  gcv_cpu_pool_run (cp->engine->pool, tasks, run_band, &job);
  return TRUE;
}

static gboolean
cpu_wait (gpointer state, GcvPlan * plan, guint slot, GError ** error)
{
  return TRUE;                  /* submit ran synchronously */
}

static void
cpu_plan_free (gpointer state)
{
  CpuPlan *cp = state;
  scratch_free (cp);
  g_free (cp);
}

const GcvBackend gcv_cpu_backend = {
  "cpu",
  cpu_available,
  cpu_engine_new,
  cpu_engine_describe,
  NULL,
  cpu_engine_free,
  cpu_plan_new,
  cpu_plan_set_filter,
  cpu_submit,
  cpu_wait,
  cpu_plan_free,
};
