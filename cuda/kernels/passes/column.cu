/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernels one tap wide (1xN, a vertical 1D filter): one pass down the
 * columns, at the speed of a copy. The tiled and separable families run
 * these filters here (the record says when: GcvChoice.column_pass).
 *
 * Each thread owns one column of a band of CY output rows. The input rows
 * it needs go through a ring of CY + D registers, each row loaded once and
 * D rows ahead of its first use, so loads are in flight while the taps are
 * applied (Little's law: rows of 128 bytes per warp need several in flight
 * per thread to fill the memory pipe). The ring's slots are fixed at compile
 * time by unrolling the tap loop by its size: nothing moves between
 * registers. A warp reads and writes whole rows of 32 pixels: coalesced, no
 * shared memory, and the band's CY + N - 1 input rows per CY outputs keep
 * the cache traffic near the frame's bytes (several outputs per thread in
 * y: van Werkhoven et al. 2014, Table 1; Wainwright, GTC S4297). */
#include "kernels/gcv-kernels-common.cuh"

using namespace gcv;

namespace {

constexpr int BX = 32, BY = 8;

/* outputs down per thread and rows loaded ahead: the RGBA family's float4
 * (and float3) values take four (three) registers each, so its band is
 * shorter */
template <typename Acc> struct ColumnShape {
  static constexpr int CY = 16, D = 8;
};
template <> struct ColumnShape<float4> {
  static constexpr int CY = 8, D = 4;
};
template <> struct ColumnShape<float3> {
  static constexpr int CY = 8, D = 4;
};

template <typename In, bool STATS>
__global__ void __launch_bounds__ (BX * BY)
column_kernel (GcvCudaConv p, ParamTaps taps)
{
  typedef typename AccOf<In>::T Acc;
  constexpr int CY = ColumnShape<Acc>::CY, R = CY + ColumnShape<Acc>::D;
  const int x = blockIdx.x * BX + threadIdx.x;
  const int y0 = (blockIdx.y * BY + threadIdx.y) * CY;

  if (x >= p.width || y0 >= p.height)
    return;
  /* rows past the band's last input row are never used; clamping keeps
   * their loads inside the padded frame (kw is 1: no column halo) */
  const int rows = min (CY, p.height - y0) + p.kh - 1;
  const char *col = (const char *) p.src + (size_t) y0 * p.src_pitch
      + (size_t) x * sizeof (In);
  /* Rows are loaded in order, 0, 1, 2, ...: for one channel a pointer
   * steps down the column and rows past the band's last input row are not
   * loaded at all (their slots feed only outputs below the frame). The
   * RGBA family keeps the clamped index: stepping cost it registers and
   * time there (performance.md). */
  const char *next = col;
  auto load = [&] (Acc & slot, int r) {
    if constexpr (sizeof (Acc) == sizeof (float)) {
      if (r < rows)
        slot = to_acc (ldg ((const In *) next));
      next += p.src_pitch;
    } else {
      r = min (r, rows - 1);
      slot = to_acc (ldg ((const In *) (col + (size_t) r * p.src_pitch)));
    }
  };

  Acc ring[R], acc[CY];
#pragma unroll
  for (int t = 0; t < CY; t++)
    zero (acc[t]);
  /* row r of the band lives in slot r % R */
#pragma unroll
  for (int s = 0; s < R - 1; s++)
    load (ring[s], s);
  for (int j0 = 0; j0 < p.kh; j0 += R) {
#pragma unroll
    for (int jj = 0; jj < R; jj++) {
      const int j = j0 + jj;
      if (j >= p.kh)
        break;
      /* the slot of row j - 1, used for the last time by tap j - 1 */
      load (ring[(jj + R - 1) % R], j + R - 1);
      const float w = taps[j];
#pragma unroll
      for (int t = 0; t < CY; t++)
        fma_acc (acc[t], w, ring[(jj + t) % R]);
    }
  }
  typename StatsFor<Acc, STATS>::T st;
#pragma unroll
  for (int t = 0; t < CY; t++)
    if (y0 + t < p.height)
      store<In> (p, x, y0 + t, acc[t], centre_of<In> (p, x, y0 + t), st);
  st.flush (p);
}

template <typename In>
struct Column {
  static cudaError_t launch (const GcvCudaConv & c)
  {
    constexpr int CY = ColumnShape<typename AccOf<In>::T>::CY;
    const dim3 grid (div_up (c.width, BX), div_up (c.height, BY * CY));
    if (c.stats)
      column_kernel<In, true> <<<grid, dim3 (BX, BY), 0, c.stream>>> (c,
          param_taps (c.host_taps, c.kh));
    else
      column_kernel<In, false> <<<grid, dim3 (BX, BY), 0, c.stream>>> (c,
          param_taps (c.host_taps, c.kh));
    return cudaGetLastError ();
  }
};

}  /* namespace */

extern "C" cudaError_t
gcv_cuda_column (const GcvCudaConv * c)
{
  if (c->kw != 1 || c->kh > GCV_CUDA_PARAM_TAPS || is_magnitude (*c))
    return cudaErrorInvalidValue;
  return GCV_DISPATCH_PIXEL (Column, *c, *c);
}
