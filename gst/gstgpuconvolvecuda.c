/* CUDA memory and the shared CUDA context, on GStreamer's CUDA library
 * (unstable API in 1.22), as nvcodec's elements use them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstgpuconvolvecuda.h"

#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudautils.h>

gboolean
gst_gpu_convolve_cuda_supported (void)
{
  /* loads libcuda once; FALSE where there is no driver */
  return gst_cuda_load_library ();
}

gboolean
gst_gpu_convolve_cuda_ensure_context (GstElement * element, gint device_id,
    GstObject ** cuda_context)
{
  /* a neighbour's (nvh264dec's, cudaupload's) or the application's, else
   * a new one, offered to them in turn */
  return gst_gpu_convolve_cuda_supported ()
      && gst_cuda_ensure_element_context (element, device_id,
      (GstCudaContext **) cuda_context);
}

void
gst_gpu_convolve_cuda_set_context (GstElement * element, GstContext * context,
    gint device_id, GstObject ** cuda_context)
{
  if (gst_gpu_convolve_cuda_supported ())
    gst_cuda_handle_set_context (element, context, device_id,
        (GstCudaContext **) cuda_context);
}

gboolean
gst_gpu_convolve_cuda_handle_query (GstElement * element, GstQuery * query,
    GstObject * cuda_context)
{
  return cuda_context && gst_cuda_handle_context_query (element, query,
      GST_CUDA_CONTEXT (cuda_context));
}

gpointer
gst_gpu_convolve_cuda_handle (GstObject * cuda_context)
{
  return gst_cuda_context_get_handle (GST_CUDA_CONTEXT (cuda_context));
}

gboolean
gst_gpu_convolve_cuda_is_device_buffer (GstBuffer * buffer,
    GstObject * cuda_context)
{
  GstMemory *mem;

  if (!cuda_context || gst_buffer_n_memory (buffer) != 1)
    return FALSE;
  mem = gst_buffer_peek_memory (buffer, 0);
  /* another context's memory (another GPU) is read through the host */
  return gst_is_cuda_memory (mem)
      && GST_CUDA_MEMORY_CAST (mem)->context ==
      GST_CUDA_CONTEXT (cuda_context);
}

gboolean
gst_gpu_convolve_cuda_map (GstBuffer * buffer, GstMapInfo * map,
    GstMapFlags flags)
{
#if GST_CHECK_VERSION (1, 24, 0)
  /* From 1.24 CUDA memory may still be being written on its producer's
   * stream; 1.22's is complete when pushed. */
  if (flags & GST_MAP_READ)
    gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory
            (buffer, 0)));
#endif
  return gst_buffer_map (buffer, map, flags | GST_MAP_CUDA);
}

const GstVideoInfo *
gst_gpu_convolve_cuda_layout (GstBuffer * buffer)
{
  return &GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (buffer, 0))->info;
}

GstBufferPool *
gst_gpu_convolve_cuda_pool_new (GstObject * cuda_context, GstCaps * caps,
    const GstVideoInfo * info, guint min, guint max)
{
  GstBufferPool *pool = gst_cuda_buffer_pool_new (GST_CUDA_CONTEXT
      (cuda_context));
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstCaps *layout = gst_video_info_to_caps (info);

  /* the pool lays frames out from caps it can parse: GRAY32F's are those
   * of a GStreamer format with the same bytes per row */
  gst_buffer_pool_config_set_params (config, layout, info->size, min, max);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_caps_unref (layout);
  if (!gst_buffer_pool_set_config (pool, config))
    gst_clear_object (&pool);
  return pool;
}

#else /* no HAVE_GST_CUDA */

gboolean
gst_gpu_convolve_cuda_supported (void)
{
  return FALSE;
}

gboolean
gst_gpu_convolve_cuda_ensure_context (GstElement * element, gint device_id,
    GstObject ** cuda_context)
{
  return FALSE;
}

void
gst_gpu_convolve_cuda_set_context (GstElement * element, GstContext * context,
    gint device_id, GstObject ** cuda_context)
{
}

gboolean
gst_gpu_convolve_cuda_handle_query (GstElement * element, GstQuery * query,
    GstObject * cuda_context)
{
  return FALSE;
}

gpointer
gst_gpu_convolve_cuda_handle (GstObject * cuda_context)
{
  return NULL;
}

gboolean
gst_gpu_convolve_cuda_is_device_buffer (GstBuffer * buffer,
    GstObject * cuda_context)
{
  return FALSE;
}

gboolean
gst_gpu_convolve_cuda_map (GstBuffer * buffer, GstMapInfo * map,
    GstMapFlags flags)
{
  return FALSE;
}

const GstVideoInfo *
gst_gpu_convolve_cuda_layout (GstBuffer * buffer)
{
  return NULL;
}

GstBufferPool *
gst_gpu_convolve_cuda_pool_new (GstObject * cuda_context, GstCaps * caps,
    const GstVideoInfo * info, guint min, guint max)
{
  return NULL;
}

#endif
