/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU backend: direct 2D and separable paths, multithreaded over bands
 * of rows on a worker pool per engine. This file holds the backend's
 * table, the engine and plan life, and a frame's submission; what a filter
 * comes to is set up in gcv-cpu-setup.c, a band of output rows is run by
 * gcv-cpu-band.c over the row loops of gcv-cpu-rows.c (gradient
 * magnitudes: gcv-cpu-magnitude.c) and the conversions of
 * gcv-cpu-convert.c, and per-frame statistics are taken by
 * gcv-cpu-stats.c. */
#include "gcv-cpu-private.h"

static gboolean
cpu_available (gint device_id, GError ** error)
{
  return TRUE;
}

static gpointer
cpu_engine_new (gint device_id, gpointer context, GError ** error)
{
  CpuEngine *e = g_new0 (CpuEngine, 1);
  guint n = g_get_num_processors ();

  e->pool = gcv_cpu_pool_new (n);
  e->description = g_strdup_printf ("cpu (%u threads)",
      gcv_cpu_pool_get_n_workers (e->pool));
  return e;
}

static void
cpu_engine_interrupt (gpointer engine, gboolean on)
{
  g_atomic_int_set (&((CpuEngine *) engine)->interrupted, on);
}

static const gchar *
cpu_engine_describe (gpointer engine)
{
  return ((CpuEngine *) engine)->description;
}

static void
cpu_engine_free (gpointer engine)
{
  CpuEngine *e = engine;
  gcv_cpu_pool_free (e->pool);
  g_free (e->description);
  g_free (e);
}

/* Sets the plan up for its filter, and leaves what runs in plan->choice
 * (the engine writes the description from it). Scratch is kept while it
 * is large enough, so a filter that changes between frames allocates
 * nothing; when it cannot be had, the plan keeps its previous filter and
 * record. */
static gboolean
cpu_plan_set_filter (gpointer state, GcvPlan * plan, GError ** error)
{
  CpuPlan *cp = state;
  guint n = gcv_cpu_pool_get_n_workers (cp->engine->pool);
  GcvChoice choice;
  Setup *s = gcv_cpu_setup_new (plan, n, &choice, error);

  if (!s)
    return FALSE;
  if (!cp->scratch || s->scratch_bytes > cp->scratch_bytes) {
    Scratch *sc = gcv_cpu_scratch_new (s, s->scratch_bytes, n, error);
    if (!sc) {
      gcv_cpu_setup_free (s);
      return FALSE;
    }
    gcv_cpu_scratch_free (cp->scratch, n);
    cp->scratch = sc;
    cp->scratch_bytes = s->scratch_bytes;
  }
  gcv_cpu_scratch_layout (cp->scratch, n, s);
  gcv_cpu_setup_free (cp->setup);
  cp->setup = s;

  plan->choice = choice;
  return TRUE;
}

static void
cpu_plan_free (gpointer state)
{
  CpuPlan *cp = state;
  gcv_cpu_scratch_free (cp->scratch,
      gcv_cpu_pool_get_n_workers (cp->engine->pool));
  gcv_cpu_setup_free (cp->setup);
  gcv_cpu_stats_clear (&cp->stats);
  g_array_unref (cp->tasks);
  gcv_region_split_clear (&cp->split);
  g_free (cp->options);
  g_free (cp->results);
  g_free (cp);
}

static gpointer
cpu_plan_new (gpointer engine, GcvPlan * plan, GError ** error)
{
  CpuPlan *cp = g_new0 (CpuPlan, 1);
  cp->engine = engine;
  cp->options = g_new0 (GcvFrameOptions, plan->n_slots);
  cp->results = g_new0 (GcvFrameStats, plan->n_slots);
  cp->tasks = g_array_new (FALSE, FALSE, sizeof (CpuTask));
  gcv_region_split_init (&cp->split);
  if (!cpu_plan_set_filter (cp, plan, error)) {
    cpu_plan_free (cp);
    return NULL;
  }
  return cp;
}

/* A rectangle in bands of the set-up's height, as tasks. */
static void
add_bands (CpuPlan * cp, const GcvRect * r, gboolean copy)
{
  const guint band = cp->setup->band, y1 = (guint) (r->y + r->height);

  for (guint y = r->y; y < y1; y += band) {
    CpuTask t = { r->x, r->x + r->width, y, MIN (y + band, y1), copy };
    g_array_append_val (cp->tasks, t);
  }
}

static void
add_tasks (CpuPlan * cp, const GArray * rects, gboolean copy)
{
  for (guint i = 0; i < rects->len; i++)
    add_bands (cp, &g_array_index (rects, GcvRect, i), copy);
}

/* The frame's tasks: bands of the whole frame, or of the filtered area
 * and of what is copied around it. The identity (planes=luma's chroma)
 * with no statistics to take is a copy too: exact, P010's low bits kept.
 * Returns the pixels filtered. */
static guint64
plan_tasks (CpuPlan * cp, const GcvPlan * plan, const GcvFrameOptions * o)
{
  const guint w = plan->geometry.width, h = plan->geometry.height;
  const gboolean copy = gcv_filter_is_identity (plan->filter)
      && plan->geometry.in_format == plan->geometry.out_format
      && !o->statistics;

  g_array_set_size (cp->tasks, 0);
  if (!gcv_regions_restrict (o)) {
    add_bands (cp, &(GcvRect) { 0, 0, w, h }, copy);
    return (guint64) w * h;
  }
  /* the kernel's size sets what a thin rectangle costs */
  cp->split.kernel_width = cp->setup->kw;
  cp->split.kernel_height = cp->setup->kh;
  if (plan->region_plane.frame_width)
    gcv_region_split_run (&cp->split, o, &plan->region_plane);
  else
    gcv_region_split_run (&cp->split, o, &(GcvRegionPlane) { w, h, w, h, 0 });
  add_tasks (cp, cp->split.filtered, copy);
  add_tasks (cp, cp->split.copied, TRUE);
  return gcv_region_split_area (&cp->split);
}

static gboolean
cpu_submit (gpointer state, GcvPlan * plan, guint slot, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps, GError ** error)
{
  CpuPlan *cp = state;
  const Setup *s = cp->setup;
  const GcvFrameOptions *o = &cp->options[slot];
  const guint64 area = plan_tasks (cp, plan, o);
  Job job = { cp, plan, src, dst, (const CpuTask *) cp->tasks->data,
    o->statistics ? &cp->stats : NULL,
    gcv_regions_restrict (o) && cp->split.merged ? &cp->split : NULL, FALSE
  };

  /* per-frame statistics: each band's output rows as they are stored */
  if (job.stats)
    gcv_cpu_stats_begin (&cp->stats, cp->tasks->len,
        gcv_filtered_channels (plan->geometry.in_format,
            plan->filter->filter_alpha), s->channels, plan->geometry.width,
        plan->geometry.height, area, o->statistics_threshold);
  if (!g_atomic_int_get (&cp->engine->interrupted))
    gcv_cpu_pool_run (cp->engine->pool, cp->tasks->len, gcv_cpu_run_band,
        &job);
  else
    job.stopped = TRUE;
  if (job.stopped) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_INTERRUPTED, "the frame was "
        "interrupted (gcv_engine_interrupt)");
    return FALSE;
  }
  if (job.stats)
    gcv_cpu_stats_end (&cp->stats, &cp->results[slot]);
  return TRUE;
}

/* The options of the frame about to be submitted in `slot`. */
static gboolean
cpu_set_frame_options (gpointer state, GcvPlan * plan, guint slot,
    const GcvFrameOptions * options, GError ** error)
{
  CpuPlan *cp = state;

  if (options)
    cp->options[slot] = *options;
  else                          /* all off, as gcv_frame_options_init() */
    memset (&cp->options[slot], 0, sizeof (cp->options[slot]));
  return TRUE;
}

static void
cpu_get_frame_stats (gpointer state, GcvPlan * plan, guint slot,
    GcvFrameStats * stats)
{
  *stats = ((CpuPlan *) state)->results[slot];
}

static gboolean
cpu_wait (gpointer state, GcvPlan * plan, guint slot, GError ** error)
{
  return TRUE;                  /* submit ran synchronously */
}

const GcvBackend gcv_cpu_backend = {
  .name = "cpu",
  .available = cpu_available,
  .engine_new = cpu_engine_new,
  .engine_describe = cpu_engine_describe,
  .engine_free = cpu_engine_free,
  .plan_new = cpu_plan_new,
  .plan_set_filter = cpu_plan_set_filter,
  .submit = cpu_submit,
  .wait = cpu_wait,
  .plan_free = cpu_plan_free,
  .set_frame_options = cpu_set_frame_options,
  .get_frame_stats = cpu_get_frame_stats,
  .engine_interrupt = cpu_engine_interrupt,
  .formats = GCV_FORMATS_ALL,
  .regions = TRUE,
  .device_memory = FALSE,
};
