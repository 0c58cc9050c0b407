/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `register`: the entry points the CUDA backend calls
 * (gcv-kernels.h), which pick the pixel type's instances (register.cuh;
 * the kernels are in register-kernels.cuh, compiled in register-gray.cu
 * and register-rgba.cu). */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/families/register.cuh"

using namespace gcv;

extern "C" int
gcv_cuda_register_supports (const GcvCudaConv * c)
{
  /* Beyond 17 columns most lanes of a warp idle (33 - kw useful), and a
   * 24-row cache spilled to local memory, 20x slower (H200): no instances
   * there. The cache holds kh rows. No gradient magnitudes. */
  return c->kw <= 17 && c->kh <= GCV_REGISTER_MAX_KH
      && c->kw * c->kh <= GCV_CUDA_PARAM_TAPS && c->in != GCV_PIX_F32X4
      && !is_magnitude (*c);
}

extern "C" int
gcv_cuda_register_specialised (const GcvCudaConv * c)
{
  return c->kw == c->kh && c->kw % 2 == 1 && c->kw >= 3 && c->kw <= 17;
}

extern "C" cudaError_t
gcv_cuda_register (const GcvCudaConv * c, int p_rows, int block)
{
  if (c->in == GCV_PIX_F32X4 || is_magnitude (*c))
    return cudaErrorInvalidValue;
  switch (c->in) {
    case GCV_PIX_U8:
      return register_family::launch<unsigned char> (*c, p_rows, block);
    case GCV_PIX_F32:
      return register_family::launch<float> (*c, p_rows, block);
    default:
      if (c->out == GCV_OUT_U8X4)
        return register_family::launch<uchar4> (*c, p_rows, block);
      return register_family::launch<rgbx8> (*c, p_rows, block);
  }
}
