/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions on the CUDA backend (docs/regions.md). The frame is
 * uploaded whole and its halo made as for any frame, since a region's
 * edge reads the picture around it. The plane is cut by the engine's one
 * cut (gcv-regions.c), and the chosen family runs on each filtered
 * rectangle as a view of the padded frame and of the output: every family
 * reads relative to its source pointer, so a view filters exactly what the
 * whole frame gives there, and its statistics' places are moved by the
 * rectangle's corner into the frame's. The copied area gets the input's
 * bytes on the device: the whole frame at once before the launches where
 * the copied area is most of it, else its rectangles after them, all in
 * one launch; a merged cut (the whole plane filtered where the rectangles
 * would cost more) gets its holes back the same way after the launch. */
#include "gcv-cuda-private.h"

/* What a launch costs besides its samples, in samples filtered
 * (GcvRegionSplit): a few microseconds, the time the GPU takes to filter
 * some tens of thousands of samples. */
#define LAUNCH_COST 32768

static gboolean
same_samples (const CudaSamples * a, const CudaSamples * b)
{
  return a->data == b->data && a->stride == b->stride && a->step == b->step;
}

guint64
gcv_cuda_regions_cut (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const CudaSamples * in, const CudaSamples * out)
{
  const guint w = plan->geometry.width, h = plan->geometry.height;
  GcvRegionSplit *split = &cp->split;
  /* a merged cut's statistics would count its holes, and with the output
   * on the input its holes would have nothing left to come back from */
  const gboolean exact = s->stats.on || same_samples (in, out);

  split->kernel_width = exact ? 0 : cp->kw;
  split->kernel_height = exact ? 0 : plan->filter->kh;
  split->rect_cost = LAUNCH_COST;
  split->hole_cost = 0;         /* a frame's holes: one copy launch */
  if (plan->region_plane.frame_width)
    gcv_region_split_run (split, &s->options, &plan->region_plane);
  else
    gcv_region_split_run (split, &s->options, &(GcvRegionPlane) {
          w, h, w, h, 0});
  return gcv_region_split_area (split);
}

/* `c` on the rectangle of w x h outputs at (x, y) of the frame: the padded
 * input and the output from that corner, the places from the frame's. */
static GcvCudaConv
view (const GcvCudaConv * c, guint x, guint y, guint w, guint h)
{
  GcvCudaConv v = *c;

  v.src = (const guint8 *) c->src + (gsize) y * c->src_pitch
      + (gsize) x * gcv_cuda_pixel_size (c->in);
  v.dst = (guint8 *) c->dst + (gsize) y * c->dst_pitch
      + (gsize) x * gcv_cuda_out_size (c->out);
  v.width = (int) w;
  v.height = (int) h;
  v.stats_origin = c->stats_origin + y * c->stats_stride + x;
  return v;
}

gboolean
gcv_cuda_regions_launch (CudaPlan * cp, const GcvPlan * plan, guint slot,
    const GcvCudaConv * c, GError ** error)
{
  const GArray *rects = cp->split.filtered;
  const gboolean aligned = gcv_cuda_rect_aligned (cp, plan);

  for (guint i = 0; i < rects->len; i++) {
    const GcvRect *r = &g_array_index (rects, GcvRect, i);
    const guint x1 = (guint) (r->x + r->width);
    const gboolean whole = r->width == c->width && r->height == c->height;
    guint x = (guint) r->x;
    GcvCudaConv v;

    /* columns short of a multiple of 4 by direct, which loads a sample
     * at a time: there the vector loads of the family would be
     * misaligned */
    if (aligned && x % 4) {
      const guint a = MIN (x1, (x + 3) / 4 * 4);
      v = view (c, x, (guint) r->y, a - x, (guint) r->height);
      if (!CHECK (gcv_cuda_direct (&v), OP_LAUNCH))
        return FALSE;
      x = a;
    }
    if (x < x1) {
      v = view (c, x, (guint) r->y, x1 - x, (guint) r->height);
      if (!gcv_cuda_launch (cp, plan, slot, &v, !whole, error))
        return FALSE;
    }
  }
  return TRUE;
}

/* The whole plane of `in` into `out`, `px` bytes a sample: rows at once
 * where both are packed, else as one rectangle. */
static gboolean
copy_plane (const CudaSamples * out, const CudaSamples * in, guint px,
    guint w, guint h, cudaStream_t stream, GError ** error)
{
  if (out->step == px && in->step == px)
    return CHECK (cudaMemcpy2DAsync (out->data, out->stride, in->data,
            in->stride, (gsize) w * px, h, cudaMemcpyDeviceToDevice, stream),
        OP_COPY);
  return CHECK (gcv_cuda_copy_rects (out->data, out->stride, (int) out->step,
          in->data, in->stride, (int) in->step, (int) px,
          &(GcvCudaRect) { 0, 0, (int) w, (int) h }, 1, stream), OP_LAUNCH);
}

/* Rectangles of `in` copied into `out`, gathered for one launch. */
typedef struct {
  const CudaSamples *in, *out;
  guint px;
  cudaStream_t stream;
  GcvCudaRect rect[GCV_CUDA_COPY_RECTS];
  int n;
} CopyList;

static gboolean
copy_flush (CopyList * l, GError ** error)
{
  const int n = l->n;

  l->n = 0;
  return n == 0 || CHECK (gcv_cuda_copy_rects (l->out->data, l->out->stride,
          (int) l->out->step, l->in->data, l->in->stride, (int) l->in->step,
          (int) l->px, l->rect, n, l->stream), OP_LAUNCH);
}

static gboolean
copy_add (CopyList * l, guint x, guint y, guint w, guint h, GError ** error)
{
  if (w == 0 || h == 0)
    return TRUE;
  l->rect[l->n++] = (GcvCudaRect) { (int) x, (int) y, (int) w, (int) h };
  return l->n < GCV_CUDA_COPY_RECTS || copy_flush (l, error);
}

gboolean
gcv_cuda_regions_copy (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const CudaSamples * in, const CudaSamples * out, gboolean before,
    GError ** error)
{
  const GcvRegionSplit *split = &cp->split;
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->in_format);
  const guint64 plane = (guint64) g->width * g->height;
  /* the copied area is most of the frame: one copy of it all first, the
   * filtered rectangles written over it */
  const gboolean whole = !split->merged
      && 2 * (plane - gcv_region_split_area (split)) > plane;
  CopyList l = { in, out, px, s->stream };

  if (same_samples (in, out))
    return TRUE;                /* the output is on the input */
  if (before)
    return !whole || copy_plane (out, in, px, g->width, g->height,
        s->stream, error);
  if (whole)
    return TRUE;
  if (split->merged) {
    const GcvRegionSpan *holes = (const GcvRegionSpan *) split->holes->data;
    for (guint k = 0; k + 1 < split->hole_ys->len; k++) {
      const guint y0 = g_array_index (split->hole_ys, guint, k),
          y1 = g_array_index (split->hole_ys, guint, k + 1),
          end = g_array_index (split->hole_first, guint, k + 1);
      for (guint j = g_array_index (split->hole_first, guint, k); j < end; j++)
        if (!copy_add (&l, holes[j].x0, y0, holes[j].x1 - holes[j].x0,
                y1 - y0, error))
          return FALSE;
    }
  }
  for (guint i = 0; i < split->copied->len; i++) {
    const GcvRect *r = &g_array_index (split->copied, GcvRect, i);
    if (!copy_add (&l, (guint) r->x, (guint) r->y, (guint) r->width,
            (guint) r->height, error))
      return FALSE;
  }
  return copy_flush (&l, error);
}
