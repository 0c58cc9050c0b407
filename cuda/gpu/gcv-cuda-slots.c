/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The slots of a CUDA plan: a slot is the place one frame in flight
 * holds, with its own stream, events, graph (gcv-cuda-graph.c) and device
 * buffers: the padded input frame (the halo made on the device), the
 * separable intermediate, the
 * output frame where the output is not written in place (host frames, or
 * a sample step), the taps of large kernels, pinned staging, and the
 * statistics' records (gcv-cuda-stats.c). Buffers are sized when the plan
 * or its filter's halo grows, or made the first time a frame needs them,
 * never per frame. Frames of different slots overlap: each runs on its
 * slot's stream (gcv-cuda-frame.c). */
#include "gcv-cuda-private.h"

#define PITCH_ALIGN 256

static gsize
round_pitch (gsize bytes)
{
  return (bytes + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
}

/* A stream-ordered free: no device-wide synchronisation, and the slot's
 * frames in flight keep what they use. */
static void
free_async (void **p, gsize * size, cudaStream_t stream)
{
  if (*p)
    cudaFreeAsync (*p, stream);
  *p = NULL;
  *size = 0;
}

static void
slot_free_buffers (CudaSlot * s)
{
  free_async (&s->d_pad, &s->pad_size, s->stream);
  free_async (&s->d_raw, &s->raw_size, s->stream);
  free_async (&s->d_tmp, &s->tmp_size, s->stream);
  free_async (&s->d_out, &s->out_size, s->stream);
  free_async ((void **) &s->d_taps, &s->taps_size, s->stream);
  free_async (&s->d_atlas, &s->atlas_size, s->stream);
  if (s->h_taps)
    cudaFreeHost (s->h_taps);
  s->h_taps = NULL;
}

/* *p holds at least `bytes` (0: none needed), made anew on the slot's
 * stream where it held less; `zero`: filled with zeros once. */
static gboolean
ensure_device (void **p, gsize * size, gsize bytes, gboolean zero,
    cudaStream_t stream, GError ** error)
{
  if (*size >= bytes)
    return TRUE;
  free_async (p, size, stream);
  if (!CHECK (cudaMallocAsync (p, bytes, stream), OP_ALLOC)) {
    *p = NULL;
    return FALSE;
  }
  if (zero && !CHECK (cudaMemsetAsync (*p, 0, bytes, stream), OP_OTHER))
    return FALSE;
  *size = bytes;
  return TRUE;
}

/* Makes the buffers of `s` in `what` (BUF_*) that hold less than frames of
 * the filter need now, on the slot's stream: usable by its frames in
 * stream order, from other streams once that is synchronised. */
gboolean
gcv_cuda_slot_ensure (CudaPlan * cp, CudaSlot * s, guint what, GError ** error)
{
  /* zeroed once: the slack past each padded row is read by vector loads
   * (never used) and must not be uninitialised memory */
  if ((what & BUF_INPUT) && (!ensure_device (&s->d_pad, &s->pad_size,
              cp->pad_bytes, TRUE, s->stream, error)
          || !ensure_device (&s->d_raw, &s->raw_size, cp->raw_bytes, FALSE,
              s->stream, error)))
    return FALSE;
  if ((what & BUF_TMP) && !ensure_device (&s->d_tmp, &s->tmp_size,
          cp->tmp_bytes, FALSE, s->stream, error))
    return FALSE;
  if ((what & BUF_OUT) && !ensure_device (&s->d_out, &s->out_size,
          cp->out_bytes, FALSE, s->stream, error))
    return FALSE;
  if ((what & BUF_TAPS) && s->taps_size < cp->taps_bytes) {
    if (s->h_taps)
      cudaFreeHost (s->h_taps);
    s->h_taps = NULL;
    if (!ensure_device ((void **) &s->d_taps, &s->taps_size, cp->taps_bytes,
            FALSE, s->stream, error)
        || !CHECK (cudaHostAlloc ((void **) &s->h_taps, cp->taps_bytes,
                cudaHostAllocDefault), OP_ALLOC)) {
      free_async ((void **) &s->d_taps, &s->taps_size, s->stream);
      s->h_taps = NULL;
      return FALSE;
    }
    s->taps_serial = 0;
  }
  return TRUE;
}

/* zeroed once, as the padded input: its columns past the reaches are
 * read by vector loads (never used) */
gboolean
gcv_cuda_slot_ensure_atlas (CudaSlot * s, gsize bytes, GError ** error)
{
  return ensure_device (&s->d_atlas, &s->atlas_size, bytes, TRUE, s->stream,
      error);
}

gboolean
gcv_cuda_slot_has (const CudaPlan * cp, const CudaSlot * s, guint what)
{
  return (!(what & BUF_INPUT) || (s->pad_size >= cp->pad_bytes
          && s->raw_size >= cp->raw_bytes))
      && (!(what & BUF_TMP) || s->tmp_size >= cp->tmp_bytes)
      && (!(what & BUF_OUT) || s->out_size >= cp->out_bytes)
      && (!(what & BUF_TAPS) || s->taps_size >= cp->taps_bytes);
}

/* Waits for every frame in flight (their events; no device-wide sync). */
gboolean
gcv_cuda_wait_all (CudaPlan * cp, GError ** error)
{
  for (guint i = 0; i < cp->n_slots; i++)
    if (!CHECK (cudaEventSynchronize (cp->slots[i].done), OP_OTHER))
      return FALSE;
  return TRUE;
}

/* The identity between equal integer formats: a device frame's bytes are
 * the output's (GRAY32F is not copied: the kernels write -0 as +0). P010's
 * words are copied whole, low bits too, as the CPU engine copies them. */
static gboolean
copies_only (const GcvPlan * plan)
{
  const GcvGeometry *g = &plan->geometry;
  return plan->filter->identity && g->in_format == g->out_format
      && g->in_format != GCV_FORMAT_GRAY32F;
}

/* What frames of the filter need of the slot buffers, and every slot's
 * buffers that are needed whatever the frame (not the output, which host
 * frames and sample steps alone need, nor the input of a plan that copies
 * device frames) made when they hold less: at plan set-up, again only
 * when the halo grows. */
gboolean
gcv_cuda_ensure_buffers (CudaPlan * cp, const GcvPlan * plan, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  gsize px = gcv_cuda_pixel_size (cp->pix);
  gsize tpx = gcv_cuda_separable_tmp_pixel (cp->pix);
  /* only the two-pass separable kernels have an intermediate */
  const GcvVariant *v = &plan->choice.variant;
  guint eager;

  /* 4 pixels of slack per row, so vector loads may run past the width */
  cp->pad_pitch = round_pitch ((g->width + cp->kw - 1 + 4) * px);
  cp->pad_bytes = cp->pad_pitch * (g->height + f->kh - 1);
  /* the frame an unpack or a widening reads, and a narrowed output on
   * its way to the host */
  cp->raw_pitch = round_pitch (g->width *
      MAX (gcv_format_pixel_size (g->in_format),
          gcv_format_pixel_size (g->out_format)));
  cp->raw_bytes = cp->unpack || cp->widen || cp->narrow ?
      cp->raw_pitch * g->height : 0;
  cp->tmp_pitch = round_pitch (g->width * tpx);
  cp->tmp_bytes = v->family == GCV_FAMILY_SEPARABLE && v->two_pass ?
      cp->tmp_pitch * (g->height + f->kh - 1) : 0;
  cp->out_pitch = round_pitch (g->width * gcv_cuda_out_size (cp->out));
  cp->out_bytes = cp->out_pitch * g->height;
  cp->taps_bytes = (gsize) cp->kw * f->kh > GCV_CUDA_PARAM_TAPS ?
      sizeof (gfloat) * cp->n_taps : 0;
  cp->copy_only = copies_only (plan);

  eager = BUF_TMP | BUF_TAPS | (cp->copy_only ? 0 : BUF_INPUT);
  for (guint i = 0; i < cp->n_slots; i++)
    if (!gcv_cuda_slot_has (cp, &cp->slots[i], eager))
      goto remake;
  return TRUE;                  /* big enough */

remake:
  /* the frames in flight use the buffers about to be remade */
  if (!gcv_cuda_wait_all (cp, error))
    return FALSE;
  for (guint i = 0; i < cp->n_slots; i++)
    if (!gcv_cuda_slot_ensure (cp, &cp->slots[i], eager, error))
      return FALSE;
  /* stream-ordered allocations: make them usable from any stream */
  for (guint i = 0; i < cp->n_slots; i++)
    if (!CHECK (cudaStreamSynchronize (cp->slots[i].stream), OP_OTHER))
      return FALSE;
  return TRUE;
}

/* Each slot's stream and events (cp->slots made, zeroed). */
gboolean
gcv_cuda_slots_create (CudaPlan * cp, GError ** error)
{
  for (guint i = 0; i < cp->n_slots; i++) {
    CudaSlot *s = &cp->slots[i];
    if (!CHECK (cudaStreamCreateWithFlags (&s->stream,
                cudaStreamNonBlocking), OP_OTHER)
        || !CHECK (cudaEventCreateWithFlags (&s->done,
                cudaEventDisableTiming | cudaEventBlockingSync), OP_OTHER)
        || !CHECK (cudaEventCreateWithFlags (&s->read,
                cudaEventDisableTiming | cudaEventBlockingSync), OP_OTHER))
      return FALSE;
  }
  return TRUE;
}

/* Once each slot's work is done: its buffers, stream and event. */
void
gcv_cuda_slots_free (CudaPlan * cp)
{
  for (guint i = 0; i < cp->n_slots; i++) {
    CudaSlot *s = &cp->slots[i];
    if (s->stream) {
      cudaStreamSynchronize (s->stream);
      slot_free_buffers (s);
      gcv_cuda_stats_free (&s->stats, s->stream);
      cudaStreamSynchronize (s->stream);
      cudaStreamDestroy (s->stream);
    }
    if (s->graph)
      cudaGraphExecDestroy (s->graph);
    if (s->done)
      cudaEventDestroy (s->done);
    if (s->read)
      cudaEventDestroy (s->read);
    if (s->h_in)
      cudaFreeHost (s->h_in);
    if (s->h_out)
      cudaFreeHost (s->h_out);
  }
  g_free (cp->slots);
}
