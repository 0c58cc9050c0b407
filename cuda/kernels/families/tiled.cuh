/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`: what its entry points (tiled.cu) and its kernels
 * (tiled-kernels.cuh) share. The kernels of each pixel type are compiled
 * in a file of their own (tiled-gray8.cu, tiled-gray32f.cu, tiled-rgba.cu,
 * tiled-rgbx.cu, tiled-rgba32f.cu), so that they compile side by side and
 * a change recompiles what it touches (docs/architecture.md). */
#ifndef GCV_TILED_CUH
#define GCV_TILED_CUH

#include "kernels/gcv-kernels.h"

namespace gcv {
namespace tiled {

constexpr int BX = 32, BY = 8;

/* Tile row pitch in elements: one spare element, so rows start in different
 * banks when a warp spans rows. */
__host__ __device__ __forceinline__ int
tile_pitch (int kw)
{
  return BX + kw - 1 + 1;
}

/* The adaptive kernel's tile for `ty` outputs down per thread. */
static inline size_t
tile_bytes (const GcvCudaConv & c, int ty)
{
  size_t acc = (c.in == GCV_PIX_U8X4 || c.in == GCV_PIX_F32X4) ? 16 : 4;
  return acc * tile_pitch (c.kw) * (size_t) (BY * ty + c.kh - 1);
}

/* Whether `c` runs the guarded instance: GRAY32F widened by zero taps. */
static inline bool
width_guard (const GcvCudaConv & c)
{
  return c.in == GCV_PIX_F32 && c.check_finite && c.footprint_kw < c.kw;
}

/* The adaptive kernel (any size); the per-width kernels' shared memory (0:
 * no instance) and launch. Instantiated per pixel type in tiled-*.cu. */
template <typename In>
cudaError_t adaptive (const GcvCudaConv & c, int ty, size_t smem);
template <typename In>
size_t width_smem (int kw, int kh, int ty, bool guard, bool magnitude);
template <typename In>
cudaError_t width (const GcvCudaConv & c, int ty);

}  /* namespace tiled */
}  /* namespace gcv */

#endif /* GCV_TILED_CUH */
