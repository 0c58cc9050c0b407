/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GEnum types of gpuconvolve's properties; values are the engine's enums. */
#ifndef __GST_GPU_CONVOLVE_ENUMS_H__
#define __GST_GPU_CONVOLVE_ENUMS_H__

#include <glib-object.h>

G_BEGIN_DECLS

#define GST_TYPE_GPU_CONVOLVE_FILTER (gst_gpu_convolve_filter_get_type ())
GType gst_gpu_convolve_filter_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_MODE (gst_gpu_convolve_mode_get_type ())
GType gst_gpu_convolve_mode_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_BORDER (gst_gpu_convolve_border_get_type ())
GType gst_gpu_convolve_border_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_ALPHA (gst_gpu_convolve_alpha_get_type ())
GType gst_gpu_convolve_alpha_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_PLANES (gst_gpu_convolve_planes_get_type ())
GType gst_gpu_convolve_planes_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_SEPARABLE (gst_gpu_convolve_separable_get_type ())
GType gst_gpu_convolve_separable_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_ALGORITHM (gst_gpu_convolve_algorithm_get_type ())
GType gst_gpu_convolve_algorithm_get_type (void);
#define GST_TYPE_GPU_CONVOLVE_BACKEND (gst_gpu_convolve_backend_get_type ())
GType gst_gpu_convolve_backend_get_type (void);

#define GST_TYPE_GPU_CONVOLVE_REGION_MODE (gst_gpu_convolve_region_mode_get_type ())
GType gst_gpu_convolve_region_mode_get_type (void);

/* Where a frame's privacy regions come from (the element's own enum). */
typedef enum {
  GST_GPU_CONVOLVE_REGION_SOURCE_PROPERTY,
  GST_GPU_CONVOLVE_REGION_SOURCE_ROI_META,
  GST_GPU_CONVOLVE_REGION_SOURCE_BOTH,
} GstGpuConvolveRegionSource;
#define GST_TYPE_GPU_CONVOLVE_REGION_SOURCE (gst_gpu_convolve_region_source_get_type ())
GType gst_gpu_convolve_region_source_get_type (void);

/* What a frame gets when its regions cannot be applied as asked
 * (docs/regions.md). */
typedef enum {
  GST_GPU_CONVOLVE_REGION_FAIL_CLOSED,
  GST_GPU_CONVOLVE_REGION_FAIL_ERROR,
  GST_GPU_CONVOLVE_REGION_FAIL_OPEN,
} GstGpuConvolveRegionFail;
#define GST_TYPE_GPU_CONVOLVE_REGION_FAIL (gst_gpu_convolve_region_fail_get_type ())
GType gst_gpu_convolve_region_fail_get_type (void);

/* Which of upstream's system memory the CUDA backend page-locks where it
 * lies (docs/pipeline.md). */
typedef enum {
  GST_GPU_CONVOLVE_HOST_REGISTER_NONE,
  GST_GPU_CONVOLVE_HOST_REGISTER_REUSED,
  GST_GPU_CONVOLVE_HOST_REGISTER_KEPT,
} GstGpuConvolveHostRegister;
#define GST_TYPE_GPU_CONVOLVE_HOST_REGISTER (gst_gpu_convolve_host_register_get_type ())
GType gst_gpu_convolve_host_register_get_type (void);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_ENUMS_H__ */
