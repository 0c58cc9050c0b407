/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Engines: the one decision of which backend runs a stream, from what the
 * backends' tables state they take (gcv_backend_takes(),
 * gcv_backend_choose(): `auto` is CUDA where a device is usable and it
 * takes the stream, else the CPU), engines made on a device or in an
 * application's CUDA context, and what an engine answers for its plans:
 * frames in flight, host memory, the tuning table, its device and
 * description. */
#include "gcv-private.h"
#include "gcv-interop.h"
#include "gcv-backend.h"
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

/* The backends by the names their errors give them. */
static const gchar *
display_name (GcvBackendKind kind)
{
  return kind == GCV_BACKEND_CPU ? "CPU" : "CUDA";
}

/* What the backend's table states it takes, against what the stream
 * needs: the first need it lacks is the error. */
gboolean
gcv_backend_takes (GcvBackendKind kind, const GcvNeeds * needs,
    GError ** error)
{
  const GcvBackendKind other = kind == GCV_BACKEND_CPU ? GCV_BACKEND_CUDA :
      GCV_BACKEND_CPU;
  const GcvBackend *b;
  guint lacking;

  g_return_val_if_fail (needs != NULL, FALSE);
  if (kind == GCV_BACKEND_AUTO)
    return gcv_backend_takes (GCV_BACKEND_CUDA, needs, NULL)
        || gcv_backend_takes (GCV_BACKEND_CPU, needs, error);
  if (needs->formats & ~GCV_FORMATS_ALL) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "unknown format "
        "(formats 0x%x)", needs->formats);
    return FALSE;
  }
  if (!(b = backend_for (kind))) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
        "this build of gpuconvolve has no CUDA backend");
    return FALSE;
  }
  if ((lacking = needs->formats & ~b->formats)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "%s is not "
        "supported by the %s backend in this version (use the %s backend)",
        gcv_format_name ((GcvFormat) g_bit_nth_lsf (lacking, -1)),
        display_name (kind), display_name (other));
    return FALSE;
  }
  if (needs->regions && !b->regions) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "the %s backend "
        "filters whole frames only in this version: regions need the %s "
        "backend", b->name, display_name (other));
    return FALSE;
  }
  if (needs->device_memory && !b->device_memory) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "the %s backend "
        "takes frames in system memory only", display_name (kind));
    return FALSE;
  }
  return TRUE;
}

GcvBackendKind
gcv_backend_choose (GcvBackendKind asked, gint device_id,
    const GcvNeeds * needs, GError ** reason)
{
  GError *not_cuda = NULL;

  g_return_val_if_fail (needs != NULL, GCV_BACKEND_AUTO);
  if (asked != GCV_BACKEND_AUTO)
    return gcv_backend_available (asked, device_id, reason) ? asked :
        GCV_BACKEND_AUTO;
  if (gcv_backend_takes (GCV_BACKEND_CUDA, needs, &not_cuda)
      && gcv_backend_available (GCV_BACKEND_CUDA, device_id, &not_cuda))
    return GCV_BACKEND_CUDA;
  if (!gcv_backend_takes (GCV_BACKEND_CPU, needs, reason)) {
    g_error_free (not_cuda);
    return GCV_BACKEND_AUTO;
  }
  g_propagate_error (reason, not_cuda);
  return GCV_BACKEND_CPU;
}

gboolean
gcv_backend_takes_format (GcvBackendKind kind, GcvFormat format)
{
  GcvNeeds needs = { 0 };

  if (format > GCV_FORMAT_LAST)
    return FALSE;
  needs.formats = GCV_FORMAT_BIT (format);
  return gcv_backend_takes (kind, &needs, NULL);
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

/* An engine for no stream in particular: auto as gcv_backend_choose()
 * decides for a stream that needs nothing. */
GcvEngine *
gcv_engine_new (GcvBackendKind kind, gint device_id, GError ** error)
{
  const GcvNeeds none = { 0 };
  GError *reason = NULL;

  kind = gcv_backend_choose (kind, device_id, &none, &reason);
  if (kind == GCV_BACKEND_AUTO) {
    g_propagate_error (error, reason);
    return NULL;
  }
  /* auto on the CPU: why not CUDA is no error here */
  g_clear_error (&reason);
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
