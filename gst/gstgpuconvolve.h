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

  /* streaming thread */
  GcvEngine *engine;
  GcvFilter *filter;            /* the filter in use */
  GcvPlan *plan;
  GstGpuConvolveInfo in_info, out_info;
  guint depth;                  /* frames in flight at most */
  GQueue in_flight;             /* GstGpuConvolveFrame, oldest first */
  guint next_slot;
  gboolean warned_invalid;      /* bus warning posted for the current settings */
  gboolean warned_fallback;
};

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_H__ */
