/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Upstream's registered memory given back once the engine's upload of it
 * ends, by a thread of the element's, while the streaming thread goes on
 * (gstgpuconvolverelease.c; docs/pipeline.md). */
#ifndef __GST_GPU_CONVOLVE_RELEASE_H__
#define __GST_GPU_CONVOLVE_RELEASE_H__

#include <gst/gst.h>
#include "gcv.h"

G_BEGIN_DECLS

typedef struct _GstGpuConvolveRelease GstGpuConvolveRelease;

GstGpuConvolveRelease *gst_gpu_convolve_release_new (GstElement * element);
/* Once every input handed over is given back. */
void gst_gpu_convolve_release_free (GstGpuConvolveRelease * r);

/* Hands over the input of `plan`'s frame `ticket`: `buf` (taken), mapped
 * as `map`, uploaded from the registration `reg`, given back (unmapped,
 * the registration released, the buffer unreferenced) once its upload
 * ends. Returns what to wait for with gst_gpu_convolve_release_wait(). */
guint64 gst_gpu_convolve_release_push (GstGpuConvolveRelease * r,
    GcvPlan * plan, GcvTicket ticket, GstBuffer * buf, const GstMapInfo * map,
    gpointer reg);
/* Waits until the input `seq` (from push) is given back: before its frame
 * is finished, so that the plan's slot is not used again meanwhile, and
 * before the plan goes. FALSE, with `error` set, where the wait for its
 * upload, or for an earlier one not said yet, failed. */
gboolean gst_gpu_convolve_release_wait (GstGpuConvolveRelease * r,
    guint64 seq, GError ** error);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_RELEASE_H__ */
