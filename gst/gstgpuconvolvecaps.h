/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Caps of gpuconvolve: the twelve formats, GRAY32F included, which
 * GStreamer 1.22 has no GstVideoFormat for, so it is parsed here, in
 * system memory and in CUDA memory; and the conversions offered on the
 * other pad. */
#ifndef __GST_GPU_CONVOLVE_CAPS_H__
#define __GST_GPU_CONVOLVE_CAPS_H__

#include <gst/gst.h>
#include <gst/video/video.h>
#include "gcv.h"

G_BEGIN_DECLS

#define GST_GPU_CONVOLVE_FORMATS \
  "{ RGBA, BGRA, RGBx, BGRx, GRAY8, GRAY32F, NV12, I420, GRAY16_LE, RGB, " \
  "BGR, P010_10LE }"
#define GST_GPU_CONVOLVE_CUDA_FORMATS GST_GPU_CONVOLVE_FORMATS
#define GST_GPU_CONVOLVE_CAPS_SIZES                            \
  "width = (int) [ 1, 32767 ], height = (int) [ 1, 32767 ], "  \
  "framerate = (fraction) [ 0/1, 2147483647/1 ]"
#define GST_GPU_CONVOLVE_CAPS_FIELDS                           \
  "format = (string) " GST_GPU_CONVOLVE_FORMATS ", "           \
  GST_GPU_CONVOLVE_CAPS_SIZES
#ifdef HAVE_GST_CUDA
#define GST_GPU_CONVOLVE_CAPS                                  \
  "video/x-raw(memory:CUDAMemory), format = (string) "         \
  GST_GPU_CONVOLVE_CUDA_FORMATS ", " GST_GPU_CONVOLVE_CAPS_SIZES "; " \
  "video/x-raw, " GST_GPU_CONVOLVE_CAPS_FIELDS
#else
#define GST_GPU_CONVOLVE_CAPS "video/x-raw, " GST_GPU_CONVOLVE_CAPS_FIELDS
#endif

#define GST_GPU_CONVOLVE_MAX_PLANES 3

typedef struct {
  GcvFormat format;
  guint width, height;
  gint fps_n, fps_d;
  gboolean cuda_memory;         /* caps feature memory:CUDAMemory */
  /* GStreamer's layout of the frame: GRAY32F's is that of a format of the
   * same bytes per row (GRAY16_LE of twice the width), for buffer pools */
  GstVideoInfo layout;
  gsize stride;                 /* of the first plane, by default */
  gsize size;                   /* bytes of a frame of the default layout */
} GstGpuConvolveInfo;

gboolean gst_gpu_convolve_info_from_caps (GstGpuConvolveInfo * info,
    const GstCaps * caps);
/* The caps the other pad can have; with_cuda: CUDA memory among them,
 * first, as the element prefers it where both sides can take it. */
GstCaps *gst_gpu_convolve_caps_transform (GstPadDirection direction,
    GstCaps * caps, GstCaps * filter, gboolean with_cuda);
/* `caps` (taken) less the formats the CUDA backend does not take. */
GstCaps *gst_gpu_convolve_caps_cuda_only (GstCaps * caps);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_CAPS_H__ */
