/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable`: what its entry points (separable.cu) and its kernels
 * (separable-kernels.cuh) share. The kernels of one-channel frames
 * (separable-gray.cu) and of the RGBA family (separable-rgba.cu,
 * separable-rgbx.cu) compile side by side (docs/architecture.md). */
#ifndef GCV_SEPARABLE_CUH
#define GCV_SEPARABLE_CUH

#include "kernels/gcv-kernels.h"

namespace gcv {
namespace separable {

constexpr int FTY = 4;          /* fused: outputs down per thread (and step) */

/* The row pass and the column pass (any size); the fused per-size kernels'
 * shared memory (0: no instance) and launch. */
template <typename In>
cudaError_t two_pass (const GcvCudaConv & c, const float *row,
    const float *column, void *tmp, size_t tmp_pitch,
    const GcvCudaDevice * dev);
template <typename In>
size_t fused_bytes (int k);
template <typename In>
cudaError_t fused (const GcvCudaConv & c, const float *row,
    const float *column, const GcvCudaDevice * dev);

}  /* namespace separable */
}  /* namespace gcv */

#endif /* GCV_SEPARABLE_CUH */
