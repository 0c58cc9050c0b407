/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Border handling: where a coordinate outside the frame reads from. Plain C
 * shared by the CPU backend and the CUDA kernels. */
#ifndef GCV_BORDER_H
#define GCV_BORDER_H

#ifdef __CUDACC__
#define GCV_HOST_DEVICE static __host__ __device__ inline
#else
#define GCV_HOST_DEVICE static inline
#endif

/* Values of GcvBorder, repeated here so device code needs no GLib. */
enum {
  GCV_BORDER_INDEX_CONSTANT,
  GCV_BORDER_INDEX_REPLICATE,
  GCV_BORDER_INDEX_REFLECT,
  GCV_BORDER_INDEX_REFLECT101,
  GCV_BORDER_INDEX_WRAP,
};

/* Maps coordinate i to [0, n), or -1 where the constant border applies.
 * The modular forms fold repeatedly, so kernels larger than the frame work. */
GCV_HOST_DEVICE int
gcv_border_index (int i, int n, int border)
{
  int p, m;

  if (i >= 0 && i < n)
    return i;
  switch (border) {
    case GCV_BORDER_INDEX_CONSTANT:
      return -1;
    case GCV_BORDER_INDEX_REPLICATE:
      return i < 0 ? 0 : n - 1;
    case GCV_BORDER_INDEX_REFLECT:      /* c b a | a b c d | d c b */
      p = 2 * n;
      m = i % p;
      if (m < 0)
        m += p;
      return m < n ? m : p - 1 - m;
    case GCV_BORDER_INDEX_REFLECT101:   /* d c b | a b c d | c b a */
      if (n == 1)
        return 0;
      p = 2 * n - 2;
      m = i % p;
      if (m < 0)
        m += p;
      return m < n ? m : p - m;
    default:                    /* wrap:  b c d | a b c d | a b c */
      m = i % n;
      return m < 0 ? m + n : m;
  }
}

#endif /* GCV_BORDER_H */
