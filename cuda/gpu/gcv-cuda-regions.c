/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions on the CUDA backend (docs/regions.md). The frame is
 * uploaded whole and its halo made as for any frame, since a region's
 * edge reads the picture around it (but see the atlas). The plane is cut
 * by the engine's one cut (gcv-regions.c), and the chosen family runs on
 * each filtered rectangle as a view of the padded frame and of the
 * output: every family reads relative to its source pointer, so a view
 * filters exactly what the whole frame gives there, and its statistics'
 * places are moved by the rectangle's corner into the frame's. Small
 * rectangles go side by side into a frame of their own, filtered by one
 * launch (the atlas, below), read from a device frame where it lies when
 * they can be (no upload or halo then); where the separable family runs
 * on bytes, they are filtered where they lie by one launch instead. The
 * copied area gets the input's bytes on the device: the whole frame at
 * once before the launches where the copied area is most of it, else its
 * rectangles after them, all in one launch (with the atlas, its
 * rectangles by the launch that gathers the reaches; filtered where they
 * lie, by the launch that filters them); a merged cut (the whole plane
 * filtered where the rectangles would cost more) gets its holes back the
 * same way after the launch. */
#include "gcv-cuda-private.h"

/* What a rectangle costs besides its samples, in samples filtered
 * (GcvRegionSplit): a launch of its own, a few microseconds, the time the
 * GPU takes to filter some tens of thousands of samples; in the atlas
 * (below), where it has none, its copies in and out. */
#define LAUNCH_COST 32768
#define ATLAS_COST 1024

static gboolean
same_samples (const CudaSamples * a, const CudaSamples * b)
{
  return a->data == b->data && a->stride == b->stride && a->step == b->step;
}

/* The atlas columns of rectangle `r`'s reach, from a multiple of 4, for
 * a kernel `kw` wide. */
static guint
atlas_columns (const GcvRect * r, int kw)
{
  return (guint) (r->width + kw - 1 + 3) / 4 * 4;
}

/* Whether the filtered rectangles of `split` go side by side into the
 * atlas: two or more, their reaches within the plane's width (the
 * families' buffers hold that), and a quarter of the plane at most. */
static gboolean
atlas_fits (const GcvRegionSplit * split, const GcvRegionPlane * plane,
    int kw)
{
  const GcvRect *r = (const GcvRect *) split->filtered->data;
  guint columns = 0, height = 0;

  if (split->filtered->len < 2)
    return FALSE;
  for (guint i = 0; i < split->filtered->len; i++) {
    columns += atlas_columns (&r[i], kw);
    height = MAX (height, (guint) r[i].height);
  }
  return columns <= plane->width
      && 4 * (guint64) columns * height <= (guint64) plane->width
      * plane->height;
}

/* Whether every filtered rectangle's reach lies inside the plane: its
 * samples are then all the frame's own, none of the halo. */
static gboolean
reaches_inside (const GcvRegionSplit * split, const GcvRegionPlane * plane,
    const GcvFilter * f, guint kw)
{
  for (guint i = 0; i < split->filtered->len; i++) {
    const GcvRect *r = &g_array_index (split->filtered, GcvRect, i);
    if ((guint) r->x < f->ax || (guint) r->y < f->ay
        || (guint) r->x + r->width + kw - 1 - f->ax > plane->width
        || (guint) r->y + r->height + f->kh - 1 - f->ay > plane->height)
      return FALSE;
  }
  return TRUE;
}

/* Whether the atlas's rectangles can be filtered where they lie, by one
 * launch of the separable family's kernel for them
 * (gcv_cuda_separable_rects()): the plan runs that family on one channel
 * of bytes with a kernel small enough, the output is not the input
 * (the outputs would be written over samples other rectangles read), and
 * the cut is not merged (its holes are copied after the filter, never
 * beside it); a device frame read where it lies has its samples
 * packed. */
static gboolean
rects_fit (const CudaPlan * cp, const GcvPlan * plan,
    const GcvRegionSplit * split, const CudaSamples * in,
    const CudaSamples * out)
{
  const GcvChoice *choice = &plan->choice;

  return choice->variant.family == GCV_FAMILY_SEPARABLE
      && !choice->column_pass && cp->pix == GCV_PIX_U8
      && cp->out == GCV_OUT_U8 && cp->kw <= GCV_CUDA_RECT_TAPS
      && plan->filter->kh <= GCV_CUDA_RECT_TAPS
      && split->filtered->len <= GCV_CUDA_FILTER_RECTS && !split->merged
      && !same_samples (in, out) && (!cp->atlas_direct || in->step == 1);
}

/* Whether the copied area is most of the plane: the whole frame is then
 * copied, one copy, and the filtered rectangles written over it. */
static gboolean
copies_whole (const CudaPlan * cp, const GcvPlan * plan)
{
  const guint64 plane = (guint64) plan->geometry.width
      * plan->geometry.height;

  return !cp->split.merged
      && 2 * (plane - gcv_region_split_area (&cp->split)) > plane;
}

guint64
gcv_cuda_regions_cut (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const CudaSamples * in, const CudaSamples * out, gboolean direct)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvRegionPlane plane = plan->region_plane.frame_width
      ? plan->region_plane : (GcvRegionPlane) { g->width, g->height,
    g->width, g->height, 0
  };
  GcvRegionSplit *split = &cp->split;
  /* a merged cut's statistics would count its holes, and with the output
   * on the input its holes would have nothing left to come back from */
  const gboolean exact = s->stats.on || same_samples (in, out);

  split->kernel_width = exact ? 0 : cp->kw;
  split->kernel_height = exact ? 0 : plan->filter->kh;
  split->hole_cost = 0;         /* a frame's holes: one copy launch */
  /* the cut as the atlas would run it; where it does not fit, as
   * launches */
  split->rect_cost = ATLAS_COST;
  gcv_region_split_run (split, &s->options, &plane);
  cp->atlas = !s->stats.on && atlas_fits (split, &plane, cp->kw);
  if (!cp->atlas) {
    split->rect_cost = LAUNCH_COST;
    gcv_region_split_run (split, &s->options, &plane);
  }
  cp->atlas_direct = cp->atlas && direct
      && reaches_inside (split, &plane, plan->filter, cp->kw);
  cp->rects = cp->atlas && rects_fit (cp, plan, split, in, out);
  cp->region_in = *in;
  cp->region_out = *out;
  return gcv_region_split_area (split);
}

/* Rectangles copied by one launch, gathered. */
typedef struct {
  cudaStream_t stream;
  GcvCudaCopy rect[GCV_CUDA_COPY_RECTS];
  int n;
} CopyList;

static gboolean
copy_flush (CopyList * l, GError ** error)
{
  const int n = l->n;

  l->n = 0;
  return n == 0 || CHECK (gcv_cuda_copy_rects (l->rect, n, l->stream),
      OP_LAUNCH);
}

/* w x h samples of `px` bytes at (x, y) of `in` to (to_x, to_y) of `out` */
static gboolean
copy_add (CopyList * l, const CudaSamples * in, guint x, guint y,
    const CudaSamples * out, guint to_x, guint to_y, guint px, guint w,
    guint h, GError ** error)
{
  if (w == 0 || h == 0)
    return TRUE;
  l->rect[l->n++] = (GcvCudaCopy) {
    (const guint8 *) in->data + (gsize) y * in->stride + (gsize) x * in->step,
    (guint8 *) out->data + (gsize) to_y * out->stride
        + (gsize) to_x * out->step, in->stride, out->stride, (int) in->step,
    (int) out->step, (int) px, (int) w, (int) h
  };
  return l->n < GCV_CUDA_COPY_RECTS || copy_flush (l, error);
}

/* The whole plane of `in` into `out`, `px` bytes a sample: rows at once
 * where both are packed, else as one rectangle. */
static gboolean
copy_plane (const CudaSamples * out, const CudaSamples * in, guint px,
    guint w, guint h, cudaStream_t stream, GError ** error)
{
  CopyList l = { stream };

  if (out->step == px && in->step == px)
    return CHECK (cudaMemcpy2DAsync (out->data, out->stride, in->data,
            in->stride, (gsize) w * px, h, cudaMemcpyDeviceToDevice, stream),
        OP_COPY);
  return copy_add (&l, in, 0, 0, out, 0, 0, px, w, h, error)
      && copy_flush (&l, error);
}

/* The copied area of the cut, `in` into `out`, added to `l`: a merged
 * cut's holes and the copied rectangles. */
static gboolean
copy_area (CopyList * l, const GcvRegionSplit * split, const CudaSamples * in,
    const CudaSamples * out, guint px, GError ** error)
{
  if (split->merged) {
    const GcvRegionSpan *holes = (const GcvRegionSpan *) split->holes->data;
    for (guint k = 0; k + 1 < split->hole_ys->len; k++) {
      const guint y0 = g_array_index (split->hole_ys, guint, k),
          y1 = g_array_index (split->hole_ys, guint, k + 1),
          end = g_array_index (split->hole_first, guint, k + 1);
      for (guint j = g_array_index (split->hole_first, guint, k); j < end; j++)
        if (!copy_add (l, in, holes[j].x0, y0, out, holes[j].x0, y0, px,
                holes[j].x1 - holes[j].x0, y1 - y0, error))
          return FALSE;
    }
  }
  for (guint i = 0; i < split->copied->len; i++) {
    const GcvRect *r = &g_array_index (split->copied, GcvRect, i);
    if (!copy_add (l, in, (guint) r->x, (guint) r->y, out, (guint) r->x,
            (guint) r->y, px, (guint) r->width, (guint) r->height, error))
      return FALSE;
  }
  return TRUE;
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

/* Each rectangle's reach copied into the atlas (`in`: from `from`, whose
 * place (dx, dy) is the padded frame's (0, 0)), or its outputs out of it,
 * at its columns there; `px` bytes a sample; added to `l`. */
static gboolean
atlas_copy (CopyList * l, const GArray * rects, const GcvCudaConv * c,
    gboolean in, const CudaSamples * from, guint dx, guint dy,
    const CudaSamples * to, guint px, GError ** error)
{
  const GcvRect *r = (const GcvRect *) rects->data;
  guint x = 0;

  for (guint i = 0; i < rects->len; x += atlas_columns (&r[i], c->kw), i++)
    if (!(in ? copy_add (l, from, r[i].x - dx, r[i].y - dy, to, x, 0, px,
                r[i].width + c->kw - 1, r[i].height + c->kh - 1, error)
            : copy_add (l, from, x, 0, to, r[i].x, r[i].y, px, r[i].width,
                r[i].height, error)))
      return FALSE;
  return TRUE;
}

/* Launches cost more than the samples of small rectangles, so where the
 * filtered rectangles are a small part of the frame they are filtered
 * side by side, in one frame of their own (the atlas): each one's reach
 * (the rectangle and the kernel's halo) gathered from the padded frame at
 * a column of the atlas that is a multiple of 4, the atlas filtered by one
 * launch of the chosen family, and each rectangle's outputs scattered
 * back into the frame's; three launches in all. A rectangle's outputs read
 * only its own reach, so they are what a view of the frame gives (the
 * columns between reaches feed outputs that are not scattered). Not with
 * statistics, whose places are the frame's. The cut decides
 * (atlas_fits()). */
static gboolean
atlas_launch (CudaPlan * cp, const GcvPlan * plan, guint slot,
    const GcvCudaConv * c, GError ** error)
{
  const GArray *rects = cp->split.filtered;
  const GcvRect *last = &g_array_index (rects, GcvRect, rects->len - 1);
  CudaSlot *s = &cp->slots[slot];
  const guint px = (guint) gcv_cuda_pixel_size (c->in);
  const guint out_px = (guint) gcv_cuda_out_size (c->out);
  guint columns = 0, height = 0;
  gsize in_bytes, out_pitch;
  GcvCudaConv a = *c;
  CopyList l = { s->stream };

  for (guint i = 0; i < rects->len; i++) {
    const GcvRect *r = &g_array_index (rects, GcvRect, i);
    columns += atlas_columns (r, c->kw);
    height = MAX (height, (guint) r->height);
  }
  in_bytes = (cp->pad_pitch * (height + c->kh - 1) + 255) / 256 * 256;
  out_pitch = ((gsize) columns * out_px + 255) / 256 * 256;
  if (!gcv_cuda_slot_ensure_atlas (s, in_bytes + out_pitch * height, error))
    return FALSE;
  /* the atlas filtered up to the last rectangle's outputs */
  a.src = s->d_atlas;
  a.src_pitch = cp->pad_pitch;
  a.dst = (guint8 *) s->d_atlas + in_bytes;
  a.dst_pitch = out_pitch;
  a.width = (int) (columns - atlas_columns (last, c->kw)) + last->width;
  a.height = (int) height;
  /* the copied area and the reaches by one launch, both from the input;
   * the outputs by another after the filter */
  return (same_samples (&cp->region_in, &cp->region_out)
      || copy_area (&l, &cp->split, &cp->region_in, &cp->region_out,
          gcv_format_pixel_size (plan->geometry.in_format), error))
      && atlas_copy (&l, rects, c, TRUE, cp->atlas_direct ? &cp->region_in
      : &(CudaSamples) { (guint8 *) c->src, c->src_pitch, px },
      cp->atlas_direct ? plan->filter->ax : 0,
      cp->atlas_direct ? plan->filter->ay : 0,
      &(CudaSamples) { s->d_atlas, a.src_pitch, px }, px, error)
      && copy_flush (&l, error)
      && gcv_cuda_launch (cp, plan, slot, &a, TRUE, error)
      && atlas_copy (&l, rects, c, FALSE, &(CudaSamples) { a.dst, out_pitch,
          out_px }, 0, 0, &(CudaSamples) { c->dst, c->dst_pitch, out_px },
      out_px, error)
      && copy_flush (&l, error);
}

/* The atlas's rectangles filtered where they lie (rects_fit()): one
 * launch reads each one's reach from the padded frame, or from a device
 * frame where it lies, writes its outputs into the frame's, and copies
 * the copied area (the rectangles it cannot take by a copy launch
 * before). */
static gboolean
rects_launch (CudaPlan * cp, const GcvPlan * plan, guint slot,
    const GcvCudaConv * c, GError ** error)
{
  const GArray *rects = cp->split.filtered;
  const GcvFilter *f = plan->filter;
  CudaSlot *s = &cp->slots[slot];
  GcvCudaRect r[GCV_CUDA_FILTER_RECTS];
  GcvCudaConv v = *c;
  CopyList l = { s->stream };
  int before;

  for (guint i = 0; i < rects->len; i++) {
    const GcvRect *q = &g_array_index (rects, GcvRect, i);
    r[i] = (GcvCudaRect) { q->x, q->y, q->width, q->height };
  }
  /* the device frame's sample (-ax, -ay) stands for the padded frame's
   * (0, 0): never read, as every reach is inside the frame */
  if (cp->atlas_direct) {
    v.src = cp->region_in.data - (gsize) f->ay * cp->region_in.stride
        - f->ax;
    v.src_pitch = cp->region_in.stride;
  }
  if (!copy_area (&l, &cp->split, &cp->region_in, &cp->region_out,
          gcv_format_pixel_size (plan->geometry.in_format), error))
    return FALSE;
  before = MAX (l.n - GCV_CUDA_RECTS_COPIES, 0);
  return (before == 0 || CHECK (gcv_cuda_copy_rects (l.rect, before,
              l.stream), OP_LAUNCH))
      && CHECK (gcv_cuda_separable_rects (&v, f->row, f->column, r,
          (int) rects->len, l.rect + before, l.n - before), OP_LAUNCH);
}

gboolean
gcv_cuda_regions_launch (CudaPlan * cp, const GcvPlan * plan, guint slot,
    const GcvCudaConv * c, GError ** error)
{
  const GArray *rects = cp->split.filtered;
  const gboolean aligned = gcv_cuda_rect_aligned (cp, plan);

  if (cp->rects)
    return rects_launch (cp, plan, slot, c, error);
  if (cp->atlas)
    return atlas_launch (cp, plan, slot, c, error);
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

gboolean
gcv_cuda_regions_copy (CudaPlan * cp, const GcvPlan * plan, CudaSlot * s,
    const CudaSamples * in, const CudaSamples * out, gboolean before,
    GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const guint px = gcv_format_pixel_size (g->in_format);
  const gboolean whole = copies_whole (cp, plan);
  CopyList l = { s->stream };

  /* the output on the input; or the atlas, which copies its own */
  if (same_samples (in, out) || cp->atlas)
    return TRUE;
  if (before)
    return !whole || copy_plane (out, in, px, g->width, g->height,
        s->stream, error);
  return whole || (copy_area (&l, &cp->split, in, out, px, error)
      && copy_flush (&l, error));
}
