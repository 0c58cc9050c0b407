/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable` on the rectangles of one frame, one launch for all
 * of them (privacy regions, gcv-cuda-regions.c): a block filters a tile
 * of one rectangle's outputs, reading its reach from the input where it
 * lies and writing the output frame's samples, so that small rectangles
 * need no frame of their own to be gathered into and scattered from. One
 * channel of bytes (GRAY8, NV12's Y plane). The row pass into float rows
 * in shared memory, then the column pass, as the fused kernels sum them;
 * taps are constant-bank operands. The blocks after the filter's copy
 * the frame's copied area (gcv-kernels-copy.cuh): the filter's few
 * blocks, each long, start first and the copy's many short ones fill the
 * multiprocessors around them, where two launches would run one after
 * the other. */
#include "kernels/gcv-kernels-common.cuh"
#include "kernels/gcv-kernels-copy.cuh"
#include "kernels/gcv-kernels-stats.cuh"

using namespace gcv;

namespace {

/* a block: TW x TH outputs, 32 x 8 threads, TH / 8 outputs down each */
constexpr int TW = 32, TH = 32, BY = 8, DOWN = TH / BY;
constexpr int N = GCV_CUDA_FILTER_RECTS, K = GCV_CUDA_RECT_TAPS;
static_assert (TW * BY == COPY_BX * COPY_BY, "the copy's blocks");

/* The launch's parameters: the frame's arguments, the taps, each
 * rectangle's first block and its blocks a row (a block finds its
 * rectangle by these, as the copy's blocks do), and the copy's
 * rectangles. */
struct Rects {
  GcvCudaConv c;
  float row[K], col[K];
  int first[N + 1];
  int across[N];
  GcvCudaRect rect[N];
  CopyRects<GCV_CUDA_RECTS_COPIES> copy;
};
static_assert (sizeof (Rects) <= 4096, "a launch's parameters");

__global__ void __launch_bounds__ (TW * BY)
rects_kernel (const __grid_constant__ Rects r, int filter_blocks)
{
  extern __shared__ float smem[];
  const int tx = threadIdx.x, ty = threadIdx.y, t = ty * TW + tx;
  const int block = blockIdx.x;
  if (block >= filter_blocks) {
    copy_rects_block (r.copy, block - filter_blocks, t % COPY_BX,
        t / COPY_BX);
    return;
  }
  const GcvCudaConv & p = r.c;
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

  for (int k = t; k < ih * sp; k += TW * BY) {
    const int row = k / sp, col = k % sp;
    in[k] = col < iw ? (float) __ldg (row_ptr<unsigned char> (p.src,
            p.src_pitch, y0 + row) + x0 + col) : 0.0f;
  }
  __syncthreads ();
  for (int row = ty; row < ih; row += BY) {
    const float *from = in + row * sp + tx;
    float acc = 0.0f;
#pragma unroll 4
    for (int k = 0; k < p.kw; k++)
      acc = fmaf (r.row[k], from[k], acc);
    mid[row * TW + tx] = acc;
  }
  __syncthreads ();
  if (tx >= ow)
    return;
  /* DOWN outputs down, the rows they read slid through registers: a row
   * loaded once for every output it adds to. Rows past the reach of
   * the tile's last output are read (the buffer holds TH + kh - 1) and
   * only give outputs that are not stored. */
  const int y = ty * DOWN;
  const float *from = mid + y * TW + tx;
  float acc[DOWN] = { }, w[DOWN];
#pragma unroll
  for (int d = 0; d < DOWN - 1; d++)
    w[d + 1] = from[d * TW];
  for (int j = 0; j < p.kh; j++) {
#pragma unroll
    for (int d = 0; d < DOWN - 1; d++)
      w[d] = w[d + 1];
    w[DOWN - 1] = from[(j + DOWN - 1) * TW];
#pragma unroll
    for (int d = 0; d < DOWN; d++)
      acc[d] = fmaf (r.col[j], w[d], acc[d]);
  }
  NoStats st;
#pragma unroll
  for (int d = 0; d < DOWN; d++)
    if (y + d < oh)
      store<unsigned char> (p, x0 + tx, y0 + y + d, acc[d], (unsigned char) 0,
          st);
}

}  /* namespace */

extern "C" cudaError_t
gcv_cuda_separable_rects (const GcvCudaConv * c, const float *row,
    const float *column, const GcvCudaRect * rects, int n,
    const GcvCudaCopy * copies, int m)
{
  Rects r;
  int blocks = 0;

  if (n < 0 || n > N || m < 0 || m > GCV_CUDA_RECTS_COPIES || c->kw > K
      || c->kh > K || c->in != GCV_PIX_U8 || c->out != GCV_OUT_U8
      || c->stats)
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
  const int copy_blocks = copy_rects_place (r.copy, copies, m);
  if (blocks + copy_blocks == 0)
    return cudaSuccess;
  /* under 48 KB (63 x 63 taps: 47,376 bytes) */
  rects_kernel <<<blocks + copy_blocks, dim3 (TW, BY), sizeof (float)
      * (TH + c->kh - 1) * (TW + c->kw - 1 + TW), c->stream>>> (r, blocks);
  return cudaGetLastError ();
}
