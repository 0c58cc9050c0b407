/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Plain reference implementation of what gpuconvolve computes, written from
 * docs/filters.md and docs/formats.md in double precision with naive loops:
 * the one reference of the tests and the benchmarks. It
 * shares no code with the engine: borders, built-in kernels, rounding and
 * formats are all re-derived here. */
#ifndef GCVT_REFERENCE_H
#define GCVT_REFERENCE_H

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  REF_RGBA,
  REF_BGRA,
  REF_RGBX,
  REF_BGRX,
  REF_GRAY8,
  REF_GRAY32F,
  REF_N_FORMATS
} RefFormat;

typedef struct {
  const gchar *name;            /* caps format string */
  guint pixel_bytes;            /* bytes per pixel in memory */
  guint channels;               /* samples per pixel (4 for the RGBA family) */
  gboolean is_float;
} RefFormatInfo;

const RefFormatInfo *ref_format_info (RefFormat format);
/* GStreamer's default row stride: GRAY8 rows are padded to 4 bytes. */
gsize ref_default_stride (RefFormat format, guint width);

typedef enum {
  REF_BORDER_CONSTANT,
  REF_BORDER_REPLICATE,
  REF_BORDER_REFLECT,
  REF_BORDER_REFLECT101,
  REF_BORDER_WRAP,
  REF_N_BORDERS
} RefBorder;

const gchar *ref_border_nick (RefBorder border);
/* Where coordinate i of a line of n samples reads from; -1 for the
 * constant border. */
gint ref_border_fold (gint i, gint n, RefBorder border);

/* An image of doubles, channels interleaved:
 * v[(y * width + x) * channels + c]. */
typedef struct {
  guint width, height, channels;
  gdouble *v;
} RefImage;

RefImage *ref_image_new (guint width, guint height, guint channels);
RefImage *ref_image_copy (const RefImage * img);
void ref_image_free (RefImage * img);
gdouble ref_image_max_abs (const RefImage * img);
static inline gdouble *
ref_pixel (const RefImage * img, guint x, guint y)
{
  return img->v + ((gsize) y * img->width + x) * img->channels;
}

typedef struct {
  guint kw, kh;
  gdouble *k;                   /* kh * kw, row-major */
} RefKernel;

RefKernel *ref_kernel_new (guint kw, guint kh);
RefKernel *ref_kernel_copy (const RefKernel * k);
void ref_kernel_free (RefKernel * k);
/* K[j][i] = column[j] * row[i] */
RefKernel *ref_kernel_outer (const gdouble * column, guint kh,
    const gdouble * row, guint kw);
gdouble ref_kernel_sum (const RefKernel * k);
gdouble ref_kernel_sum_abs (const RefKernel * k);
/* Rank 1 as docs/filters.md defines it for separable=auto: factorised
 * through the largest coefficient, sum|K - column (x) row| <= 1e-6 sum|K|. */
gboolean ref_kernel_is_rank1 (const RefKernel * k);
/* Built-in filter by its `filter` nick, NULL where size is too small. */
RefKernel *ref_builtin (const gchar * nick, guint size, gdouble sigma);

typedef struct {
  const RefKernel *kernel;      /* NULL: the 1x1 identity */
  gint anchor_x, anchor_y;      /* -1: centre */
  gboolean convolution;
  gboolean normalize;
  gdouble scale, bias;
  RefBorder border;
  gdouble border_value;
  gboolean filter_alpha;
  /* a second kernel (same size and anchor): the output is then the
   * magnitude sqrt(gx^2 + gy^2) of `kernel`'s gx and this one's gy, with
   * scale and bias applied to the magnitude */
  const RefKernel *kernel_y;
} RefParams;

void ref_params_init (RefParams * p, const RefKernel * kernel);
/* A filter as an engine holds it: kh * kw single-precision correlation
 * taps (row-major) with the scale folded in, an anchor and a bias; border
 * replicate. Returns the kernel `p` points to, for the caller to free. */
RefKernel *ref_params_init_taps (RefParams * p, const gfloat * taps, guint kw,
    guint kh, guint anchor_x, guint anchor_y, gdouble bias);
/* scale, divided by sum(K) when normalize applies */
gdouble ref_effective_scale (const RefParams * p);
gchar *ref_params_describe (const RefParams * p);

/* The filtered image in input units, before rounding or conversion. With
 * four channels and filter_alpha off, channel 3 is copied from `in`. */
RefImage *ref_filter (const RefImage * in, const RefParams * p);
/* Rows [y0, y1) of ref_filter() written into `out`, a copy of `in` (the
 * rows of a frame can be computed apart, in threads of their own). */
void ref_filter_rows (const RefImage * in, const RefParams * p,
    RefImage * out, guint y0, guint y1);
/* One sample of ref_filter(): channel c at (x, y), in input units. */
gdouble ref_filter_at (const RefImage * in, const RefParams * p, guint x,
    guint y, guint c);

/* A frame in memory, read in place (for frames too large to hold as a
 * RefImage): `pixel_bytes` per pixel, bytes (channel c at byte c) or one
 * float per pixel, rows `stride` bytes apart. */
typedef struct {
  const guint8 *data;
  gsize stride;
  guint width, height;
  guint pixel_bytes;
  gboolean is_float;
} RefView;

gdouble ref_view_get (const RefView * v, guint x, guint y, guint c);
/* ref_filter_at() of the frame `in` points at. */
gdouble ref_filter_view_at (const RefView * in, const RefParams * p, guint x,
    guint y, guint c);

/* --- 4:2:0 frames: NV12 and I420 (docs/formats.md, "NV12 and I420") ---- */

/* Chroma samples across n luma samples: ceil(n / 2). */
guint ref_chroma_size (guint n);
/* Y (width x height), U and V (ref_chroma_size() of each), one channel
 * each, zero. */
void ref_planes_new (RefImage * planes[3], guint width, guint height);
void ref_planes_free (RefImage * planes[3]);
/* The region (x, y, width, height): Y from (x, y); U and V from the chroma
 * sample that covers that pixel, (x / 2, y / 2). */
void ref_planes_crop (RefImage * out[3], RefImage * const in[3], guint x,
    guint y, guint width, guint height);
/* planes=luma (`all` FALSE): Y filtered, U and V copied; planes=all: each
 * plane filtered at its own size with the same parameters. In input units,
 * before rounding. */
void ref_planes_filter (RefImage * out[3], RefImage * const in[3],
    const RefParams * p, gboolean all);

/* Allowed error of float results (docs/filters.md):
 * 1e-5 * sum|scale K| * max|in| + 1e-6, max|in| counting the border value;
 * `unit` scales the first term into output units (1/255 for GRAY8 in,
 * GRAY32F out). */
gdouble ref_float_tolerance (const RefParams * p, const RefImage * in,
    gdouble unit);
/* The same bound for an input whose largest |sample| is `max_abs_in`. */
gdouble ref_float_bound (const RefParams * p, gdouble max_abs_in,
    gdouble unit);

/* Allowed error of 8-bit results, in output units (docs/filters.md):
 * max(1, 1e-5 * sum|scale K| * 255) for 8-bit input, 255 standing for
 * max|in| (or the border value when that is larger); for float input
 * (GRAY32F -> GRAY8) the float bound in output units, max(1, 1e-5 *
 * sum|scale K| * max|in| * 255). */
gdouble ref_u8_tolerance (const RefParams * p, const RefImage * in,
    gboolean in_is_float);
/* The 8-bit bound, max(1, 1e-5 * sum|scale K| * m), m being the largest
 * input in output units (255 for 8-bit input, or a larger border value).
 * The 16-bit and 10-bit outputs (GRAY16_LE, P010_10LE) have the same bound
 * in their units: m is then 65535 or 1023 for input of those formats
 * (docs/formats.md). */
gdouble ref_u8_bound (const RefParams * p, gdouble m);

/* Per-frame statistics of one channel (docs/statistics.md). */
typedef struct {
  guint64 count;
  gdouble sum, sum_squares;
  gdouble min, max;             /* of the samples that are not NaN */
  guint min_x, min_y, max_x, max_y;     /* first in row order */
  guint64 above;                /* |v| > threshold */
  guint64 near;                 /* |v| within `tol` of the threshold, where
                                 * a result within tolerance may fall on
                                 * either side */
} RefStats;

/* The statistics of channel c of `img`, each sample times `unit` (into
 * output units). */
void ref_stats (const RefImage * img, guint c, gdouble unit,
    gdouble threshold, gdouble tol, RefStats * s);

/* Privacy regions (docs/regions.md): whether sample (x, y) of a plane is
 * filtered, the plane's samples each covering `sub` x `sub` pixels of a
 * frame_w x frame_h frame (1, or 2 for 4:2:0 chroma), for n regions
 * rects[4 * i ..] = x, y, width, height in frame pixels and a mode: 0 all,
 * 1 inside (a sample one of whose pixels in the frame is in a region), 2
 * outside (the others). */
gboolean ref_region_filtered (const gint * rects, guint n, guint mode,
    guint frame_w, guint frame_h, guint sub, guint x, guint y);

/* Round to nearest, ties to even, saturate to [0, 255]; NaN gives 0. */
guint8 ref_to_u8 (gdouble v);
/* The same to [0, max]: 65535 for GRAY16_LE, 1023 for P010_10LE's 10-bit
 * values (docs/formats.md). */
guint ref_to_uint (gdouble v, guint max);

/* A random generator seeded from GPUCONVOLVE_TEST_SEED or the clock; the
 * seed is printed with `what`, so a failure can be repeated. */
GRand *ref_rand_new (const gchar * what);
/* The same with a fixed seed, so that a run repeats, unless
 * GPUCONVOLVE_TEST_SEED asks for another. */
GRand *ref_rand_new_seeded (const gchar * what, guint32 seed);

G_END_DECLS

#endif /* GCVT_REFERENCE_H */
