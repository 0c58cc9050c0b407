/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`: shared-memory tiles; its kernels and launchers, which
 * tiled-*.cu instantiate for one pixel type each (tiled.cu holds the
 * entry points).
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
 * Inf, which a zero tap would pass on to outputs beside them.
 *
 * Gradient magnitudes (GcvCudaConv.magnitude_sign) take both derivatives in
 * the same sweep over the tile, each sample read once: the adaptive kernel
 * at any size, the per-width kernels 3, 5 and 7 wide at ty=2 (never
 * widened). Every kernel has a second instance that takes the frame's
 * statistics (gcv-kernels-stats.cuh), launched for frames that ask for them. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/families/tiled.cuh"

using namespace gcv;
using namespace gcv::tiled;

namespace {

/* The adaptive kernel's work; with `taps_y` (not NoTaps) a gradient
 * magnitude. */
template <typename In, int TY, bool STATS, typename Taps, typename TapsY>
__device__ __forceinline__ void
tiled_body (const GcvCudaConv & p, const Taps & taps, const TapsY & taps_y)
{
  typedef typename AccOf<In>::T Acc;
  constexpr bool MAG = !std::is_same<TapsY, NoTaps>::value;
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

  Acc acc[TY], accy[MAG ? TY : 1];
#pragma unroll
  for (int t = 0; t < TY; t++) {
    zero (acc[t]);
    if constexpr (MAG)
      zero (accy[t]);
  }
  for (int j = 0; j < p.kh; j++) {
    const Acc *s = tile + (ty * TY + j) * sp + tx;
    for (int i = 0; i < p.kw; i++) {
      const float w = taps[j * p.kw + i];
#pragma unroll
      for (int t = 0; t < TY; t++)
        fma_acc (acc[t], w, s[t * sp + i]);
      if constexpr (MAG) {
        const float wy = taps_y[j * p.kw + i];
#pragma unroll
        for (int t = 0; t < TY; t++)
          fma_acc (accy[t], wy, s[t * sp + i]);
      }
    }
  }
  if constexpr (MAG)
#pragma unroll
    for (int t = 0; t < TY; t++)
      magnitude (acc[t], accy[t], p.magnitude_sign);

  const int x = x0 + tx;
  typename StatsFor<Acc, STATS>::T st;
  if (x >= p.width)
    return;
#pragma unroll
  for (int t = 0; t < TY; t++) {
    int y = y0 + ty * TY + t;
    if (y < p.height)
      store<In> (p, x, y, acc[t], centre_of<In> (p, x, y), st);
  }
  st.flush (p);
}

template <typename In, int TY, typename Taps, bool STATS>
__global__ void __launch_bounds__ (BX * BY, 2)
tiled_kernel (GcvCudaConv p, Taps taps)
{
  tiled_body<In, TY, STATS> (p, taps, NoTaps ());
}

template <typename In, int TY, typename Taps, bool STATS>
__global__ void __launch_bounds__ (BX * BY, 2)
tiled_magnitude_kernel (GcvCudaConv p, Taps taps, Taps taps_y)
{
  tiled_body<In, TY, STATS> (p, taps, taps_y);
}

/* Raises `kernel`'s shared memory limit, then launches it. */
template <typename K, typename... A>
cudaError_t
launch_smem (K kernel, dim3 grid, dim3 block, size_t smem,
    cudaStream_t stream, A... args)
{
  cudaError_t err = allow_smem (kernel);
  if (err != cudaSuccess)
    return err;
  kernel<<<grid, block, smem, stream>>> (args...);
  return cudaGetLastError ();
}

template <typename In>
struct Tiled {
  template <int TY, bool STATS, typename Taps>
  static cudaError_t go (const GcvCudaConv & c, size_t smem,
      const Taps & taps, const Taps & taps_y)
  {
    dim3 block (BX, BY);
    dim3 grid (div_up (c.width, BX), div_up (c.height, BY * TY));
    if (is_magnitude (c))
      return launch_smem (tiled_magnitude_kernel<In, TY, Taps, STATS>, grid,
          block, smem, c.stream, c, taps, taps_y);
    return launch_smem (tiled_kernel<In, TY, Taps, STATS>, grid, block,
        smem, c.stream, c, taps);
  }

  template <bool STATS, typename Taps>
  static cudaError_t pick (const GcvCudaConv & c, int ty, size_t smem,
      const Taps & taps, const Taps & taps_y)
  {
    switch (ty) {
      case 8:
        return go<8, STATS> (c, smem, taps, taps_y);
      case 4:
        return go<4, STATS> (c, smem, taps, taps_y);
      case 2:
        return go<2, STATS> (c, smem, taps, taps_y);
      default:
        return go<1, STATS> (c, smem, taps, taps_y);
    }
  }

  template <typename Taps>
  static cudaError_t stats_pick (const GcvCudaConv & c, int ty, size_t smem,
      const Taps & taps, const Taps & taps_y)
  {
    if (c.stats)
      return pick<true> (c, ty, smem, taps, taps_y);
    return pick<false> (c, ty, smem, taps, taps_y);
  }

  static cudaError_t launch (const GcvCudaConv & c, int ty, size_t smem)
  {
    const int n = c.kw * c.kh;
    if (n <= GCV_CUDA_PARAM_TAPS) {
      ParamTaps taps = param_taps (c.host_taps, n), ty_taps;
      if (is_magnitude (c))
        ty_taps = param_taps (host_taps_y (c), n);
      return stats_pick (c, ty, smem, taps, ty_taps);
    }
    return stats_pick (c, ty, smem, global_taps (c.taps),
        global_taps (taps_y (c)));
  }
};

/* --- per-width kernels ------------------------------------------------ */

constexpr int TX = GCV_QUAD;    /* outputs across per thread: one vector */

/* The outputs of a thread (TY x 4) of a one-channel float tile summed over
 * the filter's own footprint: p.footprint_kw of the KW taps a row, in the
 * order the unrolled loops take them. The block's tile holds all of it.
 * One output at a time and not unrolled: this path is rare, and the
 * registers it would take would cost the unrolled loops occupancy. */
template <int KW, int TY, typename Taps, typename S>
__device__ __forceinline__ void
footprint_outputs (const GcvCudaConv & p, const float *tile, int sp, int x0,
    int y0, int xs, int ys, const Taps & taps, S & st)
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
    store<float> (p, x, y, acc, 0.0f, st);
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
 * 15x15. With `taps_y` (not NoTaps), a gradient magnitude: both
 * derivatives from each window. */
template <typename In, int KW, int TY, bool GUARD, bool STATS,
    typename Taps, typename TapsY>
__device__ __forceinline__ void
tiled_width_body (const GcvCudaConv & p, const Taps & taps,
    const TapsY & taps_y)
{
  typedef typename AccOf<In>::T Acc;
  constexpr bool MAG = !std::is_same<TapsY, NoTaps>::value;
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
  static_assert (!GUARD || !MAG, "magnitudes are never widened");
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
  Acc acc[TY][TX], accy[MAG ? TY : 1][TX];
#pragma unroll
  for (int t = 0; t < TY; t++)
#pragma unroll
    for (int q = 0; q < TX; q++) {
      zero (acc[t][q]);
      if constexpr (MAG)
        zero (accy[t][q]);
    }

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
          if constexpr (MAG) {
            const float wy = taps_y[j * KW + i];
#pragma unroll
            for (int q = 0; q < TX; q++)
              fma_acc (accy[t][q], wy, win[q + i]);
          }
        }
      }
    }
  } else {
    for (int j = 0; j < kh; j++) {
      float w[KW], wy[MAG ? KW : 1];
#pragma unroll
      for (int i = 0; i < KW; i++) {
        w[i] = taps[j * KW + i];
        if constexpr (MAG)
          wy[i] = taps_y[j * KW + i];
      }
#pragma unroll
      for (int t = 0; t < TY; t++) {
        Acc win[NV * 4];
        load_window<In, NV> (win, tile + (ys + t + j) * SP + xs);
#pragma unroll
        for (int i = 0; i < KW; i++)
#pragma unroll
          for (int q = 0; q < TX; q++) {
            fma_acc (acc[t][q], w[i], win[q + i]);
            if constexpr (MAG)
              fma_acc (accy[t][q], wy[i], win[q + i]);
          }
      }
    }
  }
  if constexpr (MAG)
#pragma unroll
    for (int t = 0; t < TY; t++)
#pragma unroll
      for (int q = 0; q < TX; q++)
        magnitude (acc[t][q], accy[t][q], p.magnitude_sign);

  typename StatsFor<Acc, STATS>::T st;
  /* after the unrolled loops, where their registers are free: placed
   * before them, this path cost the loops registers */
  if constexpr (GUARD) {
    if (*(volatile int *) block_nonfinite) {
      footprint_outputs<KW, TY> (p, tile, SP, x0, y0, xs, ys, taps, st);
      st.flush (p);
      return;
    }
  }
  store_tile_outputs<In, TY> (p, tile, SP, x0, y0, xs, ys, acc, st);
  st.flush (p);
}

template <typename In, int KW, int TY, typename Taps, bool GUARD, bool STATS>
__global__ void __launch_bounds__ (BX * BY)
tiled_width_kernel (GcvCudaConv p, Taps taps)
{
  tiled_width_body<In, KW, TY, GUARD, STATS> (p, taps, NoTaps ());
}

/* Magnitudes: taps in the constant bank, never widened */
template <typename In, int KW, int TY, bool STATS>
__global__ void __launch_bounds__ (BX * BY)
tiled_width_magnitude_kernel (GcvCudaConv p, ParamTaps taps,
    ParamTaps taps_y)
{
  tiled_width_body<In, KW, TY, false, STATS> (p, taps, taps_y);
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
width_launch (const GcvCudaConv & c, const Taps & taps)
{
  const size_t smem = width_smem<In, KW> (c.kh, TY, GUARD);
  const dim3 grid (div_up (c.width, BX * TX), div_up (c.height, BY * TY));
  if (c.stats)
    return launch_smem (tiled_width_kernel<In, KW, TY, Taps, GUARD, true>,
        grid, dim3 (BX, BY), smem, c.stream, c, taps);
  return launch_smem (tiled_width_kernel<In, KW, TY, Taps, GUARD, false>,
      grid, dim3 (BX, BY), smem, c.stream, c, taps);
}

/* The guarded instance only where it is needed; the others are the
 * unrolled loops alone. */
template <typename In, int KW, int TY, typename Taps>
cudaError_t
width_go (const GcvCudaConv & c, const Taps & taps)
{
  if constexpr (std::is_same<In, float>::value)
    if (width_guard (c))
      return width_launch<In, KW, TY, Taps, true> (c, taps);
  return width_launch<In, KW, TY, Taps, false> (c, taps);
}

/* The magnitude instances: these widths, at these rows. */
constexpr bool
magnitude_width (int kw)
{
  return kw == 3 || kw == 5 || kw == 7;
}

constexpr int MAGNITUDE_TY = 2;

template <typename In, int KW>
cudaError_t
magnitude_go (const GcvCudaConv & c, int ty)
{
  if constexpr (magnitude_width (KW)) {
    const int n = KW * c.kh;
    const size_t smem = width_smem<In, KW> (c.kh, MAGNITUDE_TY, false);
    const dim3 grid (div_up (c.width, BX * TX), div_up (c.height,
            BY * MAGNITUDE_TY));
    if (ty != MAGNITUDE_TY || n > GCV_CUDA_PARAM_TAPS)
      return cudaErrorInvalidValue;
    if (c.stats)
      return launch_smem (tiled_width_magnitude_kernel<In, KW, MAGNITUDE_TY,
          true>, grid, dim3 (BX, BY), smem, c.stream, c,
          param_taps (c.host_taps, n), param_taps (host_taps_y (c), n));
    return launch_smem (tiled_width_magnitude_kernel<In, KW, MAGNITUDE_TY,
        false>, grid, dim3 (BX, BY), smem, c.stream, c,
        param_taps (c.host_taps, n), param_taps (host_taps_y (c), n));
  } else {
    return cudaErrorInvalidValue;
  }
}

/* The rows a pixel type's per-width kernels are compiled for: three of
 * 1, 2, 4 and 8. Timed on an H200 at 1920x1080 and 3840x2160 over 22
 * kernel shapes each, the best of the three kept was within 3% of the
 * best of all four at every point but one (docs/performance.md, "Build
 * time and size"), and a fifth of the per-width instances go. Every type
 * has 2 (the heuristic's for one channel, magnitudes, taps in memory) and
 * 4 (the RGBA family's). */
template <typename In>
constexpr bool
has_rows (int ty)
{
  constexpr bool four = std::is_same<In, uchar4>::value
      || std::is_same<In, rgbx8>::value;
  return (ty == 1 || ty == 2 || ty == 4 || ty == 8)
      && ty != (four ? 8 : 1);
}

template <typename In, int KW>
cudaError_t
width_pick (const GcvCudaConv & c, int ty)
{
  if (is_magnitude (c))
    return magnitude_go<In, KW> (c, ty);
  if (c.kw * c.kh > GCV_CUDA_PARAM_TAPS)
    return width_go<In, KW, 2> (c, global_taps (c.taps));
  ParamTaps taps = param_taps (c.host_taps, c.kw * c.kh);
  switch (ty) {
    case 1:
      if constexpr (has_rows<In> (1))
        return width_go<In, KW, 1> (c, taps);
      break;
    case 2:
      return width_go<In, KW, 2> (c, taps);
    case 4:
      return width_go<In, KW, 4> (c, taps);
    case 8:
      if constexpr (has_rows<In> (8))
        return width_go<In, KW, 8> (c, taps);
      break;
  }
  return cudaErrorInvalidValue;
}

template <typename In>
struct TiledWidth {
  static size_t smem (int kw, int kh, int ty, bool guard, bool magnitude)
  {
    if (magnitude && (!magnitude_width (kw) || ty != MAGNITUDE_TY
            || kw * kh > GCV_CUDA_PARAM_TAPS))
      return 0;
    if (!has_rows<In> (ty))
      return 0;
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

/* The family's launchers for one pixel type (tiled.cuh); a tiled-*.cu
 * file instantiates them for its type with the macros below. */
template <typename In>
cudaError_t
gcv::tiled::adaptive (const GcvCudaConv & c, int ty, size_t smem)
{
  return Tiled<In>::launch (c, ty, smem);
}

template <typename In>
size_t
gcv::tiled::width_smem (int kw, int kh, int ty, bool guard, bool magnitude)
{
  return TiledWidth<In>::smem (kw, kh, ty, guard, magnitude);
}

template <typename In>
cudaError_t
gcv::tiled::width (const GcvCudaConv & c, int ty)
{
  return TiledWidth<In>::launch (c, ty);
}

#define GCV_TILED_ADAPTIVE_INSTANCE(In)                                      \
  template cudaError_t gcv::tiled::adaptive<In> (const GcvCudaConv &, int,   \
      size_t)
#define GCV_TILED_WIDTH_INSTANCES(In)                                        \
  template size_t gcv::tiled::width_smem<In> (int, int, int, bool, bool);    \
  template cudaError_t gcv::tiled::width<In> (const GcvCudaConv &, int)
