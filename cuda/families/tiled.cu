/* Family `tiled`: shared-memory tiles.
 *
 * The generic kernel (any size) uses adaptive tiling (van Werkhoven et al.
 * 2014, sections 2-4): a block of 32x8 threads loads its input tile plus halo
 * once; each thread then computes TY outputs down a column, TY picked at run
 * time as the largest whose tile fits shared memory with two blocks per SM
 * (__launch_bounds__ keeps the registers within the same budget).
 *
 * The per-width kernels fix the kernel width and the tile shape at compile
 * time so the inner loops unroll (Wainwright, GTC 2014): each thread computes
 * 4 outputs across and TY down, sliding a register window along each input
 * row it reads (one channel: a kernel row's taps in registers; the RGBA
 * family: each input row's window widened once for all of a thread's
 * rows). Kernel rows loop at run time, so one instance serves any height.
 * Rows move through shared memory in vectors of four pixels, matched to the
 * bank width (Chen et al., DAC'17), and outputs leave as one vector of
 * four. Widths with no instance run in the next one, widened by zero taps
 * (gcv-cuda.c); for GRAY32F that instance also checks its tile for NaN and
 * Inf, which a zero tap would pass on to outputs beside them. */
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
      v = to_acc (ldg (row_ptr<In> (p.src, p.src_pitch, y0 + r) + x0 + c));
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
    cudaError_t err = allow_smem (kernel);
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

/* --- per-width kernels ------------------------------------------------ */

constexpr int TX = GCV_QUAD;    /* outputs across per thread: one vector */

/* The outputs of a thread (TY x 4) of a one-channel float tile summed over
 * the filter's own footprint: p.footprint_kw of the KW taps a row, in the
 * order the unrolled loops take them. The block's tile holds all of it.
 * One output at a time and not unrolled: this path is rare, and the
 * registers it would take would cost the unrolled loops occupancy. */
template <int KW, int TY, typename Taps>
__device__ __forceinline__ void
footprint_outputs (const GcvCudaConv & p, const float *tile, int sp, int x0,
    int y0, int xs, int ys, const Taps & taps)
{
#pragma unroll 1
  for (int k = 0; k < TY * TX; k++) {
    const int t = k / TX, q = k % TX;
    const int x = x0 + xs + q, y = y0 + ys + t;
    if (x >= p.width || y >= p.height)
      continue;
    const float *s = tile + (ys + t) * sp + xs + q;
    float acc = 0.0f;
#pragma unroll 1
    for (int j = 0; j < p.kh; j++, s += sp)
#pragma unroll 1
      for (int i = 0; i < p.footprint_kw; i++)
        fma_acc (acc, taps[j * KW + i], s[i]);
    store<float> (p, x, y, acc, 0.0f);
  }
}

/* Whether the first n (1 to 4, or more) of four floats are all finite. */
__device__ __forceinline__ bool
finite_quad (float4 v, int n)
{
  return isfinite (v.x) && (n < 2 || isfinite (v.y))
      && (n < 3 || isfinite (v.z)) && (n < 4 || isfinite (v.w));
}

/* Whether this thread's share of the first `rows` x `cols` of a float
 * tile (rows `sp` apart, a multiple of 4) holds a NaN or Inf. */
__device__ __forceinline__ bool
tile_nonfinite (const float *tile, int sp, int rows, int cols)
{
  bool bad = false;
  for (int r = threadIdx.y; r < rows; r += BY)
    for (int c = GCV_QUAD * threadIdx.x; c < cols; c += GCV_QUAD * BX)
      bad |= !finite_quad (*(const float4 *) (tile + r * sp + c), cols - c);
  return bad;
}

/* Width fixed at compile time, so each input row's window of TX + KW - 1
 * pixels lives in registers; kernel rows loop at run time, so one instance
 * serves every height. One channel takes a kernel row's taps into
 * registers and loads the window of each input row it meets once per
 * output row. The RGBA family widens every window it loads (three
 * conversions a pixel), so it loads each input row's window once and
 * applies it to the TY output rows it reaches, taking the taps from the
 * constant bank one by one: 7-14% faster from 7x7 to 21x21 on the H200
 * (performance.md). Not at 8 rows: there it spilled and was slower below
 * 15x15. */
template <typename In, int KW, int TY, typename Taps, bool GUARD>
__global__ void __launch_bounds__ (BX * BY)
tiled_width_kernel (GcvCudaConv p, Taps taps)
{
  typedef typename AccOf<In>::T Acc;
  constexpr int TW = BX * TX, TH = BY * TY;     /* outputs of the block */
  constexpr int SP = (TW + KW - 1 + 3) / 4 * 4;
  constexpr int NV = (TX + KW - 1 + 3) / 4;     /* vectors per window */
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  /* GUARD: the block's NaN flag, then the tile (width_smem()) */
  int *const block_nonfinite = (int *) smem_raw;
  In *tile = (In *) (smem_raw + (GUARD ? 16 : 0));
  const int kh = p.kh, sh = TH + kh - 1;
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  const int pw = p.width + KW - 1, ph = p.height + kh - 1;

  /* GUARD: GRAY32F run widened by zero taps, where a NaN or Inf under a
   * zero tap would reach outputs whose footprint does not hold it (0 * NaN
   * is NaN). A block whose tile holds one sums over the filter's own width
   * instead (the flag is the block's, so the branch is uniform). The flag
   * waits in shared memory: held in a register through the unrolled loops,
   * it cost some of them registers. */
  static_assert (!GUARD || std::is_same<In, float>::value, "floats only");
  if (GUARD && threadIdx.x == 0 && threadIdx.y == 0)
    *block_nonfinite = 0;
  load_tile_quads (tile, SP, sh, p, x0, y0, pw, ph,
      threadIdx.y * BX + threadIdx.x, BX * BY);
  __syncthreads ();
  if constexpr (GUARD) {
    if (tile_nonfinite (tile, SP, min (sh, ph - y0), min (SP, pw - x0)))
      atomicOr (block_nonfinite, 1);
    __syncthreads ();
  }

  const int xs = threadIdx.x * TX, ys = threadIdx.y * TY;
  Acc acc[TY][TX];
#pragma unroll
  for (int t = 0; t < TY; t++)
#pragma unroll
    for (int q = 0; q < TX; q++)
      zero (acc[t][q]);

  if constexpr (sizeof (Acc) > sizeof (float) && TY <= 4) {
    for (int r = 0; r < TY + kh - 1; r++) {
      Acc win[NV * 4];
      load_window<In, NV> (win, tile + (ys + r) * SP + xs);
#pragma unroll
      for (int t = 0; t < TY; t++) {
        const int j = r - t;
        if (j < 0 || j >= kh)
          continue;
#pragma unroll
        for (int i = 0; i < KW; i++) {
          const float w = taps[j * KW + i];
#pragma unroll
          for (int q = 0; q < TX; q++)
            fma_acc (acc[t][q], w, win[q + i]);
        }
      }
    }
  } else {
    for (int j = 0; j < kh; j++) {
      float w[KW];
#pragma unroll
      for (int i = 0; i < KW; i++)
        w[i] = taps[j * KW + i];
#pragma unroll
      for (int t = 0; t < TY; t++) {
        Acc win[NV * 4];
        load_window<In, NV> (win, tile + (ys + t + j) * SP + xs);
#pragma unroll
        for (int i = 0; i < KW; i++)
#pragma unroll
          for (int q = 0; q < TX; q++)
            fma_acc (acc[t][q], w[i], win[q + i]);
      }
    }
  }

  /* after the unrolled loops, where their registers are free: placed
   * before them, this path cost the loops registers */
  if constexpr (GUARD) {
    if (*(volatile int *) block_nonfinite) {
      footprint_outputs<KW, TY> (p, tile, SP, x0, y0, xs, ys, taps);
      return;
    }
  }
  store_tile_outputs<In, TY> (p, tile, SP, x0, y0, xs, ys, acc);
}

/* The tile, after the block's NaN flag with `guard` (16 bytes, so that the
 * tile stays aligned for the vectors). */
template <typename In, int KW>
size_t
width_smem (int kh, int ty, bool guard)
{
  constexpr int SP = (BX * TX + KW - 1 + 3) / 4 * 4;
  return sizeof (In) * SP * (size_t) (BY * ty + kh - 1) + (guard ? 16 : 0);
}

template <typename In, int KW, int TY, typename Taps, bool GUARD>
cudaError_t
width_launch (const GcvCudaConv & c, Taps taps)
{
  auto kernel = tiled_width_kernel<In, KW, TY, Taps, GUARD>;
  size_t smem = width_smem<In, KW> (c.kh, TY, GUARD);
  cudaError_t err = allow_smem (kernel);
  if (err != cudaSuccess)
    return err;
  kernel<<<dim3 (div_up (c.width, BX * TX), div_up (c.height, BY * TY)),
      dim3 (BX, BY), smem, c.stream>>> (c, taps);
  return cudaGetLastError ();
}

/* Whether `c` runs the guarded instance: GRAY32F widened by zero taps. */
bool
width_guard (const GcvCudaConv & c)
{
  return c.in == GCV_PIX_F32 && c.check_finite && c.footprint_kw < c.kw;
}

/* The guarded instance only where it is needed; the others are the
 * unrolled loops alone. */
template <typename In, int KW, int TY, typename Taps>
cudaError_t
width_go (const GcvCudaConv & c, Taps taps)
{
  if constexpr (std::is_same<In, float>::value)
    if (width_guard (c))
      return width_launch<In, KW, TY, Taps, true> (c, taps);
  return width_launch<In, KW, TY, Taps, false> (c, taps);
}

template <typename In, int KW>
cudaError_t
width_pick (const GcvCudaConv & c, int ty)
{
  if (c.kw * c.kh > GCV_CUDA_PARAM_TAPS)
    return width_go<In, KW, 2> (c, global_taps (c.taps));
  ParamTaps taps = param_taps (c.host_taps, c.kw * c.kh);
  switch (ty) {
    case 1:
      return width_go<In, KW, 1> (c, taps);
    case 4:
      return width_go<In, KW, 4> (c, taps);
    case 8:
      return width_go<In, KW, 8> (c, taps);
    default:
      return width_go<In, KW, 2> (c, taps);
  }
}

template <typename In>
struct TiledWidth {
  static size_t smem (int kw, int kh, int ty, bool guard)
  {
    switch (kw) {
#define WIDTH_SMEM(K) case K: return width_smem<In, K> (kh, ty, guard);
        GCV_TILED_WIDTHS (WIDTH_SMEM)
#undef WIDTH_SMEM
      default:
        return 0;
    }
  }
  static cudaError_t launch (const GcvCudaConv & c, int ty)
  {
    switch (c.kw) {
#define WIDTH_GO(K) case K: return width_pick<In, K> (c, ty);
        GCV_TILED_WIDTHS (WIDTH_GO)
#undef WIDTH_GO
      default:
        return cudaErrorInvalidValue;
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

/* Shared memory the per-width kernel needs for this size and ty (GRAY32F
 * run widened: the guarded instance's), 0 when it has no instance, the
 * element is F32X4, or the device cannot give it; large kernels run with
 * ty=2 and taps from device memory. */
extern "C" size_t
gcv_cuda_tiled_width_smem (const GcvCudaConv * c, int ty,
    const GcvCudaDevice * dev)
{
  size_t bytes;
  if (c->kw * c->kh > GCV_CUDA_PARAM_TAPS)
    ty = 2;
  switch (c->in) {
    case GCV_PIX_U8:
      bytes = TiledWidth<unsigned char>::smem (c->kw, c->kh, ty, false);
      break;
    case GCV_PIX_F32:
      bytes = TiledWidth<float>::smem (c->kw, c->kh, ty, width_guard (*c));
      break;
    case GCV_PIX_U8X4:
      bytes = c->out == GCV_OUT_U8X4 ? TiledWidth<uchar4>::smem (c->kw, c->kh,
          ty, false) : TiledWidth<rgbx8>::smem (c->kw, c->kh, ty, false);
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
      return TiledWidth<unsigned char>::launch (*c, ty);
    case GCV_PIX_F32:
      return TiledWidth<float>::launch (*c, ty);
    case GCV_PIX_U8X4:
      if (c->out == GCV_OUT_U8X4)
        return TiledWidth<uchar4>::launch (*c, ty);
      return TiledWidth<rgbx8>::launch (*c, ty);
    default:
      return cudaErrorInvalidValue;
  }
}
