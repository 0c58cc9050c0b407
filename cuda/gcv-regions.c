/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions (docs/regions.md): a frame's regions, clipped to a
 * plane, cut the plane into bands of rows at every region's top and
 * bottom; within a band the columns some region covers are merged into
 * runs. The runs (inside) or the gaps between them (outside) are filtered,
 * the rest copied, so filtering costs what the filtered area costs. A run
 * that goes on in the next band with the same columns grows downwards, so
 * a rectangular region stays one rectangle. Where the rectangles would
 * cost more than the whole plane, the whole plane is filtered instead and
 * the copied spans of each band are its holes (gcv-regions.h). */
#include "gcv-regions.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  guint x0, x1, y0, y1;
} Box;

typedef GcvRegionSpan Span;

/* What a rectangle costs, in samples filtered: a row of it costs this
 * many more than its width besides the kernel's halo (the CPU engine's
 * calls and set-up per row and strip; about what one-pixel columns cost on
 * a 1080p frame), and a hole this many a row (its copy). */
#define ROW_OVERHEAD 64
#define HOLE_COST 8

gboolean
gcv_regions_check (const GcvFrameOptions * options, GError ** error)
{
  if (!options)
    return TRUE;
  if ((guint) options->region_mode > GCV_REGIONS_OUTSIDE) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "region mode %d is "
        "not one of all (0), inside (1) or outside (2)",
        (gint) options->region_mode);
    return FALSE;
  }
  if (options->n_regions > GCV_MAX_REGIONS) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "%u regions: a frame "
        "takes %d at most", options->n_regions, GCV_MAX_REGIONS);
    return FALSE;
  }
  if (options->n_regions > 0 && !options->regions) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "%u regions but no "
        "array of them", options->n_regions);
    return FALSE;
  }
  return TRUE;
}

void
gcv_region_split_init (GcvRegionSplit * split)
{
  memset (split, 0, sizeof (*split));
  split->filtered = g_array_new (FALSE, FALSE, sizeof (GcvRect));
  split->copied = g_array_new (FALSE, FALSE, sizeof (GcvRect));
  split->boxes = g_array_new (FALSE, FALSE, sizeof (Box));
  split->ys = g_array_new (FALSE, FALSE, sizeof (guint));
  split->spans = g_array_new (FALSE, FALSE, sizeof (Span));
  split->open[0] = g_array_new (FALSE, FALSE, sizeof (guint));
  split->open[1] = g_array_new (FALSE, FALSE, sizeof (guint));
  split->next = g_array_new (FALSE, FALSE, sizeof (guint));
  split->hole_ys = g_array_new (FALSE, FALSE, sizeof (guint));
  split->hole_first = g_array_new (FALSE, FALSE, sizeof (guint));
  split->holes = g_array_new (FALSE, FALSE, sizeof (Span));
}

void
gcv_region_split_clear (GcvRegionSplit * split)
{
  GArray **arrays[] = { &split->filtered, &split->copied, &split->boxes,
    &split->ys, &split->spans, &split->open[0], &split->open[1],
    &split->next, &split->hole_ys, &split->hole_first, &split->holes
  };

  for (guint i = 0; i < G_N_ELEMENTS (arrays); i++)
    if (*arrays[i])
      g_clear_pointer (arrays[i], g_array_unref);
}

/* The region clipped to the frame, in plane samples; FALSE when nothing
 * is left. A subsampled plane's sample covers 1 << shift pixels a side:
 * the region takes every sample it touches. */
static gboolean
clip (const GcvRect * r, const GcvRegionPlane * plane, Box * b)
{
  const guint shift = plane->shift;
  const gint64 unit = (gint64) 1 << shift;
  gint64 x0, y0, x1, y1;

  if (r->width <= 0 || r->height <= 0)
    return FALSE;
  x0 = MAX (r->x, 0);
  y0 = MAX (r->y, 0);
  x1 = MIN ((gint64) r->x + r->width, (gint64) plane->frame_width);
  y1 = MIN ((gint64) r->y + r->height, (gint64) plane->frame_height);
  if (x0 >= x1 || y0 >= y1)
    return FALSE;
  x0 >>= shift;
  y0 >>= shift;
  x1 = MIN ((x1 + unit - 1) >> shift, (gint64) plane->width);
  y1 = MIN ((y1 + unit - 1) >> shift, (gint64) plane->height);
  *b = (Box) { (guint) x0, (guint) x1, (guint) y0, (guint) y1 };
  return TRUE;
}

static gint
compare_uint (gconstpointer a, gconstpointer b)
{
  const guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? -1 : x > y;
}

static gint
compare_span (gconstpointer a, gconstpointer b)
{
  return compare_uint (&((const Span *) a)->x0, &((const Span *) b)->x0);
}

/* Columns x0 .. x1 - 1 of rows y0 .. y1 - 1 into `out`: the rectangle of
 * the band above with the same columns grows, else a new one starts.
 * `open` holds the rectangles that reached row y0, by column, from `*at`
 * on; `next` gets this one's. */
static void
add_rect (GArray * out, const GArray * open, guint * at, GArray * next,
    guint x0, guint x1, guint y0, guint y1)
{
  guint index;

  while (*at < open->len && g_array_index (out, GcvRect,
          g_array_index (open, guint, *at)).x < (gint) x0)
    (*at)++;
  if (*at < open->len) {
    GcvRect *r = &g_array_index (out, GcvRect, g_array_index (open, guint,
            *at));
    if (r->x == (gint) x0 && r->width == (gint) (x1 - x0)
        && r->y + r->height == (gint) y0) {
      r->height += (gint) (y1 - y0);
      g_array_append_val (next, g_array_index (open, guint, *at));
      return;
    }
  }
  index = out->len;
  g_array_append_val (out, ((GcvRect) { (gint) x0, (gint) y0,
              (gint) (x1 - x0), (gint) (y1 - y0) }));
  g_array_append_val (next, index);
}

/* The rectangles of one band of rows that start or go on into the band,
 * for one of the two outputs (`which`): its open list is replaced. */
static void
add_band (GcvRegionSplit * split, guint which, const Span * spans,
    guint n_spans, guint y0, guint y1)
{
  GArray *out = which == 0 ? split->filtered : split->copied;
  guint at = 0;

  g_array_set_size (split->next, 0);
  for (guint i = 0; i < n_spans; i++)
    add_rect (out, split->open[which], &at, split->next, spans[i].x0,
        spans[i].x1, y0, y1);
  g_array_set_size (split->open[which], 0);
  g_array_append_vals (split->open[which], split->next->data,
      split->next->len);
}

/* Samples of the rectangles in `filtered`. */
static guint64
gcv_region_split_exact_area (const GcvRegionSplit * split)
{
  guint64 area = 0;

  for (guint i = 0; i < split->filtered->len; i++) {
    const GcvRect *r = &g_array_index (split->filtered, GcvRect, i);
    area += (guint64) r->width * r->height;
  }
  return area;
}

/* What filtering a rectangle costs (ROW_OVERHEAD). */
static guint64
rect_cost (const GcvRegionSplit * split, guint width, guint height)
{
  return (guint64) (width + split->kernel_width - 1 + ROW_OVERHEAD)
      * (height + split->kernel_height - 1) + split->rect_cost;
}

/* The whole plane filtered instead of the rectangles, where that costs
 * less: the copied spans of each band become holes. */
static void
merge (GcvRegionSplit * split, const GcvRegionPlane * plane)
{
  guint64 cut = 0, whole = rect_cost (split, plane->width, plane->height);
  const guint n_bands = split->hole_ys->len - 1;

  for (guint i = 0; i < split->filtered->len; i++) {
    const GcvRect *r = &g_array_index (split->filtered, GcvRect, i);
    cut += rect_cost (split, r->width, r->height);
  }
  for (guint k = 0; k < n_bands && whole < cut; k++)
    whole += ((guint64) HOLE_COST * (g_array_index (split->hole_ys, guint,
                k + 1) - g_array_index (split->hole_ys, guint, k))
        + split->hole_cost) * (g_array_index (split->hole_first, guint,
            k + 1) - g_array_index (split->hole_first, guint, k));
  if (whole >= cut)
    return;
  split->merged = TRUE;
  g_array_set_size (split->filtered, 0);
  g_array_set_size (split->copied, 0);
  g_array_append_val (split->filtered, ((GcvRect) { 0, 0,
              (gint) plane->width, (gint) plane->height }));
}

void
gcv_region_split_run (GcvRegionSplit * split, const GcvFrameOptions * options,
    const GcvRegionPlane * plane)
{
  const guint width = plane->width, height = plane->height;
  const gboolean inside = options->region_mode == GCV_REGIONS_INSIDE;
  GArray *covered = split->spans;
  Span *gaps;
  guint n_ys;

  g_array_set_size (split->filtered, 0);
  g_array_set_size (split->copied, 0);
  g_array_set_size (split->boxes, 0);
  g_array_set_size (split->ys, 0);
  g_array_set_size (split->open[0], 0);
  g_array_set_size (split->open[1], 0);
  g_array_set_size (split->hole_ys, 0);
  g_array_set_size (split->hole_first, 0);
  g_array_set_size (split->holes, 0);
  split->merged = FALSE;
  g_array_append_val (split->ys, (guint) { 0 });
  g_array_append_val (split->ys, height);
  for (guint i = 0; i < options->n_regions; i++) {
    Box b;
    if (!clip (&options->regions[i], plane, &b))
      continue;
    g_array_append_val (split->boxes, b);
    g_array_append_val (split->ys, b.y0);
    g_array_append_val (split->ys, b.y1);
  }
  g_array_sort (split->ys, compare_uint);
  n_ys = split->ys->len;

  for (guint k = 0; k + 1 < n_ys; k++) {
    const guint y0 = g_array_index (split->ys, guint, k),
        y1 = g_array_index (split->ys, guint, k + 1);
    guint n_runs = 0, n_gaps = 0, x = 0;

    if (y0 == y1)
      continue;
    /* the columns the regions cover in this band, merged into runs */
    g_array_set_size (covered, 0);
    for (guint i = 0; i < split->boxes->len; i++) {
      const Box *b = &g_array_index (split->boxes, Box, i);
      if (b->y0 <= y0 && b->y1 >= y1)
        g_array_append_val (covered, ((Span) { b->x0, b->x1 }));
    }
    g_array_sort (covered, compare_span);
    for (guint i = 0; i < covered->len; i++) {
      Span s = g_array_index (covered, Span, i);
      if (n_runs > 0 && s.x0 <= g_array_index (covered, Span,
              n_runs - 1).x1) {
        Span *last = &g_array_index (covered, Span, n_runs - 1);
        last->x1 = MAX (last->x1, s.x1);
      } else {
        g_array_index (covered, Span, n_runs++) = s;
      }
    }
    /* the gaps between the runs, after them in the same array */
    g_array_set_size (covered, n_runs * 2 + 1);
    gaps = &g_array_index (covered, Span, n_runs);
    for (guint i = 0; i <= n_runs; i++) {
      const guint end = i < n_runs ? g_array_index (covered, Span, i).x0 :
          width;
      if (end > x)
        gaps[n_gaps++] = (Span) { x, end };
      if (i < n_runs)
        x = g_array_index (covered, Span, i).x1;
    }
    add_band (split, 0, inside ? &g_array_index (covered, Span, 0) : gaps,
        inside ? n_runs : n_gaps, y0, y1);
    add_band (split, 1, inside ? gaps : &g_array_index (covered, Span, 0),
        inside ? n_gaps : n_runs, y0, y1);
    /* the band's copied spans, the holes should the cut be merged */
    g_array_append_val (split->hole_ys, y0);
    g_array_append_val (split->hole_first, split->holes->len);
    g_array_append_vals (split->holes, inside ? gaps : &g_array_index
        (covered, Span, 0), inside ? n_gaps : n_runs);
  }
  g_array_append_val (split->hole_ys, height);
  g_array_append_val (split->hole_first, split->holes->len);
  split->area = gcv_region_split_exact_area (split);
  if (split->kernel_width > 0 && split->kernel_height > 0)
    merge (split, plane);
}

guint64
gcv_region_split_area (const GcvRegionSplit * split)
{
  return split->area;
}

const GcvRegionSpan *
gcv_region_split_holes (const GcvRegionSplit * split, guint y, guint x0,
    guint x1, guint * n)
{
  const guint *ys = (const guint *) split->hole_ys->data;
  const Span *h;
  guint lo = 0, hi = split->hole_ys->len - 1, first, end;

  *n = 0;
  if (!split->merged)
    return NULL;
  /* the band: the last whose top is at or above y (ys ends with the
   * plane's height) */
  while (hi - lo > 1) {
    const guint mid = (lo + hi) / 2;
    if (ys[mid] <= y)
      lo = mid;
    else
      hi = mid;
  }
  first = g_array_index (split->hole_first, guint, lo);
  end = g_array_index (split->hole_first, guint, lo + 1);
  h = (const Span *) split->holes->data;
  /* the first that ends past x0 (they are by column, apart), then those
   * that start before x1 */
  for (guint right = end; first < right;) {
    const guint mid = first + (right - first) / 2;
    if (h[mid].x1 <= x0)
      first = mid + 1;
    else
      right = mid;
  }
  while (first + *n < end && h[first + *n].x0 < x1)
    (*n)++;
  return *n ? h + first : NULL;
}
