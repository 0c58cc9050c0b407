/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Events and queries around the frames in flight: events that only travel
 * wait behind the newest frame, the others (and a DRAIN query) push the
 * frames out first, a flush interrupts the engine and drops them; the
 * latency the frames in flight add; the CUDA context asked for by a
 * neighbour; with backend=cuda, caps without the formats only the CPU
 * engine takes. docs/pipeline.md. */
#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolvecuda.h"

/* GstBaseTransform::sink_event: each event held behind the frames in
 * flight, or sent after them. */
gboolean
gst_gpu_convolve_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_START:
      /* outside the streaming thread, which may be in a long frame */
      gst_gpu_convolve_engine_interrupt (self, TRUE);
      break;
    case GST_EVENT_FLUSH_STOP:
      /* the streaming thread is out of the interrupted frame by now; a
       * failed filter change stays failed: its plan is gone until new
       * caps or a restart */
      gst_gpu_convolve_engine_interrupt (self, FALSE);
      gst_gpu_convolve_frames_discard (self->frames, self->plan);
      break;
    case GST_EVENT_TAG:
    case GST_EVENT_GAP:
    case GST_EVENT_CUSTOM_DOWNSTREAM:
    case GST_EVENT_CUSTOM_BOTH:
      /* Events that only travel: they wait behind the last frame in flight
       * and follow it downstream, with no need to finish any frame now. */
      if (gst_gpu_convolve_frames_hold_event (self->frames, event))
        return TRUE;
      break;
    default:
      /* The rest change what follows (caps, segment, end of stream): the
       * frames accepted before them go out first. */
      if (GST_EVENT_IS_SERIALIZED (event))
        gst_gpu_convolve_frames_drain (self->frames, self->plan);
      break;
  }
  return GST_GPU_CONVOLVE_PARENT_CLASS->sink_event (trans, event);
}

/* GstBaseTransform::query: the CUDA context, DRAIN, and the latency. */
gboolean
gst_gpu_convolve_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  gboolean res;

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT
      && gst_gpu_convolve_cuda_handle_query (GST_ELEMENT (self), query,
          self->cuda_context))
    return TRUE;
  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_DRAIN)
    gst_gpu_convolve_frames_drain (self->frames, self->plan);
  res = GST_GPU_CONVOLVE_PARENT_CLASS->query (trans, direction, query);
  if (res && GST_QUERY_TYPE (query) == GST_QUERY_CAPS) {
    gboolean cuda_only;
    GST_OBJECT_LOCK (self);
    cuda_only = self->backend == GCV_BACKEND_CUDA;
    GST_OBJECT_UNLOCK (self);
    /* with backend=cuda, the formats only the CPU engine takes would be
     * refused at set_caps: they are not offered */
    if (cuda_only) {
      GstCaps *caps;
      gst_query_parse_caps_result (query, &caps);
      caps = gst_gpu_convolve_caps_cuda_only (gst_caps_ref (caps));
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
    }
  }
  if (res && direction == GST_PAD_SRC
      && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
    /* a frame leaves once depth-1 later frames went in */
    gboolean live;
    GstClockTime min, max, extra = 0, frame = GST_CLOCK_TIME_NONE;
    gst_query_parse_latency (query, &live, &min, &max);
    /* a frame's duration from the framerate; for a variable one (0/1),
     * that of the latest buffer, the best guess of the next ones' */
    if (self->in_info.fps_n > 0) {
      frame = gst_util_uint64_scale_int (GST_SECOND, self->in_info.fps_d,
          self->in_info.fps_n);
    } else {
      GST_OBJECT_LOCK (self);
      frame = self->last_duration;
      GST_OBJECT_UNLOCK (self);
    }
    if (GST_CLOCK_TIME_IS_VALID (frame))
      extra = (gst_gpu_convolve_max_in_flight (self) - 1) * frame;
    GST_DEBUG_OBJECT (self, "adding %" GST_TIME_FORMAT " of latency",
        GST_TIME_ARGS (extra));
    gst_query_set_latency (query, live, min + extra,
        GST_CLOCK_TIME_IS_VALID (max) ? max + extra : max);
  }
  return res;
}
