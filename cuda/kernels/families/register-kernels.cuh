/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `register`, its kernels (register-gray.cu and register-rgba.cu
 * instantiate them per pixel type; register.cu holds the entry points):
 * register cache plus warp shuffle (Chen, Wahib et al.,
 * Algorithm 1). Each lane of a warp caches C = P + kh - 1 input rows of one
 * column in registers. For each filter column it takes a vertical dot product
 * with its cache, receives its left neighbour's running sum through
 * __shfl_up_sync and adds its own; after kw columns lanes kw-1..31 hold
 * outputs, so a warp makes (33 - kw) x P outputs per step. The filter sits in
 * shared memory and is read as a broadcast.
 *
 * Per-size instances fix kw and kh at compile time; the generic instances fix
 * only an upper bound on kh, so the cache is still indexed by constants. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/families/register.cuh"

using namespace gcv;

namespace {

__device__ __forceinline__ float
shift_up (float v)
{
  return __shfl_up_sync (0xffffffffu, v, 1);
}

__device__ __forceinline__ float3
shift_up (float3 v)
{
  return make_float3 (shift_up (v.x), shift_up (v.y), shift_up (v.z));
}

__device__ __forceinline__ float4
shift_up (float4 v)
{
  return make_float4 (shift_up (v.x), shift_up (v.y), shift_up (v.z),
      shift_up (v.w));
}

/* KW, KH: the size, or 0 when it comes at run time (kh <= KH_MAX). */
template <typename In, int P, int KH_MAX, int KW, int KH, bool STATS>
__global__ void __launch_bounds__ (256)
register_kernel (GcvCudaConv p, ParamTaps taps)
{
  typedef typename AccOf<In>::T Acc;
  constexpr int C = P + KH_MAX - 1;
  extern __shared__ float w[];
  const int kw = KW ? KW : p.kw, kh = KH ? KH : p.kh;
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int out_w = 33 - kw;
  const int tiles_x = (p.width + out_w - 1) / out_w;
  const int pw = p.width + kw - 1, ph = p.height + kh - 1;

  for (int k = threadIdx.x; k < kw * kh; k += blockDim.x)
    w[k] = taps[k];
  __syncthreads ();

  const int wx = warp % tiles_x, y0 = (warp / tiles_x) * P;
  if (y0 >= p.height)
    return;                     /* the whole warp */
  const int x = wx * out_w + lane;      /* padded column this lane caches */

  Acc data[C];
#pragma unroll
  for (int r = 0; r < C; r++) {
    zero (data[r]);
    if (r < P + kh - 1 && x < pw && y0 + r < ph)
      data[r] = to_acc (ldg (row_ptr<In> (p.src, p.src_pitch, y0 + r) + x));
  }

  const int xo = x - (kw - 1);
  typename StatsFor<Acc, STATS>::T st;
#pragma unroll
  for (int r = 0; r < P; r++) {
    Acc sum;
    zero (sum);
    for (int i = 0; i < kw; i++) {
      sum = shift_up (sum);
#pragma unroll
      for (int j = 0; j < KH_MAX; j++)
        if (j < kh)
          fma_acc (sum, w[j * kw + i], data[r + j]);
    }
    if (lane >= kw - 1 && xo < p.width && y0 + r < p.height)
      store<In> (p, xo, y0 + r, sum, centre_of<In> (p, xo, y0 + r), st);
  }
  st.flush (p);
}

template <typename In, int P, int KH_MAX, int KW, int KH>
cudaError_t
go (const GcvCudaConv & c, int block)
{
  long warps = (long) div_up (c.width, 33 - c.kw) * div_up (c.height, P);
  size_t smem = sizeof (float) * c.kw * c.kh;
  const unsigned grid = div_up ((unsigned) (warps * 32), block);
  if (c.stats)
    register_kernel<In, P, KH_MAX, KW, KH, true>
        <<<grid, block, smem, c.stream>>> (c, param_taps (c.host_taps,
            c.kw * c.kh));
  else
    register_kernel<In, P, KH_MAX, KW, KH, false>
        <<<grid, block, smem, c.stream>>> (c, param_taps (c.host_taps,
            c.kw * c.kh));
  return cudaGetLastError ();
}

/* The compiled instances: square odd sizes 3..17 and generic bounds. */
#define SQUARE_CASES(In, P)                                             \
  case 3: return go<In, P, 3, 3, 3> (c, block);                         \
  case 5: return go<In, P, 5, 5, 5> (c, block);                         \
  case 7: return go<In, P, 7, 7, 7> (c, block);                         \
  case 9: return go<In, P, 9, 9, 9> (c, block);                         \
  case 11: return go<In, P, 11, 11, 11> (c, block);                     \
  case 13: return go<In, P, 13, 13, 13> (c, block);                     \
  case 15: return go<In, P, 15, 15, 15> (c, block);                     \
  case 17: return go<In, P, 17, 17, 17> (c, block)

template <typename In>
struct Register {
  static cudaError_t launch (const GcvCudaConv & c, int p_rows, int block)
  {
    if (c.kw == c.kh) {
      if (p_rows == 4) {
        switch (c.kw) {
          SQUARE_CASES (In, 4);
          default: break;
        }
      } else {
        switch (c.kw) {
          SQUARE_CASES (In, 8);
          default: break;
        }
      }
    }
    if (c.kh <= 8)
      return go<In, 8, 8, 0, 0> (c, block);
    return go<In, 8, GCV_REGISTER_MAX_KH, 0, 0> (c, block);
  }
};

}  /* namespace */

/* The family's launcher for one pixel type (register.cuh). */
template <typename In>
cudaError_t
gcv::register_family::launch (const GcvCudaConv & c, int p_rows, int block)
{
  return Register<In>::launch (c, p_rows, block);
}

#define GCV_REGISTER_INSTANCE(In)                                            \
  template cudaError_t gcv::register_family::launch<In> (                    \
      const GcvCudaConv &, int, int)
