/* Page-locked (pinned) host memory for frames, so that uploads and downloads
 * are asynchronous DMA with no staging copy. */
#ifndef __GST_GPU_CONVOLVE_PINNED_H__
#define __GST_GPU_CONVOLVE_PINNED_H__

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_GPU_CONVOLVE_PINNED_MEMORY_TYPE "GpuConvolvePinned"

/* The process-wide allocator (a new reference), or NULL where CUDA is not
 * usable. */
GstAllocator *gst_gpu_convolve_pinned_allocator_get (void);
gboolean gst_gpu_convolve_is_pinned_memory (GstMemory * mem);
/* A buffer pool of `size`-byte buffers of pinned memory. */
GstBufferPool *gst_gpu_convolve_pinned_pool_new (GstCaps * caps, gsize size,
    guint min, guint max);
/* Why the last pinned allocation of the calling thread failed (the CUDA
 * error), or NULL; taking it clears it. Free with g_free(). */
gchar *gst_gpu_convolve_pinned_take_error (void);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_PINNED_H__ */
