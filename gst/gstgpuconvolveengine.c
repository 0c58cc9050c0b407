/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The engine gpuconvolve filters with, and the CUDA context it runs in:
 * a CUDA engine in the context shared with the pipeline's other CUDA
 * elements (found through GstContext, or made and offered to them), the
 * engine freed at stop, whether CUDA memory can be had on the pads, and
 * the interrupt that lets a flush or a stop cut a long frame short: the
 * duties an nvcodec element leaves to its base class
 * (GstCudaBaseTransform). GStreamer's CUDA library itself is used through
 * gstgpuconvolvecuda.c. */
#include "gstgpuconvolveprivate.h"
#include "gcv-interop.h"
#include "gstgpuconvolvecuda.h"

/* A CUDA engine in the context shared with the pipeline's other CUDA
 * elements, so that their memory is ours to read and write: theirs (or the
 * application's) where they have one, else the one this process's
 * elements share, offered to them. Without GStreamer's CUDA library, in
 * the device's own primary context. */
static GcvEngine *
cuda_engine_new (GstGpuConvolve * self, gint device_id, GError ** error)
{
  GcvEngine *engine;

  /* set_context() fills self->cuda_context from inside this call when a
   * neighbour or the application has one */
  if (!gst_gpu_convolve_cuda_find_context (GST_ELEMENT (self), device_id,
          &self->cuda_context)) {
    /* the engine finds the device cuda-device-id means */
    engine = gcv_engine_new (GCV_BACKEND_CUDA, device_id, error);
    if (!engine)
      return NULL;
    self->cuda_context = gst_gpu_convolve_cuda_share_context (GST_ELEMENT
        (self), gcv_engine_get_device (engine));
    if (!self->cuda_context)
      return engine;
    gcv_engine_free (engine);
  }
  GST_INFO_OBJECT (self, "running in CUDA context %" GST_PTR_FORMAT,
      self->cuda_context);
  return gcv_engine_new_for_context (gst_gpu_convolve_cuda_handle
      (self->cuda_context), error);
}

/* The engine for `backend` (CUDA or the CPU, auto settled): on CUDA, in
 * the pipeline's shared context. */
GcvEngine *
gst_gpu_convolve_engine_new (GstGpuConvolve * self, GcvBackendKind backend,
    gint device_id, GError ** error)
{
  if (backend != GCV_BACKEND_CPU)
    return cuda_engine_new (self, device_id, error);
  return gcv_engine_new (backend, device_id, error);
}

/* The engine for the negotiated frames, once the plan is freed and no
 * frame is in flight, as the engine decides from what the backends take
 * (gcv_backend_choose()): with backend=auto on CUDA, a stream the CUDA
 * backend does not take moves to a CPU engine until the element stops;
 * with backend=cuda such caps are refused, naming what it lacks. Regions
 * were decided at start (docs/regions.md). */
gboolean
gst_gpu_convolve_engine_for_formats (GstGpuConvolve * self,
    const GstGpuConvolveInfo * in, const GstGpuConvolveInfo * out)
{
  GcvNeeds needs = { 0 };
  GcvBackendKind asked, chosen;
  gint device_id;
  GcvEngine *cpu, *old;
  GError *error = NULL;

  if (!gst_gpu_convolve_engine_is_cuda (self))
    return TRUE;
  needs.formats = GCV_FORMAT_BIT (in->format) | GCV_FORMAT_BIT (out->format);
  needs.device_memory = in->cuda_memory || out->cuda_memory;
  GST_OBJECT_LOCK (self);
  asked = self->backend;
  device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
  if (asked == GCV_BACKEND_CUDA) {
    if (gcv_backend_takes (GCV_BACKEND_CUDA, &needs, &error))
      return TRUE;
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("%s (use backend=cpu or "
            "backend=auto)", error->message), (NULL));
    g_error_free (error);
    return FALSE;
  }
  chosen = gcv_backend_choose (asked, device_id, &needs, &error);
  if (chosen == GCV_BACKEND_CUDA)
    return TRUE;
  if (chosen != GCV_BACKEND_CPU
      || !(cpu = gcv_engine_new (GCV_BACKEND_CPU, -1, NULL))) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("No backend filters %s to "
            "%s here: %s", gcv_format_name (in->format),
            gcv_format_name (out->format), error ? error->message : "?"),
        (NULL));
    g_clear_error (&error);
    return FALSE;
  }
  GST_INFO_OBJECT (self, "%s: filtering on %s (backend=auto)",
      error ? error->message : "not on CUDA", gcv_engine_describe (cpu));
  g_clear_error (&error);
  /* under the lock gst_gpu_convolve_engine_interrupt() takes */
  GST_OBJECT_LOCK (self);
  old = self->engine;
  self->engine = cpu;
  GST_OBJECT_UNLOCK (self);
  gcv_engine_free (old);
  gst_clear_object (&self->cuda_context);
  return TRUE;
}

/* At stop, once no frame is in flight: the engine freed, and the CUDA
 * context let go. */
void
gst_gpu_convolve_engine_stop (GstGpuConvolve * self)
{
  GcvEngine *engine;

  /* under the lock gst_gpu_convolve_engine_interrupt() takes */
  GST_OBJECT_LOCK (self);
  engine = g_steal_pointer (&self->engine);
  GST_OBJECT_UNLOCK (self);
  gcv_engine_free (engine);
  /* the engine ran in it; buffers of our pools keep their own reference */
  gst_clear_object (&self->cuda_context);
}

/* From any thread: a flush or a stop need not wait for a CPU frame that
 * takes seconds; the frame in progress fails as interrupted. The object
 * lock keeps stop() from freeing the engine meanwhile. */
void
gst_gpu_convolve_engine_interrupt (GstGpuConvolve * self, gboolean on)
{
  GST_OBJECT_LOCK (self);
  if (self->engine)
    gcv_engine_interrupt (self->engine, on);
  GST_OBJECT_UNLOCK (self);
}

/* Whether the engine in use runs on CUDA. */
gboolean
gst_gpu_convolve_engine_is_cuda (GstGpuConvolve * self)
{
  return self->engine
      && gcv_engine_get_backend (self->engine) == GCV_BACKEND_CUDA;
}

/* Whether CUDA memory can be had on the pads: on the CUDA backend, in a
 * context shared through GStreamer's CUDA library. Before start, where the
 * backend is not yet chosen: when it could be. */
gboolean
gst_gpu_convolve_engine_cuda_memory_usable (GstGpuConvolve * self)
{
  GcvBackendKind backend;
  gint device_id;

  if (!gst_gpu_convolve_cuda_supported ())
    return FALSE;
  if (self->engine)
    return gst_gpu_convolve_engine_is_cuda (self) && self->cuda_context;
  GST_OBJECT_LOCK (self);
  backend = self->backend;
  device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
  return backend != GCV_BACKEND_CPU
      && gcv_backend_available (GCV_BACKEND_CUDA, device_id, NULL);
}

/* The CUDA context of the pipeline's other CUDA elements, given by the bin
 * or the application; one for another device than cuda-device-id asks for
 * is not taken. */
void
gst_gpu_convolve_set_context (GstElement * element, GstContext * context)
{
  GstGpuConvolve *self = GST_GPU_CONVOLVE (element);
  gint device_id;

  GST_OBJECT_LOCK (self);
  device_id = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
  gst_gpu_convolve_cuda_set_context (element, context, device_id,
      &self->cuda_context);
  GST_ELEMENT_CLASS (GST_GPU_CONVOLVE_PARENT_CLASS)->set_context (element,
      context);
}
