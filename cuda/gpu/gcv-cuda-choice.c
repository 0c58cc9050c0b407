/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What runs for a CUDA plan's filter on this device: the kernel element
 * type and output epilogue, the launch arguments, what each family can run
 * here (GcvFamilyLimits), the dispatcher's calls that settle the plan's
 * record (gcv_dispatch_choose(), again with the FFT set-up's outcome), the
 * taps the device runs at the record's width, and the launch of what was
 * chosen, on a frame or a rectangle of it. */
#include "gcv-cuda-private.h"

#include <math.h>
#include <string.h>

/* Formats to kernel element and epilogue. 8-bit input is filtered from its
 * bytes unless a constant border value is no byte value; then the frame is
 * unpacked to floats first. 16-bit words are widened to floats and the
 * results narrowed back; RGB and BGR run as RGBx (the fourth byte copied
 * through the kernels, never written back). */
void
gcv_cuda_choose_formats (CudaPlan * cp, const GcvPlan * plan)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  const gboolean words = gcv_format_is_16bit (g->in_format);
  const gboolean rgb3 = gcv_format_channels (g->in_format) == 3;
  gboolean byte_border = f->border != GCV_BORDER_CONSTANT
      || (f->border_value >= 0.0f && f->border_value <= 255.0f
      && f->border_value == floorf (f->border_value));

  cp->unpack = g->in_format != GCV_FORMAT_GRAY32F && !words
      && (!byte_border || g_getenv ("GPUCONVOLVE_CUDA_UNPACK"));
  cp->widen = words || rgb3;
  cp->in_sample = rgb3 ? GCV_SAMPLE_U8X3 : GCV_SAMPLE_U16;
  cp->narrow = gcv_format_is_16bit (g->out_format) || rgb3;
  cp->out_sample = rgb3 ? GCV_SAMPLE_U8X3 : GCV_SAMPLE_U16;
  /* conversions: the input format's largest value to the output's (1.0
   * for GRAY32F), as the CPU engine scales */
  cp->out_scale = g->in_format == g->out_format ? 1.0f :
      (gfloat) (gcv_format_max_value (g->out_format)
      / gcv_format_max_value (g->in_format));
  if (gcv_format_channels (g->in_format) >= 3) {
    cp->pix = cp->unpack ? GCV_PIX_F32X4 : GCV_PIX_U8X4;
    cp->out = f->filter_alpha && !rgb3 ? GCV_OUT_U8X4 :
        GCV_OUT_U8X4_KEEP_ALPHA;
  } else {
    cp->pix = g->in_format == GCV_FORMAT_GRAY8 && !cp->unpack ? GCV_PIX_U8 :
        GCV_PIX_F32;
    cp->out = g->out_format == GCV_FORMAT_GRAY8 ? GCV_OUT_U8 : GCV_OUT_F32;
  }
}

gsize
gcv_cuda_out_size (GcvOut out)
{
  return out == GCV_OUT_U8 ? 1 : 4;
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
  c.check_finite = gcv_dispatch_check_finite (plan->geometry.in_format);
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

/* Sets the kernel the device runs (CudaPlan.kw): the filter's, or widened
 * by zero taps on the right to the record's run_kw (the dispatcher settles
 * when: tiled's unrolled kernels, never a gradient magnitude). */
static void
set_run_kernel (CudaPlan * cp, const GcvFilter * f, const GcvChoice * choice)
{
  guint w = choice->run_kw;

  run_filter_kernel (cp, f);
  if (w <= f->kw)
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

/* The format whose kernels a plan's frames run, which the dispatcher
 * knows: RGB and BGR run as RGBx, 16-bit words (whole numbers, never NaN
 * or Inf) as a frame of one channel of integers. */
static GcvFormat
kernel_format (GcvFormat format)
{
  if (gcv_format_channels (format) == 3)
    return GCV_FORMAT_RGBX;
  return gcv_format_is_16bit (format) ? GCV_FORMAT_GRAY8 : format;
}

/* What runs: the dispatcher settles the plan's record from what the
 * families report here; where it chose fft, the set-up is made (or kept)
 * and its outcome, the transform size or why it could not be made, goes to
 * a second call. Then the taps the device runs, at the record's width. */
gboolean
gcv_cuda_choose_variant (CudaPlan * cp, GcvPlan * plan, GError ** error)
{
  const GcvFilter *f = plan->filter;
  CudaEngine *e = cp->engine;
  GcvCudaConv c;
  GcvDispatchKey key;
  GcvFamilyLimits limits;
  GcvVariant forced;
  const GcvVariant *forced_variant = NULL;
  GcvChoice *choice = &plan->choice;
  char fft_error[GCV_CHOICE_DETAIL] = "";

  if (plan->forced_variant) {
    if (!gcv_variant_parse (plan->forced_variant, &forced, error))
      return FALSE;             /* checked when it was set: cannot happen */
    forced_variant = &forced;
  }
  gcv_dispatch_key_init (&key, &plan->geometry, f);
  key.format = kernel_format (plan->geometry.in_format);
  run_filter_kernel (cp, f);
  c = gcv_cuda_conv_args (cp, plan, &cp->slots[0]);
  family_limits (cp, &c, &limits);
  gcv_dispatch_choose (&key, &e->info, &limits, e->table, plan->requested,
      forced_variant, f->rank1, choice);
  if (choice->variant.family == GCV_FAMILY_FFT) {
    if (!gcv_cuda_fft_setup_ensure (cp, plan, &c, &choice->variant,
            fft_error, sizeof (fft_error), error))
      return FALSE;
    if (cp->fft)
      gcv_cuda_fft_size (cp->fft, &limits.fft_nx, &limits.fft_ny,
          &limits.fft_tiles);
    else
      limits.fft_failed = fft_error;
    gcv_dispatch_choose (&key, &e->info, &limits, e->table, plan->requested,
        forced_variant, f->rank1, choice);
  }
  /* the FFT family transforms whole frames: a rectangle of a frame
   * with regions runs tiled's adaptive kernel, or direct where no tile
   * fits (gcv_cuda_launch()) */
  cp->rect_rows = limits.adaptive_rows;
  if (choice->variant.family != GCV_FAMILY_FFT && cp->fft) {
    if (!gcv_cuda_wait_all (cp, error))
      return FALSE;
    gcv_cuda_fft_setup_free (cp);
  }
  set_run_kernel (cp, f, choice);
  return TRUE;
}

gboolean
gcv_cuda_rect_aligned (const CudaPlan * cp, const GcvPlan * plan)
{
  const GcvVariant *v = &plan->choice.variant;

  if (plan->choice.column_pass)
    return FALSE;
  return (v->family == GCV_FAMILY_TILED && !v->adaptive)
      || (v->family == GCV_FAMILY_SEPARABLE && !v->two_pass);
}

gboolean
gcv_cuda_launch (CudaPlan * cp, const GcvPlan * plan, guint slot,
    const GcvCudaConv * c, gboolean rect, GError ** error)
{
  const GcvFilter *f = plan->filter;
  const GcvVariant *v = &plan->choice.variant;

  if (plan->choice.column_pass)
    return CHECK (gcv_cuda_column (c), OP_LAUNCH);
  switch (v->family) {
    case GCV_FAMILY_TILED:
      if (!v->adaptive)
        return CHECK (gcv_cuda_tiled_width (c, v->rows), OP_LAUNCH);
      return CHECK (gcv_cuda_tiled (c, v->rows, cp->tiled_smem), OP_LAUNCH);
    case GCV_FAMILY_REGISTER:
      return CHECK (gcv_cuda_register (c, v->lane_outputs, v->block),
          OP_LAUNCH);
    case GCV_FAMILY_SEPARABLE:
      if (!v->two_pass)
        return CHECK (gcv_cuda_separable_fused (c, f->row, f->column,
                v->rows, &cp->engine->props), OP_LAUNCH);
      return CHECK (gcv_cuda_separable (c, f->row, f->column,
              cp->slots[slot].d_tmp, cp->tmp_pitch, &cp->engine->props),
          OP_LAUNCH);
    case GCV_FAMILY_FFT:{
      char err[256];
      if (rect && cp->rect_rows)
        return CHECK (gcv_cuda_tiled (c, cp->rect_rows, cp->tiled_smem),
            OP_LAUNCH);
      if (rect)
        return CHECK (gcv_cuda_direct (c), OP_LAUNCH);
      if (!gcv_cuda_fft_run (cp->fft, slot, c, err, sizeof (err))) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "%s", err);
        return FALSE;
      }
      return gcv_cuda_check (cudaSuccess, OP_LAUNCH, "fft", error);
    }
    default:
      return CHECK (gcv_cuda_direct (c), OP_LAUNCH);
  }
}
