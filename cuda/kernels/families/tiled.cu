/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`: the entry points the CUDA backend calls (gcv-kernels.h),
 * which pick the pixel type's instances (tiled.cuh; the kernels are in
 * tiled-kernels.cuh, compiled per pixel type in tiled-*.cu). */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/families/tiled.cuh"

using namespace gcv;
using namespace gcv::tiled;

extern "C" int
gcv_cuda_tiled_choose (const GcvCudaConv * c, const GcvCudaDevice * dev,
    size_t * smem)
{
  /* two blocks per SM; the driver reserves 1 KiB of each block's share */
  size_t budget = dev->smem_per_sm / 2 - 1024;
  if (budget > dev->smem_per_block_optin)
    budget = dev->smem_per_block_optin;
  for (int ty = 8; ty >= 1; ty /= 2) {
    size_t bytes = tile_bytes (*c, ty);
    /* taller tiles only while the grid still covers every SM */
    long blocks = (long) div_up (c->width, BX) * div_up (c->height, BY * ty);
    if (bytes <= budget && (blocks >= dev->sm_count || ty == 1)) {
      *smem = bytes;
      return ty;
    }
  }
  return 0;
}

extern "C" cudaError_t
gcv_cuda_tiled (const GcvCudaConv * c, int ty, size_t smem)
{
  switch (c->in) {
    case GCV_PIX_U8:
      return adaptive<unsigned char> (*c, ty, smem);
    case GCV_PIX_F32:
      return adaptive<float> (*c, ty, smem);
    case GCV_PIX_U8X4:
      if (c->out == GCV_OUT_U8X4)
        return adaptive<uchar4> (*c, ty, smem);
      return adaptive<rgbx8> (*c, ty, smem);
    default:
      return adaptive<float4> (*c, ty, smem);
  }
}

/* Shared memory the per-width kernel needs for this size and ty (GRAY32F
 * run widened: the guarded instance's), 0 when it has no instance (a
 * magnitude: not 3, 5 or 7 wide at ty=2; rows the pixel type is not
 * compiled for, tiled-kernels.cuh), the element is F32X4, or the
 * device cannot give it; large kernels run with ty=2 and taps from device
 * memory. */
extern "C" size_t
gcv_cuda_tiled_width_smem (const GcvCudaConv * c, int ty,
    const GcvCudaDevice * dev)
{
  const bool mag = is_magnitude (*c);
  size_t bytes;
  if (c->kw * c->kh > GCV_CUDA_PARAM_TAPS)
    ty = 2;
  switch (c->in) {
    case GCV_PIX_U8:
      bytes = width_smem<unsigned char> (c->kw, c->kh, ty, false, mag);
      break;
    case GCV_PIX_F32:
      bytes = width_smem<float> (c->kw, c->kh, ty, width_guard (*c),
          mag);
      break;
    case GCV_PIX_U8X4:
      bytes = c->out == GCV_OUT_U8X4 ? width_smem<uchar4> (c->kw, c->kh,
          ty, false, mag) : width_smem<rgbx8> (c->kw, c->kh, ty, false,
          mag);
      break;
    default:
      return 0;
  }
  return bytes <= dev->smem_per_block_optin ? bytes : 0;
}

extern "C" cudaError_t
gcv_cuda_tiled_width (const GcvCudaConv * c, int ty)
{
  switch (c->in) {
    case GCV_PIX_U8:
      return width<unsigned char> (*c, ty);
    case GCV_PIX_F32:
      return width<float> (*c, ty);
    case GCV_PIX_U8X4:
      if (c->out == GCV_OUT_U8X4)
        return width<uchar4> (*c, ty);
      return width<rgbx8> (*c, ty);
    default:
      return cudaErrorInvalidValue;
  }
}
