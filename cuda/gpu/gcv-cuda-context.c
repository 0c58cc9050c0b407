/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Contexts given by the application (GStreamer's shared one): the runtime
 * calls of the engine run in whichever context is current, so the engine
 * makes its own current before them. The two driver calls this takes are
 * reached through the runtime (cudaGetDriverEntryPointByVersion), so the
 * engine does not link libcuda, which machines without a driver lack. */
#include "gcv-cuda-context.h"

#include <cuda.h>
#include <glib.h>

typedef CUresult (*CtxSetCurrent) (CUcontext ctx);
typedef CUresult (*CtxGetCurrent) (CUcontext * ctx);

static CtxSetCurrent set_current;
static CtxGetCurrent get_current;

static void *
entry_point (const char *symbol)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found;

  if (cudaGetDriverEntryPointByVersion (symbol, &fn, 12000, cudaEnableDefault,
          &found) != cudaSuccess || found != cudaDriverEntryPointSuccess)
    return NULL;
  return fn;
}

static void
load (void)
{
  static gsize loaded;

  if (g_once_init_enter (&loaded)) {
    set_current = (CtxSetCurrent) entry_point ("cuCtxSetCurrent");
    get_current = (CtxGetCurrent) entry_point ("cuCtxGetCurrent");
    g_once_init_leave (&loaded, 1);
  }
}

cudaError_t
gcv_cuda_context_use (void *ctx)
{
  load ();
  if (!set_current)
    return cudaErrorInsufficientDriver;
  /* the driver's and the runtime's codes differ; the runtime's own error
   * for a context that is not (or no longer) usable */
  return set_current ((CUcontext) ctx) == CUDA_SUCCESS ? cudaSuccess :
      cudaErrorInvalidResourceHandle;
}

void *
gcv_cuda_context_current (void)
{
  CUcontext ctx = NULL;

  load ();
  if (!get_current || get_current (&ctx) != CUDA_SUCCESS)
    return NULL;
  return ctx;
}
