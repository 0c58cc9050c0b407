/* Family `tiled`: shared-memory tiles.
 *
 * The generic kernel (any size) uses adaptive tiling (van Werkhoven et al.
 * 2014, sections 2-4): a block of 32x8 threads loads its input tile plus halo
 * once; each thread then computes TY outputs down a column, TY picked at run
 * time as the largest whose tile fits shared memory with two blocks per SM
 * (__launch_bounds__ keeps the registers within the same budget).
 *
 * The per-size kernels (square odd 3..17) fix the size and tile shape at
 * compile time so every loop unrolls (Wainwright, GTC 2014): each thread
 * computes 4 outputs across and TY down, sliding a register window along each
 * input row it reads, with taps as constant-bank operands of the FMAs. Rows
 * move through shared memory in vectors of four pixels, matched to the bank
 * width (Chen et al., DAC'17). */
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

template <typename In, int TY, typename Taps>
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
      store<In> (p, x, y, acc[t], centre_of<In> (p, x, y));
  }
}

size_t
tile_bytes (const GcvCudaConv & c, int ty)
{
  size_t acc = (c.in == GCV_PIX_U8X4 || c.in == GCV_PIX_F32X4) ? 16 : 4;
  return acc * tile_pitch (c.kw) * (size_t) (BY * ty + c.kh - 1);
}

template <typename In>
struct Tiled {
  template <int TY, typename Taps>
  static cudaError_t go (const GcvCudaConv & c, size_t smem, Taps taps)
  {
    auto kernel = tiled_kernel<In, TY, Taps>;
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

/* --- per-size kernels ------------------------------------------------- */

constexpr int TX = 4;           /* outputs across per thread: one vector */

template <typename In, int KW, int KH, int TY>
__global__ void __launch_bounds__ (BX * BY)
tiled_sized_kernel (GcvCudaConv p, ParamTaps taps)
{
  typedef typename AccOf<In>::T Acc;
  typedef Quad<In> Q;
  typedef typename Q::T Vec;
  constexpr int TW = BX * TX, TH = BY * TY;     /* outputs of the block */
  constexpr int SP = (TW + KW - 1 + 3) / 4 * 4, SH = TH + KH - 1;
  constexpr int NV = (TX + KW - 1 + 3) / 4;     /* vectors per window */
  __shared__ __align__ (16) In tile[SH * SP];
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  const int pw = p.width + KW - 1, ph = p.height + KH - 1;

  /* padded rows have slack past pw, so whole vectors can be read */
  for (int k = threadIdx.y * BX + threadIdx.x; k < SH * (SP / 4);
      k += BX * BY) {
    const int r = k / (SP / 4), c = (k % (SP / 4)) * 4;
    Vec v = { };
    if (y0 + r < ph && x0 + c < pw)
      v = __ldg ((const Vec *) (row_ptr<In> (p.src, p.src_pitch, y0 + r) +
              x0 + c));
    *(Vec *) & tile[r * SP + c] = v;
  }
  __syncthreads ();

  const int xs = threadIdx.x * TX, ys = threadIdx.y * TY;
  Acc acc[TY][TX];
#pragma unroll
  for (int t = 0; t < TY; t++)
#pragma unroll
    for (int q = 0; q < TX; q++)
      zero (acc[t][q]);

  /* each input row once: its window feeds every output row it belongs to */
#pragma unroll
  for (int r = 0; r < TY + KH - 1; r++) {
    Acc win[NV * 4];
#pragma unroll
    for (int v = 0; v < NV; v++) {
      const Vec q = *(const Vec *) &tile[(ys + r) * SP + xs + 4 * v];
#pragma unroll
      for (int k = 0; k < 4; k++)
        win[4 * v + k] = to_acc (Q::get (q, k));
    }
#pragma unroll
    for (int t = 0; t < TY; t++) {
      const int j = r - t;
      if (j >= 0 && j < KH) {
#pragma unroll
        for (int i = 0; i < KW; i++) {
          const float w = taps[j * KW + i];
#pragma unroll
          for (int q = 0; q < TX; q++)
            fma_acc (acc[t][q], w, win[q + i]);
        }
      }
    }
  }

#pragma unroll
  for (int t = 0; t < TY; t++) {
    const int y = y0 + ys + t;
#pragma unroll
    for (int q = 0; q < TX; q++) {
      const int x = x0 + xs + q;
      if (x < p.width && y < p.height)
        store<In> (p, x, y, acc[t][q],
            tile[(ys + t + p.ay) * SP + xs + q + p.ax]);
    }
  }
}

template <typename In, int K>
cudaError_t
sized (const GcvCudaConv & c, int ty)
{
  ParamTaps taps = param_taps (c.host_taps, K * K);
  dim3 block (BX, BY);
  switch (ty) {
    case 1:
      tiled_sized_kernel<In, K, K, 1> <<<dim3 (div_up (c.width, BX * TX),
              div_up (c.height, BY)), block, 0, c.stream>>> (c, taps);
      break;
    case 4:
      tiled_sized_kernel<In, K, K, 4> <<<dim3 (div_up (c.width, BX * TX),
              div_up (c.height, BY * 4)), block, 0, c.stream>>> (c, taps);
      break;
    default:
      tiled_sized_kernel<In, K, K, 2> <<<dim3 (div_up (c.width, BX * TX),
              div_up (c.height, BY * 2)), block, 0, c.stream>>> (c, taps);
      break;
  }
  return cudaGetLastError ();
}

template <typename In>
struct TiledSized {
  static cudaError_t launch (const GcvCudaConv & c, int ty)
  {
    switch (c.kw) {
      case 3: return sized<In, 3> (c, ty);
      case 5: return sized<In, 5> (c, ty);
      case 7: return sized<In, 7> (c, ty);
      case 9: return sized<In, 9> (c, ty);
      case 11: return sized<In, 11> (c, ty);
      case 13: return sized<In, 13> (c, ty);
      case 15: return sized<In, 15> (c, ty);
      default: return sized<In, 17> (c, ty);
    }
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
  return GCV_DISPATCH_PIXEL (Tiled, *c, *c, ty, smem);
}

extern "C" int
gcv_cuda_tiled_specialised (const GcvCudaConv * c)
{
  return c->kw == c->kh && c->kw % 2 == 1 && c->kw >= 3 && c->kw <= 17
      && c->in != GCV_PIX_F32X4;
}

extern "C" cudaError_t
gcv_cuda_tiled_sized (const GcvCudaConv * c, int ty)
{
  switch (c->in) {
    case GCV_PIX_U8:
      return TiledSized<unsigned char>::launch (*c, ty);
    case GCV_PIX_F32:
      return TiledSized<float>::launch (*c, ty);
    case GCV_PIX_U8X4:
      return TiledSized<uchar4>::launch (*c, ty);
    default:
      return cudaErrorInvalidValue;
  }
}
