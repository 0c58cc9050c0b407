/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A frame's privacy regions (GcvFrameOptions) as the backends run them:
 * the frame cut into rectangles that do not overlap, those filtered and
 * those copied (gcv-regions.c). */
#ifndef GCV_REGIONS_H
#define GCV_REGIONS_H

#include "gcv.h"

G_BEGIN_DECLS

/* Whether the options restrict filtering to part of the frame. */
static inline gboolean
gcv_regions_restrict (const GcvFrameOptions * options)
{
  return options && options->region_mode != GCV_REGIONS_ALL;
}

/* Checks a frame's region options; the message names what is wrong. */
gboolean gcv_regions_check (const GcvFrameOptions * options, GError ** error);

/* A plane of a frame: its samples, and the frame's pixels, `shift` times
 * more a side (1: NV12's and I420's chroma). Regions are in the frame's
 * pixels, clipped to it; a sample is in a region when a pixel it covers
 * is. */
typedef struct {
  guint width, height;
  guint frame_width, frame_height;
  guint shift;
} GcvRegionPlane;

/* Columns x0 .. x1 - 1 of a row. */
typedef struct {
  guint x0, x1;
} GcvRegionSpan;

/* A plane cut into rectangles that do not overlap: `filtered` (what the
 * mode filters) and `copied` (the rest), which together cover the plane
 * once. Rectangles one above another with the same columns are one. Its
 * arrays are kept from frame to frame.
 *
 * Many thin rectangles cost more than their area (each re-reads the
 * kernel's halo and pays a row's overhead): where the cut would cost more
 * than filtering the whole plane, the cut is `merged`: `filtered` is the
 * whole plane, `copied` is empty, and the copied area is the `holes`,
 * which the backend writes back with the input's samples after filtering
 * each row (gcv_region_split_holes()). Set `kernel_width` and
 * `kernel_height` before a run: 0 keeps the exact cut. A backend whose
 * rectangles and holes cost more than their samples (the CUDA backend: a
 * launch, a copy) says how much more in `rect_cost` and `hole_cost`, in
 * samples filtered; 0 on the CPU. */
typedef struct {
  GArray *filtered, *copied;    /* GcvRect */
  guint kernel_width, kernel_height;
  guint rect_cost, hole_cost;
  gboolean merged;
  guint64 area;                 /* samples of the filtered area */
  GArray *hole_ys;              /* merged: the bands of rows, their tops */
  GArray *hole_first;           /* per band: its first hole, then the end */
  GArray *holes;                /* GcvRegionSpan: each band's copied spans */
  GArray *boxes;                /* the regions clipped, in plane samples */
  GArray *ys;                   /* the rows where a region starts or ends */
  GArray *spans;                /* one band of rows: its columns covered */
  GArray *open[2];              /* filtered, copied: indices of rectangles
                                 * that reach the band, by column */
  GArray *next;
} GcvRegionSplit;

void gcv_region_split_init (GcvRegionSplit * split);
void gcv_region_split_clear (GcvRegionSplit * split);
void gcv_region_split_run (GcvRegionSplit * split,
    const GcvFrameOptions * options, const GcvRegionPlane * plane);
/* Samples of the filtered area (a merged cut's holes left out). */
guint64 gcv_region_split_area (const GcvRegionSplit * split);
/* A merged cut: the holes of row y that meet columns x0 .. x1 - 1, by
 * column (`*n` of them); NULL when none. */
const GcvRegionSpan *gcv_region_split_holes (const GcvRegionSplit * split,
    guint y, guint x0, guint x1, guint * n);

G_END_DECLS

#endif /* GCV_REGIONS_H */
