/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics on the CUDA backend, the host's part.
 *
 * The frame's output kernel takes the statistics in its epilogue and its
 * last warp leaves them, summed, in the slot's page-locked result block
 * (kernels/gcv-kernels-stats.cuh); so all a frame costs here is the threshold passed
 * with the launch and, after the frame's event, turning the result into
 * GcvFrameStats. The slot's records (device memory, zero between frames)
 * and its result block are made the first time a frame of the slot asks,
 * never per frame. */
#include "gcv-private.h"
#include "gcv-cuda-device.h"
#include "gcv-cuda-stats.h"

#include <math.h>
#include <string.h>

/* The largest float <= t: for a float v, |v| > it exactly where |v| > t
 * (t >= 0; a t beyond the floats gives FLT_MAX, above which only Inf
 * is). */
static gfloat
float_below (gdouble t)
{
  gfloat f = (gfloat) t;

  if ((gdouble) f > t)
    f = nextafterf (f, -INFINITY);
  return f;
}

static gboolean
make_buffers (GcvCudaSlotStats * st, cudaStream_t stream, GError ** error)
{
  GcvCudaStatsResult *device_result = NULL;

  /* the kernels write the result block through the device's mapping of
   * it, whose address the records hold; from pageable memory the copy
   * takes the pointer before it returns */
  if (!CHECK (cudaMallocAsync ((void **) &st->state, sizeof (*st->state),
              stream), OP_ALLOC)
      || !CHECK (cudaMemsetAsync (st->state, 0, sizeof (*st->state), stream),
          OP_OTHER)
      || !CHECK (cudaHostAlloc ((void **) &st->result, sizeof (*st->result),
              cudaHostAllocMapped | cudaHostAllocPortable), OP_ALLOC)
      || !CHECK (cudaHostGetDevicePointer ((void **) &device_result,
              st->result, 0), OP_OTHER)
      || !CHECK (cudaMemcpyAsync (&st->state->result, &device_result,
              sizeof (device_result), cudaMemcpyHostToDevice, stream),
          OP_COPY)) {
    gcv_cuda_stats_free (st, stream);
    return FALSE;
  }
  return TRUE;
}

gboolean
gcv_cuda_stats_begin (GcvCudaSlotStats * st, const GcvFrameOptions * options,
    guint n_channels, cudaStream_t stream, GError ** error)
{
  st->on = FALSE;
  if (!options || !options->statistics)
    return TRUE;
  if (!st->state && !make_buffers (st, stream, error))
    return FALSE;
  if (st->stale) {
    if (!CHECK (cudaMemsetAsync (st->state, 0, sizeof (*st->state), stream),
            OP_OTHER))
      return FALSE;
    st->device_total = 0;
  }
  st->stale = FALSE;
  st->threshold = float_below (options->statistics_threshold);
  st->n_channels = n_channels;
  /* the slot's last frame is done: the block is ours until this frame's
   * kernel marks it */
  *(volatile guint *) &st->result->samples = 0;
  st->on = TRUE;
  return TRUE;
}

gboolean
gcv_cuda_stats_set_total (GcvCudaSlotStats * st, guint64 total,
    cudaStream_t stream, GError ** error)
{
  if (!st->on)
    return TRUE;
  if (total > G_MAXUINT) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "%" G_GUINT64_FORMAT
        " samples: the statistics count %u at most", total, G_MAXUINT);
    return FALSE;
  }
  st->total = (guint) total;
  if (st->total == st->device_total || st->total == 0)
    return TRUE;
  /* from the page-locked block, which stays as it is until the slot's
   * next frame, after this one is done */
  st->result->total = st->total;
  if (!CHECK (cudaMemcpyAsync (&st->state->total, &st->result->total,
              sizeof (st->state->total), cudaMemcpyHostToDevice, stream),
          OP_COPY))
    return FALSE;
  st->device_total = st->total;
  return TRUE;
}

void
gcv_cuda_stats_args (const GcvCudaSlotStats * st, GcvCudaConv * c)
{
  c->stats = st->on ? st->state : NULL;
  c->stats_threshold = st->threshold;
  c->stats_origin = 0;
  c->stats_stride = (unsigned) c->width;
}

/* A key of GcvCudaChannelStats (kernels/gcv-kernels.h) as a value and its place. */
static void
extreme (guint64 key, gboolean smallest, guint width, gdouble * value,
    guint * x, guint * y)
{
  guint32 ordered, at, bits;
  gfloat f;

  if (key == 0) {
    *value = NAN;               /* every sample was NaN */
    *x = *y = 0;
    return;
  }
  if (smallest)
    key = ~key;
  ordered = (guint32) (key >> 32);
  at = smallest ? (guint32) key : ~(guint32) key;
  bits = (ordered & 0x80000000u) ? ordered & 0x7fffffffu : ~ordered;
  memcpy (&f, &bits, sizeof (f));
  *value = f;
  *x = at % width;
  *y = at / width;
}

void
gcv_cuda_stats_end (GcvCudaSlotStats * st, guint width, GcvFrameStats * out)
{
  const guint64 count = st->total;
  const GcvCudaStatsResult *r = st->result;
  gboolean done = st->on && *(volatile const guint *) &r->samples == count;

  memset (out, 0, sizeof (*out));
  if (!st->on)
    return;
  out->n_channels = st->n_channels;
  if (count == 0) {
    /* nothing filtered (regions inside with none in the frame): no
     * kernel ran; no sample, no extremes, as the CPU engine says */
    for (guint c = 0; c < st->n_channels; c++)
      out->channel[c].min = out->channel[c].max = NAN;
    st->on = FALSE;
    return;
  }
  if (!done) {
    /* the kernel's count never reached the frame's: a bug, not the
     * frame's fault; its records may hold part of it */
    g_critical ("the statistics of %u samples of a frame %u wide were not "
        "finished", st->total, width);
    st->stale = TRUE;
  }
  for (guint c = 0; c < st->n_channels; c++) {
    const GcvCudaChannelStats *k = &r->channel[c];
    GcvChannelStats *o = &out->channel[c];
    o->count = count;
    o->sum = done ? k->sum : NAN;
    o->sum_squares = done ? k->sum_squares : NAN;
    o->above = done ? k->above : 0;
    extreme (done ? k->min_key : 0, TRUE, width, &o->min, &o->min_x,
        &o->min_y);
    extreme (done ? k->max_key : 0, FALSE, width, &o->max, &o->max_x,
        &o->max_y);
  }
  st->on = FALSE;
}

void
gcv_cuda_stats_free (GcvCudaSlotStats * st, cudaStream_t stream)
{
  if (st->state)
    cudaFreeAsync (st->state, stream);
  if (st->result)
    cudaFreeHost (st->result);
  memset (st, 0, sizeof (*st));
}
