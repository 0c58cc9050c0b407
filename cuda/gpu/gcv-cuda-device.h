/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA backend's devices and checked CUDA calls, which its files share
 * (gcv-cuda-device.c). */
#ifndef GCV_CUDA_DEVICE_H
#define GCV_CUDA_DEVICE_H

#include "dispatch/gcv-dispatch.h"

#include <cuda_runtime_api.h>

G_BEGIN_DECLS

/* The kind of a CUDA call, for failure injection. */
typedef enum { OP_ALLOC, OP_COPY, OP_LAUNCH, OP_OTHER } CudaOp;

/* TRUE on cudaSuccess, else FALSE with a GCV_ERROR_DEVICE error naming
 * `what`. Test builds (-Dfault-injection=true) make one kind of call fail
 * with GPUCONVOLVE_CUDA_FAIL, which gcv_cuda_fault_read() reads. */
gboolean gcv_cuda_check (cudaError_t err, CudaOp op, const gchar * what,
    GError ** error);
#define CHECK(call, op) gcv_cuda_check ((call), (op), #call, error)
#ifdef GCV_FAULT_INJECTION
void gcv_cuda_fault_read (void);
#else
#define gcv_cuda_fault_read() ((void) 0)
#endif

/* Devices of compute capability 8.0 and newer: whether `dev` is one, the
 * device for a cuda-device-id (-1: the first usable), and what the
 * dispatcher decides with. */
gboolean gcv_cuda_device_usable (gint dev);
gboolean gcv_cuda_find_device (gint wanted, gint * found, GError ** error);
gboolean gcv_cuda_available (gint device_id, GError ** error);
void gcv_cuda_device_info (GcvDeviceInfo * info,
    const struct cudaDeviceProp *prop, gint dev);

G_END_DECLS

#endif /* GCV_CUDA_DEVICE_H */
