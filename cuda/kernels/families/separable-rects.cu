/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable` on the rectangles of one frame, one launch for all
 * of them (privacy regions, gcv-cuda-regions.c): a block filters a tile
 * of one rectangle's outputs, reading its reach from the input where it
 * lies and writing the output frame's samples, so that small rectangles
 * need no frame of their own to be gathered into and scattered from. One
 * channel of bytes (GRAY8, NV12's Y plane). The row pass into float rows
 * in shared memory, then the column pass, as the fused kernels sum them;
 * taps are constant-bank operands. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/gcv-kernels-stats.cuh"

using namespace gcv;

namespace {

/* a block: TW x TH outputs, 32 x 8 threads, TH / 8 outputs down each */
constexpr int TW = 32, TH = 32, BY = 8;
constexpr int N = GCV_CUDA_FILTER_RECTS, K = GCV_CUDA_RECT_TAPS;

/* The launch's parameters: the frame's arguments, the taps, and each
 * rectangle's first block and its blocks a row; a block finds its
 * rectangle by these, as the copy launch does (border.cu). */
struct Rects {
  GcvCudaConv c;
  float row[K], col[K];
  int first[N + 1];
  int across[N];
  GcvCudaRect rect[N];
};
static_assert (sizeof (Rects) <= 4096, "a launch's parameters");

__global__ void __launch_bounds__ (TW * BY)
rects_kernel (const __grid_constant__ Rects r)
{
  extern __shared__ float smem[];
  const GcvCudaConv & p = r.c;
  const int block = blockIdx.x;
  int i = 0;
  while (block >= r.first[i + 1])
    i++;
  const GcvCudaRect & q = r.rect[i];
  const int b = block - r.first[i];
  const int x0 = q.x + (b % r.across[i]) * TW, y0 = q.y + (b / r.across[i]) * TH;
  const int ow = min (TW, q.x + q.width - x0), oh = min (TH, q.y + q.height - y0);
  /* the tile's reach: outputs and the kernel's halo, nothing past them */
  const int iw = ow + p.kw - 1, ih = oh + p.kh - 1, sp = TW + p.kw - 1;
  float *in = smem, *mid = smem + (TH + p.kh - 1) * sp;
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * TW + tx;

  for (int k = t; k < ih * sp; k += TW * BY) {
    const int row = k / sp, col = k % sp;
    in[k] = col < iw ? (float) __ldg (row_ptr<unsigned char> (p.src,
            p.src_pitch, y0 + row) + x0 + col) : 0.0f;
  }
  __syncthreads ();
  for (int row = ty; row < ih; row += BY) {
    float acc = 0.0f;
    for (int k = 0; k < p.kw; k++)
      acc = fmaf (r.row[k], in[row * sp + tx + k], acc);
    mid[row * TW + tx] = acc;
  }
  __syncthreads ();
  if (tx >= ow)
    return;
  NoStats st;
#pragma unroll
  for (int d = 0; d < TH / BY; d++) {
    const int y = ty * (TH / BY) + d;
    if (y >= oh)
      break;
    float acc = 0.0f;
    for (int j = 0; j < p.kh; j++)
      acc = fmaf (r.col[j], mid[(y + j) * TW + tx], acc);
    store<unsigned char> (p, x0 + tx, y0 + y, acc, (unsigned char) 0, st);
  }
}

}  /* namespace */

extern "C" cudaError_t
gcv_cuda_separable_rects (const GcvCudaConv * c, const float *row,
    const float *column, const GcvCudaRect * rects, int n)
{
  Rects r;
  int blocks = 0;

  if (n < 0 || n > N || c->kw > K || c->kh > K || c->in != GCV_PIX_U8
      || c->out != GCV_OUT_U8 || c->stats)
    return cudaErrorInvalidValue;
  r.c = *c;
  for (int k = 0; k < c->kw; k++)
    r.row[k] = row[k];
  for (int k = 0; k < c->kh; k++)
    r.col[k] = column[k];
  for (int i = 0; i < n; i++) {
    r.rect[i] = rects[i];
    r.first[i] = blocks;
    r.across[i] = (int) div_up (rects[i].width, TW);
    blocks += r.across[i] * (int) div_up (rects[i].height, TH);
  }
  r.first[n] = blocks;
  if (blocks == 0)
    return cudaSuccess;
  /* under 48 KB (63 x 63 taps: 47,376 bytes) */
  rects_kernel <<<blocks, dim3 (TW, BY), sizeof (float) * (TH + c->kh - 1)
      * (TW + c->kw - 1 + TW), c->stream>>> (r);
  return cudaGetLastError ();
}
