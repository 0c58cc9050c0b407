/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Frames in flight and the events between them; see gstgpuconvolveframes.h. */
#include "gstgpuconvolveframes.h"
#include "gstgpuconvolverelease.h"
#include "gstgpuconvolvestats.h"

#include <gst/base/gstbasetransform.h>

GST_DEBUG_CATEGORY_EXTERN (gst_gpu_convolve_debug);
#define GST_CAT_DEFAULT gst_gpu_convolve_debug

struct _GstGpuConvolveFrames
{
  GstElement *element;
  GstPad *srcpad;
  GQueue in_flight;             /* GstGpuConvolveFrame, oldest first */
  GQueue pending_events;        /* to send after the frame pushed last */
  GstGpuConvolveRelease *release;
};

GstGpuConvolveFrames *
gst_gpu_convolve_frames_new (GstElement * element, GstPad * srcpad)
{
  GstGpuConvolveFrames *frames = g_new0 (GstGpuConvolveFrames, 1);

  frames->element = element;
  frames->srcpad = srcpad;
  g_queue_init (&frames->in_flight);
  g_queue_init (&frames->pending_events);
  frames->release = gst_gpu_convolve_release_new (element);
  return frames;
}

void
gst_gpu_convolve_frames_free (GstGpuConvolveFrames * frames)
{
  if (!frames)
    return;
  gst_gpu_convolve_frames_discard (frames, NULL);
  gst_gpu_convolve_release_free (frames->release);
  g_free (frames);
}

GstGpuConvolveFrame *
gst_gpu_convolve_frame_new (GstBuffer * inbuf)
{
  GstGpuConvolveFrame *frame = g_new0 (GstGpuConvolveFrame, 1);

  frame->inbuf = inbuf;
  g_queue_init (&frame->events);
  return frame;
}

void
gst_gpu_convolve_frame_free (GstGpuConvolveFrame * frame)
{
  if (frame->in_map.memory)
    gst_buffer_unmap (frame->inbuf, &frame->in_map);
  if (frame->out_map.memory)
    gst_buffer_unmap (frame->outbuf, &frame->out_map);
  gst_clear_buffer (&frame->inbuf);
  gst_clear_buffer (&frame->outbuf);
  g_queue_clear_full (&frame->events, (GDestroyNotify) gst_event_unref);
  g_free (frame);
}

void
gst_gpu_convolve_frames_give_back (GstGpuConvolveFrames * frames,
    GstGpuConvolveFrame * frame, GcvPlan * plan, gpointer reg)
{
  frame->release = gst_gpu_convolve_release_push (frames->release, plan,
      frame->ticket, g_steal_pointer (&frame->inbuf), &frame->in_map, reg);
  frame->in_map.memory = NULL;
}

guint
gst_gpu_convolve_frames_count (GstGpuConvolveFrames * frames)
{
  return g_queue_get_length (&frames->in_flight);
}

void
gst_gpu_convolve_frames_add (GstGpuConvolveFrames * frames,
    GstGpuConvolveFrame * frame)
{
  g_queue_push_tail (&frames->in_flight, frame);
}

gboolean
gst_gpu_convolve_frames_hold_event (GstGpuConvolveFrames * frames,
    GstEvent * event)
{
  GstGpuConvolveFrame *newest = g_queue_peek_tail (&frames->in_flight);

  if (!newest)
    return FALSE;
  g_queue_push_tail (&newest->events, event);
  return TRUE;
}

void
gst_gpu_convolve_frames_send_events (GstGpuConvolveFrames * frames)
{
  GstEvent *event;

  while ((event = g_queue_pop_head (&frames->pending_events)))
    if (!gst_pad_push_event (frames->srcpad, event))
      GST_DEBUG_OBJECT (frames->element, "an event held behind a frame was "
          "not handled downstream");
}

/* The frame's statistics onto its output buffer, and on the bus where
 * asked. */
static void
deliver_stats (GstGpuConvolveFrames * frames, GstGpuConvolveFrame * frame,
    const GcvFrameStats * stats)
{
  GstStructure *s;

  if (stats->n_channels == 0)
    return;
  s = gst_gpu_convolve_stats_structure (stats,
      frame->options.statistics_threshold, frame->channels);
  if (frame->post_messages)
    gst_element_post_message (frames->element,
        gst_gpu_convolve_stats_message (frames->element,
            &GST_BASE_TRANSFORM (frames->element)->segment, frame->outbuf, s));
  gst_gpu_convolve_stats_attach (frame->outbuf, s);
}

GstFlowReturn
gst_gpu_convolve_frames_finish_oldest (GstGpuConvolveFrames * frames,
    GcvPlan * plan, GstBuffer ** outbuf)
{
  GstGpuConvolveFrame *frame = g_queue_pop_head (&frames->in_flight);
  GcvFrameStats stats;
  GError *error = NULL;

  *outbuf = NULL;
  while (!g_queue_is_empty (&frame->events))
    g_queue_push_tail (&frames->pending_events,
        g_queue_pop_head (&frame->events));
  gint64 t0 = g_get_monotonic_time ();
  /* (its input given back first: the plan's slot is used again after) */
  gboolean waited = (!frame->release
      || gst_gpu_convolve_release_wait (frames->release, frame->release,
          &error)) && gcv_plan_wait_stats (plan, frame->ticket, &stats,
      &error);

  /* the host path of a frame, with submit_frame()'s log line */
  GST_LOG_OBJECT (frames->element, "frame %" G_GUINT64_FORMAT ": waited %"
      G_GINT64_FORMAT " us", (guint64) frame->ticket,
      g_get_monotonic_time () - t0);
  if (!waited) {
    GST_ELEMENT_ERROR (frames->element, RESOURCE, FAILED,
        ("Convolution failed: %s", error->message), (NULL));
    g_error_free (error);
    gst_gpu_convolve_frame_free (frame);
    return GST_FLOW_ERROR;
  }
  gst_buffer_unmap (frame->outbuf, &frame->out_map);
  frame->out_map.memory = NULL;
  deliver_stats (frames, frame, &stats);
  *outbuf = g_steal_pointer (&frame->outbuf);
  gst_gpu_convolve_frame_free (frame);
  return GST_FLOW_OK;
}

GstFlowReturn
gst_gpu_convolve_frames_drain (GstGpuConvolveFrames * frames, GcvPlan * plan)
{
  GstFlowReturn ret = GST_FLOW_OK;

  gst_gpu_convolve_frames_send_events (frames);
  while (!g_queue_is_empty (&frames->in_flight)) {
    GstBuffer *outbuf;
    GstFlowReturn r = gst_gpu_convolve_frames_finish_oldest (frames, plan,
        &outbuf);
    if (r == GST_FLOW_OK && ret == GST_FLOW_OK)
      r = gst_pad_push (frames->srcpad, outbuf);
    else
      gst_clear_buffer (&outbuf);
    gst_gpu_convolve_frames_send_events (frames);
    if (ret == GST_FLOW_OK)
      ret = r;
  }
  return ret;
}

void
gst_gpu_convolve_frames_discard (GstGpuConvolveFrames * frames,
    GcvPlan * plan)
{
  GstGpuConvolveFrame *frame;

  while ((frame = g_queue_pop_head (&frames->in_flight))) {
    if (frame->release)
      gst_gpu_convolve_release_wait (frames->release, frame->release, NULL);
    if (plan)
      gcv_plan_wait (plan, frame->ticket, NULL);
    gst_gpu_convolve_frame_free (frame);
  }
  g_queue_clear_full (&frames->pending_events,
      (GDestroyNotify) gst_event_unref);
}
