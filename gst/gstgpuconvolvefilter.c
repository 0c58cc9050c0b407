/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The properties settled into the filter the plan runs: the filter built
 * again when they changed (at start, at new caps, and before each buffer,
 * once controlled properties took their value for it) and handed to the
 * plan; passthrough for the identity; the active-algorithm property; and
 * how many frames the plan holds. */
#include "gstgpuconvolveprivate.h"

/* The active-algorithm property: what the plan runs, on which engine; NULL
 * without a plan. Notified when it changed. */
void
gst_gpu_convolve_set_active_algorithm (GstGpuConvolve * self)
{
  gchar *desc = NULL;
  gboolean changed;

  if (self->plan)
    desc = g_strdup_printf ("%s on %s", gcv_plan_describe (self->plan),
        gcv_engine_describe (self->engine));
  GST_OBJECT_LOCK (self);
  changed = g_strcmp0 (desc, self->active_algorithm) != 0;
  g_free (self->active_algorithm);
  self->active_algorithm = desc;
  GST_OBJECT_UNLOCK (self);
  if (changed && desc) {
    GST_INFO_OBJECT (self, "active algorithm: %s", desc);
    g_object_notify (G_OBJECT (self), "active-algorithm");
  }
}

/* Passthrough for the identity between equal formats, when no frame
 * needs statistics. TRUE when that changed. */
gboolean
gst_gpu_convolve_update_passthrough (GstGpuConvolve * self)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  gboolean was = gst_base_transform_is_passthrough (trans);
  gboolean statistics, now;

  GST_OBJECT_LOCK (self);
  statistics = self->frame_options.statistics;
  GST_OBJECT_UNLOCK (self);
  now = self->filter && gcv_filter_is_identity (self->filter) && !statistics
      && self->in_info.format == self->out_info.format
      && self->in_info.cuda_memory == self->out_info.cuda_memory;

  gst_base_transform_set_passthrough (trans, now);
  return was != now;
}

/* Builds the filter from the properties when they changed. Settings that
 * do not fit together keep the filter in use and say so on the bus, once
 * for each change. */
gboolean
gst_gpu_convolve_refresh_filter (GstGpuConvolve * self, GError ** error)
{
  GcvFilter *filter = NULL;
  GcvFamily algorithm;
  GError *err = NULL;

  GST_OBJECT_LOCK (self);
  if (!self->settings_changed && self->filter) {
    GST_OBJECT_UNLOCK (self);
    return TRUE;
  }
  self->settings_changed = FALSE;
  filter = gcv_filter_new (&self->desc, &err);
  algorithm = self->desc.algorithm;
  GST_OBJECT_UNLOCK (self);

  if (!filter) {
    if (!self->filter) {
      g_propagate_error (error, err);
      return FALSE;
    }
    GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
        ("Invalid filter settings, keeping the previous filter: %s",
            err->message), (NULL));
    g_error_free (err);
    return TRUE;
  }
  if (self->plan && !gcv_plan_set_filter (self->plan, filter, algorithm,
          error)) {
    gcv_filter_free (filter);
    return FALSE;
  }
  gcv_filter_free (self->filter);
  self->filter = filter;
  if (self->plan) {
    /* Into or out of passthrough: downstream's pool (ours when filtering)
     * and upstream's (pinned when filtering on CUDA) are chosen again. */
    if (gst_gpu_convolve_update_passthrough (self)) {
      gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
      gst_base_transform_reconfigure_sink (GST_BASE_TRANSFORM (self));
    }
    gst_gpu_convolve_set_active_algorithm (self);
  }
  return TRUE;
}

GcvFilter *
gst_gpu_convolve_build_filter (GstGpuConvolve * self, GcvFamily * algorithm,
    GError ** error)
{
  GcvFilter *filter;

  GST_OBJECT_LOCK (self);
  filter = gcv_filter_new (&self->desc, error);
  *algorithm = self->desc.algorithm;
  GST_OBJECT_UNLOCK (self);
  return filter;
}

/* Frames in flight at most: what the engine holds for queue-depth. */
guint
gst_gpu_convolve_max_in_flight (GstGpuConvolve * self)
{
  guint wanted;

  if (self->plan)
    return gcv_plan_get_capacity (self->plan);
  GST_OBJECT_LOCK (self);
  wanted = self->queue_depth;
  GST_OBJECT_UNLOCK (self);
  return self->engine ? gcv_engine_frames_in_flight (self->engine, wanted) :
      1;
}

/* GstBaseTransform::before_transform: the properties settled for each
 * buffer before it is filtered. */
void
gst_gpu_convolve_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstClockTime ts = GST_BUFFER_PTS (buffer);
  GError *error = NULL;

  /* Controlled properties take their value for this buffer's stream time;
   * outside a TIME segment (filesrc ! capsfilter gives BYTES) the
   * timestamp is all there is. */
  if (trans->segment.format == GST_FORMAT_TIME)
    ts = gst_segment_to_stream_time (&trans->segment, GST_FORMAT_TIME, ts);
  if (GST_CLOCK_TIME_IS_VALID (ts))
    gst_object_sync_values (GST_OBJECT (self), ts);
  if (!gst_gpu_convolve_refresh_filter (self, &error)) {
    /* The plan may be half changed: no frame may run on it. Frames in
     * flight are dropped with it, and the stream stops with the error. */
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not apply the new filter: %s", error->message), (NULL));
    g_error_free (error);
    gst_gpu_convolve_frames_discard (self->frames, self->plan);
    g_clear_pointer (&self->plan, gcv_plan_free);
    self->failed = TRUE;
  }
}
