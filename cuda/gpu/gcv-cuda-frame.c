/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A frame through its slot on the CUDA backend, all of it queued on the
 * slot's stream: the host frame staged and uploaded (or the device frame
 * copied in), widened where the families have no element for its samples
 * (16-bit words, RGB and BGR), the halo, the chosen family's launch (on
 * the filtered rectangles of a frame with regions, the rest copied:
 * gcv-cuda-regions.c), the output narrowed back to such samples (these
 * launches replayed as a graph where they are the same frame after frame:
 * gcv-cuda-graph.c), the download, the slot's event;
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

/* Where the input is copied to: the padded frame's interior (8-bit,
 * GRAY32F), or the frame an unpack or a widening reads. */
static guint8 *
interior (const CudaPlan * cp, const GcvPlan * plan, const CudaSlot * s)
{
  const GcvFilter *f = plan->filter;
  return (guint8 *) s->d_pad + f->ay * cp->pad_pitch
      + f->ax * gcv_cuda_pixel_size (cp->pix);
}

/* The input copied in: a host frame uploaded, a device frame copied
 * (with its sample step), unless a widening reads it where it is. */
static gboolean
upload (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * src, guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->in_format);
  gsize row = (gsize) g->width * px;
  const gboolean via_raw = cp->unpack || cp->widen;
  void *target = via_raw ? s->d_raw : interior (cp, plan, s);
  gsize target_pitch = via_raw ? cp->raw_pitch : cp->pad_pitch;
  const void *host;
  gsize pitch;

  if (src->on_device && cp->widen)
    return TRUE;                /* widened where it is */
  if (src->on_device && step > 1)
    return CHECK (gcv_cuda_copy_samples (target, target_pitch, 1, src->data,
            src->stride, step, g->width, g->height, s->stream), OP_LAUNCH);
  if (src->on_device)
    return src->data == target
        || CHECK (cudaMemcpy2DAsync (target, target_pitch, src->data,
            src->stride, row, g->height, cudaMemcpyDeviceToDevice,
            s->stream), OP_COPY);
  host = stage_input (s, src, row, g->height, &pitch, error);
  return host && CHECK (cudaMemcpy2DAsync (target, target_pitch, host, pitch,
          row, g->height, cudaMemcpyHostToDevice, s->stream), OP_COPY)
      && (!s->reads_host || CHECK (cudaEventRecord (s->read, s->stream),
          OP_OTHER));
}

/* The copied input into the padded frame, widened or unpacked; a device
 * frame is widened where it is, with its sample step. */
static gboolean
convert_input (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * src, guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->in_format);
  const gboolean in_place = src->on_device && cp->widen;

  if (cp->widen)
    return CHECK (gcv_cuda_widen (cp->in_sample, in_place ? src->data
            : s->d_raw, in_place ? src->stride : cp->raw_pitch,
            in_place ? MAX (step, px) : px, word_shift (cp, s, g->in_format),
            cp->pix, interior (cp, plan, s), cp->pad_pitch, g->width,
            g->height, s->stream), OP_LAUNCH);
  return !cp->unpack || CHECK (gcv_cuda_unpack (cp->pix, s->d_raw,
          cp->raw_pitch, interior (cp, plan, s), cp->pad_pitch, g->width,
          g->height, s->stream), OP_LAUNCH);
}

/* Device output is written in place, unless every other byte (then
 * finish() scatters it) or narrowed; host output and those go through the
 * slot's. */
static gboolean
output_in_place (const CudaPlan * cp, const GcvImage * dst, guint step)
{
  return dst->on_device && step <= 1 && !cp->narrow;
}

/* What the launches need before they are queued: the slot's output
 * where they do not write in place, large kernels' taps. */
static gboolean
prepare (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const GcvImage * dst, guint step, GError ** error)
{
  if (!output_in_place (cp, dst, step)
      && !gcv_cuda_slot_ensure (cp, s, BUF_OUT, error))
    return FALSE;
  if (s->d_taps && s->taps_serial != cp->filter_serial) {
    gsize bytes = sizeof (gfloat) * cp->n_taps;
    memcpy (s->h_taps, gcv_cuda_conv_args (cp, plan, s).host_taps, bytes);
    if (!CHECK (cudaMemcpyAsync (s->d_taps, s->h_taps, bytes,
                cudaMemcpyHostToDevice, s->stream), OP_COPY))
      return FALSE;
    s->taps_serial = cp->filter_serial;
  }
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

  if (output_in_place (cp, dst, step)) {
    c.dst = dst->data;
    c.dst_pitch = dst->stride;
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

/* A frame's launches, from its copied input to its output where the
 * download takes it. */
typedef struct {
  CudaPlan *cp;
  const GcvPlan *plan;
  guint slot;
  const GcvImage *src, *dst;
  const GcvSteps *steps;
  gboolean regions;
} Launches;

static gboolean
launch_frame (gpointer data, GError ** error)
{
  const Launches *l = data;
  CudaSlot *s = &l->cp->slots[l->slot];

  return convert_input (l->cp, l->plan, s, l->src, l->steps->src, error)
      && compute (l->cp, l->plan, l->slot, l->dst, l->steps->dst, l->regions,
      error)
      && finish (l->cp, l->plan, s, l->dst, l->steps->dst, l->regions, error);
}

/* The launches as a graph where they are the same frame after frame: a
 * frame of host memory in and out (a device frame's pointers are the
 * launches'), with no regions (their rectangles vary), no statistics, and
 * a family that launches its own kernels (cuFFT does the FFT's). */
static gboolean
replayable (const GcvPlan * plan, const CudaSlot * s, const Launches * l)
{
  return !l->src->on_device && !l->dst->on_device && !l->regions
      && !s->stats.on && plan->choice.variant.family != GCV_FAMILY_FFT;
}

static gboolean
run_launches (const Launches * l, GError ** error)
{
  CudaSlot *s = &l->cp->slots[l->slot];
  const CudaGraphKey key = { l->cp->filter_serial,
    {s->d_pad, s->d_raw, s->d_tmp, s->d_out, s->d_taps}
  };

  if (!replayable (l->plan, s, l))
    return launch_frame ((gpointer) l, error);
  return gcv_cuda_graph_run (s, &key, launch_frame, (gpointer) l, error);
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
  const Launches launches = { cp, plan, slot, src, dst, steps, regions };
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
      && prepare (cp, plan, s, dst, steps->dst, error)
      && run_launches (&launches, error)
      && (!regions || gcv_cuda_regions_copy (cp, plan, s, &in, &out, FALSE,
          error))
      && download (cp, plan, s, dst, error)
      && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
}

/* How long a wait polls before it blocks: a small frame's upload, or
 * what is left of it, ends within some tens of microseconds, sooner than
 * a thread blocked on the event would wake (docs/performance.md). */
#define POLL_US 100

static gboolean
wait_event (cudaEvent_t event, GError ** error)
{
  const gint64 until = g_get_monotonic_time () + POLL_US;
  cudaError_t err;

  while ((err = cudaEventQuery (event)) == cudaErrorNotReady
      && g_get_monotonic_time () < until);
  if (err == cudaErrorNotReady)
    err = cudaEventSynchronize (event);
  return CHECK (err, OP_OTHER);
}

/* A host input staged at the submit is read no more; one page-locked is
 * once its upload is done (asked of the event without `wait`). A device
 * input is read by the frame's kernels: not before the frame is. */
gboolean
gcv_cuda_input_done (gpointer state, GcvPlan * plan, guint slot,
    gboolean wait, gboolean * done, GError ** error)
{
  CudaPlan *cp = state;
  CudaSlot *s = &cp->slots[slot];
  cudaError_t err;

  *done = s->staged;
  if (*done || !s->reads_host)
    return TRUE;
  if (!CHECK (cuda_enter (cp->engine), OP_OTHER))
    return FALSE;
  if (!wait) {
    err = cudaEventQuery (s->read);
    *done = err == cudaSuccess;
    return err == cudaErrorNotReady || CHECK (err, OP_OTHER);
  }
  if (!wait_event (s->read, error))
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
      || !wait_event (s->done, error))
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
