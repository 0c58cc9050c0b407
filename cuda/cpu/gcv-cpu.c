/* The CPU backend: direct 2D and separable paths, multithreaded over bands
 * of rows. A band is filtered one strip of columns at a time, the strip
 * narrow enough that the rows it keeps (the separable path's row-filtered
 * rows, or the direct path's input rows) stay in the L1 cache while every
 * output row reads them. Input rows are converted once per strip (8-bit
 * samples widened, the border filled in), or read in place where they are
 * floats already and need no border. Pixels stay interleaved: a tap's
 * neighbour is `channels` samples away, so four-byte pixels are filtered as
 * four samples each and the fourth byte is put back from the input where it
 * passes through, which costs less than taking the channels apart.
 *
 * Samples are floats, except on the fixed-point path: separable kernels
 * from 8-bit to 8-bit whose taps are all >= 0 (blurs) run in 16-bit fixed
 * point, as OpenCV's GaussianBlur does, where the error bound worked out
 * for the taps at set-up keeps the result within the bound of docs/filters.md. A 16-bit
 * lane holds twice the samples of a float one, and 8-bit input and output
 * convert to it in a step.
 *
 * GRAY32F input may hold NaN and infinities, which reach an output only
 * from its own footprint, through every tap of it (docs/filters.md): no
 * output multiplies a sample outside its footprint, rows that hold one
 * are filtered through the zero taps too, and the separable path runs
 * only where its factors keep the kernel's zeros and signs.
 *
 * Gradient magnitudes (two kernels, taps and taps_y) run on the direct
 * path, both sums in one sweep (gcv-cpu-magnitude.c). Per-frame statistics
 * take each output row as it is stored (gcv-cpu-stats.c). */
#include "gcv-private.h"
#include "gcv-border.h"
#include "gcv-cpu-pool.h"
#include "gcv-cpu-magnitude.h"
#include "gcv-cpu-stats.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "gcv-cpu-simd.h"

/* Bytes of kept rows a strip may have; below the 32 KiB L1 data cache of
 * current x86 cores, leaving room for the output row and the input that
 * streams past. */
#define STRIP_BUDGET (24 * 1024)
/* Samples in a strip's row: at least enough to amortise a strip's set-up,
 * at most what keeps the budget with small kernels. */
#define STRIP_MIN_SAMPLES 256
#define STRIP_MAX_SAMPLES 1024
/* The direct path's strips are narrower where a pair of output rows would
 * take more multiply-adds than this (kernels above about 700x700): a row
 * then ends within milliseconds, and gcv_engine_interrupt() is seen
 * between rows. */
#define PAIR_MAX_FMAS ((gsize) 1 << 28)
/* Output rows per task: a band reads kh - 1 rows more than it writes, so
 * bands grow with the kernel; their number is a multiple of the workers'
 * so that they share the frame evenly. */
#define BAND_MIN_ROWS 64
#define BAND_HALO_FACTOR 16
/* A strip's rows are short runs of memory a frame row apart, too short for
 * the hardware's stream prefetchers to get going on; the input and output
 * rows this far ahead are asked for explicitly. */
#define PREFETCH_ROWS 2
/* The fixed-point path is taken where its worst-case error before the
 * final rounding stays below this (in 8-bit units); with the rounding's
 * 0.5 that keeps the result within 1 of the exact value, the float
 * rounding of the taps included. */
#define FIXED_MAX_ERROR 0.45
/* The fixed-point column sums start from 0.5 (8.8) to round the output: a
 * value before its rounding is (v - FIXED_ROUND) / 256. */
#define FIXED_ROUND 128

typedef struct {
  GcvCpuPool *pool;
  gchar *description;
  gint interrupted;             /* atomic: gcv_engine_interrupt() */
} CpuEngine;

/* Where a tap of the direct path reads: a row of the kh + 1 that two
 * output rows read, and a column. */
typedef struct {
  guint row;
  guint offset;                 /* samples from the row's first */
} Tap;

/* The direct path's taps for output rows y and y + 1 from input rows
 * y - ay .. y - ay + kh, in row order: the first n_first from row 0 (row
 * y's alone), the last n_last from row kh (row y + 1's alone), the others
 * read by both. weights0[t] is K[row][i] for row y (t < n_taps - n_last),
 * weights1[t] is K[row - 1][i] for row y + 1 (t >= n_first). No output
 * multiplies a sample outside its own footprint: a NaN or an infinity
 * there would reach it through a zero weight. A gradient magnitude has
 * the same of its y derivative in weights0_y and weights1_y (else NULL). */
typedef struct {
  guint n_taps, n_first, n_last;
  Tap *taps;
  gfloat *weights0, *weights1;
  gfloat *weights0_y, *weights1_y;
} TapSet;

/* What a filter and a geometry come to; replaced as a whole, so a filter
 * that cannot be set up leaves the previous one working. */
typedef struct {
  gboolean separable;
  gboolean fixed;               /* the 16-bit fixed-point path */
  guint kw, kh, ax, ay;
  guint channels;               /* samples per pixel: 1, or 4 for RGBA-family */
  gsize sample;                 /* bytes per sample: float, or 16-bit */
  gboolean keep_alpha;          /* the 4th byte passes through */
  GcvBorder border;
  gfloat border_value;          /* input units */
  guint16 border_fixed;         /* the same in 8.8 fixed point */
  gfloat bias;                  /* output units */
  gfloat magnitude_sign;        /* a gradient magnitude (direct path) */
  /* float taps in output units (the format conversion's 255 or 1/255
   * folded in) */
  gfloat *row, *column;         /* separable */
  /* direct: taps that are zero for both rows left out, for rows of
   * finite samples; where float input meets a kernel with zero taps, also
   * every tap of the footprint, for rows with a NaN or an infinity, where
   * a zero tap makes NaN */
  TapSet sparse, full;
  gboolean check_finite;        /* kept rows are checked, `full` exists */
  /* fixed point: samples are 8.8 (x * 256), taps 0.16, each product's
   * fraction dropped; the sums start from these to centre those losses
   * (and, in the column pass, to round) */
  guint16 *row_fixed, *column_fixed;
  guint16 row_start, column_start;
  guint strip;                  /* output columns per strip */
  guint band;                   /* output rows per task */
  guint n_tasks;
  gint *xmap;                   /* padded column -> source x, -1: constant */
  /* per-worker scratch */
  gsize line_bytes;             /* one input row of a strip, padded */
  guint ring;                   /* rows a strip keeps: kh, or kh + 1 direct */
  gsize kept_row_bytes;         /* one of them */
  gsize out_bytes;              /* an output row of a strip */
  gsize ptr_slots;
  gsize scratch_bytes;
} Setup;

typedef struct {
  gpointer mem;                 /* as allocated */
  guint8 *line;                 /* separable: the input row being filtered */
  guint8 *kept;                 /* `ring` rows of kept_row_bytes */
  guint8 *out[2];               /* output rows of the strip */
  gconstpointer *ptr;           /* the taps' sources for one output row */
  gconstpointer *rows;          /* the kept rows by slot */
  gconstpointer *window;        /* the kept rows by kernel row */
  guint8 *finite;               /* direct, float input: kept row by slot
                                 * holds no NaN or infinity */
} Scratch;

typedef struct {
  CpuEngine *engine;
  Setup *setup;
  Scratch *scratch;             /* one per worker */
  gsize scratch_bytes;          /* each worker's, as allocated */
  GcvFrameOptions *options;     /* per slot, from set_frame_options */
  GcvFrameStats *results;       /* per slot */
  GcvCpuStats stats;            /* the frame being measured */
} CpuPlan;

typedef struct {
  const CpuPlan *cp;
  const GcvPlan *plan;
  const GcvImage *src, *dst;
  const GcvCpuStats *stats;     /* NULL: the frame is not measured */
  gint stopped;                 /* atomic: a band stopped short, interrupted */
} Job;

/* --- row loops ------------------------------------------------------------ */

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

/* --- format conversion ---------------------------------------------------- */

/* Bytes to floats: GRAY8 samples, or the four bytes of RGBA-family pixels. */
GCV_SIMD_CLONES static void
widen (gfloat * restrict out, const guint8 * restrict p, gsize n)
{
  for (gsize x = 0; x < n; x++)
    out[x] = p[x];
}

/* Bytes to 8.8 fixed point. */
GCV_SIMD_CLONES static void
widen_fixed (guint16 * restrict out, const guint8 * restrict p, gsize n)
{
  for (gsize x = 0; x < n; x++)
    out[x] = (guint16) (p[x] << 8);
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

/* n pixels of source row `row` from column sx on, as samples. */
static void
load_pixels (const Job * job, const guint8 * row, guint sx, guint n,
    gpointer out)
{
  const Setup *s = job->cp->setup;
  const guint px = gcv_format_pixel_size (job->plan->geometry.in_format);

  if (job->plan->geometry.in_format == GCV_FORMAT_GRAY32F)
    memcpy (out, row + (gsize) sx * px, (gsize) n * px);
  else if (s->fixed)
    widen_fixed (out, row + (gsize) sx * px, (gsize) n * px);
  else
    widen (out, row + (gsize) sx * px, (gsize) n * px);
}

/* n samples of the constant border. */
static void
fill_border (const Setup * s, gpointer out, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (s->fixed)
      ((guint16 *) out)[i] = s->border_fixed;
    else
      ((gfloat *) out)[i] = s->border_value;
}

/* Float rows are read and written in place only where they are aligned as
 * floats: a GstVideoMeta may give any offset and stride. */
static inline gboolean
float_aligned (gconstpointer p)
{
  return (guintptr) p % sizeof (gfloat) == 0;
}

/* The samples of input row sy (-1: the constant border) under padded
 * columns pc0 .. pc0 + len - 1 (padded column pc is source column pc - ax),
 * built in `buf`. The separable path reads float rows that need no border
 * in place; the direct path reads kh rows at once, which in place would be
 * a frame stride apart, often a multiple of 4 KiB, where they would evict
 * each other from the L1 cache. */
static gconstpointer
input_line (const Job * job, gint sy, guint pc0, guint len, guint8 * buf)
{
  const Setup *s = job->cp->setup;
  const guint w = job->plan->geometry.width, ch = s->channels;
  const gsize pixel = ch * s->sample;
  const guint8 *row;
  guint lo, hi;

  if (sy < 0) {
    fill_border (s, buf, (gsize) len * ch);
    return buf;
  }
  row = (const guint8 *) job->src->data + (gsize) sy * job->src->stride;
  /* the padded columns that lie inside the frame */
  lo = MAX (pc0, s->ax);
  hi = MIN (pc0 + len, s->ax + w);
  if (s->separable && job->plan->geometry.in_format == GCV_FORMAT_GRAY32F
      && lo == pc0 && hi == pc0 + len && float_aligned (row))
    return (const gfloat *) row + (pc0 - s->ax);
  if (lo < hi)
    load_pixels (job, row, lo - s->ax, hi - lo, buf + (lo - pc0) * pixel);
  for (guint pc = pc0; pc < pc0 + len; pc++) {
    guint8 *p = buf + (gsize) (pc - pc0) * pixel;
    if (pc == lo && lo < hi) {
      pc = hi - 1;              /* skip the inside */
      continue;
    }
    if (s->xmap[pc] < 0)
      fill_border (s, p, ch);
    else
      load_pixels (job, row, (guint) s->xmap[pc], 1, p);
  }
  return buf;
}

/* Output values of row y, columns x0 .. x0 + n - 1, to the frame. Float
 * output was written in place by the filter. */
static void
store_row (const Job * job, guint y, guint x0, guint n, gconstpointer v)
{
  const Setup *s = job->cp->setup;
  const gsize ch = s->channels;
  const guint8 *alpha = NULL;
  guint8 *q;

  if (job->plan->geometry.out_format == GCV_FORMAT_GRAY32F) {
    q = (guint8 *) job->dst->data + (gsize) y * job->dst->stride
        + (gsize) x0 * sizeof (gfloat);
    if ((gconstpointer) q != v)         /* an unaligned row (output_row()) */
      memcpy (q, v, (gsize) n * sizeof (gfloat));
    return;
  }
  q = (guint8 *) job->dst->data + (gsize) y * job->dst->stride + x0 * ch;
  if (s->keep_alpha)
    alpha = (const guint8 *) job->src->data + (gsize) y * job->src->stride
        + x0 * ch;
  if (s->fixed)
    narrow_fixed (q, v, alpha, n * ch);
  else
    narrow (q, v, alpha, n * ch);
}

/* The same, and to the band's statistics `acc` where the frame is
 * measured (apart, so that store_row() costs what it did without). */
static inline void
put_row (const Job * job, GcvCpuStatsAcc * acc, guint y, guint x0, guint n,
    gconstpointer v)
{
  if (G_UNLIKELY (acc)) {
    if (job->cp->setup->fixed)
      gcv_cpu_stats_fixed (job->stats, acc, y, x0, v, FIXED_ROUND, n);
    else
      gcv_cpu_stats_floats (job->stats, acc, y, x0, v, n);
  }
  store_row (job, y, x0, n, v);
}

/* --- one band of output rows ---------------------------------------------- */

static void
prefetch_read (const guint8 * p, gsize bytes)
{
  for (gsize i = 0; i < bytes; i += 64)
    __builtin_prefetch (p + i, 0, 3);
}

static void
prefetch_write (guint8 * p, gsize bytes)
{
  for (gsize i = 0; i < bytes; i += 64)
    __builtin_prefetch (p + i, 1, 3);
}

/* What input row k of the band and output row y (when it is in the band)
 * will read and write of the strip at x0, n pixels wide. */
static void
prefetch_rows (const Job * job, guint y0, guint k, gint y, guint y1,
    guint x0, guint n)
{
  const Setup *s = job->cp->setup;
  const GcvGeometry *g = &job->plan->geometry;
  const guint in_px = gcv_format_pixel_size (g->in_format),
      out_px = gcv_format_pixel_size (g->out_format);
  const gint sy = gcv_border_index ((gint) (y0 + k) - (gint) s->ay,
      (gint) g->height, s->border);
  const guint lo = MAX (x0, s->ax) - s->ax,
      hi = MIN (x0 + n + s->kw - 1 - s->ax, g->width);

  if (sy >= 0 && lo < hi)
    prefetch_read ((const guint8 *) job->src->data
        + (gsize) sy * job->src->stride + (gsize) lo * in_px,
        (gsize) (hi - lo) * in_px);
  if (y >= (gint) y0 && y < (gint) y1)
    prefetch_write ((guint8 *) job->dst->data + (gsize) y * job->dst->stride
        + (gsize) x0 * out_px, (gsize) n * out_px);
}

/* Points the window at `count` kept rows from the one in slot `first` on. */
static void
fill_window (const Scratch * sc, guint first, guint count, guint ring)
{
  for (guint j = 0, o = first % ring; j < count; j++, o = o + 1 == ring ?
      0 : o + 1)
    sc->window[j] = sc->rows[o];
}

/* The direct path's taps for the `count` kept rows from slot `first` on:
 * every tap of the footprint where one of them holds a NaN or an infinity,
 * else those that weigh something. */
static const TapSet *
choose_taps (const Setup * s, const Scratch * sc, guint first, guint count)
{
  if (s->check_finite)
    for (guint j = 0, o = first % s->ring; j < count; j++, o = o + 1 ==
        s->ring ? 0 : o + 1)
      if (!sc->finite[o])
        return &s->full;
  return &s->sparse;
}

/* Points the first `n` taps of `ts` at the window's rows. */
static void
point_taps (const Scratch * sc, const TapSet * ts, guint n)
{
  for (guint t = 0; t < n; t++)
    sc->ptr[t] = (const gfloat *) sc->window[ts->taps[t].row]
        + ts->taps[t].offset;
}

/* Where output row y of the strip at x0 goes: float output is written in
 * place where aligned, other output through the strip's row `which`. */
static gpointer
output_row (const Job * job, const Scratch * sc, guint y, guint x0,
    guint which)
{
  guint8 *row = (guint8 *) job->dst->data + (gsize) y * job->dst->stride;

  if (job->plan->geometry.out_format != GCV_FORMAT_GRAY32F
      || !float_aligned (row))
    return sc->out[which];
  return (gfloat *) row + x0;
}

static void
run_band (gpointer data, guint task, guint worker)
{
  Job *job = data;
  const Setup *s = job->cp->setup;
  const Scratch *sc = &job->cp->scratch[worker];
  const guint w = job->plan->geometry.width, h = job->plan->geometry.height;
  const guint kw = s->kw, kh = s->kh, ch = s->channels, ring = s->ring;
  const guint y0 = task * s->band, y1 = MIN (h, y0 + s->band);
  const guint in_rows = y1 - y0 + kh - 1;
  GcvCpuStatsAcc *acc = job->stats ? gcv_cpu_stats_band (job->stats, task) :
      NULL;

  for (guint x0 = 0; x0 < w; x0 += s->strip) {
    const guint n = MIN (s->strip, w - x0), len = n + kw - 1;
    const gsize ns = (gsize) n * ch;

    /* input row k of the band goes to slot k % ring; output row y0 + k +
     * 1 - kh can be done once row k is in */
    for (guint k = 0, slot = 0; k < in_rows; k++, slot = slot + 1 == ring ?
        0 : slot + 1) {
      const gint sy = gcv_border_index ((gint) (y0 + k) - (gint) s->ay,
          (gint) h, s->border);
      guint8 *kept = sc->kept + slot * s->kept_row_bytes;
      const guint y = y0 + k + 1 - kh;
      gpointer out;

      /* an atomic load a row: a row takes milliseconds at most, even with
       * the largest kernels (PAIR_MAX_FMAS), so a flush or a stop is not
       * held up */
      if (G_UNLIKELY (g_atomic_int_get (&job->cp->engine->interrupted))) {
        g_atomic_int_set (&job->stopped, TRUE);
        return;
      }
      if (k + PREFETCH_ROWS < in_rows)
        prefetch_rows (job, y0, k + PREFETCH_ROWS,
            (gint) (y0 + k + 1 + PREFETCH_ROWS) - (gint) kh, y1, x0, n);

      if (s->separable) {
        /* the row pass, into the kept rows */
        const guint8 *line = input_line (job, sy, x0, len, sc->line);
        for (guint i = 0; i < kw; i++)
          sc->ptr[i] = line + (gsize) i * ch * s->sample;
        if (s->fixed)
          fir_fixed ((guint16 *) kept, sc->ptr, s->row_fixed, kw,
              s->row_start, ns);
        else
          fir ((gfloat *) kept, sc->ptr, s->row, kw, 0.0f, ns);
        sc->rows[slot] = kept;
      } else {
        sc->rows[slot] = input_line (job, sy, x0, len, kept);
        if (s->check_finite)
          sc->finite[slot] = all_finite (sc->rows[slot], (gsize) len * ch);
      }
      if (k + 1 < kh)
        continue;

      if (s->separable) {
        /* the column pass over the kh rows from the next slot on, the
         * oldest */
        fill_window (sc, slot + 1, kh, ring);
        out = output_row (job, sc, y, x0, 0);
        if (s->fixed)
          fir_fixed (out, sc->window, s->column_fixed, kh, s->column_start,
              ns);
        else
          fir (out, sc->window, s->column, kh, s->bias, ns);
        put_row (job, acc, y, x0, n, out);
      } else if ((y - y0) % 2 == 1) {
        /* rows y - 1 and y, from the kh + 1 rows from the next slot on */
        const TapSet *ts = choose_taps (s, sc, slot + 1, kh + 1);
        gpointer out1 = output_row (job, sc, y, x0, 1);
        fill_window (sc, slot + 1, kh + 1, ring);
        point_taps (sc, ts, ts->n_taps);
        out = output_row (job, sc, y - 1, x0, 0);
        if (ts->weights0_y)
          gcv_cpu_fir2_magnitude (out, out1, sc->ptr, ts->weights0,
              ts->weights1, ts->weights0_y, ts->weights1_y, ts->n_first,
              ts->n_taps, ts->n_last, s->bias, s->magnitude_sign, ns);
        else
          fir2 (out, out1, sc->ptr, ts->weights0, ts->weights1, ts->n_first,
              ts->n_taps, ts->n_last, s->bias, ns);
        put_row (job, acc, y - 1, x0, n, out);
        put_row (job, acc, y, x0, n, out1);
      } else if (y + 1 == y1) {
        /* the band's last row, alone: the kh rows from the one after next,
         * through the taps of all rows but row kh */
        const TapSet *ts = choose_taps (s, sc, slot + 2, kh);
        fill_window (sc, slot + 2, kh, ring);
        point_taps (sc, ts, ts->n_taps - ts->n_last);
        out = output_row (job, sc, y, x0, 0);
        if (ts->weights0_y)
          gcv_cpu_fir_magnitude (out, sc->ptr, ts->weights0, ts->weights0_y,
              ts->n_taps - ts->n_last, s->bias, s->magnitude_sign, ns);
        else
          fir (out, sc->ptr, ts->weights0, ts->n_taps - ts->n_last, s->bias,
              ns);
        put_row (job, acc, y, x0, n, out);
      }
    }
  }
}

/* --- set-up --------------------------------------------------------------- */

/* g_try_malloc() of `bytes` (at least one), with an error that says what
 * they were for when they cannot be had. */
static gpointer G_GNUC_PRINTF (3, 4)
try_alloc (gsize bytes, GError ** error, const gchar * format, ...)
{
  gpointer p = g_try_malloc (MAX (bytes, 1));

  if (!p) {
    va_list args;
    gchar *what;
    va_start (args, format);
    what = g_strdup_vprintf (format, args);
    va_end (args);
    g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "could not allocate %"
        G_GSIZE_FORMAT " bytes of memory for %s", bytes, what);
    g_free (what);
  }
  return p;
}

static void
setup_free (Setup * s)
{
  if (!s)
    return;
  g_free (s->row);
  g_free (s->column);
  g_free (s->sparse.taps);
  g_free (s->sparse.weights0);
  g_free (s->full.taps);
  g_free (s->full.weights0);
  g_free (s->row_fixed);
  g_free (s->column_fixed);
  g_free (s->xmap);
  g_free (s);
}

static gsize
round_up (gsize v, gsize m)
{
  return (v + m - 1) / m * m;
}

/* 0.16 fixed-point taps for `v` (each >= 0) scaled by `k`, and the most
 * they are off in sum; FALSE where one does not fit. */
static gboolean
quantize (const gfloat * v, guint n, gdouble k, guint16 * q, gdouble * sum,
    gdouble * error)
{
  *sum = *error = 0.0;
  for (guint i = 0; i < n; i++) {
    gdouble t = v[i] * k * 65536.0, r = floor (t + 0.5);
    if (r > 65535.0)
      return FALSE;
    q[i] = (guint16) r;
    *sum += r;
    *error += fabs (r - t) / 65536.0;
  }
  return TRUE;
}

/* Sets up the fixed-point path where it applies: 8-bit in and out, a
 * separable kernel with no negative tap and no bias, a constant border (if
 * any) a whole 8-bit value. The row taps are scaled to sum to 1 and the
 * column taps take the scale, so that every row-pass sum fits 16 bits.
 *
 * In 1/256 units, with H a row-pass sum, V a column-pass sum and the taps'
 * rounding dr, dc (sums of |quantized - exact|):
 *   |H - exact| <= ceil(kw/2) + 255 * 256 * dr   (dropped fractions,
 *     centred by starting from kw/2, and the taps' rounding)
 *   |V - exact| <= ceil(kh/2) + max(H) * dc + sum(column) * |H error|
 * and the path is taken where that is below FIXED_MAX_ERROR * 256. */
static void
setup_fixed (Setup * s, const GcvFilter * f, const GcvGeometry * g)
{
  gdouble sum_row = 0.0, sum_column = 0.0, q_row, q_column, d_row, d_column;
  gdouble h_max, v_max, e_row, e_column;

  if (!s->separable || g->in_format == GCV_FORMAT_GRAY32F
      || g->out_format == GCV_FORMAT_GRAY32F || f->bias != 0.0f)
    return;
  if (f->border == GCV_BORDER_CONSTANT && !(f->border_value >= 0.0f
          && f->border_value <= 255.0f
          && f->border_value == floorf (f->border_value)))
    return;
  for (guint i = 0; i < f->kw; i++) {
    if (!(f->row[i] >= 0.0f))
      return;
    sum_row += f->row[i];
  }
  for (guint j = 0; j < f->kh; j++) {
    if (!(f->column[j] >= 0.0f))
      return;
    sum_column += f->column[j];
  }
  if (sum_row == 0.0 || sum_column == 0.0)
    return;

  s->row_fixed = g_new (guint16, f->kw);
  s->column_fixed = g_new (guint16, f->kh);
  if (!quantize (f->row, f->kw, 1.0 / sum_row, s->row_fixed, &q_row, &d_row)
      || !quantize (f->column, f->kh, sum_row, s->column_fixed, &q_column,
          &d_column))
    goto no;
  s->row_start = f->kw / 2;
  s->column_start = f->kh / 2 + FIXED_ROUND;
  h_max = floor (255.0 * 256.0 * q_row / 65536.0) + s->row_start;
  v_max = floor (h_max * q_column / 65536.0) + s->column_start;
  if (h_max > 65535.0 || v_max > 255.0 * 256.0 + 255.0)
    goto no;
  e_row = (f->kw - f->kw / 2) + 255.0 * 256.0 * d_row;
  e_column = (f->kh - f->kh / 2) + h_max * d_column
      + (sum_row * sum_column + d_column) * e_row;
  if (e_column > FIXED_MAX_ERROR * 256.0)
    goto no;
  s->fixed = TRUE;
  s->sample = sizeof (guint16);
  /* border-value is only checked, and only used, for the constant border */
  s->border_fixed = f->border == GCV_BORDER_CONSTANT ?
      (guint16) (f->border_value * 256.0f) : 0;
  return;

no:
  g_clear_pointer (&s->row_fixed, g_free);
  g_clear_pointer (&s->column_fixed, g_free);
}

/* Strips as wide as the budget allows for the rows they keep, then evened
 * out over the frame's width. */
static void
choose_strips (Setup * s, guint w)
{
  /* samples per kept row; the direct path keeps input rows, kw - 1
   * columns wider than the strip */
  gsize samples = STRIP_BUDGET / ((s->separable ? s->kh : s->kh + 1)
      * s->sample);
  guint strip, n_strips, quantum = MAX (1, 8 * LANES / s->channels);

  if (!s->separable)
    samples = samples > (gsize) (s->kw - 1) * s->channels + STRIP_MIN_SAMPLES
        ? samples - (gsize) (s->kw - 1) * s->channels : STRIP_MIN_SAMPLES;
  samples = CLAMP (samples, STRIP_MIN_SAMPLES, STRIP_MAX_SAMPLES);
  if (!s->separable) {
    /* a magnitude's taps each take two multiply-adds */
    gsize pair = (s->sparse.weights0_y ? 4 : 2) * MAX (1,
        MAX (s->sparse.n_taps, s->full.n_taps));
    samples = MIN (samples, MAX (quantum * s->channels, PAIR_MAX_FMAS / pair));
  }
  strip = MAX (1, samples / s->channels / quantum * quantum);
  n_strips = (w + strip - 1) / strip;
  s->strip = MIN (strip, round_up ((w + n_strips - 1) / n_strips, quantum));
  s->strip = MIN (s->strip, w);
}

static void
choose_bands (Setup * s, guint h, guint workers)
{
  guint target = MAX (BAND_MIN_ROWS, BAND_HALO_FACTOR * (s->kh - 1));
  guint per_worker = MAX (1, (h + workers * target / 2) / (workers * target));
  guint tasks = MIN (h, workers * per_worker);

  s->band = (h + tasks - 1) / tasks;
  s->n_tasks = (h + s->band - 1) / s->band;
}

/* K[row][i] of `taps` (NULL: none), 0 outside the kernel's rows. */
static gfloat
direct_weight (const GcvFilter * f, const gfloat * taps, guint row, guint i)
{
  return taps && row < f->kh ? taps[(gsize) row * f->kw + i] : 0.0f;
}

/* Whether tap i of row r of the kh + 1 rows weighs something for one of
 * the two output rows, in either kernel of a magnitude. */
static gboolean
direct_weighs (const GcvFilter * f, guint r, guint i)
{
  /* row 0 weighs nothing for row y + 1, row kh nothing for row y */
  return direct_weight (f, f->taps, r, i) != 0.0f
      || direct_weight (f, f->taps, r - 1, i) != 0.0f
      || direct_weight (f, f->taps_y, r, i) != 0.0f
      || direct_weight (f, f->taps_y, r - 1, i) != 0.0f;
}

/* The direct path's taps (TapSet) of `f`: every tap of each row's
 * footprint when `all`, else those that weigh something for one of the
 * two rows (zero taps, as in Laplacians, sharpen and the corners of round
 * kernels, then cost nothing). FALSE and an error where memory runs out. */
static gboolean
tap_set_init (TapSet * ts, const GcvFilter * f, guint channels,
    gfloat out_scale, gboolean all, GError ** error)
{
  const guint n_sets = f->taps_y ? 4 : 2;
  guint t = 0;

  for (guint r = 0; r <= f->kh; r++)
    for (guint i = 0; i < f->kw; i++) {
      if (!all && !direct_weighs (f, r, i))
        continue;
      ts->n_taps++;
      ts->n_first += r == 0;
      ts->n_last += r == f->kh;
    }
  ts->taps = try_alloc (ts->n_taps * sizeof (Tap), error, "the %u taps of "
      "a %ux%u kernel", ts->n_taps, f->kw, f->kh);
  ts->weights0 = ts->taps ? try_alloc (n_sets * ts->n_taps * sizeof
      (gfloat), error, "the %u taps of a %ux%u kernel", ts->n_taps, f->kw,
      f->kh) : NULL;
  if (!ts->weights0)
    return FALSE;
  ts->weights1 = ts->weights0 + ts->n_taps;
  if (f->taps_y) {
    ts->weights0_y = ts->weights1 + ts->n_taps;
    ts->weights1_y = ts->weights0_y + ts->n_taps;
  }
  for (guint r = 0; r <= f->kh; r++)
    for (guint i = 0; i < f->kw; i++) {
      if (!all && !direct_weighs (f, r, i))
        continue;
      ts->taps[t].row = r;
      ts->taps[t].offset = i * channels;
      ts->weights0[t] = direct_weight (f, f->taps, r, i) * out_scale;
      ts->weights1[t] = direct_weight (f, f->taps, r - 1, i) * out_scale;
      if (f->taps_y) {
        ts->weights0_y[t] = direct_weight (f, f->taps_y, r, i) * out_scale;
        ts->weights1_y[t] = direct_weight (f, f->taps_y, r - 1, i)
            * out_scale;
      }
      t++;
    }
  return TRUE;
}

static gint
sign (gfloat v)
{
  return (v > 0.0f) - (v < 0.0f);
}

/* Whether column[j] * row[i], as the separable path multiplies them, has
 * the sign of K[j][i] for every tap, zero where K is zero: then a NaN or
 * an infinity under the footprint gives what K gives it. A kernel that is
 * rank 1 only within the tolerance may not (a tiny tap where the factors
 * give 0, which turns an infinity into NaN). */
static gboolean
factors_keep_signs (const GcvFilter * f)
{
  for (guint j = 0; j < f->kh; j++)
    for (guint i = 0; i < f->kw; i++)
      if (sign (f->column[j]) * sign (f->row[i])
          != sign (f->taps[(gsize) j * f->kw + i]))
        return FALSE;
  return TRUE;
}

/* Everything but the scratch for the plan's filter on its geometry; NULL
 * and an error where memory runs out. */
static Setup *
setup_new (const GcvPlan * plan, guint workers, GError ** error)
{
  const GcvFilter *f = plan->filter;
  const GcvGeometry *g = &plan->geometry;
  Setup *s = g_new0 (Setup, 1);
  gfloat out_scale = 1.0f;
  gboolean float_in;

  /* float input may hold NaN and infinities, which the separable path
   * treats as K does only where its factors keep K's signs */
  float_in = g->in_format == GCV_FORMAT_GRAY32F;
  /* a magnitude (taps_y) is never rank 1; its two kernels run direct */
  s->separable = f->use_separable && !f->taps_y
      && plan->requested != GCV_FAMILY_DIRECT
      && (!float_in || factors_keep_signs (f));
  s->kw = f->kw;
  s->kh = f->kh;
  s->ax = f->ax;
  s->ay = f->ay;
  s->channels = gcv_format_channels (g->in_format);
  s->sample = sizeof (gfloat);
  s->keep_alpha = s->channels == 4 && !f->filter_alpha;
  s->border = f->border;
  s->border_value = f->border_value;
  if (g->in_format == GCV_FORMAT_GRAY8 && g->out_format == GCV_FORMAT_GRAY32F)
    out_scale = 1.0f / 255.0f;
  else if (g->in_format == GCV_FORMAT_GRAY32F
      && g->out_format == GCV_FORMAT_GRAY8)
    out_scale = 255.0f;
  s->bias = f->bias * out_scale;
  s->magnitude_sign = f->magnitude_sign;

  setup_fixed (s, f, g);
  if (s->separable && !s->fixed) {
    s->row = g_memdup2 (f->row, f->kw * sizeof (gfloat));
    s->column = g_new (gfloat, f->kh);
    for (guint j = 0; j < f->kh; j++)
      s->column[j] = f->column[j] * out_scale;
  } else if (!s->separable) {
    if (!tap_set_init (&s->sparse, f, s->channels, out_scale, FALSE, error)) {
      setup_free (s);
      return NULL;
    }
    /* without zero taps every row goes through all of them anyway */
    s->check_finite = float_in
        && s->sparse.n_taps < (gsize) f->kw * (f->kh + 1);
    if (s->check_finite && !tap_set_init (&s->full, f, s->channels,
            out_scale, TRUE, error)) {
      setup_free (s);
      return NULL;
    }
  }

  choose_strips (s, g->width);
  choose_bands (s, g->height, workers);

  s->xmap = g_new (gint, g->width + f->kw - 1);
  for (guint pc = 0; pc < g->width + f->kw - 1; pc++)
    s->xmap[pc] = gcv_border_index ((gint) pc - (gint) f->ax,
        (gint) g->width, f->border);

  /* each piece of a worker's scratch starts on a cache line */
  s->line_bytes = round_up ((gsize) (s->strip + s->kw - 1) * s->channels
      * s->sample, 64);
  s->out_bytes = round_up ((gsize) s->strip * s->channels * sizeof (gfloat),
      64);
  s->ring = s->separable ? s->kh : s->kh + 1;
  s->kept_row_bytes = s->separable ? round_up ((gsize) s->strip * s->channels
      * s->sample, 64) : s->line_bytes;
  s->ptr_slots = round_up (MAX (MAX (s->kw, s->kh), MAX (s->sparse.n_taps,
              s->full.n_taps)), 8);
  s->scratch_bytes = s->line_bytes + s->ring * s->kept_row_bytes
      + 2 * s->out_bytes + (s->ptr_slots + 2 * round_up (s->ring, 8))
      * sizeof (gpointer) + s->ring + 64;
  return s;
}

static void
scratch_free (Scratch * sc, guint n)
{
  for (guint i = 0; sc && i < n; i++)
    g_free (sc[i].mem);
  g_free (sc);
}

/* Scratch of `bytes` for each of n workers; NULL and an error saying how
 * much could not be had when memory runs out. */
static Scratch *
scratch_new (const Setup * s, gsize bytes, guint n, GError ** error)
{
  Scratch *sc = g_new0 (Scratch, n);

  for (guint i = 0; i < n; i++) {
    sc[i].mem = try_alloc (bytes, error, "the CPU scratch of worker %u of "
        "%u (a %ux%u kernel on strips of %u pixels)", i + 1, n, s->kw, s->kh,
        s->strip);
    if (!sc[i].mem) {
      scratch_free (sc, n);
      return NULL;
    }
  }
  return sc;
}

/* Points the pieces of each worker's scratch at their places for `s`. */
static void
scratch_layout (Scratch * sc, guint n, const Setup * s)
{
  for (guint i = 0; i < n; i++) {
    sc[i].line = (guint8 *) round_up ((gsize) sc[i].mem, 64);
    sc[i].kept = sc[i].line + s->line_bytes;
    sc[i].out[0] = sc[i].kept + s->ring * s->kept_row_bytes;
    sc[i].out[1] = sc[i].out[0] + s->out_bytes;
    sc[i].ptr = (gconstpointer *) (sc[i].out[1] + s->out_bytes);
    sc[i].rows = sc[i].ptr + s->ptr_slots;
    sc[i].window = sc[i].rows + round_up (s->ring, 8);
    sc[i].finite = (guint8 *) (sc[i].window + round_up (s->ring, 8));
  }
}

/* --- backend -------------------------------------------------------------- */

static gboolean
cpu_available (gint device_id, GError ** error)
{
  return TRUE;
}

static gpointer
cpu_engine_new (gint device_id, gpointer context, GError ** error)
{
  CpuEngine *e = g_new0 (CpuEngine, 1);
  guint n = g_get_num_processors ();

  e->pool = gcv_cpu_pool_new (n);
  e->description = g_strdup_printf ("cpu (%u threads)", n);
  return e;
}

static void
cpu_engine_interrupt (gpointer engine, gboolean on)
{
  g_atomic_int_set (&((CpuEngine *) engine)->interrupted, on);
}

static const gchar *
cpu_engine_describe (gpointer engine)
{
  return ((CpuEngine *) engine)->description;
}

static void
cpu_engine_free (gpointer engine)
{
  CpuEngine *e = engine;
  gcv_cpu_pool_free (e->pool);
  g_free (e->description);
  g_free (e);
}

/* Sets the plan up for its filter. Scratch is kept while it is large
 * enough, so a filter that changes between frames allocates nothing; when
 * it cannot be had, the plan keeps its previous filter. */
static gboolean
cpu_plan_set_filter (gpointer state, GcvPlan * plan, GError ** error)
{
  CpuPlan *cp = state;
  guint n = gcv_cpu_pool_get_n_workers (cp->engine->pool);
  Setup *s = setup_new (plan, n, error);

  if (!s)
    return FALSE;
  if (!cp->scratch || s->scratch_bytes > cp->scratch_bytes) {
    Scratch *sc = scratch_new (s, s->scratch_bytes, n, error);
    if (!sc) {
      setup_free (s);
      return FALSE;
    }
    scratch_free (cp->scratch, n);
    cp->scratch = sc;
    cp->scratch_bytes = s->scratch_bytes;
  }
  scratch_layout (cp->scratch, n, s);
  setup_free (cp->setup);
  cp->setup = s;

  /* The CPU has two paths: separable for rank-1 kernels unless direct is
   * forced, else direct. GPU-only families say so in the description. */
  GcvFamily algo = s->separable ? GCV_FAMILY_SEPARABLE :
      GCV_FAMILY_DIRECT;
  if (!s->separable && plan->filter->use_separable
      && plan->requested != GCV_FAMILY_DIRECT)
    gcv_plan_set_description (plan, algo, "%s", "(GRAY32F input: the "
        "separable factors do not keep the kernel's zeros and signs)");
  else if (plan->requested != GCV_FAMILY_AUTO && plan->requested != algo)
    gcv_plan_set_description (plan, algo, "(%s runs on CUDA only)",
        gcv_family_nick (plan->requested));
  else
    gcv_plan_set_description (plan, algo, "%s", "");
  return TRUE;
}

static void
cpu_plan_free (gpointer state)
{
  CpuPlan *cp = state;
  scratch_free (cp->scratch, gcv_cpu_pool_get_n_workers (cp->engine->pool));
  setup_free (cp->setup);
  gcv_cpu_stats_clear (&cp->stats);
  g_free (cp->options);
  g_free (cp->results);
  g_free (cp);
}

static gpointer
cpu_plan_new (gpointer engine, GcvPlan * plan, GError ** error)
{
  CpuPlan *cp = g_new0 (CpuPlan, 1);
  cp->engine = engine;
  cp->options = g_new0 (GcvFrameOptions, plan->n_slots);
  cp->results = g_new0 (GcvFrameStats, plan->n_slots);
  if (!cpu_plan_set_filter (cp, plan, error)) {
    cpu_plan_free (cp);
    return NULL;
  }
  return cp;
}

static gboolean
cpu_submit (gpointer state, GcvPlan * plan, guint slot, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps, GError ** error)
{
  CpuPlan *cp = state;
  const Setup *s = cp->setup;
  const GcvFrameOptions *o = &cp->options[slot];
  Job job = { cp, plan, src, dst, o->statistics ? &cp->stats : NULL, FALSE };

  /* per-frame statistics: each band's output rows as they are stored */
  if (job.stats)
    gcv_cpu_stats_begin (&cp->stats, s->n_tasks,
        gcv_filtered_channels (plan->geometry.in_format,
            plan->filter->filter_alpha), s->channels, plan->geometry.width,
        plan->geometry.height, o->statistics_threshold);
  if (!g_atomic_int_get (&cp->engine->interrupted))
    gcv_cpu_pool_run (cp->engine->pool, s->n_tasks, run_band, &job);
  else
    job.stopped = TRUE;
  if (job.stopped) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_INTERRUPTED, "the frame was "
        "interrupted (gcv_engine_interrupt)");
    return FALSE;
  }
  if (job.stats)
    gcv_cpu_stats_end (&cp->stats, &cp->results[slot]);
  return TRUE;
}

/* The options of the frame about to be submitted in `slot`. */
static gboolean
cpu_set_frame_options (gpointer state, GcvPlan * plan, guint slot,
    const GcvFrameOptions * options, GError ** error)
{
  CpuPlan *cp = state;

  if (options)
    cp->options[slot] = *options;
  else
    gcv_frame_options_init (&cp->options[slot]);
  return TRUE;
}

static void
cpu_get_frame_stats (gpointer state, GcvPlan * plan, guint slot,
    GcvFrameStats * stats)
{
  *stats = ((CpuPlan *) state)->results[slot];
}

static gboolean
cpu_wait (gpointer state, GcvPlan * plan, guint slot, GError ** error)
{
  return TRUE;                  /* submit ran synchronously */
}

const GcvBackend gcv_cpu_backend = {
  .name = "cpu",
  .available = cpu_available,
  .engine_new = cpu_engine_new,
  .engine_describe = cpu_engine_describe,
  .engine_free = cpu_engine_free,
  .plan_new = cpu_plan_new,
  .plan_set_filter = cpu_plan_set_filter,
  .submit = cpu_submit,
  .wait = cpu_wait,
  .plan_free = cpu_plan_free,
  .set_frame_options = cpu_set_frame_options,
  .get_frame_stats = cpu_get_frame_stats,
  .engine_interrupt = cpu_engine_interrupt,
};
