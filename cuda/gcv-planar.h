/* NV12 and I420 plans (gcv-planar.c): a GRAY8 plan for each plane. The
 * common code (gcv-plan.c) calls these in place of a backend's. */
#ifndef GCV_PLANAR_H
#define GCV_PLANAR_H

#include "gcv-backend.h"

G_BEGIN_DECLS

typedef struct _GcvPlanar GcvPlanar;

/* For `plan`'s geometry, filter, family and capacity. */
GcvPlanar *gcv_planar_new (GcvPlan * plan, GError ** error);
/* After plan->filter and plan->requested changed; on failure every plane
 * keeps the filter it had. */
gboolean gcv_planar_set_filter (GcvPlanar * p, GcvPlan * plan,
    GError ** error);
gboolean gcv_planar_set_variant (GcvPlanar * p, const gchar * variant,
    const GcvFilter * filter, GError ** error);
gboolean gcv_planar_submit (GcvPlanar * p, GcvPlan * plan, guint slot,
    const GcvImage * src, const GcvImage * dst,
    const GcvFrameOptions * options, GError ** error);
/* stats: NULL, or the frame's statistics, a channel per filtered plane */
gboolean gcv_planar_wait (GcvPlanar * p, guint slot, GcvFrameStats * stats,
    GError ** error);
/* Planes filtered: Y alone, or Y, U and V. */
guint gcv_planar_stats_channels (GcvPlanar * p, const GcvFilter * filter);
/* The Y plane's plan: its choice, streams and input buffers stand for the
 * frame's. */
GcvPlan *gcv_planar_luma (GcvPlanar * p);
/* Plane i's plan (0: Y, 1: U, 2: V); NULL past the last one. */
GcvPlan *gcv_planar_plane (GcvPlanar * p, guint i);
const gchar *gcv_planar_describe (GcvPlanar * p);
void gcv_planar_free (GcvPlanar * p);

G_END_DECLS

#endif /* GCV_PLANAR_H */
