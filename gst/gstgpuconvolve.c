/**
 * SECTION:element-gpuconvolve
 * @title: gpuconvolve
 *
 * Convolves (or correlates) video frames with a 2D or separable kernel on an
 * NVIDIA GPU, and on all CPU cores where no GPU is usable. The kernel is given
 * as coefficients (`kernel`, or `row-kernel` and `column-kernel`) or picked
 * from the built-in filters (`filter`). Borders, anchor, scale and bias follow
 * OpenCV's filter2D.
 *
 * Formats: RGBA, BGRA, RGBx, BGRx, GRAY8, GRAY32F (one native-endian float
 * per pixel), NV12 and I420, in system memory or in CUDA memory
 * (memory:CUDAMemory, shared with nvcodec's elements in one CUDA context
 * through GstContext). GRAY8 may come out as GRAY32F and back, and NV12 or
 * I420 as their filtered luma in GRAY8 or GRAY32F, when downstream asks for
 * it.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! gpuconvolve filter=gaussian size=9 sigma=2 ! videoconvert ! autovideosink
 * ]| A 9x9 Gaussian blur.
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=GRAY8 ! gpuconvolve @preset=edge-sobel-x ! video/x-raw,format=GRAY32F ! fakesink
 * ]| Sobel derivative into float samples.
 * |[
 * gst-launch-1.0 videotestsrc ! gpuconvolve kernel-width=3 kernel-height=3 kernel="<0,-1,0,-1,5,-1,0,-1,0>" ! videoconvert ! autovideosink
 * ]| A custom 3x3 sharpening kernel.
 * |[
 * gst-launch-1.0 filesrc location=clip.mp4 ! qtdemux ! h264parse ! nvh264dec ! gpuconvolve filter=sobel-x ! video/x-raw,format=GRAY32F ! fakesink
 * ]| Decoded frames filtered on the GPU without a copy to the host; only the
 * float luma derivative comes down.
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstgpuconvolveprivate.h"
#include "gcv-interop.h"
#include "gstgpuconvolvecaps.h"
#include "gstgpuconvolvecuda.h"
#include "gstgpuconvolveenums.h"
#include "gstgpuconvolveframes.h"
#include "gstgpuconvolvepinned.h"
#include "gstgpuconvolvestats.h"

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

GST_DEBUG_CATEGORY (gst_gpu_convolve_debug);

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (GST_GPU_CONVOLVE_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (GST_GPU_CONVOLVE_CAPS));

#define gst_gpu_convolve_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE (GstGpuConvolve, gst_gpu_convolve,
    GST_TYPE_BASE_TRANSFORM,
    G_IMPLEMENT_INTERFACE (GST_TYPE_PRESET, gst_gpu_convolve_preset_init);
    GST_DEBUG_CATEGORY_INIT (gst_gpu_convolve_debug, "gpuconvolve", 0,
        "gpuconvolve element"));
GST_ELEMENT_REGISTER_DEFINE (gpuconvolve, "gpuconvolve", GST_RANK_NONE,
    GST_TYPE_GPU_CONVOLVE);

/* --- frames ------------------------------------------------------------- */

/* Where a frame's planes lie in a buffer: a GstVideoMeta's offsets and
 * strides, else those of CUDA memory's own layout, else the caps'
 * default. */
static void
buffer_layout (GstBuffer * buf, const GstGpuConvolveInfo * info,
    gboolean device, gsize offset[], gint stride[])
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  const GstVideoInfo *layout = device ? gst_gpu_convolve_cuda_layout (buf) :
      &info->layout;

  for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES (&info->layout); i++) {
    offset[i] = meta ? meta->offset[i] : GST_VIDEO_INFO_PLANE_OFFSET (layout,
        i);
    stride[i] = meta ? meta->stride[i] : GST_VIDEO_INFO_PLANE_STRIDE (layout,
        i);
  }
}

/* Plane i of a frame of `info`: its bytes per row and rows, and per pixel
 * of the frame's x (NV12's UV rows have a pair per two pixels). */
static void
plane_size (const GstGpuConvolveInfo * info, guint i, gsize * row,
    guint * rows, guint * sub)
{
  guint cw, ch;

  *row = (gsize) info->width * gcv_format_pixel_size (info->format);
  *rows = info->height;
  *sub = 1;
  if (i > 0 && gcv_format_chroma_size (info->format, info->width,
          info->height, &cw, &ch)) {
    *row = info->format == GCV_FORMAT_NV12 ? 2 * (gsize) cw : cw;
    *rows = ch;
    *sub = 2;
  }
}

static const gchar *const plane_names[] = { "", " UV plane", " V plane" };

/* The frame of `info` in a mapped buffer, from (x, y) on (a crop region):
 * every byte it spans must lie inside the mapping. The sums are checked
 * for overflow, as a meta's values are anybody's. */
static gboolean
frame_image (GstGpuConvolve * self, GstBuffer * buf, GstMapInfo * map,
    const GstGpuConvolveInfo * info, gboolean device, guint x, guint y,
    const gchar * what, GcvImage * img)
{
  const gchar *name = gcv_format_name (info->format);
  gsize offset[GST_GPU_CONVOLVE_MAX_PLANES] = { 0 };
  gint stride[GST_GPU_CONVOLVE_MAX_PLANES] = { 0 };
  guint n = GST_VIDEO_INFO_N_PLANES (&info->layout);

  memset (img, 0, sizeof (*img));
  img->on_device = device;
  buffer_layout (buf, info, device, offset, stride);
  for (guint i = 0; i < n; i++) {
    const gchar *plane = info->format == GCV_FORMAT_I420 && i == 1 ?
        " U plane" : plane_names[i];
    gsize row, px, start, rows_bytes, end;
    guint rows, sub, px_x, px_y;
    gboolean sized;

    plane_size (info, i, &row, &rows, &sub);
    /* chroma starts at the sample that covers (x, y), at x / sub and
     * y / sub rounded down as videocrop cuts it; NV12's samples are UV
     * pairs of two bytes, so an odd x still lands on a U byte */
    px = i > 0 && sub == 2 ? (info->format == GCV_FORMAT_NV12 ? 2 : 1) :
        gcv_format_pixel_size (info->format);
    px_x = i > 0 ? x / sub : x;
    px_y = i > 0 ? y / sub : y;
    if (stride[i] <= 0 || (gsize) stride[i] < row
        || (gsize) px_x * px > (gsize) stride[i] - row) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("%s%s stride %d cannot hold a row of %" G_GSIZE_FORMAT " bytes of "
              "%ux%u %s from x=%u", what, plane, stride[i], row, info->width,
              info->height, name, x), (NULL));
      return FALSE;
    }
    /* start = offset + y * stride + x * px; end = start + (rows - 1) *
     * stride + row */
    sized = g_size_checked_mul (&start, px_y, (gsize) stride[i])
        && g_size_checked_add (&start, start, (gsize) px_x * px)
        && g_size_checked_add (&start, start, offset[i])
        && g_size_checked_mul (&rows_bytes, rows - 1, (gsize) stride[i])
        && g_size_checked_add (&end, start, rows_bytes)
        && g_size_checked_add (&end, end, row);
    if (!sized || end > map->size) {
      gchar *need = sized ? g_strdup_printf ("%" G_GSIZE_FORMAT, end) :
          g_strdup ("more than 2^64");
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("%s buffer of %" G_GSIZE_FORMAT " bytes is smaller than a %ux%u "
              "%s frame%s at offset %" G_GSIZE_FORMAT ", stride %d, region "
              "(%u,%u): %s bytes", what, map->size, info->width, info->height,
              name, plane, offset[i], stride[i], x, y, need), (NULL));
      g_free (need);
      return FALSE;
    }
    if (i == 0) {
      img->data = map->data + start;
      img->stride = stride[i];
    } else {
      img->chroma[i - 1] = map->data + start;
      img->chroma_stride[i - 1] = stride[i];
    }
  }
  return TRUE;
}

/* The input frame: the crop region (of the negotiated size) where a
 * GstVideoCropMeta gives one. */
static gboolean
input_image (GstGpuConvolve * self, GstBuffer * inbuf, GstMapInfo * map,
    gboolean device, GcvImage * img)
{
  const GstGpuConvolveInfo *info = &self->in_info;
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (inbuf);
  guint x = 0, y = 0;

  if (crop) {
    if (crop->width != info->width || crop->height != info->height) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("Input crop region %ux%u at (%u,%u) is not the negotiated %ux%u",
              crop->width, crop->height, crop->x, crop->y, info->width,
              info->height), (NULL));
      return FALSE;
    }
    /* any x and y, also odd ones on 4:2:0 (frame_image() finds the
     * chroma that covers them) */
    x = crop->x;
    y = crop->y;
  }
  return frame_image (self, inbuf, map, info, device, x, y, "Input", img);
}

/* Whether `inbuf` holds the negotiated frame (input_image()'s checks,
 * with the error posted when not). */
static gboolean
input_fits (GstGpuConvolve * self, GstBuffer * inbuf)
{
  GstMapInfo map;
  GcvImage img;
  gboolean ok;

  if (!gst_buffer_map (inbuf, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not map a buffer"),
        (NULL));
    return FALSE;
  }
  ok = input_image (self, inbuf, &map, FALSE, &img);
  gst_buffer_unmap (inbuf, &map);
  return ok;
}

/* For the log: which memory a frame is in (other system memory costs a
 * copy into pinned staging on the CPU unless it is page-locked). */
static const gchar *
memory_kind (GstBuffer * buf, gboolean device)
{
  if (device)
    return "CUDA";
  return gst_buffer_n_memory (buf) == 1
      && gst_gpu_convolve_is_pinned_memory (gst_buffer_peek_memory (buf, 0))
      ? "the element's pinned pool" : "other system memory";
}

static GstFlowReturn
submit_frame (GstGpuConvolve * self, GstBuffer * inbuf)
{
  GstBaseTransformClass *klass = GST_BASE_TRANSFORM_CLASS (parent_class);
  GstGpuConvolveFrame *frame = gst_gpu_convolve_frame_new (inbuf);
  GcvImage src, dst;
  gboolean in_device, out_device;
  gpointer streams[3];
  guint n_streams;
  GError *error = NULL;
  GstFlowReturn ret;
  gint64 t0 = g_get_monotonic_time (), t1, t2;

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
  if (!input_image (self, inbuf, &frame->in_map, in_device, &src)
      || !frame_image (self, frame->outbuf, &frame->out_map, &self->out_info,
          out_device, 0, 0, "Output", &dst)) {
    ret = GST_FLOW_ERROR;
    goto fail;
  }

  /* the statistics asked for now hold for this frame */
  GST_OBJECT_LOCK (self);
  frame->options = self->frame_options;
  frame->post_messages = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  frame->channels = gst_gpu_convolve_stats_channel_names (self->in_info.format);
  if (!gcv_plan_submit_with (self->plan, &src, &dst, &frame->options,
          &frame->ticket, &error)) {
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
  t2 = g_get_monotonic_time ();
  /* where a frame's host time goes (docs/troubleshooting.md) */
  GST_LOG_OBJECT (self, "frame %" G_GUINT64_FORMAT ": output buffer and "
      "maps %" G_GINT64_FORMAT " us, submit %" G_GINT64_FORMAT " us; input "
      "%s, output %s", (guint64) frame->ticket, t1 - t0, t2 - t1,
      memory_kind (inbuf, in_device), memory_kind (frame->outbuf,
          out_device));
  gst_gpu_convolve_frames_add (self->frames, frame);
  return GST_FLOW_OK;

fail:
  gst_gpu_convolve_frame_free (frame);
  return ret;
}

/* One output per call. An input is taken only when the engine has room for
 * it; a frame comes out once the engine holds all it can, so that many
 * overlap. */
static GstFlowReturn
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
    if (trans->queued_buf && !input_fits (self, trans->queued_buf)) {
      gst_clear_buffer (&trans->queued_buf);
      return GST_FLOW_ERROR;
    }
    return GST_BASE_TRANSFORM_CLASS (parent_class)->generate_output (trans,
        outbuf);
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
  if (gst_gpu_convolve_frames_count (self->frames) >= gst_gpu_convolve_max_in_flight (self))
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
static GstFlowReturn
gst_gpu_convolve_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstFlowReturn ret =
      GST_BASE_TRANSFORM_CLASS (parent_class)->submit_input_buffer (trans,
      is_discont, input);

  if (ret == GST_BASE_TRANSFORM_FLOW_DROPPED)
    self->dropped = TRUE;
  return ret;
}

/* --- GstBaseTransform ---------------------------------------------------- */

static gboolean
gst_gpu_convolve_start (GstBaseTransform * trans)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GcvBackendKind backend;
  gint device_id;
  guint queue_depth;
  g_autofree gchar *tuning_file = NULL;
  GError *error = NULL;

  GST_OBJECT_LOCK (self);
  backend = self->backend;
  device_id = self->cuda_device_id;
  queue_depth = self->queue_depth;
  tuning_file = g_strdup (self->tuning_file);
  self->settings_changed = TRUE;
  self->last_duration = GST_CLOCK_TIME_NONE;
  GST_OBJECT_UNLOCK (self);

  self->failed = FALSE;
  self->dropped = FALSE;
  g_clear_pointer (&self->filter, gcv_filter_free);
  if (!gst_gpu_convolve_refresh_filter (self, &error)) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Invalid filter settings: %s", error->message), (NULL));
    g_error_free (error);
    return FALSE;
  }

  if (!gst_gpu_convolve_engine_start (self, backend, device_id, queue_depth,
          tuning_file)) {
    /* stop() is not called after a failed start: the filter built above
     * would be left behind */
    g_clear_pointer (&self->filter, gcv_filter_free);
    return FALSE;
  }
  return TRUE;
}

static gboolean
gst_gpu_convolve_stop (GstBaseTransform * trans)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);

  gst_gpu_convolve_frames_discard (self->frames, self->plan);
  g_clear_pointer (&self->plan, gcv_plan_free);
  gst_gpu_convolve_engine_stop (self);
  g_clear_pointer (&self->filter, gcv_filter_free);
  gst_gpu_convolve_set_active_algorithm (self);
  return TRUE;
}

static GstCaps *
gst_gpu_convolve_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *res = gst_gpu_convolve_caps_transform (direction, caps, filter,
      gst_gpu_convolve_engine_cuda_memory_usable (GST_GPU_CONVOLVE (trans)));
  GST_DEBUG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps,
      res);
  return res;
}

static gboolean
gst_gpu_convolve_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstGpuConvolveInfo in, out;
  GcvGeometry geometry;
  GError *error = NULL;

  if (!gst_gpu_convolve_info_from_caps (&in, incaps)
      || !gst_gpu_convolve_info_from_caps (&out, outcaps)) {
    GST_ERROR_OBJECT (self, "cannot use caps %" GST_PTR_FORMAT " -> %"
        GST_PTR_FORMAT, incaps, outcaps);
    return FALSE;
  }
  if (self->plan && in.format == self->in_info.format
      && out.format == self->out_info.format && in.width == self->in_info.width
      && in.height == self->in_info.height) {
    self->in_info = in;
    self->out_info = out;
    /* the memories may have changed: passthrough needs the same on both */
    gst_gpu_convolve_update_passthrough (self);
    return TRUE;
  }

  /* frames accepted under the old caps go out first */
  if (gst_gpu_convolve_frames_drain (self->frames, self->plan) != GST_FLOW_OK)
    GST_WARNING_OBJECT (self, "could not push frames in flight");
  if (!self->engine || !gst_gpu_convolve_refresh_filter (self, &error)) {
    if (error)
      GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
          ("Invalid filter settings: %s", error->message), (NULL));
    g_clear_error (&error);
    return FALSE;
  }
  g_clear_pointer (&self->plan, gcv_plan_free);
  geometry.in_format = in.format;
  geometry.out_format = out.format;
  geometry.width = in.width;
  geometry.height = in.height;
  GST_OBJECT_LOCK (self);
  GcvFamily algorithm = self->desc.algorithm;
  GST_OBJECT_UNLOCK (self);
  self->plan = gcv_plan_new (self->engine, &geometry, self->filter, algorithm,
      gst_gpu_convolve_max_in_flight (self), &error);
  if (!self->plan) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("Could not set up filtering of %ux%u %s: %s", in.width, in.height,
            gcv_format_name (in.format), error->message), (NULL));
    g_error_free (error);
    return FALSE;
  }
  self->in_info = in;
  self->out_info = out;
  self->failed = FALSE;
  gst_gpu_convolve_update_passthrough (self);
  gst_gpu_convolve_set_active_algorithm (self);
  return TRUE;
}

static gboolean
gst_gpu_convolve_transform_size (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, gsize size, GstCaps * othercaps,
    gsize * othersize)
{
  GstGpuConvolveInfo info;

  if (!gst_gpu_convolve_info_from_caps (&info, othercaps))
    return FALSE;
  *othersize = info.size;
  return TRUE;
}

static gboolean
gst_gpu_convolve_get_unit_size (GstBaseTransform * trans, GstCaps * caps,
    gsize * size)
{
  GstGpuConvolveInfo info;

  if (!gst_gpu_convolve_info_from_caps (&info, caps))
    return FALSE;
  *size = info.size;
  return TRUE;
}

/* Never called: generate_output() does the work. Without a transform
 * function GstBaseTransform takes the element for always in place, so it
 * never runs decide_allocation() nor gives propose_allocation() a decide
 * query, and upstream's ALLOCATION query would go downstream unanswered. */
static GstFlowReturn
gst_gpu_convolve_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  g_return_val_if_reached (GST_FLOW_NOT_SUPPORTED);
}

static gboolean
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
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

static gboolean
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
  res = GST_BASE_TRANSFORM_CLASS (parent_class)->query (trans, direction,
      query);
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

/* Which metas the filtered frame keeps: those still true of a frame of the
 * same geometry. The crop is done (the output is the crop region) and the
 * output has its own layout, so crop and video metas stay behind. */
static gboolean
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
  return GST_BASE_TRANSFORM_CLASS (parent_class)->transform_meta (trans,
      outbuf, meta, inbuf);
}

/* --- GObject ------------------------------------------------------------- */

/* Stopping interrupts the frame in progress, which on the CPU could hold
 * the streaming thread, and so the pads' deactivation, for seconds. */
static GstStateChangeReturn
gst_gpu_convolve_change_state (GstElement * element, GstStateChange transition)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (element);
  GstStateChangeReturn ret;

  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_gpu_convolve_engine_interrupt (self, TRUE);
  ret = GST_ELEMENT_CLASS (parent_class)->change_state (element, transition);
  /* stop() freed the engine; one that stayed (a failed change) runs on */
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    gst_gpu_convolve_engine_interrupt (self, FALSE);
  return ret;
}

static void
gst_gpu_convolve_finalize (GObject * object)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (object);

  gst_gpu_convolve_properties_finalize (self);
  gst_gpu_convolve_frames_free (self->frames);
  gst_clear_object (&self->cuda_context);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_gpu_convolve_init (GstGpuConvolve * self)
{
  gst_gpu_convolve_properties_init (self);
  self->frames = gst_gpu_convolve_frames_new (GST_ELEMENT (self),
      GST_BASE_TRANSFORM_SRC_PAD (self));
}

static void
gst_gpu_convolve_class_init (GstGpuConvolveClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_gpu_convolve_set_property;
  gobject_class->get_property = gst_gpu_convolve_get_property;
  gobject_class->finalize = gst_gpu_convolve_finalize;

  gst_gpu_convolve_properties_install (gobject_class);

  gst_gpu_convolve_stats_register ();

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "GPU convolution filter", "Filter/Effect/Video/Hardware",
      "Convolves video frames with a 2D or separable kernel on NVIDIA GPUs "
      "(CPU fallback)", "gpuconvolve developers");

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_gpu_convolve_set_context);
  element_class->change_state =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_change_state);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_gpu_convolve_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_gpu_convolve_stop);
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_transform_caps);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_gpu_convolve_set_caps);
  trans_class->transform_size =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_transform_size);
  trans_class->get_unit_size =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_get_unit_size);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_decide_allocation);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_before_transform);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_submit_input_buffer);
  trans_class->generate_output =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_generate_output);
  trans_class->transform_meta =
      GST_DEBUG_FUNCPTR (gst_gpu_convolve_transform_meta);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_gpu_convolve_transform);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_gpu_convolve_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_gpu_convolve_query);

  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_FILTER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_MODE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_BORDER, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_ALPHA, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_PLANES, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_SEPARABLE, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_ALGORITHM, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_GPU_CONVOLVE_BACKEND, 0);
}
