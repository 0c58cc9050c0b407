/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A frame through its slot on the CUDA backend, all of it queued on the
 * slot's stream: the host frame staged and uploaded (or the device frame
 * copied in), widened where the families have no element for its samples
 * (16-bit words, RGB and BGR), the halo, the chosen family's launch (on
 * the filtered rectangles of a frame with regions, the rest copied:
 * gcv-cuda-regions.c), the output narrowed back to such samples, the
 * download, the slot's event;
 * then the wait for that event, the copy out of staging and the frame's
 * statistics. The identity between equal integer formats copies device
 * frames instead. */
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

  /* page-locked (by its allocator or registered): read by the upload
   * itself, which the caller may wait for (gcv_cuda_input_done()) */
  if ((s->reads_host = is_pinned (src->data))) {
    *pitch = src->stride;
    return src->data;
  }
  if (!ensure_staging (&s->h_in, &s->h_in_size, need, error))
    return NULL;
  s->staged = TRUE;
  for (guint y = 0; y < h; y++)
    memcpy ((guint8 *) s->h_in + y * row,
        (const guint8 *) src->data + y * src->stride, row);
  *pitch = row;
  return s->h_in;
}

/* P010's planes hold their 10 bits high (a shift of 6); an identity
 * with nothing to measure moves whole words, low bits too, as the CPU
 * engine copies them. GRAY16_LE: 0. */
static int
word_shift (const CudaPlan * cp, const CudaSlot * s, GcvFormat format)
{
  return format == GCV_FORMAT_P010_PLANE && !(cp->copy_only
      && !s->stats.on) ? 6 : 0;
}

/* The input into the padded frame: straight in (8-bit, GRAY32F), or
 * through the frame an unpack or a widening reads. A device frame is
 * widened where it is, with its sample step. */
static gboolean
upload (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * src, guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  const guint px = gcv_format_pixel_size (g->in_format);
  gsize row = (gsize) g->width * px;
  guint8 *interior = (guint8 *) s->d_pad + f->ay * cp->pad_pitch
      + f->ax * gcv_cuda_pixel_size (cp->pix);
  const gboolean via_raw = cp->unpack || cp->widen;
  void *target = via_raw ? s->d_raw : interior;
  gsize target_pitch = via_raw ? cp->raw_pitch : cp->pad_pitch;
  const void *widen_from = s->d_raw;
  gsize widen_pitch = cp->raw_pitch;
  guint widen_step = px;

  if (src->on_device && cp->widen) {
    widen_from = src->data;
    widen_pitch = src->stride;
    widen_step = MAX (step, px);
  } else if (src->on_device && step > 1) {
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
                row, g->height, cudaMemcpyHostToDevice, s->stream), OP_COPY)
        || (s->reads_host && !CHECK (cudaEventRecord (s->read, s->stream),
                OP_OTHER)))
      return FALSE;
  }
  if (cp->widen)
    return CHECK (gcv_cuda_widen (cp->in_sample, widen_from, widen_pitch,
            widen_step, word_shift (cp, s, g->in_format), cp->pix, interior,
            cp->pad_pitch, g->width, g->height, s->stream), OP_LAUNCH);
  if (cp->unpack
      && !CHECK (gcv_cuda_unpack (cp->pix, s->d_raw, cp->raw_pitch, interior,
              cp->pad_pitch, g->width, g->height, s->stream), OP_LAUNCH))
    return FALSE;
  return TRUE;
}

/* The halo and the chosen family's launch: on the whole frame, or on each
 * filtered rectangle of a frame with regions (gcv-cuda-regions.c). */
static gboolean
compute (CudaPlan * cp, const GcvPlan * plan, guint slot, const GcvImage * dst,
    guint step, gboolean regions, GError ** error)
{
  const GcvFilter *f = plan->filter;
  CudaSlot *s = &cp->slots[slot];
  GcvCudaConv c = gcv_cuda_conv_args (cp, plan, s);

  /* device output is written in place, unless every other byte (then
   * download() scatters it) or narrowed; host output and those need the
   * slot's */
  if (dst->on_device && step <= 1 && !cp->narrow) {
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
  if (!(regions && cp->atlas_direct)
      && !CHECK (gcv_cuda_fill_border (cp->pix, s->d_pad, cp->pad_pitch,
              c.width, c.height, c.kw, f->kh, f->ax, f->ay, f->border,
              f->border_value, s->stream), OP_LAUNCH))
    return FALSE;
  if (regions)
    return gcv_cuda_regions_launch (cp, plan, slot, &c, error);
  return gcv_cuda_launch (cp, plan, slot, &c, FALSE, error);
}

/* A rectangle of the kernels' output to where the frame's output is
 * assembled: narrowed (into a device frame where it is, with its sample
 * step, or for the host into the slot's raw frame) or scattered to a
 * sample step; else it is there already. */
static gboolean
finish_rect (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * dst, guint step, const GcvRect * r, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->out_format);
  const guint8 *from = (const guint8 *) s->d_out + (gsize) r->y
      * cp->out_pitch + (gsize) r->x * gcv_cuda_out_size (cp->out);

  if (cp->narrow) {
    const int shift = word_shift (cp, s, g->out_format);
    const float max = shift ? 1023.0f : 65535.0f;
    const guint to_step = dst->on_device ? MAX (step, px) : px;
    const gsize pitch = dst->on_device ? dst->stride : cp->raw_pitch;
    guint8 *to = (guint8 *) (dst->on_device ? dst->data : s->d_raw)
        + (gsize) r->y * pitch + (gsize) r->x * to_step;
    return CHECK (gcv_cuda_narrow (cp->out_sample, from, cp->out_pitch, to,
            pitch, to_step, shift, max, r->width, r->height, s->stream),
        OP_LAUNCH);
  }
  if (dst->on_device && step > 1)
    return CHECK (gcv_cuda_copy_samples ((guint8 *) dst->data
            + (gsize) r->y * dst->stride + (gsize) r->x * step, dst->stride,
            step, from, cp->out_pitch, 1, r->width, r->height, s->stream),
        OP_LAUNCH);
  return TRUE;
}

/* The kernels' output to where the frame's output is assembled: the
 * whole frame, or each filtered rectangle of a frame with regions. */
static gboolean
finish (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * dst, guint step, gboolean regions, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvRect frame = { 0, 0, (gint) g->width, (gint) g->height };
  const GArray *rects = cp->split.filtered;

  if (!regions)
    return finish_rect (cp, plan, s, dst, step, &frame, error);
  for (guint i = 0; i < rects->len; i++)
    if (!finish_rect (cp, plan, s, dst, step, &g_array_index (rects, GcvRect,
                i), error))
      return FALSE;
  return TRUE;
}

/* A host frame's output copied down from where it was assembled (the
 * narrowed frame, or the kernels' output). */
static gboolean
download (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * dst, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->out_format);
  gsize row = (gsize) g->width * px;
  gsize need = row * g->height;
  const void *from = cp->narrow ? s->d_raw : s->d_out;
  gsize from_pitch = cp->narrow ? cp->raw_pitch : cp->out_pitch;

  s->copy_to = NULL;
  if (dst->on_device)
    return TRUE;
  if (is_pinned (dst->data))
    return CHECK (cudaMemcpy2DAsync (dst->data, dst->stride, from,
            from_pitch, row, g->height, cudaMemcpyDeviceToHost, s->stream),
        OP_COPY);
  if (!ensure_staging (&s->h_out, &s->h_out_size, need, error))
    return FALSE;
  s->copy_to = dst->data;
  s->copy_stride = dst->stride;
  return CHECK (cudaMemcpy2DAsync (s->h_out, row, from, from_pitch, row,
          g->height, cudaMemcpyDeviceToHost, s->stream), OP_COPY);
}

/* Where the input's samples are on the device, for a frame with regions'
 * copied area: a device frame itself; a host frame where upload() put it,
 * the frame an unpack or a widening reads, else the padded frame's
 * interior, whose elements are then the frame's own. */
static CudaSamples
input_samples (const CudaPlan * cp, const GcvPlan * plan, const CudaSlot * s,
    const GcvImage * src, guint step)
{
  const GcvFilter *f = plan->filter;
  const guint px = gcv_format_pixel_size (plan->geometry.in_format);

  if (src->on_device)
    return (CudaSamples) { src->data, src->stride, MAX (step, px) };
  if (cp->unpack || cp->widen)
    return (CudaSamples) { s->d_raw, cp->raw_pitch, px };
  return (CudaSamples) { (guint8 *) s->d_pad + f->ay * cp->pad_pitch
        + f->ax * gcv_cuda_pixel_size (cp->pix), cp->pad_pitch, px };
}

/* Where the output is assembled on the device: a device frame itself,
 * else what download() copies to the host. */
static CudaSamples
output_samples (const CudaPlan * cp, const GcvPlan * plan,
    const CudaSlot * s, const GcvImage * dst, guint step)
{
  const guint px = gcv_format_pixel_size (plan->geometry.out_format);

  if (dst->on_device)
    return (CudaSamples) { dst->data, dst->stride, MAX (step, px) };
  if (cp->narrow)
    return (CudaSamples) { s->d_raw, cp->raw_pitch, px };
  return (CudaSamples) { s->d_out, cp->out_pitch, px };
}

/* A copy-only plan's device frame: its bytes into the output, with no
 * padded input or kernel (NV12's and P010's U and V with planes=luma).
 * Samples a step apart are copied a byte of each at a time. */
static gboolean
copy_device (const GcvPlan * plan, CudaSlot * s, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->in_format);
  gsize row = (gsize) g->width * px;

  s->copy_to = NULL;
  if (steps->src > px || steps->dst > px) {
    for (guint b = 0; b < px; b++)
      if (!CHECK (gcv_cuda_copy_samples ((guint8 *) dst->data + b,
                  dst->stride, MAX (steps->dst, px),
                  (const guint8 *) src->data + b, src->stride,
                  MAX (steps->src, px), g->width, g->height, s->stream),
              OP_LAUNCH))
        return FALSE;
    return TRUE;
  }
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
  const GcvGeometry *g = &plan->geometry;
  const gboolean regions = gcv_regions_restrict (&s->options);
  guint64 area = (guint64) g->width * g->height;
  CudaSamples in = { 0 }, out = { 0 };

  s->reads_host = s->staged = FALSE;
  if (!CHECK (cuda_enter (cp->engine), OP_OTHER))
    return FALSE;
  /* (the copy is the output with regions or without) */
  if (cp->copy_only && src->on_device && dst->on_device && !s->stats.on)
    return copy_device (plan, s, src, dst, steps, error)
        && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
  /* the input buffers of a copy-only plan are made for the first frame
   * that is filtered */
  if (!gcv_cuda_slot_ensure (cp, s, BUF_INPUT | (regions && !dst->on_device
              ? BUF_OUT : 0), error))
    return FALSE;
  if (regions) {
    in = input_samples (cp, plan, s, src, steps->src);
    out = output_samples (cp, plan, s, dst, steps->dst);
    area = gcv_cuda_regions_cut (cp, plan, s, &in, &out, src->on_device
        && !cp->unpack && !cp->widen);
  }
  /* (small regions of a device frame may be read where it lies) */
  return gcv_cuda_stats_set_total (&s->stats, area, s->stream, error)
      && ((regions && cp->atlas_direct)
      || upload (cp, plan, s, src, steps->src, error))
      && (!regions || gcv_cuda_regions_copy (cp, plan, s, &in, &out, TRUE,
          error))
      && compute (cp, plan, slot, dst, steps->dst, regions, error)
      && finish (cp, plan, s, dst, steps->dst, regions, error)
      && (!regions || gcv_cuda_regions_copy (cp, plan, s, &in, &out, FALSE,
          error))
      && download (cp, plan, s, dst, error)
      && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
}

/* A host input staged at the submit is read no more; one page-locked is
 * once its upload is done. A device input is read by the frame's kernels:
 * not before the frame is. */
gboolean
gcv_cuda_input_done (gpointer state, GcvPlan * plan, guint slot,
    gboolean wait, gboolean * done, GError ** error)
{
  CudaPlan *cp = state;
  CudaSlot *s = &cp->slots[slot];

  *done = s->staged;
  if (*done || !s->reads_host || !wait)
    return TRUE;
  if (!CHECK (cuda_enter (cp->engine), OP_OTHER)
      || !CHECK (cudaEventSynchronize (s->read), OP_OTHER))
    return FALSE;
  *done = TRUE;
  return TRUE;
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

  if (options)
    s->options = *options;
  else                          /* all off, as gcv_frame_options_init() */
    memset (&s->options, 0, sizeof (s->options));
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

  gcv_cuda_stats_end (&cp->slots[slot].stats, plan->geometry.width, stats);
}
