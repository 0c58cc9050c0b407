/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The frame path, in the streaming thread: an input buffer taken when the
 * engine has room for it, mapped with its output buffer and submitted to
 * the plan; an output handed back once the engine holds all the frames it
 * can, so that they overlap; passthrough after the frames still in flight;
 * the metas the output keeps. The frames in flight themselves are
 * gstgpuconvolveframes.c's. */
#include "gstgpuconvolveprivate.h"
#include "gcv-interop.h"
#include "gstgpuconvolvecuda.h"
#include "gstgpuconvolvehostreg.h"
#include "gstgpuconvolvepinned.h"
#include "gstgpuconvolvestats.h"
#include "gstgpuconvolveenums.h"

#include <gst/video/video.h>

/* For the log: which memory a frame is in (other system memory costs a
 * copy into pinned staging on the CPU unless it is page-locked). */
static const gchar *
memory_kind (GstBuffer * buf, gboolean device, gboolean registered)
{
  if (device)
    return "CUDA";
  if (registered)
    return "upstream's memory, page-locked";
  return gst_buffer_n_memory (buf) == 1
      && gst_gpu_convolve_is_pinned_memory (gst_buffer_peek_memory (buf, 0))
      ? "the element's pinned pool" : "other system memory";
}

/* Upstream's system memory of a frame for the CUDA backend, page-locked
 * where it lies when it comes again (gstgpuconvolvehostreg.c): the
 * registration, busy until the frame's upload is done, or NULL (staged,
 * or memory of the element's pool, pinned already). */
static gpointer
register_input (GstGpuConvolve * self, GstBuffer * inbuf,
    const GstMapInfo * map)
{
  GstMemory *mem;
  gint mode;
  guint64 limit;

  if (gst_buffer_n_memory (inbuf) != 1 || !self->engine
      || gcv_engine_get_device (self->engine) < 0)
    return NULL;
  mem = gst_buffer_peek_memory (inbuf, 0);
  if (gst_gpu_convolve_is_pinned_memory (mem))
    return NULL;
  GST_OBJECT_LOCK (self);
  mode = self->host_register;
  limit = (guint64) self->host_register_limit << 20;
  GST_OBJECT_UNLOCK (self);
  if (mode == GST_GPU_CONVOLVE_HOST_REGISTER_NONE || !limit)
    return NULL;
  return gst_gpu_convolve_hostreg_acquire (self, mem, map->data, map->size,
      limit, mode == GST_GPU_CONVOLVE_HOST_REGISTER_KEPT);
}

/* One input into the engine: an output buffer from our pool, both mapped
 * (CUDA memory of our context on the device), both frames found and
 * checked, then submitted; the frame is kept in flight. */
static GstFlowReturn
submit_frame (GstGpuConvolve * self, GstBuffer * inbuf)
{
  GstBaseTransformClass *klass = GST_GPU_CONVOLVE_PARENT_CLASS;
  GstGpuConvolveFrame *frame = gst_gpu_convolve_frame_new (inbuf);
  GcvImage src, dst;
  gboolean in_device, out_device;
  gpointer streams[3];
  guint n_streams;
  GError *error = NULL;
  GstFlowReturn ret;
  gint64 t0 = g_get_monotonic_time (), t1, t2;
  gboolean submitted, done = FALSE, registered, handed = FALSE;
  gpointer reg = NULL;

  ret = klass->prepare_output_buffer (GST_BASE_TRANSFORM (self), inbuf,
      &frame->outbuf);
  if (ret != GST_FLOW_OK || !frame->outbuf) {
    /* GstBaseTransform posts nothing when its pool cannot allocate (on
     * CUDA: pinned memory refused), which would stop the stream with no
     * word of why (docs/errors.md) */
    if (ret == GST_FLOW_ERROR)
      gst_gpu_convolve_post_alloc_error (GST_ELEMENT (self),
          "an output buffer");
    goto fail;
  }
  /* CUDA memory of our context is read and written on the device */
  in_device = gst_gpu_convolve_cuda_is_device_buffer (inbuf,
      self->cuda_context);
  out_device = gst_gpu_convolve_cuda_is_device_buffer (frame->outbuf,
      self->cuda_context);
  if (out_device)
    gst_gpu_convolve_cuda_describe_frame (frame->outbuf,
        &self->out_info.layout);
  /* the frame's streams start after what is pending on its CUDA memory */
  n_streams = MIN (gcv_plan_get_next_cuda_streams (self->plan, streams,
          G_N_ELEMENTS (streams)), G_N_ELEMENTS (streams));
  if (!(in_device ? gst_gpu_convolve_cuda_map (inbuf, &frame->in_map,
              GST_MAP_READ, streams, n_streams) : gst_buffer_map (inbuf,
              &frame->in_map, GST_MAP_READ))
      || !(out_device ? gst_gpu_convolve_cuda_map (frame->outbuf,
              &frame->out_map, GST_MAP_WRITE, streams, n_streams) :
          gst_buffer_map (frame->outbuf, &frame->out_map, GST_MAP_WRITE))) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not map a buffer%s",
            in_device || out_device ? " in CUDA memory" : ""), (NULL));
    ret = GST_FLOW_ERROR;
    goto fail;
  }
  t1 = g_get_monotonic_time ();
  if (!gst_gpu_convolve_input_image (self, inbuf, &frame->in_map, in_device,
          &src)
      || !gst_gpu_convolve_output_image (self, frame->outbuf, &frame->out_map,
          out_device, &dst)) {
    ret = GST_FLOW_ERROR;
    goto fail;
  }

  /* the statistics asked for now hold for this frame */
  GST_OBJECT_LOCK (self);
  frame->options = self->frame_options;
  gst_gpu_convolve_regions_for_frame (self, inbuf, &frame->options);
  frame->post_messages = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  if (!gst_gpu_convolve_regions_report (self)) {
    ret = GST_FLOW_ERROR;
    goto fail;
  }
  frame->channels = gst_gpu_convolve_stats_channel_names (self->in_info.format);
  if (!in_device)
    reg = register_input (self, inbuf, &frame->in_map);
  registered = reg != NULL;
  submitted = gcv_plan_submit_with (self->plan, &src, &dst, &frame->options,
      &frame->ticket, &error);
  /* the regions are read by the submit only, from the element's array,
   * which the next frame's replace */
  frame->options.regions = NULL;
  frame->options.n_regions = 0;
  if (!submitted) {
    gst_gpu_convolve_hostreg_release (reg);
    if (g_error_matches (error, GCV_ERROR, GCV_ERROR_INTERRUPTED)) {
      /* a flush or a stop, not an error: the frame is dropped */
      GST_DEBUG_OBJECT (self, "frame dropped: %s", error->message);
      g_error_free (error);
      ret = GST_FLOW_FLUSHING;
      goto fail;
    }
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Convolution failed: %s", error->message), (NULL));
    g_error_free (error);
    ret = GST_FLOW_ERROR;
    goto fail;
  }
  /* Upstream's memory goes back once the engine reads it no more: a
   * staged frame's at once, any other's once its upload is done, which
   * runs beside the frames before it. A registered one still uploading
   * goes to the release thread, which gives it back then while this one
   * takes the next frame: an application's ring of fewer frames than are
   * in flight runs on. Others are held until the frame is done. */
  if (!in_device && !gcv_plan_input_done (self->plan, frame->ticket, FALSE,
          &done, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Convolution failed: %s", error->message), (NULL));
    g_clear_error (&error);
    ret = GST_FLOW_ERROR;
  } else if (reg && !done) {
    gst_gpu_convolve_frames_give_back (self->frames, frame, self->plan, reg);
    handed = TRUE;
    reg = NULL;
  }
  gst_gpu_convolve_hostreg_release (reg);
  t2 = g_get_monotonic_time ();
  /* where a frame's host time goes (docs/troubleshooting.md) */
  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": output buffer and "
      "maps %" G_GINT64_FORMAT " us, submit %" G_GINT64_FORMAT " us; input "
      "%s%s, output %s", (guint64) frame->ticket, t1 - t0, t2 - t1,
      memory_kind (inbuf, in_device, registered), handed ? ", given back "
      "once uploaded" : done ? ", released" : "",
      memory_kind (frame->outbuf, out_device, FALSE));
  if (done) {
    gst_buffer_unmap (frame->inbuf, &frame->in_map);
    frame->in_map.memory = NULL;
    gst_clear_buffer (&frame->inbuf);
  }
  gst_gpu_convolve_frames_add (self->frames, frame);
  return ret;

fail:
  gst_gpu_convolve_frame_free (frame);
  return ret;
}

/* One output per call. An input is taken only when the engine has room for
 * it; a frame comes out once the engine holds all it can, so that many
 * overlap. */
GstFlowReturn
gst_gpu_convolve_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstFlowReturn ret;

  *outbuf = NULL;
  /* events that followed the frame pushed last go right after it */
  gst_gpu_convolve_frames_send_events (self->frames);
  if (self->failed) {
    /* a filter change failed and the plan is gone, or there are no output
     * buffers; the error is posted */
    gst_clear_buffer (&trans->queued_buf);
    return GST_FLOW_ERROR;
  }
  if (gst_base_transform_is_passthrough (trans)) {
    /* frames from before passthrough go first */
    if (gst_gpu_convolve_frames_count (self->frames))
      return gst_gpu_convolve_frames_finish_oldest (self->frames, self->plan,
          outbuf);
    /* a buffer that does not hold the frame is refused here too, though
     * nothing of it is read */
    if (trans->queued_buf
        && !gst_gpu_convolve_input_fits (self, trans->queued_buf)) {
      gst_clear_buffer (&trans->queued_buf);
      return GST_FLOW_ERROR;
    }
    return GST_GPU_CONVOLVE_PARENT_CLASS->generate_output (trans, outbuf);
  }
  if (!trans->queued_buf)
    return GST_FLOW_OK;
  /* GstBaseTransform marks the next buffer it pushes DISCONT after a
   * DISCONT input or a frame dropped for QoS; that must be this frame's
   * output, not an earlier one still in flight: those go out first. */
  if ((self->dropped || GST_BUFFER_IS_DISCONT (trans->queued_buf))
      && gst_gpu_convolve_frames_count (self->frames)) {
    ret = gst_gpu_convolve_frames_drain (self->frames, self->plan);
    if (ret != GST_FLOW_OK) {
      gst_clear_buffer (&trans->queued_buf);
      return ret;
    }
  }
  self->dropped = FALSE;
  if (GST_BUFFER_DURATION_IS_VALID (trans->queued_buf)) {
    GST_OBJECT_LOCK (self);
    self->last_duration = GST_BUFFER_DURATION (trans->queued_buf);
    GST_OBJECT_UNLOCK (self);
  }
  if (!self->plan) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("No caps were negotiated"),
        (NULL));
    gst_clear_buffer (&trans->queued_buf);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (gst_gpu_convolve_frames_count (self->frames) >=
      gst_gpu_convolve_max_in_flight (self))
    /* called again for the input */
    return gst_gpu_convolve_frames_finish_oldest (self->frames, self->plan,
        outbuf);

  ret = submit_frame (self, g_steal_pointer (&trans->queued_buf));
  if (ret == GST_FLOW_OK
      && gst_gpu_convolve_frames_count (self->frames) >=
      gst_gpu_convolve_max_in_flight (self))
    ret = gst_gpu_convolve_frames_finish_oldest (self->frames, self->plan,
        outbuf);
  return ret;
}

/* Notes frames GstBaseTransform drops for QoS (see generate_output). */
GstFlowReturn
gst_gpu_convolve_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstFlowReturn ret =
      GST_GPU_CONVOLVE_PARENT_CLASS->submit_input_buffer (trans,
      is_discont, input);

  if (ret == GST_BASE_TRANSFORM_FLOW_DROPPED)
    self->dropped = TRUE;
  return ret;
}

/* Never called: generate_output() does the work. Without a transform
 * function GstBaseTransform takes the element for always in place, so it
 * never runs decide_allocation() nor gives propose_allocation() a decide
 * query, and upstream's ALLOCATION query would go downstream unanswered. */
GstFlowReturn
gst_gpu_convolve_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  g_return_val_if_reached (GST_FLOW_NOT_SUPPORTED);
}

/* Which metas the filtered frame keeps: those still true of a frame of the
 * same geometry. The crop is done (the output is the crop region) and the
 * output has its own layout, so crop and video metas stay behind. */
gboolean
gst_gpu_convolve_transform_meta (GstBaseTransform * trans, GstBuffer * outbuf,
    GstMeta * meta, GstBuffer * inbuf)
{
  GType api = meta->info->api;

  /* an upstream element's statistics are not the filtered frame's */
  if (api == GST_VIDEO_META_API_TYPE || api == GST_VIDEO_CROP_META_API_TYPE
      || gst_gpu_convolve_stats_is_meta (meta))
    return FALSE;
  if (api == GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE
      || api == GST_VIDEO_AFFINE_TRANSFORMATION_META_API_TYPE
      || api == GST_VIDEO_TIME_CODE_META_API_TYPE)
    return TRUE;
  /* metas without tags */
  return GST_GPU_CONVOLVE_PARENT_CLASS->transform_meta (trans, outbuf, meta,
      inbuf);
}
