/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU backend's sample conversions: 8-bit input widened to floats or
 * to 8.8 fixed point as a strip's rows are read, and output values
 * narrowed to bytes as they are stored, the fourth byte of RGBA-family
 * pixels put back from the input where it passes through; 16-bit
 * little-endian samples (GRAY16_LE, P010's planes with their 10 bits
 * high) widened and narrowed the same way. Each has an AVX2 clone
 * (gcv-cpu-simd.h). */
#include "gcv-cpu-private.h"

#include "gcv-cpu-simd.h"

/* Bytes to floats: GRAY8 samples, or the four bytes of RGBA-family pixels. */
GCV_SIMD_CLONES static void
widen (gfloat * restrict out, const guint8 * restrict p, gsize n)
{
  for (gsize x = 0; x < n; x++)
    out[x] = p[x];
}

/* 16-bit little-endian samples, at any byte alignment (a GstVideoMeta may
 * give any offset and stride), shifted right by `shift`, to floats. */
GCV_SIMD_CLONES static void
widen_u16 (gfloat * restrict out, const guint8 * restrict p, gsize n,
    guint shift)
{
  for (gsize x = 0; x < n; x++)
    out[x] = (gfloat) ((guint) (p[2 * x] | p[2 * x + 1] << 8) >> shift);
}

/* Bytes to 8.8 fixed point. */
GCV_SIMD_CLONES static void
widen_fixed (guint16 * restrict out, const guint8 * restrict p, gsize n)
{
  for (gsize x = 0; x < n; x++)
    out[x] = (guint16) (p[x] << 8);
}

static inline guint8
to_u8 (gfloat v)
{
  /* saturate, then round to nearest even by adding and taking away 1.5 *
   * 2^23 (exact for 0..255, and vectorises where rintf() is a call); NaN
   * becomes 0 */
  v = v > 0.0f ? v : 0.0f;
  v = v < 255.0f ? v : 255.0f;
  return (guint8) (gint) ((v + 12582912.0f) - 12582912.0f);
}

/* 32 samples at a time for the conversions to bytes: GCC splits these
 * into the registers the target has, and turns the narrowing into packs. */
typedef gfloat vf32 __attribute__((vector_size (128)));
typedef gfloat vf32u __attribute__((vector_size (128), aligned (4), may_alias));
typedef gint32 vi32 __attribute__((vector_size (128)));
typedef guint16 vu16x32 __attribute__((vector_size (64)));
typedef guint16 vu16x32u __attribute__((vector_size (64), aligned (2),
        may_alias));
typedef guint8 vb32 __attribute__((vector_size (32)));
typedef guint8 vb32u __attribute__((vector_size (32), aligned (1), may_alias));
typedef guint32 vp8 __attribute__((vector_size (32)));

/* 32 bytes to q, the fourth byte of each pixel from `alpha` where it is
 * given; rows start on a pixel. (By pointer: a vector passed by value
 * would have an ABI that depends on the clone.) */
static inline void
store_bytes (guint8 * q, const vb32 * v, const guint8 * alpha)
{
  const vp8 m = (vp8) { 0 } + 0xff000000u;

  if (alpha)
    *(vb32u *) q = (vb32) (((vp8) * v & ~m)
        | ((vp8) * (const vb32u *) alpha & m));
  else
    *(vb32u *) q = *v;
}

/* Floats (output units) to bytes as to_u8() does, 32 at a time, with the
 * fourth byte of each pixel from `alpha` where it is given. The clamps
 * work on the floats' bits with shifts rather than compares, which GCC
 * would take apart into scalar code on the baseline; the byte is then the
 * low byte of v + 1.5 * 2^23. */
GCV_SIMD_CLONES static void
narrow (guint8 * restrict q, const gfloat * restrict v,
    const guint8 * restrict alpha, gsize n)
{
  gsize x = 0;

  for (; x + 32 <= n; x += 32) {
    vi32 b = (vi32) * (const vf32u *) (v + x), big;
    vb32 r;
    b &= ~(b >> 31);            /* negative, -0 and -NaN: +0 */
    b &= ~((0x7f800000 - b) >> 31);     /* NaN: +0 */
    big = (0x437f0000 - b) >> 31;       /* above 255.0 */
    b = (b & ~big) | (0x437f0000 & big);
    b = (vi32) ((vf32) b + 12582912.0f) & 0xff;
    r = __builtin_convertvector (__builtin_convertvector (b, vu16x32), vb32);
    store_bytes (q + x, &r, alpha ? alpha + x : NULL);
  }
  for (; x < n; x++)
    q[x] = alpha && x % 4 == 3 ? alpha[x] : to_u8 (v[x]);
}

/* 8.8 fixed point, the rounding already added, to bytes (the set-up made
 * sure the sums stay below 256.0), with the fourth byte of each pixel from
 * `alpha` where it is given. */
GCV_SIMD_CLONES static void
narrow_fixed (guint8 * restrict q, const guint16 * restrict v,
    const guint8 * restrict alpha, gsize n)
{
  gsize x = 0;

  for (; x + 32 <= n; x += 32) {
    const vb32 r =
        __builtin_convertvector (*(const vu16x32u *) (v + x) >> 8, vb32);
    store_bytes (q + x, &r, alpha ? alpha + x : NULL);
  }
  for (; x < n; x++)
    q[x] = alpha && x % 4 == 3 ? alpha[x] : (guint8) (v[x] >> 8);
}

/* Floats (output units) to 16-bit little-endian samples: rounded to
 * nearest (ties to even, as to_u8()), saturated to 0..max (NaN: 0), then
 * shifted left by `shift`; any byte alignment. */
GCV_SIMD_CLONES static void
narrow_u16 (guint8 * restrict q, const gfloat * restrict v, gsize n,
    gfloat max, guint shift)
{
  for (gsize x = 0; x < n; x++) {
    gfloat f = v[x] > 0.0f ? v[x] : 0.0f;
    guint w;

    f = f < max ? f : max;
    w = (guint) (gint) ((f + 12582912.0f) - 12582912.0f) << shift;
    q[2 * x] = (guint8) w;
    q[2 * x + 1] = (guint8) (w >> 8);
  }
}

/* The clones are static, called through these: a clone's resolver keeps
 * default visibility, and would be exported. */

void
gcv_cpu_widen (gfloat * out, const guint8 * p, gsize n)
{
  widen (out, p, n);
}

void
gcv_cpu_widen_u16 (gfloat * out, const guint8 * p, gsize n, guint shift)
{
  widen_u16 (out, p, n, shift);
}

void
gcv_cpu_narrow_u16 (guint8 * q, const gfloat * v, gsize n, gfloat max,
    guint shift)
{
  narrow_u16 (q, v, n, max, shift);
}

void
gcv_cpu_widen_fixed (guint16 * out, const guint8 * p, gsize n)
{
  widen_fixed (out, p, n);
}

void
gcv_cpu_narrow (guint8 * q, const gfloat * v, const guint8 * alpha, gsize n)
{
  narrow (q, v, alpha, n);
}

void
gcv_cpu_narrow_fixed (guint8 * q, const guint16 * v,
    const guint8 * alpha, gsize n)
{
  narrow_fixed (q, v, alpha, n);
}
