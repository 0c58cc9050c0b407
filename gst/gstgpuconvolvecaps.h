/* Caps of gpuconvolve: the six formats, GRAY32F included, which GStreamer
 * 1.22 has no GstVideoFormat for, so it is parsed here. */
#ifndef __GST_GPU_CONVOLVE_CAPS_H__
#define __GST_GPU_CONVOLVE_CAPS_H__

#include <gst/gst.h>
#include "gcv.h"

G_BEGIN_DECLS

#define GST_GPU_CONVOLVE_FORMATS "{ RGBA, BGRA, RGBx, BGRx, GRAY8, GRAY32F }"
#define GST_GPU_CONVOLVE_CAPS                                   \
  "video/x-raw, format = (string) " GST_GPU_CONVOLVE_FORMATS ", " \
  "width = (int) [ 1, 32767 ], height = (int) [ 1, 32767 ], "    \
  "framerate = (fraction) [ 0/1, 2147483647/1 ]"

typedef struct {
  GcvFormat format;
  guint width, height;
  gint fps_n, fps_d;
  gsize stride;                 /* default stride of this format */
  gsize size;                   /* bytes of a frame with that stride */
} GstGpuConvolveInfo;

gboolean gst_gpu_convolve_info_from_caps (GstGpuConvolveInfo * info,
    const GstCaps * caps);
GstCaps *gst_gpu_convolve_caps_transform (GstCaps * caps, GstCaps * filter);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_CAPS_H__ */
