/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CUDA memory and the shared CUDA context, on GStreamer's CUDA library
 * (unstable API in 1.22), as nvcodec's elements use them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstgpuconvolvecuda.h"

#ifdef HAVE_GST_CUDA
GST_DEBUG_CATEGORY_EXTERN (gst_gpu_convolve_debug);
#define GST_CAT_DEFAULT gst_gpu_convolve_debug

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudautils.h>

#if GST_CHECK_VERSION (1, 24, 0)
#include <dlfcn.h>
#include <string.h>

/* cuStreamWaitEvent, which GStreamer's CUDA library does not wrap, from
 * the driver library that it loaded */
typedef CUresult (CUDAAPI * StreamWaitEvent) (CUstream stream, CUevent event,
    unsigned int flags);
static StreamWaitEvent stream_wait_event;

static gboolean
load_stream_wait_event (void)
{
  static gsize loaded = 0;

  if (g_once_init_enter (&loaded)) {
    void *lib = dlopen ("libcuda.so.1", RTLD_LAZY);
    if (lib)
      stream_wait_event = (StreamWaitEvent) dlsym (lib, "cuStreamWaitEvent");
    g_once_init_leave (&loaded, 1);
  }
  return stream_wait_event != NULL;
}
#endif

gboolean
gst_gpu_convolve_cuda_supported (void)
{
  /* loads libcuda once; FALSE where there is no driver */
  return gst_cuda_load_library ();
}

/* The CONTEXT query to the peers downstream, then upstream; then
 * NEED_CONTEXT on the bus, which the bin (from a HAVE_CONTEXT of another
 * element) or the application answer through set_context(). A context is
 * not made here: gst_cuda_ensure_element_context() would make one for
 * each element (cuCtxCreate, hundreds of MB of device memory each), where
 * gst_gpu_convolve_cuda_share_context() keeps one per process. */
gboolean
gst_gpu_convolve_cuda_find_context (GstElement * element, gint device_id,
    GstObject ** cuda_context)
{
  static const gchar *const pads[] = { "src", "sink" };

  if (*cuda_context)
    return TRUE;
  if (!gst_gpu_convolve_cuda_supported ())
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (pads) && !*cuda_context; i++) {
    GstPad *pad = gst_element_get_static_pad (element, pads[i]);
    GstQuery *query = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
    GstContext *context = NULL;
    if (pad && gst_pad_peer_query (pad, query)) {
      gst_query_parse_context (query, &context);
      if (context)
        gst_element_set_context (element, context);
    }
    gst_query_unref (query);
    gst_clear_object (&pad);
  }
  if (!*cuda_context)
    gst_element_post_message (element,
        gst_message_new_need_context (GST_OBJECT (element),
            GST_CUDA_CONTEXT_TYPE));
  return *cuda_context != NULL;
}

/* The context of the process's elements that find none around them, per
 * device, made once and kept for the process: a CUDA context costs
 * hundreds of MB of device memory and a noticeable time to make, too much
 * for each element, or for each pipeline that comes and goes. It is of
 * GStreamer's making: one wrapping the runtime's primary context
 * (gst_cuda_context_new_wrapped) lacks, in 1.22, the texture alignment its
 * CUDA allocator pitches rows with. */
#define MAX_DEVICES 64
static GMutex shared_lock;
static GstCudaContext *shared[MAX_DEVICES];

GstObject *
gst_gpu_convolve_cuda_share_context (GstElement * element, gint device)
{
  GstCudaContext *ctx;
  GstContext *context;

  if (device < 0 || device >= MAX_DEVICES
      || !gst_gpu_convolve_cuda_supported ())
    return NULL;
  g_mutex_lock (&shared_lock);
  if (!shared[device] && (shared[device] = gst_cuda_context_new (device)))
    /* a process-wide object by design, not a leak */
    GST_OBJECT_FLAG_SET (shared[device], GST_OBJECT_FLAG_MAY_BE_LEAKED);
  ctx = shared[device] ? gst_object_ref (shared[device]) : NULL;
  g_mutex_unlock (&shared_lock);
  if (!ctx)
    return NULL;
  context = gst_context_new_cuda_context (ctx);
  gst_element_post_message (element,
      gst_message_new_have_context (GST_OBJECT (element), context));
  return GST_OBJECT (ctx);
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
gst_gpu_convolve_cuda_stream_sharing (void)
{
#if GST_CHECK_VERSION (1, 24, 0)
  /* read at each use, so that one process can measure both ways */
  const gchar *off = g_getenv ("GPUCONVOLVE_NO_STREAM_SHARING");

  return (!off || !*off || !strcmp (off, "0")) && load_stream_wait_event ();
#else
  return FALSE;
#endif
}

#if GST_CHECK_VERSION (1, 24, 0)
/* Each of `waiters` waits on the GPU for the work given to `stream` so far:
 * an event recorded there. The event may go at once: a wait takes the
 * state the event had when it was asked for. */
static gboolean
wait_for_stream (GstCudaContext * context, gpointer const *waiters,
    guint n_waiters, GstCudaStream * stream)
{
  CUevent event;
  gboolean ok;

  if (!gst_cuda_context_push (context))
    return FALSE;
  ok = gst_cuda_result (CuEventCreate (&event, CU_EVENT_DISABLE_TIMING));
  if (ok) {
    ok = gst_cuda_result (CuEventRecord (event,
            gst_cuda_stream_get_handle (stream)));
    for (guint i = 0; ok && i < n_waiters; i++)
      ok = gst_cuda_result (stream_wait_event ((CUstream) waiters[i], event,
              0));
    CuEventDestroy (event);
  }
  gst_cuda_context_pop (NULL);
  return ok;
}
#endif

gboolean
gst_gpu_convolve_cuda_map (GstBuffer * buffer, GstMapInfo * map,
    GstMapFlags flags, gpointer const *streams, guint n_streams)
{
#if GST_CHECK_VERSION (1, 24, 0)
  GstCudaMemory *mem = GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (buffer,
          0));
  GstCudaStream *stream;
#endif

  /* a map for the device may upload what was written through the host, on
   * the memory's stream: ordered after it, below */
  if (!gst_buffer_map (buffer, map, flags | GST_MAP_CUDA))
    return FALSE;
#if GST_CHECK_VERSION (1, 24, 0)
  /* From 1.24 a producer may push CUDA memory still being written on its
   * stream, and a consumer that reads on our output memory's stream may
   * give it back before that work is done. Memory with no stream is
   * written on the default stream, which its producer synchronised. */
  stream = gst_cuda_memory_get_stream (mem);
  if (stream && gst_gpu_convolve_cuda_stream_sharing ()) {
    if (wait_for_stream (mem->context, streams, n_streams, stream))
      return TRUE;
    GST_WARNING ("could not order a frame after its memory's CUDA stream "
        "on the GPU; synchronising on the CPU");
    if (gst_cuda_context_push (mem->context)) {
      gst_cuda_result (CuStreamSynchronize (gst_cuda_stream_get_handle
              (stream)));
      gst_cuda_context_pop (NULL);
    }
  } else if (flags & GST_MAP_READ) {
    gst_cuda_memory_sync (mem);
  }
#endif
  return TRUE;
}

const GstVideoInfo *
gst_gpu_convolve_cuda_layout (GstBuffer * buffer)
{
  return &GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (buffer, 0))->info;
}

/* GStreamer's CUDA allocator lays out the formats nvcodec uses, and no
 * other: 1.22's aborts on GRAY8 and GRAY16_LE, 1.24's to 1.26's fail the
 * allocation (their format list has no grey formats either). One-plane
 * frames of another format (GRAY8, and GRAY32F as GRAY16_LE) are stored
 * as RGBA frames of at least their bytes per row, whose rows it pitches
 * the same way. */
static void
storage_layout (const GstVideoInfo * info, GstVideoInfo * storage)
{
  GstVideoFormat f = GST_VIDEO_INFO_FORMAT (info);
  guint row;

  if (f != GST_VIDEO_FORMAT_GRAY8 && f != GST_VIDEO_FORMAT_GRAY16_LE) {
    *storage = *info;
    return;
  }
  row = GST_VIDEO_INFO_COMP_WIDTH (info, 0) * GST_VIDEO_INFO_COMP_PSTRIDE
      (info, 0);
  gst_video_info_set_format (storage, GST_VIDEO_FORMAT_RGBA, (row + 3) / 4,
      GST_VIDEO_INFO_HEIGHT (info));
}

void
gst_gpu_convolve_cuda_describe_frame (GstBuffer * buffer,
    const GstVideoInfo * info)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);

  /* the pool's meta tells of the storage (storage_layout()); plane 0's
   * offset and stride hold for the frame */
  if (meta && meta->format != GST_VIDEO_INFO_FORMAT (info)) {
    meta->format = GST_VIDEO_INFO_FORMAT (info);
    meta->width = GST_VIDEO_INFO_WIDTH (info);
    meta->height = GST_VIDEO_INFO_HEIGHT (info);
    meta->n_planes = GST_VIDEO_INFO_N_PLANES (info);
  }
}

GstBufferPool *
gst_gpu_convolve_cuda_pool_new (GstObject * cuda_context, GstCaps * caps,
    const GstVideoInfo * info, guint min, guint max)
{
  GstBufferPool *pool = gst_cuda_buffer_pool_new (GST_CUDA_CONTEXT
      (cuda_context));
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstVideoInfo storage;
  GstCaps *layout;

  /* the pool lays frames out from caps it can parse, of the formats its
   * allocator knows */
  storage_layout (info, &storage);
  layout = gst_video_info_to_caps (&storage);
  gst_buffer_pool_config_set_params (config, layout, storage.size, min, max);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_caps_unref (layout);
#if GST_CHECK_VERSION (1, 24, 0)
  /* The memory carries the pool's stream: a neighbour that shares streams
   * (nvcodec's decoders take the stream of the pool offered to them)
   * works on it, one that does not synchronises it, and our frames wait
   * for it on the GPU (gst_gpu_convolve_cuda_map()). Its allocation is
   * GStreamer's choice: stream-ordered only where the application's
   * context or GST_CUDA_ENABLE_STREAM_ORDERED_ALLOC ask for it, which
   * would gain nothing here, where buffers are made once and reused. */
  if (gst_gpu_convolve_cuda_stream_sharing ()) {
    GstCudaStream *stream = gst_cuda_stream_new (GST_CUDA_CONTEXT
        (cuda_context));
    if (stream) {
      gst_buffer_pool_config_set_cuda_stream (config, stream);
      gst_cuda_stream_unref (stream);
    }
  }
#endif
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
gst_gpu_convolve_cuda_find_context (GstElement * element, gint device_id,
    GstObject ** cuda_context)
{
  return FALSE;
}

GstObject *
gst_gpu_convolve_cuda_share_context (GstElement * element, gint device)
{
  return NULL;
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
    GstMapFlags flags, gpointer const *streams, guint n_streams)
{
  return FALSE;
}

gboolean
gst_gpu_convolve_cuda_stream_sharing (void)
{
  return FALSE;
}

const GstVideoInfo *
gst_gpu_convolve_cuda_layout (GstBuffer * buffer)
{
  return NULL;
}

void
gst_gpu_convolve_cuda_describe_frame (GstBuffer * buffer,
    const GstVideoInfo * info)
{
}

GstBufferPool *
gst_gpu_convolve_cuda_pool_new (GstObject * cuda_context, GstCaps * caps,
    const GstVideoInfo * info, guint min, guint max)
{
  return NULL;
}

#endif
