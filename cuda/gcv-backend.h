/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a backend implements, and the engine and plan the common code
 * (gcv-plan.c) keeps around each backend's state. A plan's frames go
 * through a table of this type, its kind: the engine's backend, or for
 * frames of several planes gcv_planar_kind, which runs each plane through
 * the engine's backend. */
#ifndef GCV_BACKEND_H
#define GCV_BACKEND_H

#include "gcv.h"
#include "gcv-interop.h"
#include "dispatch/gcv-dispatch.h"
#include "gcv-regions.h"

G_BEGIN_DECLS

/* One-plane frames that are one channel of interleaved samples (NV12's
 * or P010's U or V): bytes from a sample to the next in a row, of the
 * input and the output; 0 or the sample's size when packed. Host frames
 * reach the backends packed (gcv-planar.c); only device frames (NV12's,
 * on CUDA) come with a step. */
typedef struct {
  guint src, dst;
} GcvSteps;

/* A backend: the CPU one and the CUDA one implement this. The common code
 * (gcv-plan.c) validates arguments, then calls into it. */
typedef struct {
  const gchar *name;
  gboolean (*available) (gint device_id, GError ** error);
  /* context: a CUcontext to run in (CUDA), or NULL */
  gpointer (*engine_new) (gint device_id, gpointer context, GError ** error);
  const gchar *(*engine_describe) (gpointer engine);
  gint (*engine_device) (gpointer engine);      /* optional: -1 */
  void (*engine_free) (gpointer engine);
  /* Creates the backend's state for a plan. It and plan_set_filter settle
   * what runs into plan->choice through the dispatcher
   * (gcv_dispatch_choose(), gcv_dispatch_choose_cpu()); gcv-plan.c writes
   * the text (gcv_choice_describe()). */
  gpointer (*plan_new) (gpointer engine, GcvPlan * plan, GError ** error);
  gboolean (*plan_set_filter) (gpointer state, GcvPlan * plan,
      GError ** error);
  gboolean (*submit) (gpointer state, GcvPlan * plan, guint slot,
      const GcvImage * src, const GcvImage * dst, const GcvSteps * steps,
      GError ** error);
  /* optional: whether the host input of the frame in `slot` is read no
   * more (*done), waiting for that where `wait` (gcv_plan_input_done());
   * without it, never before the frame's wait */
  gboolean (*input_done) (gpointer state, GcvPlan * plan, guint slot,
      gboolean wait, gboolean * done, GError ** error);
  gboolean (*wait) (gpointer state, GcvPlan * plan, guint slot,
      GError ** error);
  void (*plan_free) (gpointer state);
  /* optional: device access, NULL on the CPU backend */
  gpointer (*get_cuda_stream) (gpointer state, guint slot);
  /* optional: every stream a frame in `slot` runs on (the first n into
   * `streams`), how many; without it, get_cuda_stream's */
  guint (*get_cuda_streams) (gpointer state, guint slot, gpointer * streams,
      guint n);
  gboolean (*get_device_input) (gpointer state, guint slot, GcvImage * img);
  gboolean (*set_tuning_file) (gpointer engine, const gchar * path,
      GError ** error);
  gpointer (*host_alloc) (gpointer engine, gsize size, GError ** error);
  void (*host_free) (gpointer engine, gpointer mem);
  /* optional: per-frame statistics. set_frame_options comes before each
   * submit of `slot` (options NULL or asking for none: no statistics);
   * get_frame_stats after its wait, for a frame that asked. */
  gboolean (*set_frame_options) (gpointer state, GcvPlan * plan, guint slot,
      const GcvFrameOptions * options, GError ** error);
  void (*get_frame_stats) (gpointer state, GcvPlan * plan, guint slot,
      GcvFrameStats * stats);
  /* optional: gcv_engine_interrupt(), from any thread */
  void (*engine_interrupt) (gpointer engine, gboolean on);
  /* What the backend takes, which gcv_backend_takes() and
   * gcv_backend_choose() decide with (gcv-engine.c): the formats of its
   * frames, in and out (GCV_FORMAT_BIT()); frames filtered in part
   * (GcvFrameOptions' regions); frames in device memory. */
  guint formats;
  gboolean regions;
  gboolean device_memory;
} GcvBackend;

/* Every public format, as GcvBackend.formats states it. */
#define GCV_FORMATS_ALL (GCV_FORMAT_BIT (GCV_FORMAT_LAST + 1) - 1)

extern const GcvBackend gcv_cpu_backend;
extern const GcvBackend *gcv_cuda_backend_get (void);  /* NULL: not built */
/* NV12, I420 and P010_10LE (gcv-planar.c): no engine of its own, plan
 * functions only */
extern const GcvBackend gcv_planar_kind;

struct _GcvEngine {
  const GcvBackend *backend;
  gpointer state;
};

struct _GcvPlan {
  GcvEngine *engine;
  GcvGeometry geometry;
  GcvFilter *filter;
  GcvFamily requested;          /* what the caller asked for */
  GcvChoice choice;             /* what runs, settled by the dispatcher
                                 * (dispatch/gcv-choice.h) */
  gchar *forced_variant;        /* gcv_plan_set_variant(), or NULL */
  gchar *description;           /* gcv_choice_describe() of the record */
  guint n_slots;                /* a slot per frame in flight, at most */
  GcvTicket next_ticket;
  GcvTicket *slot_ticket;       /* the frame each slot holds */
  gboolean *slot_busy;          /* submitted, not yet waited for */
  gboolean *slot_stats;         /* the slot's frame asked for statistics */
  /* a plane of a frame of several: its place in the frame's pixels, which
   * regions are in (gcv_region_split_run()); frame_width 0: the plan's
   * frame is its own */
  GcvRegionPlane region_plane;
  const GcvBackend *kind;       /* what runs the frames: the engine's
                                 * backend, or gcv_planar_kind */
  gpointer state;               /* the kind's */
};

G_END_DECLS

#endif /* GCV_BACKEND_H */
