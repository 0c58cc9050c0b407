/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Memory for frames: page-locked (pinned) host memory on the CUDA backend,
 * so that uploads and downloads are asynchronous DMA with no staging copy,
 * and plain system memory on the CPU backend. Either fails an allocation
 * with NULL rather than aborting, as GStreamer's default allocator does. */
#ifndef __GST_GPU_CONVOLVE_PINNED_H__
#define __GST_GPU_CONVOLVE_PINNED_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_GPU_CONVOLVE_PINNED_MEMORY_TYPE "GpuConvolvePinned"
#define GST_GPU_CONVOLVE_SYSTEM_MEMORY_TYPE "GpuConvolveSystem"

/* The process-wide allocator (a new reference) of pinned memory, or of
 * plain system memory when not `pinned`. Pinned allocations fail where CUDA
 * is not usable. */
GstAllocator *gst_gpu_convolve_allocator_get (gboolean pinned);
gboolean gst_gpu_convolve_is_pinned_memory (GstMemory * mem);
/* A buffer pool of `size`-byte buffers of that allocator's memory. */
GstBufferPool *gst_gpu_convolve_pool_new (GstCaps * caps, gsize size,
    guint min, guint max, gboolean pinned);
/* A pool that upstream fills says on `element`'s bus why it could not
 * allocate (gst_gpu_convolve_post_alloc_error()); pools of other types are
 * left alone. */
void gst_gpu_convolve_pool_report_to (GstBufferPool * pool,
    GstElement * element);
/* Why the last allocation of the calling thread failed (the CUDA error, or
 * the bytes that could not be had), or NULL; taking it clears it. Free
 * with g_free(). */
gchar *gst_gpu_convolve_pinned_take_error (void);
/* RESOURCE/FAILED "Could not allocate <what>: <reason>" on `element`, with
 * the reason taken as above: buffer pools pass none on. */
void gst_gpu_convolve_post_alloc_error (GstElement * element,
    const gchar * what);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_PINNED_H__ */
