/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA context an engine's calls run in (gcv-cuda-context.c). Plain C,
 * for the backend and the kernel families. */
#ifndef GCV_CUDA_CONTEXT_H
#define GCV_CUDA_CONTEXT_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes `ctx` (a CUcontext) current on the calling thread, as
 * cudaSetDevice() does with a device's primary context. */
cudaError_t gcv_cuda_context_use (void *ctx);
/* The calling thread's current context, or NULL (none, or no driver). */
void *gcv_cuda_context_current (void);

#ifdef __cplusplus
}
#endif

#endif /* GCV_CUDA_CONTEXT_H */
