/* gpuconvolve: convolution of video frames on NVIDIA GPUs, with a CPU
 * fallback. */
#ifndef __GST_GPU_CONVOLVE_H__
#define __GST_GPU_CONVOLVE_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

#include "gcv.h"
#include "gstgpuconvolvecaps.h"

G_BEGIN_DECLS

#define GST_TYPE_GPU_CONVOLVE (gst_gpu_convolve_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuConvolve, gst_gpu_convolve, GST, GPU_CONVOLVE,
    GstBaseTransform);

GST_ELEMENT_REGISTER_DECLARE (gpuconvolve);

struct _GstGpuConvolve
{
  GstBaseTransform parent;

  /* properties, under the object lock */
  GcvFilterDesc desc;           /* its arrays point into the GArrays below */
  GArray *kernel, *row_kernel, *column_kernel;
  GcvBackendKind backend;
  gint cuda_device_id;
  guint queue_depth;
  gchar *tuning_file;
  gboolean settings_changed;    /* desc differs from the filter in use */
  gchar *active_algorithm;
  GstClockTime last_duration;   /* of the latest input, for the latency */

  /* streaming thread */
  GcvEngine *engine;
  GcvFilter *filter;            /* the filter in use */
  GcvPlan *plan;
  GstGpuConvolveInfo in_info, out_info;
  guint depth;                  /* frames in flight at most */
  GQueue in_flight;             /* GstGpuConvolveFrame, oldest first */
  GQueue pending_events;        /* to send after the frame pushed last */
  guint next_slot;
  gboolean failed;              /* a filter change failed: no plan to run */
  gboolean dropped;             /* GstBaseTransform dropped a frame (QoS) */
  gboolean warned_fallback;
};

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_H__ */
