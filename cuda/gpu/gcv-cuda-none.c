/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Builds without CUDA have no CUDA backend. */
#include "gcv-private.h"
#include "gcv-interop.h"
#include "gcv-backend.h"

const GcvBackend *
gcv_cuda_backend_get (void)
{
  return NULL;
}

gpointer
gcv_pinned_alloc (gsize size, GError ** error)
{
  g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
      "this build of gpuconvolve has no CUDA backend");
  return NULL;
}

void
gcv_pinned_free (gpointer mem)
{
}

gboolean
gcv_host_register (gpointer mem, gsize size, GError ** error)
{
  g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
      "this build of gpuconvolve has no CUDA backend");
  return FALSE;
}

void
gcv_host_unregister (gpointer mem)
{
}

gboolean
gcv_device_memory (gint device_id, gsize * used, gsize * total,
    GError ** error)
{
  g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
      "this build of gpuconvolve has no CUDA backend");
  return FALSE;
}
