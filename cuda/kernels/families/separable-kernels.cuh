/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable`: its kernels and launchers, which separable-*.cu
 * instantiate per pixel type (separable.cu holds the entry points).
 *
 * Fused (per-size kernels, square odd sizes): the row pass into float rows
 * in shared memory and the column pass from them to the output, one global
 * read and one write per sample. One channel streams: a block walks down a
 * strip, staging the next rows with cp.async and keeping a ring of
 * intermediate rows. The RGBA family takes one tile with its halo per
 * block. Each thread slides register windows of 4 outputs across (row pass)
 * and 4 down (column pass); taps are constant-bank operands.
 *
 * Two-pass (any size, and tiles too big for shared memory): a row pass into
 * a float intermediate (every input row the column pass needs), then a
 * column pass to the output, both through shared-memory tiles (van Werkhoven
 * et al. 2014, section 5). The row pass gives each thread RX outputs across,
 * the column pass CY outputs down (vertical tiling). Block heights shrink
 * until the tiles fit; a column pass too tall for shared memory walks its
 * column in registers instead. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/families/separable.cuh"

#include <cuda_pipeline.h>

using namespace gcv;
using namespace gcv::separable;

namespace {

constexpr int BX = 32, RX = 4, CY = 8;

template <typename In>
__global__ void __launch_bounds__ (256)
row_kernel (GcvCudaConv p, ParamTaps taps, typename AccOf<In>::T * tmp,
    size_t tmp_pitch)
{
  typedef typename AccOf<In>::T Acc;
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  Acc *tile = (Acc *) smem_raw;
  const int sw = BX * RX + p.kw - 1, pw = p.width + p.kw - 1;
  const int ph = p.height + p.kh - 1;
  const int x0 = blockIdx.x * BX * RX, y = blockIdx.y * blockDim.y + threadIdx.y;
  Acc *srow = tile + threadIdx.y * sw;

  for (int c = threadIdx.x; c < sw; c += BX) {
    Acc v;
    zero (v);
    if (y < ph && x0 + c < pw)
      v = to_acc (ldg (row_ptr<In> (p.src, p.src_pitch, y) + x0 + c));
    srow[c] = v;
  }
  __syncthreads ();
  if (y >= ph)
    return;

  Acc acc[RX];
#pragma unroll
  for (int k = 0; k < RX; k++)
    zero (acc[k]);
  for (int i = 0; i < p.kw; i++) {
    const float w = taps[i];
#pragma unroll
    for (int k = 0; k < RX; k++)
      fma_acc (acc[k], w, srow[threadIdx.x + k * BX + i]);
  }
#pragma unroll
  for (int k = 0; k < RX; k++) {
    int x = x0 + threadIdx.x + k * BX;
    if (x < p.width)
      row_ptr<Acc> (tmp, tmp_pitch, y)[x] = acc[k];
  }
}

template <typename In, bool STATS>
__global__ void __launch_bounds__ (256)
column_kernel (GcvCudaConv p, ParamTaps taps,
    const typename AccOf<In>::T * tmp, size_t tmp_pitch)
{
  typedef typename AccOf<In>::T Acc;
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  Acc *tile = (Acc *) smem_raw;
  const int sh = blockDim.y * CY + p.kh - 1, ph = p.height + p.kh - 1;
  const int x = blockIdx.x * BX + threadIdx.x;
  const int y0 = blockIdx.y * blockDim.y * CY;

  for (int r = threadIdx.y; r < sh; r += blockDim.y) {
    Acc v;
    zero (v);
    if (x < p.width && y0 + r < ph)
      v = row_ptr<const Acc> ((const void *) tmp, tmp_pitch, y0 + r)[x];
    tile[r * BX + threadIdx.x] = v;
  }
  __syncthreads ();
  if (x >= p.width)
    return;

  Acc acc[CY];
#pragma unroll
  for (int t = 0; t < CY; t++)
    zero (acc[t]);
  const Acc *s = tile + threadIdx.y * CY * BX + threadIdx.x;
  for (int j = 0; j < p.kh; j++) {
    const float w = taps[j];
#pragma unroll
    for (int t = 0; t < CY; t++)
      fma_acc (acc[t], w, s[(t + j) * BX]);
  }
  typename StatsFor<Acc, STATS>::T st;
#pragma unroll
  for (int t = 0; t < CY; t++) {
    int y = y0 + threadIdx.y * CY + t;
    if (y < p.height)
      store<In> (p, x, y, acc[t], centre_of<In> (p, x, y), st);
  }
  st.flush (p);
}

/* Tall kernels: each thread walks CY outputs down its column, every input
 * row loaded once into a register and added to the outputs it touches. */
template <typename In, bool STATS>
__global__ void __launch_bounds__ (256)
column_walk_kernel (GcvCudaConv p, ParamTaps taps,
    const typename AccOf<In>::T * tmp, size_t tmp_pitch)
{
  typedef typename AccOf<In>::T Acc;
  const int x = blockIdx.x * BX + threadIdx.x;
  const int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * CY;

  if (x >= p.width || y0 >= p.height)
    return;
  Acc acc[CY];
#pragma unroll
  for (int t = 0; t < CY; t++)
    zero (acc[t]);
  for (int r = 0; r < CY + p.kh - 1; r++) {
    if (y0 + r >= p.height + p.kh - 1)
      break;
    Acc v = row_ptr<const Acc> ((const void *) tmp, tmp_pitch, y0 + r)[x];
#pragma unroll
    for (int t = 0; t < CY; t++) {
      int j = r - t;
      if (j >= 0 && j < p.kh)
        fma_acc (acc[t], taps[j], v);
    }
  }
  typename StatsFor<Acc, STATS>::T st;
#pragma unroll
  for (int t = 0; t < CY; t++) {
    int y = y0 + t;
    if (y < p.height)
      store<In> (p, x, y, acc[t], centre_of<In> (p, x, y), st);
  }
  st.flush (p);
}

/* The tallest block (8, 4, 2 or 1 rows) whose tile of `bytes_per_row` per
 * block row plus `fixed_rows` fits. */
int
block_rows (size_t bytes_per_row, size_t fixed_rows, size_t row_bytes,
    const GcvCudaDevice * dev)
{
  size_t budget = dev->smem_per_sm / 2 - 1024;
  if (budget > dev->smem_per_block_optin)
    budget = dev->smem_per_block_optin;
  for (int by = 8; by >= 1; by /= 2)
    if ((by * bytes_per_row + fixed_rows * row_bytes) <= budget)
      return by;
  return 0;
}

template <typename In>
struct Separable {
  static cudaError_t launch (const GcvCudaConv & c, const float *row,
      const float *column, void *tmp_v, size_t tmp_pitch,
      const GcvCudaDevice * dev)
  {
    typedef typename AccOf<In>::T Acc;
    Acc *tmp = (Acc *) tmp_v;
    const int ph = c.height + c.kh - 1;
    cudaError_t err;

    /* row pass: by rows of (BX*RX + kw - 1) elements */
    size_t row_bytes = sizeof (Acc) * (BX * RX + c.kw - 1);
    int by = block_rows (row_bytes, 0, 0, dev);
    if (by == 0)
      return cudaErrorInvalidConfiguration;     /* kw <= 1023 always fits */
    size_t smem = by * row_bytes;
    auto rk = row_kernel<In>;
    if ((err = allow_smem (rk)) != cudaSuccess)
      return err;
    rk<<<dim3 (div_up (c.width, BX * RX), div_up (ph, by)), dim3 (BX, by),
        smem, c.stream>>> (c, param_taps (row, c.kw), tmp, tmp_pitch);
    if ((err = cudaGetLastError ()) != cudaSuccess)
      return err;
    return c.stats ? column_pass<true> (c, column, tmp, tmp_pitch, dev) :
        column_pass<false> (c, column, tmp, tmp_pitch, dev);
  }

  /* column pass: (by*CY + kh - 1) rows of BX elements */
  template <bool STATS>
  static cudaError_t column_pass (const GcvCudaConv & c, const float *column,
      const typename AccOf<In>::T * tmp, size_t tmp_pitch,
      const GcvCudaDevice * dev)
  {
    typedef typename AccOf<In>::T Acc;
    const size_t line = sizeof (Acc) * BX;
    const int by = block_rows (CY * line, c.kh - 1, line, dev);
    const ParamTaps col = param_taps (column, c.kh);
    cudaError_t err;
    if (by > 0) {
      const size_t smem = (by * CY + c.kh - 1) * line;
      auto ck = column_kernel<In, STATS>;
      if ((err = allow_smem (ck)) != cudaSuccess)
        return err;
      ck<<<dim3 (div_up (c.width, BX), div_up (c.height, by * CY)),
          dim3 (BX, by), smem, c.stream>>> (c, col, tmp, tmp_pitch);
    } else {
      column_walk_kernel<In, STATS> <<<dim3 (div_up (c.width, BX),
              div_up (c.height, 8 * CY)), dim3 (BX, 8), 0, c.stream>>> (c,
          col, tmp, tmp_pitch);
    }
    return cudaGetLastError ();
  }
};

/* --- fused per-size kernels -------------------------------------------- */

constexpr int FTX = GCV_QUAD;   /* outputs across per thread */

/* The tile between the passes: floats 4 at a time as one vector, colour
 * vectors one by one. */
__device__ __forceinline__ void
store_mid (float *m, const float (&v)[FTX])
{
  *(float4 *) m = make_float4 (v[0], v[1], v[2], v[3]);
}

template <typename V>
__device__ __forceinline__ void
store_mid (V * m, const V (&v)[FTX])
{
#pragma unroll
  for (int q = 0; q < FTX; q++)
    m[q] = v[q];
}

__device__ __forceinline__ void
load_mid (float (&v)[FTX], const float *m)
{
  const float4 a = *(const float4 *) m;
  v[0] = a.x;
  v[1] = a.y;
  v[2] = a.z;
  v[3] = a.w;
}

template <typename V>
__device__ __forceinline__ void
load_mid (V (&v)[FTX], const V * m)
{
#pragma unroll
  for (int q = 0; q < FTX; q++)
    v[q] = m[q];
}

/* A thread's 4 row-pass outputs from a window of a staged input row. */
template <typename In, int K>
__device__ __forceinline__ void
row_quad (typename AccOf<In>::T (&acc)[FTX], const In * src,
    const ParamTaps & row)
{
  constexpr int NV = (FTX + K - 1 + 3) / 4;
  typename AccOf<In>::T win[NV * 4];
  load_window<In, NV> (win, src);
#pragma unroll
  for (int q = 0; q < FTX; q++)
    zero (acc[q]);
#pragma unroll
  for (int i = 0; i < K; i++)
#pragma unroll
    for (int q = 0; q < FTX; q++)
      fma_acc (acc[q], row[i], win[q + i]);
}

/* A thread's FTY x 4 column-pass outputs from the intermediate rows m,
 * m + TW, ..., each read once. */
template <typename Acc, int K, int TW>
__device__ __forceinline__ void
column_quads (Acc (&acc)[FTY][FTX], const Acc * m, const ParamTaps & col)
{
#pragma unroll
  for (int t = 0; t < FTY; t++)
#pragma unroll
    for (int q = 0; q < FTX; q++)
      zero (acc[t][q]);
#pragma unroll
  for (int r = 0; r < FTY + K - 1; r++) {
    Acc v[FTX];
    load_mid (v, m + r * TW);
#pragma unroll
    for (int t = 0; t < FTY; t++) {
      const int j = r - t;
      if (j >= 0 && j < K)
#pragma unroll
        for (int q = 0; q < FTX; q++)
          fma_acc (acc[t][q], col[j], v[q]);
    }
  }
}

/* One tile per block (the RGBA family): the input tile with its halo, the
 * row pass of all its rows into a float tile, the column pass from that. */
template <typename In, int K> struct TileShape {
  typedef typename AccOf<In>::T Acc;
  static constexpr int TW = BX * FTX, TH = 8 * FTY;
  static constexpr int SP = (TW + K - 1 + 3) / 4 * 4, SH = TH + K - 1;
  /* the float tile after it starts on a 16-byte boundary */
  static constexpr size_t in_bytes = (sizeof (In) * SH * SP + 15) / 16 * 16;
  static constexpr size_t bytes = in_bytes + sizeof (Acc) * SH * TW;
};

template <typename In, int K, bool STATS>
__global__ void __launch_bounds__ (256)
tile_kernel (GcvCudaConv p, ParamTaps row, ParamTaps col)
{
  typedef TileShape<In, K> S;
  typedef typename S::Acc Acc;
  constexpr int TW = S::TW, TH = S::TH, SP = S::SP, SH = S::SH;
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  In *tile = (In *) smem_raw;
  Acc *mid = (Acc *) (smem_raw + S::in_bytes);
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  const int pw = p.width + K - 1, ph = p.height + K - 1;
  const int tid = threadIdx.y * BX + threadIdx.x, xs = threadIdx.x * FTX;

  load_tile_quads (tile, SP, SH, p, x0, y0, pw, ph, tid, 256);
  __syncthreads ();
  for (int r = threadIdx.y; r < SH; r += 8) {
    Acc acc[FTX];
    row_quad<In, K> (acc, tile + r * SP + xs, row);
    store_mid (mid + r * TW + xs, acc);
  }
  __syncthreads ();
  const int ys = threadIdx.y * FTY;
  Acc acc[FTY][FTX];
  column_quads<Acc, K, TW> (acc, mid + ys * TW + xs, col);
  typename StatsFor<Acc, STATS>::T st;
  store_tile_outputs<In, FTY> (p, tile, SP, x0, y0, xs, ys, acc, st);
  st.flush (p);
}

template <typename In, int K, bool STATS>
cudaError_t
tile_go (const GcvCudaConv & c, const float *row, const float *column)
{
  typedef TileShape<In, K> S;
  auto kernel = tile_kernel<In, K, STATS>;
  cudaError_t err = allow_smem (kernel);
  if (err != cudaSuccess)
    return err;
  kernel<<<dim3 (div_up (c.width, S::TW), div_up (c.height, S::TH)),
      dim3 (BX, 8), S::bytes, c.stream>>> (c, param_taps (row, K),
      param_taps (column, K));
  return cudaGetLastError ();
}

/* Streamed (one channel): a block walks down a strip TW columns wide, CH =
 * 8 * FTY rows a step. The next step's input rows are copied into a staging
 * tile with cp.async while the column pass runs; the row pass of the staged
 * rows goes into a ring of intermediate rows, and the column pass makes the
 * CH output rows whose inputs the ring then holds. Each intermediate row is
 * made once per strip (a tile remakes K - 1 of them per tile), and the
 * loads of the next rows overlap the column pass. The first K - 1 ring rows
 * are also stored past its end, so that a thread's FTY + K - 1 rows never
 * wrap. */
template <typename In, int K> struct StreamShape {
  typedef typename AccOf<In>::T Acc;
  static constexpr int TW = BX * FTX, CH = 8 * FTY;
  static constexpr int SP = (TW + K - 1 + 3) / 4 * 4;
  static constexpr int D = (K - 1 + CH - 1) / CH;       /* steps of halo */
  static constexpr int M = CH * (D + 1);                /* ring rows */
  /* the staging tile, then the ring */
  static constexpr size_t in_bytes = (sizeof (In) * CH * SP + 15) / 16 * 16;
  static constexpr size_t bytes = in_bytes + sizeof (Acc) * (M + K - 1) * TW;
};

/* Starts copying the CH padded rows from y into the staging tile; beyond
 * the frame it gets 0. Thread (x, y) copies vectors x, x + 32, ... of rows
 * y, y + 8, ...: the address steps are constants, so a copy costs a few
 * instructions, not an index division. */
template <typename In, int K>
__device__ __forceinline__ void
stream_fetch (In * tile, const GcvCudaConv & p, int x0, int y)
{
  typedef StreamShape<In, K> S;
  typedef typename Quad<In>::T Vec;
  constexpr int SP = S::SP, VR = (SP / 4 + BX - 1) / BX;
  const int pw = p.width + K - 1, ph = p.height + K - 1;
  const char *src = (const char *) p.src
      + (size_t) (y + threadIdx.y) * p.src_pitch;
  In *dst = tile + threadIdx.y * SP;
#pragma unroll
  for (int k = 0; k < FTY; k++) {
    const bool row_inside = y + threadIdx.y + 8 * k < ph;
#pragma unroll
    for (int i = 0; i < VR; i++) {
      const int c = 4 * (threadIdx.x + BX * i);
      if (SP % (4 * BX) != 0 && c >= SP)
        break;
      const bool inside = row_inside && x0 + c < pw;
      const In *from = inside ? (const In *) src + x0 + c : (const In *) p.src;
      __pipeline_memcpy_async (dst + c, from, sizeof (Vec),
          inside ? 0 : sizeof (Vec));
    }
    src += 8 * p.src_pitch;
    dst += 8 * SP;
  }
  __pipeline_commit ();
}

template <typename In, int K, bool STATS>
__global__ void __launch_bounds__ (256)
stream_kernel (GcvCudaConv p, ParamTaps row, ParamTaps col, int strip)
{
  typedef StreamShape<In, K> S;
  typedef typename S::Acc Acc;
  constexpr int TW = S::TW, SP = S::SP, CH = S::CH, D = S::D, M = S::M;
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  In *tile = (In *) smem_raw;
  Acc *ring = (Acc *) (smem_raw + S::in_bytes);
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * strip;
  const int xs = threadIdx.x * FTX, ys = threadIdx.y * FTY;
  const int outputs = min (strip, p.height - y0);
  const int steps = D + (outputs + CH - 1) / CH;
  /* the ring slots of this step's input rows and of its first output row */
  int in_slot = 0, out_slot = 0;

  stream_fetch<In, K> (tile, p, x0, y0);
  for (int n = 0; n < steps; n++) {
    __pipeline_wait_prior (0);
    __syncthreads ();
#pragma unroll
    for (int k = 0; k < FTY; k++) {
      const int r = threadIdx.y + 8 * k, s = in_slot + r;
      Acc acc[FTX];
      row_quad<In, K> (acc, tile + r * SP + xs, row);
      store_mid (ring + s * TW + xs, acc);
      if (s < K - 1)
        store_mid (ring + (s + M) * TW + xs, acc);
    }
    in_slot = in_slot + CH == M ? 0 : in_slot + CH;
    __syncthreads ();
    if (n + 1 < steps)
      stream_fetch<In, K> (tile, p, x0, y0 + (n + 1) * CH);
    if (n < D)
      continue;
    Acc acc[FTY][FTX];
    column_quads<Acc, K, TW> (acc, ring + (out_slot + ys) * TW + xs, col);
    out_slot = out_slot + CH == M ? 0 : out_slot + CH;
    const int x = x0 + xs, o = (n - D) * CH + ys;
    if (x >= p.width)
      continue;
    const In centre[FTX] = { };         /* one channel: no alpha to copy */
    /* each step's statistics flushed at its end: a strip may be long, and
     * nothing is held across the steps */
    typename StatsFor<Acc, STATS>::T st;
#pragma unroll
    for (int t = 0; t < FTY; t++)
      if (o + t < outputs)
        store_quad<In> (p, x, y0 + o + t, acc[t], centre, st);
    st.flush (p);
  }
}

template <typename In, int K, bool STATS>
cudaError_t
stream_go (const GcvCudaConv & c, const float *row, const float *column,
    const GcvCudaDevice * dev)
{
  typedef StreamShape<In, K> S;
  auto kernel = stream_kernel<In, K, STATS>;
  cudaError_t err = allow_smem (kernel);
  if (err != cudaSuccess)
    return err;
  /* strips just tall enough for one wave of blocks: taller ones would leave
   * SMs idle, shorter ones only add halo rows. Blocks an SM are counted by
   * shared memory, which bounds them before registers do (Nsight Compute,
   * performance.md). */
  const unsigned across = div_up (c.width, S::TW);
  unsigned per_sm = (unsigned) (dev->smem_per_sm / (S::bytes + 1024));
  per_sm = per_sm < 1 ? 1 : per_sm > 8 ? 8 : per_sm;
  unsigned down = dev->sm_count * per_sm / across;
  down = down < 1 ? 1 : down;
  const int strip = div_up (div_up (c.height, down), S::CH) * S::CH;
  kernel<<<dim3 (across, div_up (c.height, strip)), dim3 (BX, 8), S::bytes,
      c.stream>>> (c, param_taps (row, K), param_taps (column, K), strip);
  return cudaGetLastError ();
}

/* One channel streams; the RGBA family keeps a tile per block, because its
 * intermediate rows (float3, float4) are three and four times as wide:
 * streamed, they measured up to 1.2x slower from 3x3 to 21x21 and at most
 * 15% faster above (performance.md). */
template <typename In>
struct Fused {
  static constexpr bool streamed =
      sizeof (typename AccOf<In>::T) == sizeof (float);
  template <int K> static constexpr size_t shape_bytes ()
  {
    if constexpr (streamed)
      return StreamShape<In, K>::bytes;
    else
      return TileShape<In, K>::bytes;
  }
  static size_t bytes (int k)
  {
    switch (k) {
#define FUSED_SIZE(K) case K: return shape_bytes<K> ();
        GCV_SEPARABLE_SIZES (FUSED_SIZE)
#undef FUSED_SIZE
      default:
        return 0;
    }
  }
  template <int K, bool STATS> static cudaError_t go (const GcvCudaConv & c,
      const float *row, const float *column, const GcvCudaDevice * dev)
  {
    if constexpr (streamed)
      return stream_go<In, K, STATS> (c, row, column, dev);
    else
      return tile_go<In, K, STATS> (c, row, column);
  }
  static cudaError_t launch (const GcvCudaConv & c, const float *row,
      const float *column, const GcvCudaDevice * dev)
  {
    switch (c.kw) {
#define FUSED_SIZE(K) case K: return c.stats ?                              \
          go<K, true> (c, row, column, dev) : go<K, false> (c, row, column,  \
          dev);
        GCV_SEPARABLE_SIZES (FUSED_SIZE)
#undef FUSED_SIZE
      default:
        return cudaErrorInvalidValue;
    }
  }
};

}  /* namespace */

/* The family's launchers for one pixel type (separable.cuh); a
 * separable-*.cu file instantiates them with the macros below. */
template <typename In>
cudaError_t
gcv::separable::two_pass (const GcvCudaConv & c, const float *row,
    const float *column, void *tmp, size_t tmp_pitch,
    const GcvCudaDevice * dev)
{
  return Separable<In>::launch (c, row, column, tmp, tmp_pitch, dev);
}

template <typename In>
size_t
gcv::separable::fused_bytes (int k)
{
  return Fused<In>::bytes (k);
}

template <typename In>
cudaError_t
gcv::separable::fused (const GcvCudaConv & c, const float *row,
    const float *column, const GcvCudaDevice * dev)
{
  return Fused<In>::launch (c, row, column, dev);
}

#define GCV_SEPARABLE_TWO_PASS_INSTANCE(In)                                  \
  template cudaError_t gcv::separable::two_pass<In> (const GcvCudaConv &,    \
      const float *, const float *, void *, size_t, const GcvCudaDevice *)
#define GCV_SEPARABLE_FUSED_INSTANCES(In)                                    \
  template size_t gcv::separable::fused_bytes<In> (int);                     \
  template cudaError_t gcv::separable::fused<In> (const GcvCudaConv &,       \
      const float *, const float *, const GcvCudaDevice *)
