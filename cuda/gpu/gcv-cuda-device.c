/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA backend's devices, its checked CUDA calls and their failure
 * injection, and page-locked memory. */
#include "gcv-private.h"
#include "gcv-interop.h"
#include "gcv-cuda-device.h"

#include <stdlib.h>
#include <string.h>

/* --- errors and the failure-injection hook ------------------------------- */

#ifdef GCV_FAULT_INJECTION
/* Test builds (-Dfault-injection=true) make one kind of CUDA call fail with
 * GPUCONVOLVE_CUDA_FAIL=alloc, copy or launch (optionally ":N" to let N
 * such calls pass first). The variable is read when an engine is made and
 * when a plan is set up or its filter changes, never on the frame path;
 * a new value starts the count again. */
static GMutex fault_lock;
static gchar *fault_spec;
static gint fault_op = -1, fault_after, fault_calls;

void
gcv_cuda_fault_read (void)
{
  static const gchar *const names[] = { "alloc", "copy", "launch" };
  const gchar *spec = g_getenv ("GPUCONVOLVE_CUDA_FAIL");

  g_mutex_lock (&fault_lock);
  if (g_strcmp0 (spec, fault_spec) != 0) {
    g_free (fault_spec);
    fault_spec = g_strdup (spec);
    fault_op = -1;
    for (gint op = 0; spec && op < (gint) G_N_ELEMENTS (names); op++) {
      gsize len = strlen (names[op]);
      if (strncmp (spec, names[op], len) == 0
          && (!spec[len] || spec[len] == ':')) {
        fault_op = op;
        fault_after = spec[len] ? atoi (spec + len + 1) : 0;
      }
    }
    g_atomic_int_set (&fault_calls, 0);
  }
  g_mutex_unlock (&fault_lock);
}

static gboolean
injected (CudaOp op)
{
  return (gint) op == g_atomic_int_get (&fault_op)
      && g_atomic_int_add (&fault_calls, 1) >= fault_after;
}
#else
#define injected(op) FALSE
#endif

gboolean
gcv_cuda_check (cudaError_t err, CudaOp op, const gchar * what,
    GError ** error)
{
  if (err == cudaSuccess && injected (op))
    err = op == OP_ALLOC ? cudaErrorMemoryAllocation :
        op == OP_LAUNCH ? cudaErrorLaunchFailure : cudaErrorInvalidValue;
  if (err == cudaSuccess)
    return TRUE;
  g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "%s failed: %s (%s)", what,
      cudaGetErrorString (err), cudaGetErrorName (err));
  return FALSE;
}

/* --- devices ------------------------------------------------------------- */

/* Kernels are built for sm_80 and newer. */
gboolean
gcv_cuda_device_usable (gint dev)
{
  int major = 0;
  return cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor,
      dev) == cudaSuccess && major >= 8;
}

gboolean
gcv_cuda_find_device (gint wanted, gint * found, GError ** error)
{
  int count = 0;
  cudaError_t err = cudaGetDeviceCount (&count);

  if (err != cudaSuccess || count == 0) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE, "no CUDA device: %s",
        err != cudaSuccess ? cudaGetErrorString (err) : "none found");
    return FALSE;
  }
  if (wanted >= count) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
        "cuda-device-id %d is out of range (%d device%s)", wanted, count,
        count == 1 ? "" : "s");
    return FALSE;
  }
  for (gint d = wanted < 0 ? 0 : wanted; d < count; d++) {
    if (gcv_cuda_device_usable (d)) {
      *found = d;
      return TRUE;
    }
    if (wanted >= 0)
      break;
  }
  g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
      "no CUDA device of compute capability 8.0 or newer%s",
      wanted >= 0 ? " with that cuda-device-id" : "");
  return FALSE;
}

gboolean
gcv_cuda_available (gint device_id, GError ** error)
{
  gint dev;
  return gcv_cuda_find_device (device_id, &dev, error);
}

/* Peak rates from the clocks: FP32 lanes per SM are 64 on sm_80 and 128 on
 * later parts; memory moves bus width x 2 (double data rate) per clock. */
void
gcv_cuda_device_info (GcvDeviceInfo * info,
    const struct cudaDeviceProp *prop, gint dev)
{
  int clock_khz = 0, mem_khz = 0, bus_bits = 0;

  cudaDeviceGetAttribute (&clock_khz, cudaDevAttrClockRate, dev);
  cudaDeviceGetAttribute (&mem_khz, cudaDevAttrMemoryClockRate, dev);
  cudaDeviceGetAttribute (&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
  info->name = g_strdup (prop->name);
  info->major = prop->major;
  info->minor = prop->minor;
  info->sm_count = prop->multiProcessorCount;
  info->smem_per_sm = prop->sharedMemPerMultiprocessor;
  info->smem_per_block = prop->sharedMemPerBlockOptin;
  info->fma_per_s = (gdouble) prop->multiProcessorCount
      * (prop->major == 8 && prop->minor == 0 ? 64 : 128) * clock_khz * 1e3;
  info->bytes_per_s = 2.0 * mem_khz * 1e3 * bus_bits / 8.0;
  if (info->fma_per_s <= 0 || info->bytes_per_s <= 0) {
    info->fma_per_s = 30e12;    /* the attributes were missing: a guess */
    info->bytes_per_s = 2e12;
  }
}

gpointer
gcv_pinned_alloc (gsize size, GError ** error)
{
  void *p = NULL;
  /* portable: page-locked for every device, whichever is current */
  if (!CHECK (cudaHostAlloc (&p, size, cudaHostAllocPortable), OP_ALLOC))
    return NULL;
  return p;
}

void
gcv_pinned_free (gpointer mem)
{
  if (mem)
    cudaFreeHost (mem);
}

gboolean
gcv_host_register (gpointer mem, gsize size, GError ** error)
{
  /* portable, as gcv_pinned_alloc()'s memory. Not a CHECK(): a refusal
   * is no failure (the caller stages instead), and injected failures are
   * kept for the calls they are meant for. The error is cleared for the
   * next call. */
  cudaError_t err = cudaHostRegister (mem, size, cudaHostRegisterPortable);

  if (err == cudaSuccess)
    return TRUE;
  cudaGetLastError ();
  g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "cudaHostRegister "
      "failed: %s (%s)", cudaGetErrorString (err), cudaGetErrorName (err));
  return FALSE;
}

void
gcv_host_unregister (gpointer mem)
{
  /* fails only for memory not registered, which the caller never gives */
  if (mem && cudaHostUnregister (mem) != cudaSuccess)
    cudaGetLastError ();
}

gboolean
gcv_device_memory (gint device_id, gsize * used, gsize * total,
    GError ** error)
{
  size_t free_bytes = 0, total_bytes = 0;
  int current = 0;
  /* the calling thread's current device is left as it was */
  if (!CHECK (cudaGetDevice (&current), OP_OTHER)
      || !CHECK (cudaSetDevice (device_id), OP_OTHER))
    return FALSE;
  if (!CHECK (cudaMemGetInfo (&free_bytes, &total_bytes), OP_OTHER)) {
    cudaSetDevice (current);
    return FALSE;
  }
  if (!CHECK (cudaSetDevice (current), OP_OTHER))
    return FALSE;
  *used = total_bytes - free_bytes;
  *total = total_bytes;
  return TRUE;
}
