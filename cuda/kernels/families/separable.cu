/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable`: the entry points the CUDA backend calls
 * (gcv-kernels.h), which pick the pixel type's instances (separable.cuh;
 * the kernels are in separable-kernels.cuh, compiled in separable-gray.cu,
 * separable-rgba.cu and separable-rgbx.cu). */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/families/separable.cuh"

using namespace gcv;
using namespace gcv::separable;

extern "C" size_t
gcv_cuda_separable_tmp_pixel (GcvPixel in)
{
  return (in == GCV_PIX_U8X4 || in == GCV_PIX_F32X4) ? 16 : 4;
}

extern "C" cudaError_t
gcv_cuda_separable (const GcvCudaConv * c, const float *row,
    const float *column, void *tmp, size_t tmp_pitch,
    const GcvCudaDevice * dev)
{
  if (is_magnitude (*c))
    return cudaErrorInvalidValue;       /* no gradient magnitudes */
  switch (c->in) {
    case GCV_PIX_U8:
      return two_pass<unsigned char> (*c, row, column, tmp, tmp_pitch, dev);
    case GCV_PIX_F32:
      return two_pass<float> (*c, row, column, tmp, tmp_pitch, dev);
    case GCV_PIX_U8X4:
      if (c->out == GCV_OUT_U8X4)
        return two_pass<uchar4> (*c, row, column, tmp, tmp_pitch, dev);
      return two_pass<rgbx8> (*c, row, column, tmp, tmp_pitch, dev);
    default:
      return two_pass<float4> (*c, row, column, tmp, tmp_pitch, dev);
  }
}

/* The fused kernel's shared memory for this size and ty, or 0 when there is
 * no such instance (ty is 4) or it does not fit the device. */
extern "C" size_t
gcv_cuda_separable_fused_bytes (const GcvCudaConv * c, int ty,
    const GcvCudaDevice * dev)
{
  size_t bytes = 0;
  if (c->kw != c->kh || ty != FTY || is_magnitude (*c))
    return 0;
  switch (c->in) {
    case GCV_PIX_U8:
      bytes = fused_bytes<unsigned char> (c->kw);
      break;
    case GCV_PIX_F32:
      bytes = fused_bytes<float> (c->kw);
      break;
    case GCV_PIX_U8X4:
      bytes = c->out == GCV_OUT_U8X4 ? fused_bytes<uchar4> (c->kw)
          : fused_bytes<rgbx8> (c->kw);
      break;
    default:
      return 0;
  }
  return bytes <= dev->smem_per_block_optin ? bytes : 0;
}

extern "C" cudaError_t
gcv_cuda_separable_fused (const GcvCudaConv * c, const float *row,
    const float *column, int ty, const GcvCudaDevice * dev)
{
  if (ty != FTY || is_magnitude (*c))
    return cudaErrorInvalidValue;
  switch (c->in) {
    case GCV_PIX_U8:
      return fused<unsigned char> (*c, row, column, dev);
    case GCV_PIX_F32:
      return fused<float> (*c, row, column, dev);
    case GCV_PIX_U8X4:
      if (c->out == GCV_OUT_U8X4)
        return fused<uchar4> (*c, row, column, dev);
      return fused<rgbx8> (*c, row, column, dev);
    default:
      return cudaErrorInvalidValue;
  }
}
