/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `register`: what its entry points (register.cu) and its kernels
 * (register-kernels.cuh) share. The kernels of one-channel frames
 * (register-gray.cu) and of the RGBA family (register-rgba.cu) compile side
 * by side (docs/architecture.md). */
#ifndef GCV_REGISTER_CUH
#define GCV_REGISTER_CUH

#include "kernels/gcv-kernels.h"

namespace gcv {
namespace register_family {

/* p_rows (4 or 8) outputs per lane, `block` threads per block. */
template <typename In>
cudaError_t launch (const GcvCudaConv & c, int p_rows, int block);

}  /* namespace register_family */
}  /* namespace gcv */

#endif /* GCV_REGISTER_CUH */
