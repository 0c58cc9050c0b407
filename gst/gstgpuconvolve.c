/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The gpuconvolve element: its type, documentation and class (every vfunc
 * wired in class_init), the instance's set-up and teardown, start and stop
 * (the filter and the engine, with the backend settled), and negotiation
 * (caps, and the plan made for the negotiated frames). The other jobs are
 * in the files that gstgpuconvolveprivate.h lists. */

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
 * per pixel), NV12, I420, GRAY16_LE, RGB, BGR and P010_10LE, in system
 * memory or in CUDA memory (memory:CUDAMemory, shared with nvcodec's
 * elements in one CUDA context through GstContext). GRAY8 and GRAY16_LE
 * may come out as GRAY32F and back,
 * NV12 or I420 as their filtered luma in GRAY8 or GRAY32F, and P010_10LE
 * as its luma in GRAY16_LE or GRAY32F, when downstream asks for it.
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
 * |[
 * gst-launch-1.0 -m videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8 ! gpuconvolve filter=sobel statistics=true statistics-threshold=100 post-messages=true ! fakesink
 * ]| Per-frame statistics of the gradient magnitude, posted as
 * gpuconvolve-statistics element messages (printed by -m); each output
 * buffer carries them in a GstGpuConvolveStatisticsMeta too.
 *
 * Since: 0.1
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolvehostreg.h"
#include "gstgpuconvolveenums.h"
#include "gstgpuconvolvestats.h"

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

/* --- GstBaseTransform: start, stop and negotiation ----------------------- */

/* The filter from the properties, and the engine: auto falls back to the
 * CPU, with a warning once per element, where no CUDA device is usable. */
static gboolean
gst_gpu_convolve_start (GstBaseTransform * trans)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GcvBackendKind backend, chosen;
  GcvRegionMode region_mode;
  GcvNeeds needs = { 0 };
  gint device_id;
  guint queue_depth;
  g_autofree gchar *tuning_file = NULL;
  GError *error = NULL;

  GST_OBJECT_LOCK (self);
  backend = self->backend;
  device_id = self->cuda_device_id;
  queue_depth = self->queue_depth;
  region_mode = self->region_mode;
  tuning_file = g_strdup (self->tuning_file);
  self->settings_changed = TRUE;
  self->last_duration = GST_CLOCK_TIME_NONE;
  GST_OBJECT_UNLOCK (self);

  self->failed = FALSE;
  self->dropped = FALSE;
  /* a mask that was refused is not run unapplied */
  if (!gst_gpu_convolve_regions_start (self))
    return FALSE;
  g_clear_pointer (&self->filter, gcv_filter_free);
  if (!gst_gpu_convolve_refresh_filter (self, &error)) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Invalid filter settings: %s", error->message), (NULL));
    g_error_free (error);
    return FALSE;
  }

  /* the engine decides, from what the backends take: auto is CUDA where
   * a device is usable and it takes the stream, else the CPU; set_caps()
   * decides again with the formats */
  needs.regions = region_mode != GCV_REGIONS_ALL;
  chosen = gcv_backend_choose (backend, device_id, &needs, &error);
  if (backend == GCV_BACKEND_AUTO && chosen == GCV_BACKEND_CPU) {
    if (!g_error_matches (error, GCV_ERROR, GCV_ERROR_NO_DEVICE)) {
      GST_INFO_OBJECT (self, "%s: filtering on the CPU", error->message);
    } else if (!self->warned_fallback) {
      GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
          ("No usable CUDA device, filtering on the CPU"), ("%s",
              error->message));
      self->warned_fallback = TRUE;
    }
  }
  g_clear_error (&error);
  /* none (backend=cuda with no device): the engine says why */
  self->engine = gst_gpu_convolve_engine_new (self,
      chosen == GCV_BACKEND_AUTO ? backend : chosen, device_id, &error);
  if (!self->engine) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device for backend=cuda: %s", error->message),
        (NULL));
    g_error_free (error);
    /* stop() is not called after a failed start: the filter built above
     * would be left behind */
    g_clear_pointer (&self->filter, gcv_filter_free);
    return FALSE;
  }
  /* a table that cannot be used leaves the built-in choices, not a failure */
  if (tuning_file && !gcv_engine_set_tuning_file (self->engine, tuning_file,
          &error)) {
    GST_ELEMENT_WARNING (self, RESOURCE, READ,
        ("Ignoring tuning-file: %s", error->message), (NULL));
    g_clear_error (&error);
  }
  /* The CPU engine finishes each frame before the next, so one suffices. */
  GST_INFO_OBJECT (self, "running on %s, %u frame(s) in flight",
      gcv_engine_describe (self->engine), gcv_engine_frames_in_flight
      (self->engine, queue_depth));
  return TRUE;
}

/* Frames in flight dropped (once the engine is done with their memory),
 * then the plan, the engine and the filter. */
static gboolean
gst_gpu_convolve_stop (GstBaseTransform * trans)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);

  gst_gpu_convolve_regions_stop (self);
  gst_gpu_convolve_frames_discard (self->frames, self->plan);
  /* no upload reads upstream's memory now */
  gst_gpu_convolve_hostreg_forget (self);
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

/* The plan for the negotiated frames. Caps that change only the memories
 * keep it; others push the frames accepted before them out first. */
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
  if (!gst_gpu_convolve_engine_for_formats (self, &in, &out))
    return FALSE;
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
