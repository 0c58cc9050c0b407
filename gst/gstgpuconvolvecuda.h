/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CUDA memory (memory:CUDAMemory) and the CUDA context gpuconvolve shares
 * with nvcodec's elements through GstContext, on GStreamer's CUDA library.
 * In builds without it (no HAVE_GST_CUDA) the same calls say "no", so the
 * element needs no conditionals. The context is handled as a GstObject
 * (a GstCudaContext where there is one). */
#ifndef __GST_GPU_CONVOLVE_CUDA_H__
#define __GST_GPU_CONVOLVE_CUDA_H__

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#define GST_GPU_CONVOLVE_CUDA_FEATURE "memory:CUDAMemory"

/* Whether this build and machine can exchange CUDA memory at all (the
 * library, and the driver it loads). */
gboolean gst_gpu_convolve_cuda_supported (void);
/* Fills `*cuda_context`, unless set already, with the context of a
 * neighbour or the application for `device_id` (-1: any), through
 * set_context(), which must fill the same pointer. FALSE when they have
 * none. */
gboolean gst_gpu_convolve_cuda_find_context (GstElement * element,
    gint device_id, GstObject ** cuda_context);
/* Where none was found: the process's context for `device`, made on
 * first use and kept, offered to the neighbours and the application
 * (HAVE_CONTEXT). */
GstObject *gst_gpu_convolve_cuda_share_context (GstElement * element,
    gint device);
/* GstElement::set_context and the CONTEXT query, for `*context`. */
void gst_gpu_convolve_cuda_set_context (GstElement * element,
    GstContext * context, gint device_id, GstObject ** cuda_context);
gboolean gst_gpu_convolve_cuda_handle_query (GstElement * element,
    GstQuery * query, GstObject * cuda_context);
/* The CUcontext of a GstCudaContext, for the engine. */
gpointer gst_gpu_convolve_cuda_handle (GstObject * cuda_context);

/* Whether the buffer's frame is CUDA memory of `cuda_context` (one
 * memory), readable in place on the device. */
gboolean gst_gpu_convolve_cuda_is_device_buffer (GstBuffer * buffer,
    GstObject * cuda_context);
/* Maps a buffer that is_device_buffer() for the device (map->data is a
 * device pointer); flags are GST_MAP_READ or GST_MAP_WRITE. The frame will
 * run on `streams` (gcv_plan_get_next_cuda_streams()), which must not
 * touch the memory before what its producer or a consumer left pending on
 * it is done. From GStreamer 1.24 memory may carry a stream: with stream
 * sharing, `streams` wait for it on the GPU (an event); without, or for
 * memory on the default stream, a frame to read is synchronised on the
 * CPU (gst_cuda_memory_sync()). 1.22's memory is complete when pushed. */
gboolean gst_gpu_convolve_cuda_map (GstBuffer * buffer, GstMapInfo * map,
    GstMapFlags flags, gpointer const *streams, guint n_streams);
/* Whether frames in CUDA memory are ordered on the GPU by the streams
 * their memory carries (GStreamer 1.24 and later, unless
 * GPUCONVOLVE_NO_STREAM_SHARING is set to anything but 0). */
gboolean gst_gpu_convolve_cuda_stream_sharing (void);
/* The layout of a CUDA memory's frame (its planes' offsets and strides). */
const GstVideoInfo *gst_gpu_convolve_cuda_layout (GstBuffer * buffer);

/* A pool of CUDA memory for frames of `info` (GRAY32F: GRAY16_LE of twice
 * the width); GRAY8 and GRAY32F are stored as RGBA frames of their bytes
 * per row, which describe_frame() puts right in a buffer's GstVideoMeta.
 * With stream sharing its memory carries a stream of its own. */
GstBufferPool *gst_gpu_convolve_cuda_pool_new (GstObject * cuda_context,
    GstCaps * caps, const GstVideoInfo * info, guint min, guint max);
void gst_gpu_convolve_cuda_describe_frame (GstBuffer * buffer,
    const GstVideoInfo * info);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_CUDA_H__ */
