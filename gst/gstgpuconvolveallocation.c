/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Allocation: the pools gpuconvolve offers upstream (pinned memory on CUDA,
 * CUDA memory of our context where the caps say so, with GstVideoMeta and
 * GstVideoCropMeta) and the pool of its output buffers, activated here so
 * that a failure says why (docs/errors.md). The allocators and pools
 * themselves are gstgpuconvolvepinned.c's and gstgpuconvolvecuda.c's. */
#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolvecuda.h"
#include "gstgpuconvolvepinned.h"

#include <gst/video/video.h>

/* Our buffers: CUDA memory where the caps say so; else pinned memory on
 * CUDA, so copies to and from the GPU are DMA straight from them, and
 * plain memory on the CPU, both from an allocator that fails with NULL
 * where GStreamer's default one aborts; frames in flight hold buffers too.
 * `size` is what a buffer of the pool holds. */
static GstBufferPool *
make_pool (GstGpuConvolve * self, GstCaps * caps,
    const GstGpuConvolveInfo * info, guint min, guint max, guint * size)
{
  GstBufferPool *pool;
  GstStructure *config;

  *size = info->size;
  if (info->cuda_memory && self->cuda_context) {
    pool = gst_gpu_convolve_cuda_pool_new (self->cuda_context, caps,
        &info->layout, min, max);
    if (pool) {
      /* rows pitched for the device: the pool says how large */
      config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_get_params (config, NULL, size, NULL, NULL);
      gst_structure_free (config);
    }
    return pool;
  }
  return gst_gpu_convolve_pool_new (caps, info->size, min, max,
      gst_gpu_convolve_engine_is_cuda (self));
}

/* GstBaseTransform::propose_allocation: what upstream is offered. */
gboolean
gst_gpu_convolve_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstGpuConvolveInfo info;
  GstBufferPool *pool;
  GstCaps *caps;
  guint size, min, max;

  if (!GST_GPU_CONVOLVE_PARENT_CLASS->propose_allocation (trans,
          decide_query, query))
    return FALSE;
  if (!decide_query)
    return TRUE;                /* passthrough: downstream answered */

  /* upstream may send any stride through GstVideoMeta, and leave cropping
   * to us: the crop region is what is filtered
   * (gst_gpu_convolve_input_image()) */
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  gst_query_add_allocation_meta (query, GST_VIDEO_CROP_META_API_TYPE, NULL);
  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_gpu_convolve_info_from_caps (&info, caps)
      || (info.cuda_memory && !gst_gpu_convolve_engine_is_cuda (self)))
    return TRUE;
  /* upstream writes frames straight into pinned memory, or into CUDA
   * memory of our context where the caps say so; on the CPU into plain
   * memory that, unlike GStreamer's default, fails an allocation with an
   * error rather than aborting. In CUDA memory (an NVDEC decoder, which
   * keeps its reference frames in surfaces of its own) no more than the
   * frames in flight here, the one being decoded and one on its way: a
   * frame of device memory is worth bounding, and the decoder waits for a
   * buffer rather than growing the pool. Elsewhere no maximum: a software
   * decoder keeps its reference frames in the buffers of this pool. */
  min = gst_gpu_convolve_max_in_flight (self) + 1;
  max = info.cuda_memory ? min + 1 : 0;
  pool = make_pool (self, caps, &info, min, max, &size);
  if (pool) {
    GST_INFO_OBJECT (self, "proposing upstream a pool of %u to %u buffers "
        "(0: no maximum) of %u bytes%s", min, max, size, info.cuda_memory ?
        " in CUDA memory" : "");
    /* upstream only says it could not go on; the pool says why */
    gst_gpu_convolve_pool_report_to (pool, GST_ELEMENT (self));
    gst_query_add_allocation_pool (query, pool, size, min, max);
    if (!info.cuda_memory) {
      GstAllocator *allocator =
          gst_gpu_convolve_allocator_get (gst_gpu_convolve_engine_is_cuda
          (self));
      gst_query_add_allocation_param (query, allocator, NULL);
      gst_object_unref (allocator);
    }
    gst_object_unref (pool);
  }
  return TRUE;
}

/* No output pool: with the error posted, frames are refused
 * (GST_FLOW_ERROR) until new caps or a restart. TRUE all the same: on
 * FALSE GstBaseTransform returns not-negotiated, upstream negotiates again
 * and then fills a pool of its own, whose allocator (GStreamer's default)
 * aborts the process where memory ran out. */
static gboolean
refuse_frames (GstGpuConvolve * self, GstQuery * query)
{
  while (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_remove_nth_allocation_pool (query, 0);
  self->failed = TRUE;
  return TRUE;
}

/* GstBaseTransform::decide_allocation: the pool of our output buffers. */
gboolean
gst_gpu_convolve_decide_allocation (GstBaseTransform * trans,
    GstQuery * query)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (trans);
  GstCaps *caps;
  GstGpuConvolveInfo info;
  GstBufferPool *pool;
  guint min = 0, max = 0, size;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_gpu_convolve_info_from_caps (&info, caps))
    return FALSE;
  /* Downstream holds up to its minimum, the frames in flight hold up to
   * depth more. No maximum: a sink that holds more than it said must slow
   * the stream down, not stop it. */
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_parse_nth_allocation_pool (query, 0, NULL, NULL, &min, NULL);
  min += gst_gpu_convolve_max_in_flight (self);
  if (!(pool = make_pool (self, caps, &info, min, max, &size))) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Could not set up a pool "
            "of %ux%u %s output buffers%s", info.width, info.height,
            gcv_format_name (info.format), info.cuda_memory ?
            " in CUDA memory" : ""), (NULL));
    return refuse_frames (self, query);
  }
  /* Activated here, not by GstBaseTransform on the first buffer: there a
   * failure (on CUDA: no pinned memory) is "failed to activate bufferpool"
   * with no reason, where docs/errors.md wants the reason (the CUDA error,
   * or the bytes that could not be had). */
  if (!gst_buffer_pool_set_active (pool, TRUE)) {
    gst_gpu_convolve_post_alloc_error (GST_ELEMENT (self), "output buffers");
    gst_object_unref (pool);
    return refuse_frames (self, query);
  }
  GST_INFO_OBJECT (self, "output pool: %u buffers of %u bytes%s at first "
      "(downstream's minimum and %u in flight), no maximum", min, size,
      info.cuda_memory ? " in CUDA memory" : "",
      gst_gpu_convolve_max_in_flight (self));
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;
}
