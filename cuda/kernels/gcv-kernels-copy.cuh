/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The copy of a list of rectangles (privacy regions' copied area), as
 * blocks of a launch: the copy launch's own (passes/border.cu) and those
 * the launch filtering rectangles where they lie runs beside its own
 * (families/separable-rects.cu). */
#pragma once

#include "kernels/gcv-kernels-common.cuh"

namespace gcv {

/* A launch's rectangles, in its parameters (under the 4 KiB every driver
 * takes): each one's first block and its blocks a row; a block finds its
 * rectangle by these, so that the blocks follow the rectangles' areas.
 * Packed samples are copied as bytes, 16 a thread: where a rectangle's
 * rows start at the same place of 16 bytes in source and destination
 * (`lead`, that place), the 16 are one vector. Samples a step apart go a
 * sample a thread. A block is COPY_BX x COPY_BY threads. */
constexpr int COPY_BX = 64, COPY_BY = 4, COPY_VEC = 16;
constexpr int COPY_BYTES = -1, COPY_SAMPLES = -2;

template <int N> struct CopyRects {
  int first[N + 1];
  int across[N];
  int lead[N];
  GcvCudaCopy rect[N];
};

/* Fills `r` with `n` rectangles (at most N); returns the blocks they
 * take. */
template <int N> static inline int
copy_rects_place (CopyRects<N> & r, const GcvCudaCopy * rects, int n)
{
  int blocks = 0;

  for (int i = 0; i < n; i++) {
    const GcvCudaCopy & q = rects[i];
    int columns = q.width;
    if (q.src_step != q.size || q.dst_step != q.size) {
      r.lead[i] = COPY_SAMPLES;
    } else {
      const uintptr_t from = (uintptr_t) q.src, to = (uintptr_t) q.dst;
      /* rows keep their place in 16 bytes only with pitches of whole
       * vectors */
      const bool share = q.src_pitch % COPY_VEC == 0
          && q.dst_pitch % COPY_VEC == 0 && from % COPY_VEC == to % COPY_VEC;
      r.lead[i] = share ? (int) (from % COPY_VEC) : COPY_BYTES;
      columns = div_up ((share ? r.lead[i] : 0) + q.width * q.size,
          COPY_VEC);
    }
    r.rect[i] = q;
    r.first[i] = blocks;
    r.across[i] = (int) div_up (columns, COPY_BX);
    blocks += r.across[i] * (int) div_up (q.height, COPY_BY);
  }
  r.first[n] = blocks;
  return blocks;
}

/* Block `block` of the copy, its thread (tx, ty) */
template <int N> __device__ __forceinline__ void
copy_rects_block (const CopyRects<N> & r, int block, int tx, int ty)
{
  int i = 0;
  while (block >= r.first[i + 1])
    i++;
  const GcvCudaCopy & q = r.rect[i];
  const int b = block - r.first[i], lead = r.lead[i];
  const int x = (b % r.across[i]) * COPY_BX + tx;
  const int y = (b / r.across[i]) * COPY_BY + ty;
  if (y >= q.height)
    return;
  unsigned char *to = (unsigned char *) q.dst + (size_t) y * q.dst_pitch;
  const unsigned char *from = (const unsigned char *) q.src
      + (size_t) y * q.src_pitch;
  if (lead == COPY_SAMPLES) {
    if (x >= q.width)
      return;
    to += (size_t) x * q.dst_step;
    from += (size_t) x * q.src_step;
    for (int k = 0; k < q.size; k++)
      to[k] = __ldg (from + k);
    return;
  }
  const int bytes = q.width * q.size, x0 = x * COPY_VEC - max (lead, 0);
  if (lead >= 0 && x0 >= 0 && x0 + COPY_VEC <= bytes) {
    *(uint4 *) (to + x0) = __ldg ((const uint4 *) (from + x0));
    return;
  }
  for (int k = max (x0, 0); k < min (x0 + COPY_VEC, bytes); k++)
    to[k] = __ldg (from + k);
}

}  /* namespace gcv */
