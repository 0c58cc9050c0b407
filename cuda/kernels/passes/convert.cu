/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Samples the kernel families have no element for, into and out of the
 * elements they have: 16-bit words (GRAY16_LE, P010's planes) to floats
 * in the padded frame and floats back to words, rounded and saturated as
 * the CPU engine does; RGB and BGR's three bytes to four (the fourth
 * byte 0, never written back) and back. So the families run these formats
 * with the float and RGBx kernels they have. Samples are read and written
 * a byte at a time: a device frame may start and step at any byte. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/gcv-convert.h"

using namespace gcv;

namespace {

__device__ __forceinline__ unsigned
load_u16 (const unsigned char *p)
{
  return (unsigned) __ldg (p) | (unsigned) __ldg (p + 1) << 8;
}

/* word >> shift, as a float (exact: at most 65535) */
__global__ void
widen_u16_kernel (const unsigned char *src, size_t src_pitch, int src_step,
    int shift, float *dst, size_t dst_pitch, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    row_ptr<float> (dst, dst_pitch, y)[x] =
        (float) (load_u16 (src + y * src_pitch + (size_t) x * src_step)
        >> shift);
}

/* three bytes to an RGBx pixel (To: uchar4) or its floats (float4) */
__device__ __forceinline__ void
put3 (uchar4 * p, unsigned char a, unsigned char b, unsigned char c)
{
  *p = make_uchar4 (a, b, c, 0);
}

__device__ __forceinline__ void
put3 (float4 * p, unsigned char a, unsigned char b, unsigned char c)
{
  *p = make_float4 (a, b, c, 0.0f);
}

template <typename To>
__global__ void
widen_u8x3_kernel (const unsigned char *src, size_t src_pitch, To * dst,
    size_t dst_pitch, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    const unsigned char *s = src + y * src_pitch + (size_t) x * 3;
    put3 (row_ptr<To> (dst, dst_pitch, y) + x, __ldg (s), __ldg (s + 1),
        __ldg (s + 2));
  }
}

/* Rounded to nearest (ties to even), saturated to 0..max (NaN: 0, as
 * fmaxf gives its other operand), shifted left: the CPU engine's
 * narrow_u16(). */
__global__ void
narrow_u16_kernel (const float *src, size_t src_pitch, unsigned char *dst,
    size_t dst_pitch, int dst_step, int shift, float max, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float v = row_ptr<float> (src, src_pitch, y)[x];
    unsigned word = (unsigned) __float2int_rn (fminf (fmaxf (v, 0.0f), max))
        << shift;
    unsigned char *d = dst + y * dst_pitch + (size_t) x * dst_step;
    d[0] = (unsigned char) word;
    d[1] = (unsigned char) (word >> 8);
  }
}

__global__ void
narrow_u8x3_kernel (const uchar4 * src, size_t src_pitch, unsigned char *dst,
    size_t dst_pitch, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    uchar4 v = row_ptr<uchar4> (src, src_pitch, y)[x];
    unsigned char *d = dst + y * dst_pitch + (size_t) x * 3;
    d[0] = v.x;
    d[1] = v.y;
    d[2] = v.z;
  }
}

}  /* namespace */

extern "C" cudaError_t
gcv_cuda_widen (GcvSample sample, const void *src, size_t src_pitch,
    int src_step, int shift, GcvPixel to, void *dst, size_t dst_pitch,
    int width, int height, cudaStream_t stream)
{
  dim3 block (32, 8), grid (div_up (width, 32), div_up (height, 8));
  const unsigned char *s = (const unsigned char *) src;

  if (sample == GCV_SAMPLE_U16)
    widen_u16_kernel <<<grid, block, 0, stream>>> (s, src_pitch,
        src_step, shift, (float *) dst, dst_pitch, width, height);
  else if (to == GCV_PIX_U8X4)
    widen_u8x3_kernel<uchar4> <<<grid, block, 0, stream>>> (s, src_pitch,
        (uchar4 *) dst, dst_pitch, width, height);
  else
    widen_u8x3_kernel<float4> <<<grid, block, 0, stream>>> (s, src_pitch,
        (float4 *) dst, dst_pitch, width, height);
  return cudaGetLastError ();
}

extern "C" cudaError_t
gcv_cuda_narrow (GcvSample sample, const void *src, size_t src_pitch,
    void *dst, size_t dst_pitch, int dst_step, int shift, float max,
    int width, int height, cudaStream_t stream)
{
  dim3 block (32, 8), grid (div_up (width, 32), div_up (height, 8));
  unsigned char *d = (unsigned char *) dst;

  if (sample == GCV_SAMPLE_U16)
    narrow_u16_kernel <<<grid, block, 0, stream>>> ((const float *) src,
        src_pitch, d, dst_pitch, dst_step, shift, max, width, height);
  else
    narrow_u8x3_kernel <<<grid, block, 0, stream>>> ((const uchar4 *) src,
        src_pitch, d, dst_pitch, width, height);
  return cudaGetLastError ();
}
