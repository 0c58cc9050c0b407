/* Family `separable`.
 *
 * Fused (per-size kernels, square odd sizes): one block loads its input tile
 * with halo once, runs the row pass from it into a float tile in shared
 * memory, and the column pass from that to the output: one global read and
 * one write per sample. Each thread slides register windows of 4 outputs
 * across (row pass) and TY down (column pass); taps are constant-bank
 * operands.
 *
 * Two-pass (any size, and tiles too big for shared memory): a row pass into
 * a float intermediate (every input row the column pass needs), then a
 * column pass to the output, both through shared-memory tiles (van Werkhoven
 * et al. 2014, section 5). The row pass gives each thread RX outputs across,
 * the column pass CY outputs down (vertical tiling). Block heights shrink
 * until the tiles fit; a column pass too tall for shared memory walks its
 * column in registers instead. */
#include "gcv-cuda-common.cuh"

using namespace gcv;

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

template <typename In>
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
#pragma unroll
  for (int t = 0; t < CY; t++) {
    int y = y0 + threadIdx.y * CY + t;
    if (y < p.height)
      store<In> (p, x, y, acc[t], centre_of<In> (p, x, y));
  }
}

/* Tall kernels: each thread walks CY outputs down its column, every input
 * row loaded once into a register and added to the outputs it touches. */
template <typename In>
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
#pragma unroll
  for (int t = 0; t < CY; t++) {
    int y = y0 + t;
    if (y < p.height)
      store<In> (p, x, y, acc[t], centre_of<In> (p, x, y));
  }
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

    /* column pass: (by*CY + kh - 1) rows of BX elements */
    size_t line = sizeof (Acc) * BX;
    by = block_rows (CY * line, c.kh - 1, line, dev);
    ParamTaps col = param_taps (column, c.kh);
    if (by > 0) {
      smem = (by * CY + c.kh - 1) * line;
      auto ck = column_kernel<In>;
      if ((err = allow_smem (ck)) != cudaSuccess)
        return err;
      ck<<<dim3 (div_up (c.width, BX), div_up (c.height, by * CY)),
          dim3 (BX, by), smem, c.stream>>> (c, col, tmp, tmp_pitch);
    } else {
      column_walk_kernel<In> <<<dim3 (div_up (c.width, BX),
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

template <typename In, int K, int TY> struct FusedShape {
  typedef typename AccOf<In>::T Acc;
  static constexpr int TW = BX * FTX, TH = 8 * TY;
  static constexpr int SP = (TW + K - 1 + 3) / 4 * 4, SH = TH + K - 1;
  /* the float tile after it starts on a 16-byte boundary */
  static constexpr size_t in_bytes = (sizeof (In) * SH * SP + 15) / 16 * 16;
  static constexpr size_t bytes = in_bytes + sizeof (Acc) * SH * TW;
};

template <typename In, int K, int TY>
__global__ void __launch_bounds__ (256)
fused_kernel (GcvCudaConv p, ParamTaps row, ParamTaps col)
{
  typedef FusedShape<In, K, TY> S;
  typedef typename S::Acc Acc;
  constexpr int TW = S::TW, TH = S::TH, SP = S::SP, SH = S::SH;
  constexpr int NV = (FTX + K - 1 + 3) / 4;
  extern __shared__ __align__ (16) unsigned char smem_raw[];
  In *tile = (In *) smem_raw;
  Acc *mid = (Acc *) (smem_raw + S::in_bytes);
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  const int pw = p.width + K - 1, ph = p.height + K - 1;
  const int tid = threadIdx.y * BX + threadIdx.x, xs = threadIdx.x * FTX;

  load_tile_quads (tile, SP, SH, p, x0, y0, pw, ph, tid, 256);
  __syncthreads ();

  /* row pass: every tile row, 4 outputs per thread */
  for (int r = threadIdx.y; r < SH; r += 8) {
    Acc win[NV * 4], acc[FTX];
    load_window<In, NV> (win, tile + r * SP + xs);
#pragma unroll
    for (int q = 0; q < FTX; q++)
      zero (acc[q]);
#pragma unroll
    for (int i = 0; i < K; i++)
#pragma unroll
      for (int q = 0; q < FTX; q++)
        fma_acc (acc[q], row[i], win[q + i]);
    store_mid (mid + r * TW + xs, acc);
  }
  __syncthreads ();

  /* column pass: TY outputs down, each intermediate row read once */
  const int ys = threadIdx.y * TY;
  Acc acc[TY][FTX];
#pragma unroll
  for (int t = 0; t < TY; t++)
#pragma unroll
    for (int q = 0; q < FTX; q++)
      zero (acc[t][q]);
#pragma unroll
  for (int r = 0; r < TY + K - 1; r++) {
    Acc v[FTX];
    load_mid (v, mid + (ys + r) * TW + xs);
#pragma unroll
    for (int t = 0; t < TY; t++) {
      const int j = r - t;
      if (j >= 0 && j < K)
#pragma unroll
        for (int q = 0; q < FTX; q++)
          fma_acc (acc[t][q], col[j], v[q]);
    }
  }
  store_tile_outputs<In, TY> (p, tile, SP, x0, y0, xs, ys, acc);
}

template <typename In, int K, int TY>
cudaError_t
fused_go (const GcvCudaConv & c, const float *row, const float *column)
{
  typedef FusedShape<In, K, TY> S;
  auto kernel = fused_kernel<In, K, TY>;
  cudaError_t err = allow_smem (kernel);
  if (err != cudaSuccess)
    return err;
  kernel<<<dim3 (div_up (c.width, S::TW), div_up (c.height, S::TH)),
      dim3 (BX, 8), S::bytes, c.stream>>> (c, param_taps (row, K),
      param_taps (column, K));
  return cudaGetLastError ();
}

/* Shared memory of the fused kernel, 0 where it has no instance. */
template <typename In, int TY>
size_t
fused_bytes (int k)
{
  switch (k) {
#define FUSED_SIZE(K) case K: return FusedShape<In, K, TY>::bytes;
      GCV_SEPARABLE_SIZES (FUSED_SIZE)
#undef FUSED_SIZE
    default:
      return 0;
  }
}

template <typename In, int TY>
cudaError_t
fused_pick (const GcvCudaConv & c, const float *row, const float *column)
{
  switch (c.kw) {
#define FUSED_SIZE(K) case K: return fused_go<In, K, TY> (c, row, column);
      GCV_SEPARABLE_SIZES (FUSED_SIZE)
#undef FUSED_SIZE
    default:
      return cudaErrorInvalidValue;
  }
}

/* RGBA's float4 (and float3) accumulators spill at 8 rows a thread: 4
 * rows only. */
template <typename In>
struct Fused {
  static constexpr bool tall = sizeof (typename AccOf<In>::T) == sizeof (float);
  static size_t bytes (int k, int ty)
  {
    if constexpr (tall) {
      if (ty == 8)
        return fused_bytes<In, 8> (k);
    }
    return ty == 8 ? 0 : fused_bytes<In, 4> (k);
  }
  static cudaError_t launch (const GcvCudaConv & c, const float *row,
      const float *column, int ty)
  {
    if constexpr (tall) {
      if (ty == 8)
        return fused_pick<In, 8> (c, row, column);
    }
    return fused_pick<In, 4> (c, row, column);
  }
};

}  /* namespace */

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
  return GCV_DISPATCH_PIXEL (Separable, *c, *c, row, column, tmp, tmp_pitch,
      dev);
}

/* The fused kernel's shared memory for this size and ty (4 or 8), or 0 when
 * there is no such instance or it does not fit the device. */
extern "C" size_t
gcv_cuda_separable_fused_bytes (const GcvCudaConv * c, int ty,
    const GcvCudaDevice * dev)
{
  size_t bytes = 0;
  if (c->kw != c->kh)
    return 0;
  switch (c->in) {
    case GCV_PIX_U8:
      bytes = Fused<unsigned char>::bytes (c->kw, ty);
      break;
    case GCV_PIX_F32:
      bytes = Fused<float>::bytes (c->kw, ty);
      break;
    case GCV_PIX_U8X4:
      bytes = c->out == GCV_OUT_U8X4 ? Fused<uchar4>::bytes (c->kw, ty)
          : Fused<rgbx8>::bytes (c->kw, ty);
      break;
    default:
      return 0;
  }
  return bytes <= dev->smem_per_block_optin ? bytes : 0;
}

extern "C" cudaError_t
gcv_cuda_separable_fused (const GcvCudaConv * c, const float *row,
    const float *column, int ty)
{
  switch (c->in) {
    case GCV_PIX_U8:
      return Fused<unsigned char>::launch (*c, row, column, ty);
    case GCV_PIX_F32:
      return Fused<float>::launch (*c, row, column, ty);
    case GCV_PIX_U8X4:
      if (c->out == GCV_OUT_U8X4)
        return Fused<uchar4>::launch (*c, row, column, ty);
      return Fused<rgbx8>::launch (*c, row, column, ty);
    default:
      return cudaErrorInvalidValue;
  }
}
