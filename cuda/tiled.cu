/* Family `tiled`: shared-memory tiles with adaptive tiling (van Werkhoven et
 * al. 2014, sections 2-4). A block of 32x8 threads loads its input tile plus
 * halo once; each thread then computes TY outputs down a column. TY is picked
 * at run time as the largest whose tile fits shared memory with two blocks
 * per SM (__launch_bounds__ keeps the registers within the same budget). */
#include "gcv-cuda-common.cuh"

using namespace gcv;

namespace {

constexpr int BX = 32, BY = 8;

/* Tile row pitch in elements: one spare element, so rows start in different
 * banks when a warp spans rows. */
__host__ __device__ __forceinline__ int
tile_pitch (int kw)
{
  return BX + kw - 1 + 1;
}

template <typename In, int OUT, int TY, typename Taps>
__global__ void __launch_bounds__ (BX * BY, 2)
tiled_kernel (GcvCudaConv p, Taps taps)
{
  typedef typename AccOf<In>::T Acc;
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  Acc *tile = (Acc *) smem_raw;
  const int sp = tile_pitch (p.kw), sh = BY * TY + p.kh - 1;
  const int sw = BX + p.kw - 1;
  const int pw = p.width + p.kw - 1, ph = p.height + p.kh - 1;
  const int x0 = blockIdx.x * BX, y0 = blockIdx.y * BY * TY;
  const int tx = threadIdx.x, ty = threadIdx.y;

  /* the tile and its halo; reads past the padded frame only at the far
   * edges, where the outputs are not stored */
  for (int k = ty * BX + tx; k < sw * sh; k += BX * BY) {
    int r = k / sw, c = k % sw;
    Acc v;
    zero (v);
    if (y0 + r < ph && x0 + c < pw)
      v = to_acc (__ldg (row_ptr<In> (p.src, p.src_pitch, y0 + r) + x0 + c));
    tile[r * sp + c] = v;
  }
  __syncthreads ();

  Acc acc[TY];
#pragma unroll
  for (int t = 0; t < TY; t++)
    zero (acc[t]);
  for (int j = 0; j < p.kh; j++) {
    const Acc *s = tile + (ty * TY + j) * sp + tx;
    for (int i = 0; i < p.kw; i++) {
      const float w = taps[j * p.kw + i];
#pragma unroll
      for (int t = 0; t < TY; t++)
        fma_acc (acc[t], w, s[t * sp + i]);
    }
  }

  const int x = x0 + tx;
  if (x >= p.width)
    return;
#pragma unroll
  for (int t = 0; t < TY; t++) {
    int y = y0 + ty * TY + t;
    if (y < p.height)
      Store<OUT, In>::run (p, x, y, acc[t], centre_of<In> (p, x, y));
  }
}

size_t
tile_bytes (const GcvCudaConv & c, int ty)
{
  size_t acc = (c.in == GCV_PIX_U8X4 || c.in == GCV_PIX_F32X4) ? 16 : 4;
  return acc * tile_pitch (c.kw) * (size_t) (BY * ty + c.kh - 1);
}

template <typename In, int OUT>
struct Tiled {
  template <int TY, typename Taps>
  static cudaError_t go (const GcvCudaConv & c, size_t smem, Taps taps)
  {
    auto kernel = tiled_kernel<In, OUT, TY, Taps>;
    dim3 block (BX, BY);
    dim3 grid (div_up (c.width, BX), div_up (c.height, BY * TY));
    cudaError_t err = cudaFuncSetAttribute (kernel,
        cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
    if (err != cudaSuccess)
      return err;
    kernel<<<grid, block, smem, c.stream>>> (c, taps);
    return cudaGetLastError ();
  }

  template <typename Taps>
  static cudaError_t pick (const GcvCudaConv & c, int ty, size_t smem,
      Taps taps)
  {
    switch (ty) {
      case 8:
        return go<8> (c, smem, taps);
      case 4:
        return go<4> (c, smem, taps);
      case 2:
        return go<2> (c, smem, taps);
      default:
        return go<1> (c, smem, taps);
    }
  }

  static cudaError_t launch (const GcvCudaConv & c, int ty, size_t smem)
  {
    if (c.kw * c.kh <= GCV_CUDA_PARAM_TAPS)
      return pick (c, ty, smem, param_taps (c.host_taps, c.kw * c.kh));
    return pick (c, ty, smem, global_taps (c.taps));
  }
};

}  /* namespace */

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
  return GCV_DISPATCH_FORMATS (Tiled, *c, *c, ty, smem);
}
