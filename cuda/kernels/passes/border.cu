/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The halo of a padded device frame, made on the device, the unpacking
 * of 8-bit frames to floats, the gathering and scattering of one channel
 * of interleaved bytes (NV12's U or V), and the copy of a list of
 * rectangles (privacy regions' copied area). Kernels after these never
 * bounds-check. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/gcv-kernels-copy.cuh"
#include "gcv-border.h"

using namespace gcv;

namespace {

template <typename T> __device__ __forceinline__ T splat (float v);
template <> __device__ __forceinline__ unsigned char splat (float v)
{
  return (unsigned char) v;     /* the backend only sends byte values here */
}
template <> __device__ __forceinline__ float splat (float v) { return v; }
template <> __device__ __forceinline__ uchar4 splat (float v)
{
  unsigned char b = (unsigned char) v;
  return make_uchar4 (b, b, b, b);
}
template <> __device__ __forceinline__ float4 splat (float v)
{
  return make_float4 (v, v, v, v);
}

/* One thread per halo pixel: the rows above and below the interior, then
 * the columns left and right of it. */
template <typename T>
__global__ void
fill_border_kernel (T * pad, size_t pitch, int w, int h, int kw, int kh,
    int ax, int ay, int border, float value)
{
  const int pw = w + kw - 1, below = kh - 1 - ay, sides = kw - 1;
  const long top_n = (long) pw * ay, bottom_n = (long) pw * below;
  long i = (long) blockIdx.x * blockDim.x + threadIdx.x;
  int px, py;

  if (i < top_n) {
    py = (int) (i / pw);
    px = (int) (i % pw);
  } else if ((i -= top_n) < bottom_n) {
    py = ay + h + (int) (i / pw);
    px = (int) (i % pw);
  } else if ((i -= bottom_n) < (long) sides * h) {
    int c = (int) (i % sides);
    py = ay + (int) (i / sides);
    px = c < ax ? c : w + c;
  } else {
    return;
  }

  int sx = gcv_border_index (px - ax, w, border);
  int sy = gcv_border_index (py - ay, h, border);
  T v = (sx < 0 || sy < 0) ? splat<T> (value)
      : row_ptr<T> (pad, pitch, sy + ay)[sx + ax];
  row_ptr<T> (pad, pitch, py)[px] = v;
}

template <typename T>
cudaError_t
fill_border (void *pad, size_t pitch, int w, int h, int kw, int kh, int ax,
    int ay, int border, float value, cudaStream_t stream)
{
  long n = (long) (w + kw - 1) * (kh - 1) + (long) (kw - 1) * h;
  if (n == 0)
    return cudaSuccess;
  fill_border_kernel<T> <<<div_up ((unsigned) n, 256), 256, 0, stream>>> (
      (T *) pad, pitch, w, h, kw, kh, ax, ay, border, value);
  return cudaGetLastError ();
}

template <typename From, typename To>
__global__ void
unpack_kernel (const From * raw, size_t raw_pitch, To * dst, size_t dst_pitch,
    int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    row_ptr<To> (dst, dst_pitch, y)[x] =
        to_acc (__ldg (row_ptr<From> (raw, raw_pitch, y) + x));
}

/* One thread per byte: at a frame's size and a few bytes each, these
 * passes are bound by memory, not by their indexing. */
__global__ void
copy_samples_kernel (unsigned char *dst, size_t dst_pitch, int dst_step,
    const unsigned char *src, size_t src_pitch, int src_step, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    dst[y * dst_pitch + (size_t) x * dst_step] =
        __ldg (src + y * src_pitch + (size_t) x * src_step);
}

/* The copy launch: its blocks are the rectangles' (gcv-kernels-copy.cuh) */
using CopyList = CopyRects<GCV_CUDA_COPY_RECTS>;
static_assert (sizeof (CopyList) <= 4096, "a launch's parameters");

__global__ void
copy_rects_kernel (const __grid_constant__ CopyList r)
{
  copy_rects_block (r, blockIdx.x, threadIdx.x, threadIdx.y);
}

}  /* namespace */

extern "C" size_t
gcv_cuda_pixel_size (GcvPixel pix)
{
  switch (pix) {
    case GCV_PIX_U8:
      return 1;
    case GCV_PIX_U8X4:
    case GCV_PIX_F32:
      return 4;
    default:
      return 16;
  }
}

extern "C" cudaError_t
gcv_cuda_fill_border (GcvPixel pix, void *pad, size_t pitch, int width,
    int height, int kw, int kh, int ax, int ay, int border, float value,
    cudaStream_t stream)
{
  switch (pix) {
    case GCV_PIX_U8:
      return fill_border<unsigned char> (pad, pitch, width, height, kw, kh,
          ax, ay, border, value, stream);
    case GCV_PIX_U8X4:
      return fill_border<uchar4> (pad, pitch, width, height, kw, kh, ax, ay,
          border, value, stream);
    case GCV_PIX_F32:
      return fill_border<float> (pad, pitch, width, height, kw, kh, ax, ay,
          border, value, stream);
    default:
      return fill_border<float4> (pad, pitch, width, height, kw, kh, ax, ay,
          border, value, stream);
  }
}

extern "C" cudaError_t
gcv_cuda_unpack (GcvPixel to, const void *raw, size_t raw_pitch, void *dst,
    size_t dst_pitch, int width, int height, cudaStream_t stream)
{
  dim3 block (32, 8), grid (div_up (width, 32), div_up (height, 8));
  if (to == GCV_PIX_F32)
    unpack_kernel<unsigned char, float> <<<grid, block, 0, stream>>> (
        (const unsigned char *) raw, raw_pitch, (float *) dst, dst_pitch,
        width, height);
  else
    unpack_kernel<uchar4, float4> <<<grid, block, 0, stream>>> (
        (const uchar4 *) raw, raw_pitch, (float4 *) dst, dst_pitch, width,
        height);
  return cudaGetLastError ();
}

extern "C" cudaError_t
gcv_cuda_copy_samples (void *dst, size_t dst_pitch, int dst_step,
    const void *src, size_t src_pitch, int src_step, int width, int height,
    cudaStream_t stream)
{
  dim3 block (64, 4), grid (div_up (width, 64), div_up (height, 4));
  copy_samples_kernel <<<grid, block, 0, stream>>> ((unsigned char *) dst,
      dst_pitch, dst_step, (const unsigned char *) src, src_pitch, src_step,
      width, height);
  return cudaGetLastError ();
}

extern "C" cudaError_t
gcv_cuda_copy_rects (const GcvCudaCopy * rects, int n, cudaStream_t stream)
{
  CopyList r;

  if (n < 0 || n > GCV_CUDA_COPY_RECTS)
    return cudaErrorInvalidValue;
  const int blocks = copy_rects_place (r, rects, n);
  if (blocks == 0)
    return cudaSuccess;
  copy_rects_kernel <<<blocks, dim3 (COPY_BX, COPY_BY), 0, stream>>> (r);
  return cudaGetLastError ();
}
