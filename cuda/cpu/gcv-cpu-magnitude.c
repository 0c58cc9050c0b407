/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Row loops of the CPU direct path for gradient magnitudes: every tap's
 * sample, loaded once, goes into both derivatives' sums, which are then
 * squared and added in registers; the square roots, bias and sign follow
 * in a sweep over the output row, still in L1. Taps are those of
 * gcv-cpu.c's TapSet, so a NaN or an infinity reaches an output from its
 * footprint only, through every tap of both kernels there (docs/filters.md):
 * NaN in either derivative makes the magnitude NaN. */
#include "gcv-cpu-magnitude.h"

#include <math.h>
#ifdef __SSE__
#include <xmmintrin.h>
#endif

#include "gcv-cpu-simd.h"

/* o[x] = bias + sign * sqrt (o[x]) */
static inline void
finish (gfloat * restrict o, gfloat bias, gfloat sign, gsize n)
{
  gsize x = 0;

#ifdef __SSE__
  /* sqrtf() may set errno, so GCC does not vectorise it: SSE, which both
   * clones have */
  const __m128 b = _mm_set1_ps (bias), s = _mm_set1_ps (sign);
  for (; x + 4 <= n; x += 4)
    _mm_storeu_ps (o + x, _mm_add_ps (b, _mm_mul_ps (s,
                _mm_sqrt_ps (_mm_loadu_ps (o + x)))));
#endif
  for (; x < n; x++)
    o[x] = bias + sign * sqrtf (o[x]);
}

/* The clones are static, called through the plain functions at the end: a
 * clone's resolver keeps default visibility, and would be exported. */
GCV_SIMD_CLONES static void
fir_magnitude (gfloat * restrict out,
    const gconstpointer * restrict src, const gfloat * restrict w,
    const gfloat * restrict u, guint nt, gfloat bias, gfloat sign, gsize n)
{
  const vf8 z = (vf8) { 0 };
  gsize x = 0;

  /* four vectors of each derivative: eight independent sums */
  for (; x + 4 * LANES <= n; x += 4 * LANES) {
    vf8 a0 = z, a1 = z, a2 = z, a3 = z, b0 = z, b1 = z, b2 = z, b3 = z;
    for (guint t = 0; t < nt; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const gfloat k = w[t], m = u[t];
      const vf8 v0 = LOAD (s), v1 = LOAD (s + LANES),
          v2 = LOAD (s + 2 * LANES), v3 = LOAD (s + 3 * LANES);
      a0 += k * v0;
      a1 += k * v1;
      a2 += k * v2;
      a3 += k * v3;
      b0 += m * v0;
      b1 += m * v1;
      b2 += m * v2;
      b3 += m * v3;
    }
    STORE (out + x, a0 * a0 + b0 * b0);
    STORE (out + x + LANES, a1 * a1 + b1 * b1);
    STORE (out + x + 2 * LANES, a2 * a2 + b2 * b2);
    STORE (out + x + 3 * LANES, a3 * a3 + b3 * b3);
  }
  for (; x + LANES <= n; x += LANES) {
    vf8 a = z, b = z;
    for (guint t = 0; t < nt; t++) {
      const vf8 v = LOAD ((const gfloat *) src[t] + x);
      a += w[t] * v;
      b += u[t] * v;
    }
    STORE (out + x, a * a + b * b);
  }
  for (; x < n; x++) {
    gfloat a = 0.0f, b = 0.0f;
    for (guint t = 0; t < nt; t++) {
      const gfloat v = ((const gfloat *) src[t])[x];
      a += w[t] * v;
      b += u[t] * v;
    }
    out[x] = a * a + b * b;
  }
  finish (out, bias, sign, n);
}

GCV_SIMD_CLONES static void
fir2_magnitude (gfloat * restrict out0, gfloat * restrict out1,
    const gconstpointer * restrict src, const gfloat * restrict w0,
    const gfloat * restrict w1, const gfloat * restrict u0,
    const gfloat * restrict u1, guint first, guint nt, guint last,
    gfloat bias, gfloat sign, gsize n)
{
  const vf8 z = (vf8) { 0 };
  const guint shared_end = nt - last;
  gsize x = 0;

  /* two vectors of each derivative of each row: eight independent sums;
   * a: gx and b: gy of row 0, c: gx and d: gy of row 1 */
  for (; x + 2 * LANES <= n; x += 2 * LANES) {
    vf8 a0 = z, a1 = z, b0 = z, b1 = z, c0 = z, c1 = z, d0 = z, d1 = z;
    guint t = 0;
    for (; t < first; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const vf8 v0 = LOAD (s), v1 = LOAD (s + LANES);
      a0 += w0[t] * v0;
      a1 += w0[t] * v1;
      b0 += u0[t] * v0;
      b1 += u0[t] * v1;
    }
    for (; t < shared_end; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const vf8 v0 = LOAD (s), v1 = LOAD (s + LANES);
      a0 += w0[t] * v0;
      a1 += w0[t] * v1;
      b0 += u0[t] * v0;
      b1 += u0[t] * v1;
      c0 += w1[t] * v0;
      c1 += w1[t] * v1;
      d0 += u1[t] * v0;
      d1 += u1[t] * v1;
    }
    for (; t < nt; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const vf8 v0 = LOAD (s), v1 = LOAD (s + LANES);
      c0 += w1[t] * v0;
      c1 += w1[t] * v1;
      d0 += u1[t] * v0;
      d1 += u1[t] * v1;
    }
    STORE (out0 + x, a0 * a0 + b0 * b0);
    STORE (out0 + x + LANES, a1 * a1 + b1 * b1);
    STORE (out1 + x, c0 * c0 + d0 * d0);
    STORE (out1 + x + LANES, c1 * c1 + d1 * d1);
  }
  for (; x < n; x++) {
    gfloat a = 0.0f, b = 0.0f, c = 0.0f, d = 0.0f;
    guint t = 0;
    for (; t < first; t++) {
      const gfloat v = ((const gfloat *) src[t])[x];
      a += w0[t] * v;
      b += u0[t] * v;
    }
    for (; t < shared_end; t++) {
      const gfloat v = ((const gfloat *) src[t])[x];
      a += w0[t] * v;
      b += u0[t] * v;
      c += w1[t] * v;
      d += u1[t] * v;
    }
    for (; t < nt; t++) {
      const gfloat v = ((const gfloat *) src[t])[x];
      c += w1[t] * v;
      d += u1[t] * v;
    }
    out0[x] = a * a + b * b;
    out1[x] = c * c + d * d;
  }
  finish (out0, bias, sign, n);
  finish (out1, bias, sign, n);
}

void
gcv_cpu_fir_magnitude (gfloat * out, const gconstpointer * src,
    const gfloat * w, const gfloat * u, guint nt, gfloat bias, gfloat sign,
    gsize n)
{
  fir_magnitude (out, src, w, u, nt, bias, sign, n);
}

void
gcv_cpu_fir2_magnitude (gfloat * out0, gfloat * out1,
    const gconstpointer * src, const gfloat * w0, const gfloat * w1,
    const gfloat * u0, const gfloat * u1, guint first, guint nt, guint last,
    gfloat bias, gfloat sign, gsize n)
{
  fir2_magnitude (out0, out1, src, w0, w1, u0, u1, first, nt, last, bias,
      sign, n);
}
