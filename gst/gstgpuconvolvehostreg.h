/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Upstream's system memory page-locked where it lies for the CUDA
 * backend's uploads, a registration per host range, cached for the
 * process (gstgpuconvolvehostreg.c; docs/pipeline.md). */
#ifndef __GST_GPU_CONVOLVE_HOSTREG_H__
#define __GST_GPU_CONVOLVE_HOSTREG_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* For a frame of `owner` in `mem`, mapped at `data` (`size` bytes): the
 * range's registration, page-locked now (made the second time the range
 * comes, within `limit` bytes of `owner`'s), busy until released; NULL
 * where the frame is staged (the range seen once, not system memory, no
 * room, or refused). Without `kept` a registration ends with the
 * GstMemory; with it, at gst_gpu_convolve_hostreg_forget(). */
gpointer gst_gpu_convolve_hostreg_acquire (gpointer owner, GstMemory * mem,
    gpointer data, gsize size, guint64 limit, gboolean kept);
/* Once the frame's upload read it (gcv_plan_input_done()). */
void gst_gpu_convolve_hostreg_release (gpointer reg);
/* Every registration of `owner` ended (at stop). */
void gst_gpu_convolve_hostreg_forget (gpointer owner);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_HOSTREG_H__ */
