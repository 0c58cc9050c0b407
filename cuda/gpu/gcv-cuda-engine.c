/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA backend's engine: the device it runs on (or the application's
 * context), what the dispatcher and the launchers decide with, the tuning
 * table; page-locked host memory; and the backend's table of functions,
 * whose plan and frame functions live in the files gcv-cuda-private.h
 * lists. */
#include "gcv-cuda-private.h"

/* An engine's state: the device (the context's, or device_id's, -1 for
 * the first usable), its properties and its tuning table. */
static gpointer
cuda_backend_engine_new (gint device_id, gpointer context, GError ** error)
{
  CudaEngine *e;
  struct cudaDeviceProp prop;
  const gchar *source;          /* the table says where it was found */
  gint dev;

  gcv_cuda_fault_read ();
  if (context) {
    /* the device is the context's */
    if (!CHECK (gcv_cuda_context_use (context), OP_OTHER)
        || !CHECK (cudaGetDevice (&dev), OP_OTHER))
      return NULL;
    if (!gcv_cuda_device_usable (dev)) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE, "the CUDA "
          "context's device %d is older than compute capability 8.0", dev);
      return NULL;
    }
  } else if (!gcv_cuda_find_device (device_id, &dev, error)
      || !CHECK (cudaSetDevice (dev), OP_OTHER)) {
    return NULL;
  }
  if (!CHECK (cudaGetDeviceProperties (&prop, dev), OP_OTHER))
    return NULL;
  e = g_new0 (CudaEngine, 1);
  e->device = dev;
  e->context = context;
  e->props.sm_count = prop.multiProcessorCount;
  e->props.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  e->props.smem_per_sm = prop.sharedMemPerMultiprocessor;
  e->props.regs_per_sm = prop.regsPerMultiprocessor;
  gcv_cuda_device_info (&e->info, &prop, dev);
  e->table = gcv_tuning_find (NULL, prop.name, &source, NULL);
  e->description = g_strdup_printf ("cuda:%d %s", dev, prop.name);
  return e;
}

static gboolean
cuda_set_tuning_file (gpointer engine, const gchar * path, GError ** error)
{
  CudaEngine *e = engine;
  const gchar *source = NULL;
  GcvTuningTable *t = NULL;

  /* "": no table at all, the heuristic alone */
  if (!path || *path) {
    t = gcv_tuning_find (path, e->info.name, &source, error);
    if (!t && path)
      return FALSE;
  }
  gcv_tuning_table_free (e->table);
  e->table = t;
  return TRUE;
}

static gint
cuda_engine_device (gpointer engine)
{
  return ((CudaEngine *) engine)->device;
}

static const gchar *
cuda_engine_describe (gpointer engine)
{
  return ((CudaEngine *) engine)->description;
}

static void
cuda_engine_free (gpointer engine)
{
  CudaEngine *e = engine;
  gcv_tuning_table_free (e->table);
  g_free (e->info.name);
  g_free (e->description);
  g_free (e);
}

static gpointer
cuda_host_alloc (gpointer engine, gsize size, GError ** error)
{
  return gcv_pinned_alloc (size, error);
}

static void
cuda_host_free (gpointer engine, gpointer mem)
{
  gcv_pinned_free (mem);
}

static const GcvBackend cuda_backend = {
  .name = "cuda",
  .available = gcv_cuda_available,
  .engine_new = cuda_backend_engine_new,
  .engine_describe = cuda_engine_describe,
  .engine_device = cuda_engine_device,
  .engine_free = cuda_engine_free,
  .plan_new = gcv_cuda_plan_new,
  .plan_set_filter = gcv_cuda_plan_set_filter,
  .submit = gcv_cuda_submit,
  .input_done = gcv_cuda_input_done,
  .wait = gcv_cuda_wait,
  .plan_free = gcv_cuda_plan_free,
  .get_cuda_stream = gcv_cuda_get_stream,
  .get_device_input = gcv_cuda_get_device_input,
  .set_tuning_file = cuda_set_tuning_file,
  .host_alloc = cuda_host_alloc,
  .host_free = cuda_host_free,
  .set_frame_options = gcv_cuda_set_frame_options,
  .get_frame_stats = gcv_cuda_get_frame_stats,
  /* the samples its kernels have no element for are widened first
   * (passes/convert.cu); regions filter their rectangles
   * (gpu/gcv-cuda-regions.c) */
  .formats = GCV_FORMATS_ALL,
  .regions = TRUE,
  .device_memory = TRUE,
};

const GcvBackend *
gcv_cuda_backend_get (void)
{
  return &cuda_backend;
}
