/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU backend's row loops: one output row (or two that share most of
 * their input rows) as a sum of taps over rows of samples, in float or in
 * 16-bit fixed point, and the check of a row for NaN and infinities. Each
 * has an AVX2+FMA clone (gcv-cpu-simd.h). The separable path runs them
 * once per row pass and once per column pass, the direct path over the
 * taps of a TapSet (gcv-cpu-band.c). */
#include "gcv-cpu-private.h"

#include "gcv-cpu-simd.h"

/* out[x] = bias + sum_t w[t] * src[t][x] for x < n: every tap of one output
 * value in registers, stored once. Eight vectors at a time, as many
 * independent sums as it takes to keep two FMA units busy at four cycles
 * of latency; each tap's weight is loaded once for the eight. */
GCV_SIMD_CLONES static void
fir (gfloat * restrict out, const gconstpointer * restrict src,
    const gfloat * restrict w, guint nt, gfloat bias, gsize n)
{
  /* the bias is added after the taps: a sum started at a large bias would
   * round every tap at the bias's magnitude */
  const vf8 z = (vf8) { 0 }, b = z + bias;
  gsize x = 0;

  for (; x + 8 * LANES <= n; x += 8 * LANES) {
    vf8 a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
    for (guint t = 0; t < nt; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const gfloat k = w[t];
      a0 += k * LOAD (s);
      a1 += k * LOAD (s + LANES);
      a2 += k * LOAD (s + 2 * LANES);
      a3 += k * LOAD (s + 3 * LANES);
      a4 += k * LOAD (s + 4 * LANES);
      a5 += k * LOAD (s + 5 * LANES);
      a6 += k * LOAD (s + 6 * LANES);
      a7 += k * LOAD (s + 7 * LANES);
    }
    STORE (out + x, a0 + b);
    STORE (out + x + LANES, a1 + b);
    STORE (out + x + 2 * LANES, a2 + b);
    STORE (out + x + 3 * LANES, a3 + b);
    STORE (out + x + 4 * LANES, a4 + b);
    STORE (out + x + 5 * LANES, a5 + b);
    STORE (out + x + 6 * LANES, a6 + b);
    STORE (out + x + 7 * LANES, a7 + b);
  }
  for (; x + LANES <= n; x += LANES) {
    vf8 a = z;
    for (guint t = 0; t < nt; t++)
      a += w[t] * LOAD ((const gfloat *) src[t] + x);
    STORE (out + x, a + b);
  }
  for (; x < n; x++) {
    gfloat a = 0.0f;
    for (guint t = 0; t < nt; t++)
      a += w[t] * ((const gfloat *) src[t])[x];
    out[x] = a + bias;
  }
}

/* Two output rows at once, from taps that mostly read the same samples:
 * out0[x] = bias + sum_{t < n - last} w0[t] * src[t][x], out1[x] = bias +
 * sum_{t >= first} w1[t] * src[t][x], with n = nt. Every vector loaded by
 * the shared taps serves both rows, so there are half as many loads per
 * FMA as in fir(); each row's own taps (the first `first`, the last
 * `last`) go to that row alone. Four vectors of each row at a time, for
 * the registers. */
GCV_SIMD_CLONES static void
fir2 (gfloat * restrict out0, gfloat * restrict out1,
    const gconstpointer * restrict src, const gfloat * restrict w0,
    const gfloat * restrict w1, guint first, guint nt, guint last,
    gfloat bias, gsize n)
{
  /* the bias is added after the taps: a sum started at a large bias would
   * round every tap at the bias's magnitude */
  const vf8 z = (vf8) { 0 }, b = z + bias;
  const guint shared_end = nt - last;
  gsize x = 0;

  for (; x + 4 * LANES <= n; x += 4 * LANES) {
    vf8 a0 = z, a1 = z, a2 = z, a3 = z, c0 = z, c1 = z, c2 = z, c3 = z;
    guint t = 0;
    for (; t < first; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const gfloat k0 = w0[t];
      a0 += k0 * LOAD (s);
      a1 += k0 * LOAD (s + LANES);
      a2 += k0 * LOAD (s + 2 * LANES);
      a3 += k0 * LOAD (s + 3 * LANES);
    }
    for (; t < shared_end; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const gfloat k0 = w0[t], k1 = w1[t];
      const vf8 v0 = LOAD (s), v1 = LOAD (s + LANES),
          v2 = LOAD (s + 2 * LANES), v3 = LOAD (s + 3 * LANES);
      a0 += k0 * v0;
      a1 += k0 * v1;
      a2 += k0 * v2;
      a3 += k0 * v3;
      c0 += k1 * v0;
      c1 += k1 * v1;
      c2 += k1 * v2;
      c3 += k1 * v3;
    }
    for (; t < nt; t++) {
      const gfloat *s = (const gfloat *) src[t] + x;
      const gfloat k1 = w1[t];
      c0 += k1 * LOAD (s);
      c1 += k1 * LOAD (s + LANES);
      c2 += k1 * LOAD (s + 2 * LANES);
      c3 += k1 * LOAD (s + 3 * LANES);
    }
    STORE (out0 + x, a0 + b);
    STORE (out0 + x + LANES, a1 + b);
    STORE (out0 + x + 2 * LANES, a2 + b);
    STORE (out0 + x + 3 * LANES, a3 + b);
    STORE (out1 + x, c0 + b);
    STORE (out1 + x + LANES, c1 + b);
    STORE (out1 + x + 2 * LANES, c2 + b);
    STORE (out1 + x + 3 * LANES, c3 + b);
  }
  for (; x + LANES <= n; x += LANES) {
    vf8 a = z, c = z;
    guint t = 0;
    for (; t < first; t++)
      a += w0[t] * LOAD ((const gfloat *) src[t] + x);
    for (; t < shared_end; t++) {
      const vf8 v = LOAD ((const gfloat *) src[t] + x);
      a += w0[t] * v;
      c += w1[t] * v;
    }
    for (; t < nt; t++)
      c += w1[t] * LOAD ((const gfloat *) src[t] + x);
    STORE (out0 + x, a + b);
    STORE (out1 + x, c + b);
  }
  for (; x < n; x++) {
    gfloat a = 0.0f, c = 0.0f;
    guint t = 0;
    for (; t < first; t++)
      a += w0[t] * ((const gfloat *) src[t])[x];
    for (; t < shared_end; t++) {
      const gfloat v = ((const gfloat *) src[t])[x];
      a += w0[t] * v;
      c += w1[t] * v;
    }
    for (; t < nt; t++)
      c += w1[t] * ((const gfloat *) src[t])[x];
    out0[x] = a + bias;
    out1[x] = c + bias;
  }
}

/* Whether n floats are all finite: their largest exponent field is not
 * all ones (a max reduction, which vectorises; a pass of its own over the
 * row in L1 costs less than one fused into the copy that brings it). */
typedef guint32 u32_alias __attribute__((may_alias));

GCV_SIMD_CLONES static gboolean
all_finite (const gfloat * restrict v, gsize n)
{
  const u32_alias *b = (const u32_alias *) v;
  guint32 m = 0;

  for (gsize x = 0; x < n; x++) {
    const guint32 e = b[x] & 0x7f800000u;
    m = m > e ? m : e;
  }
  return m != 0x7f800000u;
}

/* The high half of a 16 x 16-bit product, which the vectoriser turns into
 * one instruction (pmulhuw). */
#define MULHI(a, k) ((guint16) (((guint32) (a) * (k)) >> 16))

/* o[x] (or `start`, when `first`) plus the products of m <= 8 taps;
 * called with constant m and first, so that each call is one plain loop
 * holding its taps in registers. */
static inline void
sweep_fixed (guint16 * restrict o, const gconstpointer * src,
    const guint16 * k, guint m, gboolean first, guint16 start, gsize n)
{
  const guint16 *restrict s0 = src[0], *restrict s1 = src[m > 1],
      *restrict s2 = src[2 * (m > 2)], *restrict s3 = src[3 * (m > 3)],
      *restrict s4 = src[4 * (m > 4)], *restrict s5 = src[5 * (m > 5)],
      *restrict s6 = src[6 * (m > 6)], *restrict s7 = src[7 * (m > 7)];
  const guint16 k0 = k[0], k1 = k[m > 1], k2 = k[2 * (m > 2)],
      k3 = k[3 * (m > 3)], k4 = k[4 * (m > 4)], k5 = k[5 * (m > 5)],
      k6 = k[6 * (m > 6)], k7 = k[7 * (m > 7)];

#pragma GCC unroll 2
  for (gsize x = 0; x < n; x++) {
    guint16 v = (first ? start : o[x]) + MULHI (s0[x], k0);
    if (m > 1)
      v += MULHI (s1[x], k1);
    if (m > 2)
      v += MULHI (s2[x], k2);
    if (m > 3)
      v += MULHI (s3[x], k3);
    if (m > 4)
      v += MULHI (s4[x], k4);
    if (m > 5)
      v += MULHI (s5[x], k5);
    if (m > 6)
      v += MULHI (s6[x], k6);
    if (m > 7)
      v += MULHI (s7[x], k7);
    o[x] = v;
  }
}

/* out[x] = start + sum_t hi16(src[t][x] * k[t]) for x < n, in as few
 * sweeps of up to eight taps as there can be, of even sizes: the partial
 * sums cross memory once per sweep, in L1. */
GCV_SIMD_CLONES static void
fir_fixed (guint16 * restrict out, const gconstpointer * restrict src,
    const guint16 * restrict k, guint nt, guint16 start, gsize n)
{
  guint sweeps = (nt + 7) / 8;

  for (guint t = 0; t < nt; sweeps--) {
    const guint m = (nt - t + sweeps - 1) / sweeps;
    const gboolean first = t == 0;

#define SWEEP(M) \
    case M: \
      if (first) \
        sweep_fixed (out, src + t, k + t, M, TRUE, start, n); \
      else \
        sweep_fixed (out, src + t, k + t, M, FALSE, start, n); \
      break
    switch (m) {
        SWEEP (8);
        SWEEP (7);
        SWEEP (6);
        SWEEP (5);
        SWEEP (4);
        SWEEP (3);
        SWEEP (2);
        SWEEP (1);
    }
#undef SWEEP
    t += m;
  }
}

/* The clones are static, called through these: a clone's resolver keeps
 * default visibility, and would be exported. */

void
gcv_cpu_fir (gfloat * out, const gconstpointer * src, const gfloat * w,
    guint nt, gfloat bias, gsize n)
{
  fir (out, src, w, nt, bias, n);
}

void
gcv_cpu_fir2 (gfloat * out0, gfloat * out1, const gconstpointer * src,
    const gfloat * w0, const gfloat * w1, guint first, guint nt, guint last,
    gfloat bias, gsize n)
{
  fir2 (out0, out1, src, w0, w1, first, nt, last, bias, n);
}

gboolean
gcv_cpu_all_finite (const gfloat * v, gsize n)
{
  return all_finite (v, n);
}

void
gcv_cpu_fir_fixed (guint16 * out, const gconstpointer * src,
    const guint16 * k, guint nt, guint16 start, gsize n)
{
  fir_fixed (out, src, k, nt, start, n);
}
