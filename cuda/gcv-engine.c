/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Engines: a backend chosen (`auto`: CUDA where a device is usable, else
 * the CPU), made on a device or in an application's CUDA context, and
 * what an engine answers for its plans: frames in flight, host memory,
 * the tuning table, its device and description. */
#include "gcv-private.h"
#include "dispatch/gcv-tuning.h"

static const GcvBackend *
backend_for (GcvBackendKind kind)
{
  return kind == GCV_BACKEND_CPU ? &gcv_cpu_backend : gcv_cuda_backend_get ();
}

gboolean
gcv_backend_available (GcvBackendKind kind, gint device_id, GError ** error)
{
  const GcvBackend *b;

  if (kind == GCV_BACKEND_AUTO)
    return gcv_backend_available (GCV_BACKEND_CUDA, device_id, NULL)
        || gcv_backend_available (GCV_BACKEND_CPU, device_id, error);
  b = backend_for (kind);
  if (!b) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
        "this build of gpuconvolve has no CUDA backend");
    return FALSE;
  }
  return b->available (device_id, error);
}

/* The CUDA backend's kernels have 8-bit and float samples of one or four
 * channels: no GRAY16_LE, RGB, BGR or P010_10LE yet. gcv_plan_new()
 * refuses those on a CUDA engine before anything is allocated. */
gboolean
gcv_backend_takes_format (GcvBackendKind kind, GcvFormat format)
{
  if (format > GCV_FORMAT_LAST)
    return FALSE;
  return kind != GCV_BACKEND_CUDA || format <= GCV_FORMAT_I420;
}

static GcvEngine *
engine_new (const GcvBackend * b, gint device_id, gpointer context,
    GError ** error)
{
  GcvEngine *e;
  gpointer state;

  if (!(state = b->engine_new (device_id, context, error)))
    return NULL;
  e = g_new0 (GcvEngine, 1);
  e->backend = b;
  e->state = state;
  return e;
}

GcvEngine *
gcv_engine_new (GcvBackendKind kind, gint device_id, GError ** error)
{
  if (kind == GCV_BACKEND_AUTO)
    kind = gcv_backend_available (GCV_BACKEND_CUDA, device_id, NULL) ?
        GCV_BACKEND_CUDA : GCV_BACKEND_CPU;
  if (!gcv_backend_available (kind, device_id, error))
    return NULL;
  return engine_new (backend_for (kind), device_id, NULL, error);
}

GcvEngine *
gcv_engine_new_for_context (gpointer cu_context, GError ** error)
{
  const GcvBackend *b = gcv_cuda_backend_get ();

  if (!b || !cu_context) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE, "%s",
        b ? "no CUDA context given" :
        "this build of gpuconvolve has no CUDA backend");
    return NULL;
  }
  return engine_new (b, -1, cu_context, error);
}

GcvBackendKind
gcv_engine_get_backend (GcvEngine * engine)
{
  return engine->backend == &gcv_cpu_backend ? GCV_BACKEND_CPU :
      GCV_BACKEND_CUDA;
}

gint
gcv_engine_get_device (GcvEngine * engine)
{
  return engine->backend->engine_device ?
      engine->backend->engine_device (engine->state) : -1;
}

gboolean
gcv_engine_set_tuning_file (GcvEngine * engine, const gchar * path,
    GError ** error)
{
  GcvTuningTable *t;

  if (engine->backend->set_tuning_file)
    return engine->backend->set_tuning_file (engine->state, path, error);
  /* no dispatcher here, but a broken file is still worth saying */
  if (!path || !*path)
    return TRUE;
  t = gcv_tuning_table_load (path, error);
  gcv_tuning_table_free (t);
  return t != NULL;
}

const gchar *
gcv_engine_describe (GcvEngine * engine)
{
  return engine->backend->engine_describe (engine->state);
}

void
gcv_engine_free (GcvEngine * engine)
{
  if (!engine)
    return;
  engine->backend->engine_free (engine->state);
  g_free (engine);
}

void
gcv_engine_interrupt (GcvEngine * engine, gboolean on)
{
  g_return_if_fail (engine != NULL);
  if (engine->backend->engine_interrupt)
    engine->backend->engine_interrupt (engine->state, on);
}

guint
gcv_engine_frames_in_flight (GcvEngine * engine, guint wanted)
{
  /* the CPU backend has finished a frame when its submit returns */
  return engine->backend == &gcv_cpu_backend ? 1 : MAX (wanted, 1);
}

gpointer
gcv_engine_host_alloc (GcvEngine * engine, gsize size, GError ** error)
{
  if (engine->backend->host_alloc)
    return engine->backend->host_alloc (engine->state, size, error);
  return g_malloc (size);
}

void
gcv_engine_host_free (GcvEngine * engine, gpointer mem)
{
  if (engine->backend->host_free)
    engine->backend->host_free (engine->state, mem);
  else
    g_free (mem);
}
