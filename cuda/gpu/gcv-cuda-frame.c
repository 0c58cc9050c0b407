/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A frame through its slot on the CUDA backend, all of it queued on the
 * slot's stream: the host frame staged and uploaded (or the device frame
 * copied in), the halo, the chosen family's launch, the download, the
 * slot's event; then the wait for that event, the copy out of staging and
 * the frame's statistics. The identity between equal 8-bit formats copies
 * device frames instead. */
#include "gcv-cuda-private.h"

#include <string.h>

static gboolean
is_pinned (const void *p)
{
  struct cudaPointerAttributes attr;
  if (cudaPointerGetAttributes (&attr, p) != cudaSuccess) {
    cudaGetLastError ();        /* clear it: not an error for us */
    return FALSE;
  }
  return attr.type == cudaMemoryTypeHost;
}

/* A pinned staging buffer of at least `need` bytes, grown (rarely) as
 * frames grow. */
static gboolean
ensure_staging (void **buf, gsize * size, gsize need, GError ** error)
{
  if (*size >= need)
    return TRUE;
  if (*buf)
    cudaFreeHost (*buf);
  *buf = NULL;
  *size = 0;
  if (!CHECK (cudaHostAlloc (buf, need, cudaHostAllocDefault), OP_ALLOC))
    return FALSE;
  *size = need;
  return TRUE;
}

/* Host frame rows into pinned staging (when pageable), or as they are. */
static const void *
stage_input (CudaSlot * s, const GcvImage * src, gsize row, guint h,
    gsize * pitch, GError ** error)
{
  gsize need = row * h;

  if (is_pinned (src->data)) {
    *pitch = src->stride;
    return src->data;
  }
  if (!ensure_staging (&s->h_in, &s->h_in_size, need, error))
    return NULL;
  for (guint y = 0; y < h; y++)
    memcpy ((guint8 *) s->h_in + y * row,
        (const guint8 *) src->data + y * src->stride, row);
  *pitch = row;
  return s->h_in;
}

static gboolean
upload (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * src, guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  gsize row = (gsize) g->width * gcv_format_pixel_size (g->in_format);
  guint8 *interior = (guint8 *) s->d_pad + f->ay * cp->pad_pitch
      + f->ax * gcv_cuda_pixel_size (cp->pix);
  void *target = cp->unpack ? s->d_raw : interior;
  gsize target_pitch = cp->unpack ? cp->raw_pitch : cp->pad_pitch;

  if (src->on_device && step > 1) {
    if (!CHECK (gcv_cuda_copy_samples (target, target_pitch, 1, src->data,
                src->stride, step, g->width, g->height, s->stream),
            OP_LAUNCH))
      return FALSE;
  } else if (src->on_device) {
    if (src->data != target
        && !CHECK (cudaMemcpy2DAsync (target, target_pitch, src->data,
                src->stride, row, g->height, cudaMemcpyDeviceToDevice,
                s->stream), OP_COPY))
      return FALSE;
  } else {
    gsize pitch;
    const void *host = stage_input (s, src, row, g->height, &pitch, error);
    if (!host || !CHECK (cudaMemcpy2DAsync (target, target_pitch, host, pitch,
                row, g->height, cudaMemcpyHostToDevice, s->stream), OP_COPY))
      return FALSE;
  }
  if (cp->unpack
      && !CHECK (gcv_cuda_unpack (cp->pix, s->d_raw, cp->raw_pitch, interior,
              cp->pad_pitch, g->width, g->height, s->stream), OP_LAUNCH))
    return FALSE;
  return TRUE;
}

static gboolean
compute (CudaPlan * cp, const GcvPlan * plan, guint slot, const GcvImage * dst,
    guint step, GError ** error)
{
  const GcvFilter *f = plan->filter;
  const GcvVariant *v = &plan->choice.variant;
  CudaSlot *s = &cp->slots[slot];
  GcvCudaConv c = gcv_cuda_conv_args (cp, plan, s);

  /* device output is written in place, unless every other byte (then
   * download() scatters it); host output and that need the slot's */
  if (dst->on_device && step <= 1) {
    c.dst = dst->data;
    c.dst_pitch = dst->stride;
  } else if (!gcv_cuda_slot_ensure (cp, s, BUF_OUT, error)) {
    return FALSE;
  } else {
    c.dst = s->d_out;
  }
  if (s->d_taps && s->taps_serial != cp->filter_serial) {
    gsize bytes = sizeof (gfloat) * cp->n_taps;
    memcpy (s->h_taps, c.host_taps, bytes);
    if (!CHECK (cudaMemcpyAsync (s->d_taps, s->h_taps, bytes,
                cudaMemcpyHostToDevice, s->stream), OP_COPY))
      return FALSE;
    s->taps_serial = cp->filter_serial;
  }
  if (!CHECK (gcv_cuda_fill_border (cp->pix, s->d_pad, cp->pad_pitch,
              c.width, c.height, c.kw, f->kh, f->ax, f->ay, f->border,
              f->border_value, s->stream), OP_LAUNCH))
    return FALSE;
  if (plan->choice.column_pass)
    return CHECK (gcv_cuda_column (&c), OP_LAUNCH);
  switch (v->family) {
    case GCV_FAMILY_TILED:
      if (!v->adaptive)
        return CHECK (gcv_cuda_tiled_width (&c, v->rows), OP_LAUNCH);
      return CHECK (gcv_cuda_tiled (&c, v->rows, cp->tiled_smem), OP_LAUNCH);
    case GCV_FAMILY_REGISTER:
      return CHECK (gcv_cuda_register (&c, v->lane_outputs, v->block),
          OP_LAUNCH);
    case GCV_FAMILY_SEPARABLE:
      if (!v->two_pass)
        return CHECK (gcv_cuda_separable_fused (&c, f->row, f->column,
                v->rows, &cp->engine->props), OP_LAUNCH);
      return CHECK (gcv_cuda_separable (&c, f->row, f->column, s->d_tmp,
              cp->tmp_pitch, &cp->engine->props), OP_LAUNCH);
    case GCV_FAMILY_FFT:{
      char err[256];
      if (!gcv_cuda_fft_run (cp->fft, slot, &c, err, sizeof (err))) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "%s", err);
        return FALSE;
      }
      return gcv_cuda_check (cudaSuccess, OP_LAUNCH, "fft", error);
    }
    default:
      return CHECK (gcv_cuda_direct (&c), OP_LAUNCH);
  }
}

static gboolean
download (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * dst, guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  gsize row = (gsize) g->width * gcv_format_pixel_size (g->out_format);
  gsize need = row * g->height;

  s->copy_to = NULL;
  if (dst->on_device && step > 1)
    return CHECK (gcv_cuda_copy_samples (dst->data, dst->stride, step,
            s->d_out, cp->out_pitch, 1, g->width, g->height, s->stream),
        OP_LAUNCH);
  if (dst->on_device)
    return TRUE;
  if (is_pinned (dst->data))
    return CHECK (cudaMemcpy2DAsync (dst->data, dst->stride, s->d_out,
            cp->out_pitch, row, g->height, cudaMemcpyDeviceToHost,
            s->stream), OP_COPY);
  if (!ensure_staging (&s->h_out, &s->h_out_size, need, error))
    return FALSE;
  s->copy_to = dst->data;
  s->copy_stride = dst->stride;
  return CHECK (cudaMemcpy2DAsync (s->h_out, row, s->d_out, cp->out_pitch,
          row, g->height, cudaMemcpyDeviceToHost, s->stream), OP_COPY);
}

/* A copy-only plan's device frame: its bytes into the output, with no
 * padded input or kernel (NV12's U and V with planes=luma). Sample steps
 * are GRAY8's only. */
static gboolean
copy_device (const GcvPlan * plan, CudaSlot * s, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  gsize row = (gsize) g->width * gcv_format_pixel_size (g->in_format);

  s->copy_to = NULL;
  if (steps->src > 1 || steps->dst > 1)
    return CHECK (gcv_cuda_copy_samples (dst->data, dst->stride,
            MAX (steps->dst, 1), src->data, src->stride, MAX (steps->src, 1),
            g->width, g->height, s->stream), OP_LAUNCH);
  return src->data == dst->data
      || CHECK (cudaMemcpy2DAsync (dst->data, dst->stride, src->data,
          src->stride, row, g->height, cudaMemcpyDeviceToDevice, s->stream),
      OP_COPY);
}

gboolean
gcv_cuda_submit (gpointer state, GcvPlan * plan, guint slot,
    const GcvImage * src, const GcvImage * dst, const GcvSteps * steps,
    GError ** error)
{
  CudaPlan *cp = state;
  CudaSlot *s = &cp->slots[slot];

  if (!CHECK (cuda_enter (cp->engine), OP_OTHER))
    return FALSE;
  if (cp->copy_only && src->on_device && dst->on_device && !s->stats.on)
    return copy_device (plan, s, src, dst, steps, error)
        && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
  /* the input buffers of a copy-only plan are made for the first frame
   * that is filtered */
  return gcv_cuda_slot_ensure (cp, s, BUF_INPUT, error)
      && upload (cp, plan, s, src, steps->src, error)
      && compute (cp, plan, slot, dst, steps->dst, error)
      && download (cp, plan, s, dst, steps->dst, error)
      && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
}

gboolean
gcv_cuda_wait (gpointer state, GcvPlan * plan, guint slot, GError ** error)
{
  CudaPlan *cp = state;
  CudaSlot *s = &cp->slots[slot];
  const GcvGeometry *g = &plan->geometry;

  if (!CHECK (cuda_enter (cp->engine), OP_OTHER)
      || !CHECK (cudaEventSynchronize (s->done), OP_OTHER))
    return FALSE;
  if (s->copy_to) {
    gsize row = (gsize) g->width * gcv_format_pixel_size (g->out_format);
    for (guint y = 0; y < g->height; y++)
      memcpy (s->copy_to + y * s->copy_stride,
          (const guint8 *) s->h_out + y * row, row);
    s->copy_to = NULL;
  }
  return TRUE;
}

gboolean
gcv_cuda_set_frame_options (gpointer state, GcvPlan * plan, guint slot,
    const GcvFrameOptions * options, GError ** error)
{
  CudaPlan *cp = state;
  CudaSlot *s = &cp->slots[slot];

  return CHECK (cuda_enter (cp->engine), OP_OTHER)
      && gcv_cuda_stats_begin (&s->stats, options,
      gcv_filtered_channels (plan->geometry.in_format,
          plan->filter->filter_alpha), s->stream, error);
}

void
gcv_cuda_get_frame_stats (gpointer state, GcvPlan * plan, guint slot,
    GcvFrameStats * stats)
{
  CudaPlan *cp = state;

  gcv_cuda_stats_end (&cp->slots[slot].stats, plan->geometry.width,
      plan->geometry.height, stats);
}
