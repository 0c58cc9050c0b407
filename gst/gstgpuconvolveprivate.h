/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the files of the gpuconvolve element share: the instance, its debug
 * category, and the functions one of its files calls in another. Not
 * installed; the element's public face is gstgpuconvolve.h. */
#ifndef __GST_GPU_CONVOLVE_PRIVATE_H__
#define __GST_GPU_CONVOLVE_PRIVATE_H__

#include "gstgpuconvolve.h"
#include "gstgpuconvolvecaps.h"
#include "gstgpuconvolveframes.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN (gst_gpu_convolve_debug);
#define GST_CAT_DEFAULT gst_gpu_convolve_debug

/* GstBaseTransform's class, which the element's vfuncs chain up to: the
 * parent_class of G_DEFINE_TYPE, which is static to gstgpuconvolve.c. */
#define GST_GPU_CONVOLVE_PARENT_CLASS \
  ((GstBaseTransformClass *) g_type_class_peek (GST_TYPE_BASE_TRANSFORM))

struct _GstGpuConvolve
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  GcvFilterDesc desc;           /* its arrays point into the GArrays below */
  GArray *kernel, *row_kernel, *column_kernel;
  GcvBackendKind backend;
  gint cuda_device_id;
  guint queue_depth;
  gint host_register;           /* GstGpuConvolveHostRegister */
  guint host_register_limit;    /* MiB */
  gchar *tuning_file;
  GcvFrameOptions frame_options;        /* statistics and its threshold */
  /* privacy regions (gstgpuconvolveregions.c) */
  GArray *regions;              /* GcvRect: the regions property */
  gint region_source;           /* GstGpuConvolveRegionSource */
  gchar *region_type;           /* the metas' labels taken, as set */
  GArray *region_labels;        /* GQuark: region_type's, none: any */
  GcvRegionMode region_mode;
  gint region_fail;             /* GstGpuConvolveRegionFail */
  gchar *regions_refused;       /* why the last regions value set before
                                 * start was refused: start() fails */
  gboolean regions_running;     /* started: a refusal only warns */
  gboolean post_messages;
  gboolean settings_changed;    /* desc differs from the filter in use */
  gchar *active_algorithm;
  GstClockTime last_duration;   /* of the latest input, for the latency */

  /* the CUDA context shared with nvcodec's elements (a GstCudaContext),
   * from set_context() or made at start */
  GstObject *cuda_context;

  /* streaming thread */
  GcvEngine *engine;
  GcvFilter *filter;            /* the filter in use */
  GcvPlan *plan;
  GstGpuConvolveInfo in_info, out_info;
  GstGpuConvolveFrames *frames;
  gboolean failed;              /* error posted, no frame runs: a filter
                                 * change failed (no plan) or no output
                                 * buffers could be had */
  gboolean dropped;             /* GstBaseTransform dropped a frame (QoS) */
  gboolean warned_fallback;
  GArray *frame_regions;        /* GcvRect: the frame being submitted's */
  guint frame_notice;           /* what its mask came to (regions.c) */
  gboolean frame_fails;         /* region-fail=error stops at it */
  guint region_notice;          /* the last posted */
  gchar *region_message;        /* the notice's text */
};

/* gstgpuconvolveproperties.c: the property table. install() from
 * class_init, init() and finalize() for the instance's property state. */
G_GNUC_INTERNAL
void gst_gpu_convolve_properties_install (GObjectClass * gobject_class);
G_GNUC_INTERNAL
void gst_gpu_convolve_properties_init (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_properties_finalize (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
G_GNUC_INTERNAL
void gst_gpu_convolve_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);

/* gstgpuconvolveregions.c: the region properties (ids from `first`, set
 * and got under the object lock; a refused regions value reported by
 * refused()), start() failing where one was refused before it, and a
 * frame's regions into its options (under the lock), then report() on the
 * bus what its mask came to (FALSE: stop, the error posted). */
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_install (GObjectClass * gobject_class,
    guint first);
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_init (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_finalize (GstGpuConvolve * self);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_regions_set_property (GstGpuConvolve * self,
    guint id, const GValue * value, GError ** error);
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_get_property (GstGpuConvolve * self, guint id,
    GValue * value);
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_refused (GstGpuConvolve * self,
    const GValue * value, const gchar * why);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_regions_start (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_stop (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_regions_for_frame (GstGpuConvolve * self,
    GstBuffer * inbuf, GcvFrameOptions * options);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_regions_report (GstGpuConvolve * self);

/* gstgpuconvolvefilter.c: the properties settled into the filter the plan
 * runs. refresh_filter() builds it when they changed (FALSE, with `error`,
 * when there is no filter to keep or the plan refused it);
 * update_passthrough() says TRUE when passthrough changed; max_in_flight()
 * is the plan's capacity, or what the engine would give queue-depth. */
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_refresh_filter (GstGpuConvolve * self,
    GError ** error);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_update_passthrough (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_set_active_algorithm (GstGpuConvolve * self);
G_GNUC_INTERNAL
guint gst_gpu_convolve_max_in_flight (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_before_transform (GstBaseTransform * trans,
    GstBuffer * buffer);

/* gstgpuconvolveengine.c: the engine and the CUDA context it runs in.
 * engine_new() takes CUDA or the CPU (auto settled by start());
 * interrupt() may be called from any thread. */
G_GNUC_INTERNAL
GcvEngine *gst_gpu_convolve_engine_new (GstGpuConvolve * self,
    GcvBackendKind backend, gint device_id, GError ** error);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_engine_for_formats (GstGpuConvolve * self,
    const GstGpuConvolveInfo * in, const GstGpuConvolveInfo * out);
G_GNUC_INTERNAL
void gst_gpu_convolve_engine_stop (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_engine_interrupt (GstGpuConvolve * self, gboolean on);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_engine_is_cuda (GstGpuConvolve * self);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_engine_cuda_memory_usable (GstGpuConvolve * self);
G_GNUC_INTERNAL
void gst_gpu_convolve_set_context (GstElement * element,
    GstContext * context);

/* gstgpuconvolvelayout.c: where the input and output frames lie in their
 * mapped buffers (`device`: CUDA memory mapped for the device), checked;
 * FALSE with the error posted. input_fits() maps the buffer itself. */
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_input_image (GstGpuConvolve * self,
    GstBuffer * inbuf, GstMapInfo * map, gboolean device, GcvImage * img);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_output_image (GstGpuConvolve * self,
    GstBuffer * outbuf, GstMapInfo * map, gboolean device, GcvImage * img);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_input_fits (GstGpuConvolve * self,
    GstBuffer * inbuf);

/* gstgpuconvolvetransform.c: the frame path (GstBaseTransform's vfuncs). */
G_GNUC_INTERNAL
GstFlowReturn gst_gpu_convolve_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input);
G_GNUC_INTERNAL
GstFlowReturn gst_gpu_convolve_generate_output (GstBaseTransform * trans,
    GstBuffer ** outbuf);
G_GNUC_INTERNAL
GstFlowReturn gst_gpu_convolve_transform (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer * outbuf);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_transform_meta (GstBaseTransform * trans,
    GstBuffer * outbuf, GstMeta * meta, GstBuffer * inbuf);

/* gstgpuconvolveevents.c: events and queries around the frames in flight
 * (GstBaseTransform's vfuncs). */
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_sink_event (GstBaseTransform * trans,
    GstEvent * event);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query);

/* gstgpuconvolveallocation.c: the pools offered upstream and the pool of
 * the output buffers. */
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query);
G_GNUC_INTERNAL
gboolean gst_gpu_convolve_decide_allocation (GstBaseTransform * trans,
    GstQuery * query);

/* gstgpuconvolvepreset.c: GstPreset, GStreamer's own wrapped so that the
 * shipped presets of a later release are not hidden by the user's copies
 * of an earlier one. */
G_GNUC_INTERNAL
void gst_gpu_convolve_preset_init (GstPresetInterface * iface);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_PRIVATE_H__ */
