/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What runs for a CUDA plan's filter on this device: the kernel element
 * type and output epilogue, the launch arguments, what each family can run
 * here, the dispatcher's choice (gcv_dispatch_choose()) and what the
 * backend still settles after it (the FFT set-up falling back, the column
 * pass, the width tiled's unrolled kernels run at), and the description. */
#include "gcv-cuda-private.h"

#include <math.h>
#include <string.h>

/* Formats to kernel element and epilogue. 8-bit input is filtered from its
 * bytes unless a constant border value is no byte value; then the frame is
 * unpacked to floats first. */
void
gcv_cuda_choose_formats (CudaPlan * cp, const GcvPlan * plan)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  gboolean rgba = gcv_format_channels (g->in_format) == 4;
  gboolean byte_border = f->border != GCV_BORDER_CONSTANT
      || (f->border_value >= 0.0f && f->border_value <= 255.0f
      && f->border_value == floorf (f->border_value));

  cp->unpack = g->in_format != GCV_FORMAT_GRAY32F
      && (!byte_border || g_getenv ("GPUCONVOLVE_CUDA_UNPACK"));
  if (rgba) {
    cp->pix = cp->unpack ? GCV_PIX_F32X4 : GCV_PIX_U8X4;
    cp->out = f->filter_alpha ? GCV_OUT_U8X4 : GCV_OUT_U8X4_KEEP_ALPHA;
    cp->out_scale = 1.0f;
  } else {
    cp->pix = g->in_format == GCV_FORMAT_GRAY8 && !cp->unpack ? GCV_PIX_U8 :
        GCV_PIX_F32;
    cp->out = g->out_format == GCV_FORMAT_GRAY8 ? GCV_OUT_U8 : GCV_OUT_F32;
    cp->out_scale = g->in_format == g->out_format ? 1.0f :
        g->out_format == GCV_FORMAT_GRAY8 ? 255.0f : 1.0f / 255.0f;
  }
}

GcvCudaConv
gcv_cuda_conv_args (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s)
{
  const GcvFilter *f = plan->filter;
  GcvCudaConv c;

  memset (&c, 0, sizeof (c));
  c.in = cp->pix;
  c.out = cp->out;
  c.src = s->d_pad;
  c.src_pitch = cp->pad_pitch;
  c.dst = s->d_out;
  c.dst_pitch = cp->out_pitch;
  c.width = plan->geometry.width;
  c.height = plan->geometry.height;
  c.kw = cp->kw;
  c.kh = f->kh;
  c.ax = f->ax;
  c.ay = f->ay;
  c.footprint_kw = f->kw;
  /* only float frames hold NaN or Inf (docs/filters.md, non-finite input);
   * 8-bit frames unpacked to floats do not */
  c.check_finite = plan->geometry.in_format == GCV_FORMAT_GRAY32F;
  c.bias = f->bias;
  c.out_scale = cp->out_scale;
  c.taps = s->d_taps;
  c.host_taps = cp->run_taps ? cp->run_taps : f->taps;
  c.magnitude_sign = f->taps_y ? f->magnitude_sign : 0.0f;
  c.stream = s->stream;
  gcv_cuda_stats_args (&s->stats, &c);
  return c;
}

/* The narrowest width with an unrolled tiled kernel that holds kw, or 0. */
static guint
unrolled_width (guint kw)
{
  static const guint widths[] = {
#define WIDTH(K) K,
    GCV_TILED_WIDTHS (WIDTH)
#undef WIDTH
  };

  for (guint i = 0; i < G_N_ELEMENTS (widths); i++)
    if (widths[i] >= kw)
      return widths[i];
  return 0;
}

/* The device runs the filter's own kernel (CudaPlan.kw), a gradient
 * magnitude's two sets of taps one after the other. */
static void
run_filter_kernel (CudaPlan * cp, const GcvFilter * f)
{
  const gsize n = (gsize) f->kw * f->kh;

  g_clear_pointer (&cp->run_taps, g_free);
  cp->kw = f->kw;
  cp->n_taps = n;
  if (f->taps_y) {
    cp->run_taps = g_new (gfloat, 2 * n);
    memcpy (cp->run_taps, f->taps, sizeof (gfloat) * n);
    memcpy (cp->run_taps + n, f->taps_y, sizeof (gfloat) * n);
    cp->n_taps = 2 * n;
  }
}

/* Sets the kernel the device runs for this choice (CudaPlan.kw). A
 * magnitude is never widened: tiled has its unrolled kernels at their
 * own widths only. */
static void
set_run_kernel (CudaPlan * cp, const GcvFilter * f, const GcvVariant * v)
{
  guint w = unrolled_width (f->kw);

  run_filter_kernel (cp, f);
  if (v->family != GCV_FAMILY_TILED || v->adaptive || f->kw == 1 || w == 0
      || w == f->kw || f->taps_y)
    return;
  cp->run_taps = g_new0 (gfloat, (gsize) w * f->kh);
  for (guint y = 0; y < f->kh; y++)
    memcpy (cp->run_taps + (gsize) y * w, f->taps + (gsize) y * f->kw,
        sizeof (gfloat) * f->kw);
  cp->kw = w;
  cp->n_taps = (gsize) w * f->kh;
}

/* What each family reports it can run for this filter on this device. */
static void
family_limits (CudaPlan * cp, const GcvCudaConv * c, GcvFamilyLimits * l)
{
  const GcvCudaDevice *dev = &cp->engine->props;
  /* tiled's unrolled kernels run any width up to the widest instance,
   * but for a magnitude (its widths, tiled.cu) */
  GcvCudaConv wide = *c;
  guint w = unrolled_width (c->kw);

  if (c->kw > 1 && w && c->magnitude_sign == 0.0f)
    wide.kw = w;
  memset (l, 0, sizeof (*l));
  for (gint rows = 1; rows <= 8; rows *= 2)
    if (gcv_cuda_tiled_width_smem (&wide, rows, dev) > 0)
      l->unrolled_rows |= 1u << rows;
  /* the fused kernels have 4 rows only */
  if (gcv_cuda_separable_fused_bytes (c, 4, dev) > 0)
    l->fused_rows = 1u << 4;
  l->taps_in_memory = wide.kw * wide.kh > GCV_CUDA_PARAM_TAPS;
  l->unrolled_kw = wide.kw;
  l->adaptive_rows = gcv_cuda_tiled_choose (c, dev, &cp->tiled_smem);
  if (c->kw == 1 && l->adaptive_rows == 0)
    l->adaptive_rows = 1;       /* the column pass needs no tile */
  l->register_fits = gcv_cuda_register_supports (c);
}


/* A kernel one tap wide runs as one pass down the columns (column.cu) in
 * the tiled and the separable family: their tiles and row passes would only
 * add memory traffic to a filter that is a copy with a few taps. */
gboolean
gcv_cuda_column_pass (const GcvFilter * f, const GcvVariant * v)
{
  return f->kw == 1 && !f->taps_y && (v->family == GCV_FAMILY_TILED
      || v->family == GCV_FAMILY_SEPARABLE);
}

static gint
sign (gfloat v)
{
  return (v > 0.0f) - (v < 0.0f);
}

/* Whether the separable paths give the NaN and infinities of a frame what
 * K gives them (docs/filters.md): column[j] * row[i] of the sign of K's
 * tap, zero where it is zero. A kernel rank 1 only within the tolerance
 * may have a tiny tap where its factors give 0, which would turn an
 * infinity under it into NaN. Only GRAY32F frames hold either. */
static gboolean
factors_fit_input (const GcvPlan * plan)
{
  const GcvFilter *f = plan->filter;

  if (!f->rank1 || plan->geometry.in_format != GCV_FORMAT_GRAY32F)
    return TRUE;
  for (guint j = 0; j < f->kh; j++)
    for (guint i = 0; i < f->kw; i++)
      if (sign (f->column[j]) * sign (f->row[i])
          != sign (f->taps[(gsize) j * f->kw + i]))
        return FALSE;
  return TRUE;
}

/* The dispatcher chooses (gcv_dispatch_choose()); this fills in what the
 * families report, makes the FFT set-up a choice of FFT needs, and writes
 * the description. */
gboolean
gcv_cuda_choose_variant (CudaPlan * cp, GcvPlan * plan, GError ** error)
{
  const GcvFilter *f = plan->filter;
  CudaEngine *e = cp->engine;
  GcvCudaConv c;
  /* factors that do not fit the input: the kernel runs as 2D */
  const gboolean fit = factors_fit_input (plan);
  GcvDispatchKey key = {.format = plan->geometry.in_format,.kw = f->kw,
    .kh = f->kh,.separable = f->use_separable && fit,
    .width = plan->geometry.width,.height = plan->geometry.height,
    .separable_only = f->separable_only,.magnitude = f->taps_y != NULL
  };
  GcvFamilyLimits limits;
  GcvVariant forced;
  GcvChoice *choice = &plan->choice;
  const GcvVariant *v = &choice->variant;
  gchar *source, *params, *name;
  char fft_error[256] = "";

  if (plan->forced_variant
      && !gcv_variant_parse (plan->forced_variant, &forced, error))
    return FALSE;       /* checked when it was set: cannot happen */
  run_filter_kernel (cp, f);
  c = gcv_cuda_conv_args (cp, plan, &cp->slots[0]);
  family_limits (cp, &c, &limits);
  gcv_dispatch_choose (&key, &e->info, &limits, e->table, plan->requested,
      plan->forced_variant ? &forced : NULL, f->rank1 && fit, choice);
  if (!fit && (choice->fallback == GCV_FALLBACK_NOT_RANK1
          || (f->separable_only && choice->fallback == GCV_FALLBACK_NONE)))
    choice->fallback = GCV_FALLBACK_FACTOR_SIGNS;
  if (v->family == GCV_FAMILY_FFT) {
    if (!gcv_cuda_fft_setup_ensure (cp, plan, &c, v, fft_error,
            sizeof (fft_error), error))
      return FALSE;
    if (!cp->fft)
      gcv_dispatch_fall_back (choice, GCV_FALLBACK_FFT_SETUP, &key, &limits);
  }
  if (v->family != GCV_FAMILY_FFT && cp->fft) {
    if (!gcv_cuda_wait_all (cp, error))
      return FALSE;
    gcv_cuda_fft_setup_free (cp);
  }
  /* after any fall-back: the FFT's may hand over to tiled */
  set_run_kernel (cp, f, v);

  name = gcv_variant_to_string (v);
  if (gcv_cuda_column_pass (f, v)) {
    params = g_strdup ("column pass");
  } else if (v->family == GCV_FAMILY_TILED && cp->kw != f->kw) {
    params = g_strdup_printf ("ty=%d unrolled %u wide", v->rows, cp->kw);
  } else if (v->family == GCV_FAMILY_TILED) {
    params = g_strdup_printf ("ty=%d %s", v->rows, v->adaptive ? "adaptive" :
        "unrolled");
  } else if (v->family == GCV_FAMILY_FFT && v->fft_tile) {
    int nx, ny, tiles;
    gcv_cuda_fft_size (cp->fft, &nx, &ny, &tiles);
    params = g_strdup_printf ("tile=%d, %d tiles", nx, tiles);
  } else if (v->family == GCV_FAMILY_FFT) {
    int nx, ny, tiles;
    gcv_cuda_fft_size (cp->fft, &nx, &ny, &tiles);
    params = g_strdup_printf ("p=%d %dx%d", v->fft_prime, nx, ny);
  } else {
    params = g_strdup (strchr (name, ' ') ? strchr (name, ' ') + 1 : "");
  }
  source = choice->source == GCV_SOURCE_TABLE ?
      g_strdup_printf ("table: %s", e->table_source) :
      g_strdup (gcv_choice_source_nick (choice->source));
  gcv_plan_set_description (plan, v->family, "%s%s(%s)%s%s%s%s%s", params,
      *params ? " " : "", source, choice->fallback ? " (" : "",
      gcv_fallback_reason (choice->fallback), choice->fallback ? ")" : "",
      *fft_error ? ": " : "", fft_error);
  g_free (source);
  g_free (params);
  g_free (name);
  return TRUE;
}
