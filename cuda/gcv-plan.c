/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Plans: argument checks, the slots and tickets of frames in flight, the
 * description from the plan's record; the plan's kind (the engine's
 * backend, or gcv-planar.c for frames of several planes) does the work.
 * Engines are gcv-engine.c's. */
#include "gcv-private.h"
#include "gcv-interop.h"
#include "gcv-backend.h"
#include "gcv-tools.h"
#include "dispatch/gcv-dispatch.h"

#include <math.h>
#include <string.h>

/* Around a backend's plan_new or plan_set_filter: the backend leaves what
 * runs in plan->choice, and the description is written from that record
 * (gcv_choice_describe()) once it succeeds, unless the plan's kind wrote
 * one itself (NV12 and I420: the planes' records, gcv-planar.c). On
 * failure the plan keeps its description. */
static gchar *
description_begin (GcvPlan * plan)
{
  gchar *old = plan->description;

  plan->description = NULL;
  return old;
}

static gboolean
description_end (GcvPlan * plan, gchar * old, gboolean ok)
{
  if (!ok) {
    g_free (plan->description);
    plan->description = old;
    return FALSE;
  }
  g_free (old);
  if (!plan->description)
    plan->description = gcv_choice_describe (&plan->choice);
  return TRUE;
}

static gboolean
check_geometry (const GcvGeometry * g, GError ** error)
{
  if (g->width < 1 || g->height < 1 || g->width > GCV_MAX_FRAME_SIZE
      || g->height > GCV_MAX_FRAME_SIZE) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "frame size %ux%u is outside 1x1..%dx%d", g->width, g->height,
        GCV_MAX_FRAME_SIZE, GCV_MAX_FRAME_SIZE);
    return FALSE;
  }
  if (g->in_format > GCV_FORMAT_LAST
      || g->out_format > GCV_FORMAT_LAST) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "unknown format %d",
        (gint) (g->in_format > GCV_FORMAT_LAST ? g->in_format :
            g->out_format));
    return FALSE;
  }
  if (!gcv_format_converts_to (g->in_format, g->out_format)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "cannot convert %s to %s", gcv_format_name (g->in_format),
        gcv_format_name (g->out_format));
    return FALSE;
  }
  return TRUE;
}

/* Before anything is allocated: a format the engine's backend does not
 * take (gcv_backend_takes(), from its table) is refused by name. */
static gboolean
check_backend_formats (GcvEngine * engine, const GcvGeometry * g,
    GError ** error)
{
  GcvNeeds needs = { 0 };

  needs.formats = GCV_FORMAT_BIT (g->in_format)
      | GCV_FORMAT_BIT (g->out_format);
  return gcv_backend_takes (gcv_engine_get_backend (engine), &needs, error);
}

static void
plan_free_fields (GcvPlan * plan)
{
  g_free (plan->slot_ticket);
  g_free (plan->slot_busy);
  g_free (plan->slot_stats);
  g_free (plan->forced_variant);
  gcv_filter_free (plan->filter);
  g_free (plan->description);
  g_free (plan);
}

GcvPlan *
gcv_plan_new (GcvEngine * engine, const GcvGeometry * geometry,
    const GcvFilter * filter, GcvFamily family, guint in_flight,
    GError ** error)
{
  GcvPlan *plan;
  gchar *old_description;

  g_return_val_if_fail (engine && geometry && filter, NULL);
  if (!check_geometry (geometry, error)
      || !check_backend_formats (engine, geometry, error))
    return NULL;
  plan = g_new0 (GcvPlan, 1);
  plan->engine = engine;
  plan->geometry = *geometry;
  plan->filter = gcv_filter_copy (filter);
  plan->requested = family;
  plan->n_slots = gcv_engine_frames_in_flight (engine, in_flight);
  plan->slot_ticket = g_new0 (GcvTicket, plan->n_slots);
  plan->slot_busy = g_new0 (gboolean, plan->n_slots);
  plan->slot_stats = g_new0 (gboolean, plan->n_slots);
  /* frames of several planes go through the planar kind, which runs each
   * plane through the engine's backend */
  plan->kind = gcv_format_is_planar (geometry->in_format) ?
      &gcv_planar_kind : engine->backend;
  old_description = description_begin (plan);
  plan->state = plan->kind->plan_new (engine->state, plan, error);
  description_end (plan, old_description, plan->state != NULL);
  if (!plan->state) {
    plan_free_fields (plan);
    return NULL;
  }
  return plan;
}

gboolean
gcv_plan_set_filter (GcvPlan * plan, const GcvFilter * filter,
    GcvFamily family, GError ** error)
{
  GcvFilter *old = plan->filter;
  GcvFamily old_requested = plan->requested;
  /* the record of what keeps running, should the backend refuse after
   * writing the new one */
  const GcvChoice old_choice = plan->choice;
  gchar *old_description;

  if (family == plan->requested && gcv_filter_equal (filter, plan->filter))
    return TRUE;
  plan->filter = gcv_filter_copy (filter);
  plan->requested = family;
  old_description = description_begin (plan);
  if (!description_end (plan, old_description,
          plan->kind->plan_set_filter (plan->state, plan, error))) {
    gcv_filter_free (plan->filter);
    plan->filter = old;
    plan->requested = old_requested;
    plan->choice = old_choice;
    return FALSE;
  }
  gcv_filter_free (old);
  return TRUE;
}

gboolean
gcv_plan_set_variant (GcvPlan * plan, const gchar * variant, GError ** error)
{
  GcvVariant v;
  gchar *old = plan->forced_variant, *old_description;
  const GcvChoice old_choice = plan->choice;

  if (variant && !gcv_variant_parse (variant, &v, error))
    return FALSE;
  plan->forced_variant = g_strdup (variant);
  old_description = description_begin (plan);
  if (!description_end (plan, old_description,
          plan->kind->plan_set_filter (plan->state, plan, error))) {
    g_free (plan->forced_variant);
    plan->forced_variant = old;
    plan->choice = old_choice;
    return FALSE;
  }
  g_free (old);
  return TRUE;
}

/* A plane must hold every row it claims, and rows must not overlap. */
static gboolean
check_plane (gpointer data, gsize stride, gsize row, const gchar * what,
    const gchar * plane, GError ** error)
{
  if (!data) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "%s frame has no %sdata",
        what, plane);
    return FALSE;
  }
  if (stride < row) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME,
        "%s %sstride %" G_GSIZE_FORMAT " is smaller than a row of %"
        G_GSIZE_FORMAT " bytes", what, plane, stride, row);
    return FALSE;
  }
  return TRUE;
}

static gboolean
check_image (GcvPlan * plan, const GcvImage * img, GcvFormat format,
    const gchar * what, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  guint cw, ch;

  if (!img) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "no %s frame", what);
    return FALSE;
  }
  if (!check_plane (img->data, img->stride, (gsize) g->width *
          gcv_format_pixel_size (format), what, "", error))
    return FALSE;
  if (gcv_format_chroma_size (format, g->width, g->height, &cw, &ch)) {
    /* NV12: one plane of U and V pairs; I420: U, then V */
    if (!check_plane (img->chroma[0], img->chroma_stride[0],
            format == GCV_FORMAT_I420 ? cw : 2 * (gsize) cw
            * gcv_format_pixel_size (format), what,
            format == GCV_FORMAT_I420 ? "U plane " : "UV plane ", error)
        || (format == GCV_FORMAT_I420 && !check_plane (img->chroma[1],
                img->chroma_stride[1], cw, what, "V plane ", error)))
      return FALSE;
  }
  if (img->on_device) {
    const GcvNeeds needs = {.device_memory = TRUE };
    GError *lacks = NULL;
    if (!gcv_backend_takes (gcv_engine_get_backend (plan->engine), &needs,
            &lacks)) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "%s frame is in "
          "device memory: %s", what, lacks->message);
      g_error_free (lacks);
      return FALSE;
    }
  }
  return TRUE;
}

void
gcv_frame_options_init (GcvFrameOptions * options)
{
  memset (options, 0, sizeof (*options));
}

gboolean
gcv_plan_submit (GcvPlan * plan, const GcvImage * src, const GcvImage * dst,
    GcvTicket * ticket, GError ** error)
{
  return gcv_plan_submit_with (plan, src, dst, NULL, ticket, error);
}

/* Options a frame may ask for: refused here, before any work is queued. */
static gboolean
check_options (GcvPlan * plan, const GcvFrameOptions * options,
    GError ** error)
{
  if (!gcv_regions_check (options, error))
    return FALSE;
  if (gcv_regions_restrict (options)) {
    const GcvNeeds needs = {.regions = TRUE };
    if (!gcv_backend_takes (gcv_engine_get_backend (plan->engine), &needs,
            error))
      return FALSE;
    if (plan->geometry.in_format != plan->geometry.out_format) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "regions need the "
          "same input and output format, not %s to %s: outside them the "
          "input is copied", gcv_format_name (plan->geometry.in_format),
          gcv_format_name (plan->geometry.out_format));
      return FALSE;
    }
  }
  if (!options || !options->statistics)
    return TRUE;
  if (!(options->statistics_threshold >= 0.0)
      || isinf (options->statistics_threshold)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "statistics "
        "threshold %g is not a finite value >= 0",
        options->statistics_threshold);
    return FALSE;
  }
  /* the engine's backend takes them, whatever the plan's kind */
  if (!plan->engine->backend->set_frame_options) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "the %s backend has "
        "no per-frame statistics", plan->engine->backend->name);
    return FALSE;
  }
  return TRUE;
}

/* Frames in flight: ticket t runs in slot t % n_slots (the capacity),
 * which must have been waited for since its last frame. */
gboolean
gcv_plan_submit_with (GcvPlan * plan, const GcvImage * src,
    const GcvImage * dst, const GcvFrameOptions * options,
    GcvTicket * ticket, GError ** error)
{
  /* a caller's frames have no sample step (the planar kind's planes do) */
  static const GcvSteps packed = { 0, 0 };
  const GcvBackend *b = plan ? plan->kind : NULL;
  guint slot;

  g_return_val_if_fail (plan && ticket, FALSE);
  slot = plan->next_ticket % plan->n_slots;
  if (plan->slot_busy[slot]) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_FRAME, "the plan holds %u "
        "frame(s) in flight already: wait for the oldest first",
        plan->n_slots);
    return FALSE;
  }
  if (!check_image (plan, src, plan->geometry.in_format, "input", error)
      || !check_image (plan, dst, plan->geometry.out_format, "output", error)
      || !check_options (plan, options, error)
      || (b->set_frame_options && !b->set_frame_options (plan->state, plan,
              slot, options, error))
      || !b->submit (plan->state, plan, slot, src, dst, &packed, error))
    return FALSE;
  plan->slot_stats[slot] = options && options->statistics;
  plan->slot_busy[slot] = TRUE;
  plan->slot_ticket[slot] = *ticket = plan->next_ticket++;
  return TRUE;
}

gboolean
gcv_plan_wait (GcvPlan * plan, GcvTicket ticket, GError ** error)
{
  return gcv_plan_wait_stats (plan, ticket, NULL, error);
}

gboolean
gcv_plan_wait_stats (GcvPlan * plan, GcvTicket ticket, GcvFrameStats * stats,
    GError ** error)
{
  GcvFrameStats none = { 0 };
  gboolean asked;
  guint slot;

  g_return_val_if_fail (plan, FALSE);
  slot = ticket % plan->n_slots;
  g_return_val_if_fail (plan->slot_busy[slot]
      && plan->slot_ticket[slot] == ticket, FALSE);
  plan->slot_busy[slot] = FALSE;
  asked = plan->slot_stats[slot];
  if (!stats)
    stats = &none;
  stats->n_channels = 0;
  if (!plan->kind->wait (plan->state, plan, slot, error))
    return FALSE;
  if (asked)
    plan->kind->get_frame_stats (plan->state, plan, slot, stats);
  return TRUE;
}

gboolean
gcv_plan_input_done (GcvPlan * plan, GcvTicket ticket, gboolean wait,
    gboolean * done, GError ** error)
{
  guint slot;

  g_return_val_if_fail (plan && done, FALSE);
  slot = ticket % plan->n_slots;
  g_return_val_if_fail (plan->slot_busy[slot]
      && plan->slot_ticket[slot] == ticket, FALSE);
  *done = FALSE;
  return !plan->kind->input_done || plan->kind->input_done (plan->state,
      plan, slot, wait, done, error);
}

gboolean
gcv_plan_run (GcvPlan * plan, const GcvImage * src, const GcvImage * dst,
    GError ** error)
{
  GcvTicket ticket;

  return gcv_plan_submit (plan, src, dst, &ticket, error)
      && gcv_plan_wait (plan, ticket, error);
}

GcvFamily
gcv_plan_get_family (GcvPlan * plan)
{
  return gcv_plan_get_choice (plan)->variant.family;
}

const GcvChoice *
gcv_plan_get_choice (GcvPlan * plan)
{
  return &plan->choice;
}

const gchar *
gcv_plan_describe (GcvPlan * plan)
{
  return plan->description;
}

guint
gcv_plan_get_capacity (GcvPlan * plan)
{
  return plan->n_slots;
}

gpointer
gcv_plan_get_cuda_stream (GcvPlan * plan, guint slot)
{
  const GcvBackend *b = plan->kind;
  g_return_val_if_fail (slot < plan->n_slots, NULL);
  return b->get_cuda_stream ? b->get_cuda_stream (plan->state, slot) : NULL;
}

guint
gcv_plan_get_next_cuda_streams (GcvPlan * plan, gpointer * streams, guint n)
{
  gpointer stream;
  guint slot;

  g_return_val_if_fail (plan && (streams || n == 0), 0);
  slot = plan->next_ticket % plan->n_slots;
  /* a frame of several planes runs on a stream per plane */
  if (plan->kind->get_cuda_streams)
    return plan->kind->get_cuda_streams (plan->state, slot, streams, n);
  stream = gcv_plan_get_cuda_stream (plan, slot);
  if (!stream)
    return 0;
  if (n > 0)
    streams[0] = stream;
  return 1;
}

gboolean
gcv_plan_get_device_input (GcvPlan * plan, guint slot, GcvImage * img)
{
  const GcvBackend *b = plan->kind;
  g_return_val_if_fail (slot < plan->n_slots, FALSE);
  return b->get_device_input && b->get_device_input (plan->state, slot, img);
}

void
gcv_plan_free (GcvPlan * plan)
{
  if (!plan)
    return;
  plan->kind->plan_free (plan->state);
  plan_free_fields (plan);
}
