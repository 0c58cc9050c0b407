/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve: convolution of video frames on NVIDIA GPUs, with a CPU
 * fallback. */
#ifndef __GST_GPU_CONVOLVE_H__
#define __GST_GPU_CONVOLVE_H__

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>

#include "gcv.h"

G_BEGIN_DECLS

#define GST_TYPE_GPU_CONVOLVE (gst_gpu_convolve_get_type ())
G_DECLARE_FINAL_TYPE (GstGpuConvolve, gst_gpu_convolve, GST, GPU_CONVOLVE,
    GstBaseTransform);

GST_ELEMENT_REGISTER_DECLARE (gpuconvolve);

/* Builds the filter the properties describe, as the element's start does
 * (for fuzzing the properties against the engine); NULL with an error
 * naming the properties at fault. `algorithm` receives the family asked
 * for. */
GcvFilter *gst_gpu_convolve_build_filter (GstGpuConvolve * self,
    GcvFamily * algorithm, GError ** error);


G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_H__ */
