/* Family `direct`: one thread per output pixel, input and taps read from
 * global memory. The plain baseline the other families are checked against. */
#include "gcv-cuda-common.cuh"

using namespace gcv;

namespace {

template <typename In, typename Taps>
__global__ void
direct_kernel (GcvCudaConv p, Taps taps)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;

  if (x >= p.width || y >= p.height)
    return;
  store<In> (p, x, y, footprint_sum<In> (p, x, y, taps),
      centre_of<In> (p, x, y));
}

template <typename In>
struct Direct {
  static cudaError_t launch (const GcvCudaConv & c)
  {
    dim3 block (32, 8), grid (div_up (c.width, 32), div_up (c.height, 8));
    if (c.kw * c.kh <= GCV_CUDA_PARAM_TAPS)
      direct_kernel<In> <<<grid, block, 0, c.stream>>> (c,
          param_taps (c.host_taps, c.kw * c.kh));
    else
      direct_kernel<In> <<<grid, block, 0, c.stream>>> (c,
          global_taps (c.taps));
    return cudaGetLastError ();
  }
};

}  /* namespace */

extern "C" cudaError_t
gcv_cuda_direct (const GcvCudaConv * c)
{
  return GCV_DISPATCH_PIXEL (Direct, *c, *c);
}
