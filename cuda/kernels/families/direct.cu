/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `direct`: one thread per output pixel, input and taps read from
 * global memory. The plain baseline the other families are checked against;
 * it runs gradient magnitudes of any size too. */
#include "kernels/gcv-kernels-common.cuh"

using namespace gcv;

namespace {

/* One output; with `taps_y` (not NoTaps) a gradient magnitude. */
template <typename In, bool STATS, typename Taps, typename TapsY>
__device__ __forceinline__ void
direct_body (const GcvCudaConv & p, const Taps & taps, const TapsY & taps_y)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;

  typename StatsFor<typename AccOf<In>::T, STATS>::T st;

  if (x >= p.width || y >= p.height)
    return;
  if constexpr (std::is_same<TapsY, NoTaps>::value)
    store<In> (p, x, y, footprint_sum<In> (p, x, y, taps),
        centre_of<In> (p, x, y), st);
  else
    store<In> (p, x, y, footprint_magnitude<In> (p, x, y, taps, taps_y),
        centre_of<In> (p, x, y), st);
  st.flush (p);
}

template <typename In, typename Taps, bool STATS>
__global__ void
direct_kernel (GcvCudaConv p, Taps taps)
{
  direct_body<In, STATS> (p, taps, NoTaps ());
}

template <typename In, typename Taps, bool STATS>
__global__ void
direct_magnitude_kernel (GcvCudaConv p, Taps taps, Taps taps_y)
{
  direct_body<In, STATS> (p, taps, taps_y);
}

template <typename In>
struct Direct {
  template <bool STATS>
  static void go (const GcvCudaConv & c)
  {
    dim3 block (32, 8), grid (div_up (c.width, 32), div_up (c.height, 8));
    const int n = c.kw * c.kh;
    if (is_magnitude (c) && n <= GCV_CUDA_PARAM_TAPS)
      direct_magnitude_kernel<In, ParamTaps, STATS>
          <<<grid, block, 0, c.stream>>> (c, param_taps (c.host_taps, n),
          param_taps (host_taps_y (c), n));
    else if (is_magnitude (c))
      direct_magnitude_kernel<In, GlobalTaps, STATS>
          <<<grid, block, 0, c.stream>>> (c, global_taps (c.taps),
          global_taps (taps_y (c)));
    else if (n <= GCV_CUDA_PARAM_TAPS)
      direct_kernel<In, ParamTaps, STATS> <<<grid, block, 0, c.stream>>> (c,
          param_taps (c.host_taps, n));
    else
      direct_kernel<In, GlobalTaps, STATS> <<<grid, block, 0, c.stream>>> (c,
          global_taps (c.taps));
  }

  static cudaError_t launch (const GcvCudaConv & c)
  {
    if (c.stats)
      go<true> (c);
    else
      go<false> (c);
    return cudaGetLastError ();
  }
};

}  /* namespace */

extern "C" cudaError_t
gcv_cuda_direct (const GcvCudaConv * c)
{
  return GCV_DISPATCH_PIXEL (Direct, *c, *c);
}
