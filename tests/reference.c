/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Plain double-precision reference of gpuconvolve, from docs/filters.md. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const RefFormatInfo format_infos[REF_N_FORMATS] = {
  {"RGBA", 4, 4, FALSE},
  {"BGRA", 4, 4, FALSE},
  {"RGBx", 4, 4, FALSE},
  {"BGRx", 4, 4, FALSE},
  {"GRAY8", 1, 1, FALSE},
  {"GRAY32F", 4, 1, TRUE},
};

const RefFormatInfo *
ref_format_info (RefFormat format)
{
  g_assert (format < REF_N_FORMATS);
  return &format_infos[format];
}

gsize
ref_default_stride (RefFormat format, guint width)
{
  gsize row = (gsize) width * ref_format_info (format)->pixel_bytes;
  return format == REF_GRAY8 ? (row + 3) / 4 * 4 : row;
}

static const gchar *const border_nicks[REF_N_BORDERS] = {
  "constant", "replicate", "reflect", "reflect101", "wrap",
};

const gchar *
ref_border_nick (RefBorder border)
{
  g_assert (border < REF_N_BORDERS);
  return border_nicks[border];
}

/* Folds i into the frame one reflection (or period) at a time, the way the
 * table in docs/filters.md draws it, until it lands inside. */
gint
ref_border_fold (gint i, gint n, RefBorder border)
{
  switch (border) {
    case REF_BORDER_CONSTANT:
      return i >= 0 && i < n ? i : -1;
    case REF_BORDER_REPLICATE:         /* a a a | a b c d */
      return i < 0 ? 0 : (i >= n ? n - 1 : i);
    case REF_BORDER_REFLECT:           /* c b a | a b c d */
      while (i < 0 || i >= n)
        i = i < 0 ? -i - 1 : 2 * n - 1 - i;
      return i;
    case REF_BORDER_REFLECT101:        /* d c b | a b c d */
      if (n == 1)
        return 0;
      while (i < 0 || i >= n)
        i = i < 0 ? -i : 2 * n - 2 - i;
      return i;
    case REF_BORDER_WRAP:              /* b c d | a b c d */
      while (i < 0)
        i += n;
      while (i >= n)
        i -= n;
      return i;
    default:
      g_assert_not_reached ();
  }
  return -1;
}

/* --- images and kernels ------------------------------------------------- */

RefImage *
ref_image_new (guint width, guint height, guint channels)
{
  RefImage *img = g_new0 (RefImage, 1);
  img->width = width;
  img->height = height;
  img->channels = channels;
  img->v = g_new0 (gdouble, (gsize) width * height * channels);
  return img;
}

RefImage *
ref_image_copy (const RefImage * img)
{
  RefImage *c = ref_image_new (img->width, img->height, img->channels);
  memcpy (c->v, img->v, sizeof (gdouble) * img->width * img->height *
      img->channels);
  return c;
}

void
ref_image_free (RefImage * img)
{
  if (!img)
    return;
  g_free (img->v);
  g_free (img);
}

gdouble
ref_image_max_abs (const RefImage * img)
{
  gdouble m = 0.0;
  gsize n = (gsize) img->width * img->height * img->channels;
  for (gsize i = 0; i < n; i++)
    m = MAX (m, fabs (img->v[i]));
  return m;
}

RefKernel *
ref_kernel_new (guint kw, guint kh)
{
  RefKernel *k = g_new0 (RefKernel, 1);
  k->kw = kw;
  k->kh = kh;
  k->k = g_new0 (gdouble, (gsize) kw * kh);
  return k;
}

RefKernel *
ref_kernel_copy (const RefKernel * k)
{
  RefKernel *c = ref_kernel_new (k->kw, k->kh);
  memcpy (c->k, k->k, sizeof (gdouble) * k->kw * k->kh);
  return c;
}

void
ref_kernel_free (RefKernel * k)
{
  if (!k)
    return;
  g_free (k->k);
  g_free (k);
}

RefKernel *
ref_kernel_outer (const gdouble * column, guint kh, const gdouble * row,
    guint kw)
{
  RefKernel *k = ref_kernel_new (kw, kh);
  for (guint j = 0; j < kh; j++)
    for (guint i = 0; i < kw; i++)
      k->k[j * kw + i] = column[j] * row[i];
  return k;
}

gdouble
ref_kernel_sum (const RefKernel * k)
{
  gdouble s = 0.0;
  for (guint i = 0; i < k->kw * k->kh; i++)
    s += k->k[i];
  return s;
}

gdouble
ref_kernel_sum_abs (const RefKernel * k)
{
  gdouble s = 0.0;
  for (guint i = 0; i < k->kw * k->kh; i++)
    s += fabs (k->k[i]);
  return s;
}

gboolean
ref_kernel_is_rank1 (const RefKernel * k)
{
  guint best = 0;
  gdouble p, err = 0.0;

  for (guint i = 1; i < k->kw * k->kh; i++)
    if (fabs (k->k[i]) > fabs (k->k[best]))
      best = i;
  p = k->k[best];
  if (p == 0.0)
    return TRUE;                /* all zero */
  for (guint j = 0; j < k->kh; j++)
    for (guint i = 0; i < k->kw; i++) {
      gdouble row = k->k[(best / k->kw) * k->kw + i];
      gdouble column = k->k[j * k->kw + best % k->kw] / p;
      err += fabs (k->k[j * k->kw + i] - column * row);
    }
  return err <= 1e-6 * ref_kernel_sum_abs (k);
}

/* --- built-in filters (docs/filters.md, "Built-in filters") ------------- */

/* binomial(m): the m coefficients C(m-1, t) */
static gdouble *
binomial (guint m)
{
  gdouble *b = g_new (gdouble, m);
  for (guint t = 0; t < m; t++) {
    gdouble c = 1.0;
    for (guint u = 1; u <= t; u++)
      c = c * (m - 1 - t + u) / u;
    b[t] = c;
  }
  return b;
}

/* full discrete convolution, na + nb - 1 values */
static gdouble *
full_convolve (const gdouble * a, guint na, const gdouble * b, guint nb)
{
  gdouble *out = g_new0 (gdouble, na + nb - 1);
  for (guint k = 0; k < na + nb - 1; k++)
    for (guint i = 0; i < na; i++)
      if (k >= i && k - i < nb)
        out[k] += a[i] * b[k - i];
  return out;
}

static RefKernel *
gaussian_2d (guint n, gdouble sigma)
{
  gdouble *g = g_new (gdouble, n), sum = 0.0, c = (n - 1) / 2.0;
  RefKernel *k;

  for (guint i = 0; i < n; i++) {
    g[i] = exp (-(i - c) * (i - c) / (2.0 * sigma * sigma));
    sum += g[i];
  }
  for (guint i = 0; i < n; i++)
    g[i] /= sum;
  k = ref_kernel_outer (g, n, g, n);
  g_free (g);
  return k;
}

RefKernel *
ref_builtin (const gchar * nick, guint n, gdouble sigma)
{
  RefKernel *k = NULL;
  const gdouble c = (n - 1) / 2.0;
  const guint centre = (n - 1) / 2;

  if (g_str_equal (nick, "box")) {
    k = ref_kernel_new (n, n);
    for (guint i = 0; i < n * n; i++)
      k->k[i] = 1.0 / ((gdouble) n * n);
  } else if (g_str_equal (nick, "gaussian")) {
    k = gaussian_2d (n, sigma);
  } else if (g_str_equal (nick, "sharpen")) {
    k = gaussian_2d (n, sigma);
    for (guint i = 0; i < n * n; i++)
      k->k[i] = -k->k[i];
    k->k[centre * n + centre] += 2.0;
  } else if (g_str_equal (nick, "laplacian")) {
    static const gdouble second[3] = { 1.0, -2.0, 1.0 };
    gdouble *b, *d2, *s;
    if (n < 3)
      return NULL;
    b = binomial (n - 2);
    d2 = full_convolve (b, n - 2, second, 3);
    s = g_new0 (gdouble, n);
    for (guint t = 0; t < n - 2; t++)
      s[t + 1] = b[t];
    k = ref_kernel_new (n, n);
    for (guint j = 0; j < n; j++)
      for (guint i = 0; i < n; i++)
        k->k[j * n + i] = s[j] * d2[i] + d2[j] * s[i];
    g_free (b);
    g_free (d2);
    g_free (s);
  } else if (g_str_equal (nick, "sobel-x") || g_str_equal (nick, "sobel-y")) {
    static const gdouble diff[2] = { -1.0, 1.0 };
    gdouble *s, *b, *d;
    if (n < 3)
      return NULL;
    s = binomial (n);
    b = binomial (n - 1);
    d = full_convolve (b, n - 1, diff, 2);
    k = g_str_equal (nick, "sobel-x") ? ref_kernel_outer (s, n, d, n)
        : ref_kernel_outer (d, n, s, n);
    g_free (s);
    g_free (b);
    g_free (d);
  } else if (g_str_equal (nick, "scharr-x")) {
    static const gdouble smooth[3] = { 3.0, 10.0, 3.0 }, deriv[3] = { -1.0,
      0.0, 1.0
    };
    k = ref_kernel_outer (smooth, 3, deriv, 3);
  } else if (g_str_equal (nick, "scharr-y")) {
    static const gdouble smooth[3] = { 3.0, 10.0, 3.0 }, deriv[3] = { -1.0,
      0.0, 1.0
    };
    k = ref_kernel_outer (deriv, 3, smooth, 3);
  } else if (g_str_equal (nick, "emboss")) {
    k = ref_kernel_new (n, n);
    for (guint j = 0; j < n; j++)
      for (guint i = 0; i < n; i++)
        k->k[j * n + i] = (i - c) + (j - c);
    k->k[centre * n + centre] += 1.0;
  } else if (g_str_equal (nick, "log")) {
    gdouble mean = 0.0, s2 = sigma * sigma;
    k = ref_kernel_new (n, n);
    for (guint j = 0; j < n; j++)
      for (guint i = 0; i < n; i++) {
        gdouble r2 = (i - c) * (i - c) + (j - c) * (j - c);
        k->k[j * n + i] = -1.0 / (G_PI * s2 * s2) * (1.0 - r2 / (2.0 * s2))
            * exp (-r2 / (2.0 * s2));
        mean += k->k[j * n + i] / ((gdouble) n * n);
      }
    for (guint i = 0; i < n * n; i++)
      k->k[i] -= mean;
  } else if (g_str_equal (nick, "dog")) {
    RefKernel *wide = gaussian_2d (n, 1.6 * sigma);
    k = gaussian_2d (n, sigma);
    for (guint i = 0; i < n * n; i++)
      k->k[i] -= wide->k[i];
    ref_kernel_free (wide);
  } else {
    g_error ("unknown built-in filter %s", nick);
  }
  return k;
}

/* --- the filter --------------------------------------------------------- */

void
ref_params_init (RefParams * p, const RefKernel * kernel)
{
  memset (p, 0, sizeof (*p));
  p->kernel = kernel;
  p->anchor_x = p->anchor_y = -1;
  p->scale = 1.0;
  p->border = REF_BORDER_REPLICATE;
}

RefKernel *
ref_params_init_taps (RefParams * p, const gfloat * taps, guint kw, guint kh,
    guint anchor_x, guint anchor_y, gdouble bias)
{
  RefKernel *k = ref_kernel_new (kw, kh);

  for (gsize i = 0; i < (gsize) kw * kh; i++)
    k->k[i] = taps[i];
  ref_params_init (p, k);
  p->anchor_x = anchor_x;
  p->anchor_y = anchor_y;
  p->bias = bias;
  return k;
}

static gdouble identity_tap = 1.0;
static const RefKernel identity = { 1, 1, &identity_tap };

static const RefKernel *
params_kernel (const RefParams * p)
{
  return p->kernel ? p->kernel : &identity;
}

gdouble
ref_effective_scale (const RefParams * p)
{
  const RefKernel *k = params_kernel (p);
  gdouble sum = ref_kernel_sum (k);

  if (p->normalize && fabs (sum) > 1e-9 * ref_kernel_sum_abs (k))
    return p->scale / sum;
  return p->scale;
}

gchar *
ref_params_describe (const RefParams * p)
{
  const RefKernel *k = params_kernel (p);
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "kernel %ux%u [", k->kw, k->kh);
  for (guint i = 0; i < k->kw * k->kh && i < 12; i++)
    g_string_append_printf (s, "%s%.4g", i ? " " : "", k->k[i]);
  g_string_append_printf (s, "%s] anchor (%d,%d) %s normalize=%d scale=%.6g "
      "bias=%.6g border=%s border-value=%.6g alpha=%s",
      k->kw * k->kh > 12 ? " ..." : "", p->anchor_x, p->anchor_y,
      p->convolution ? "convolution" : "correlation", p->normalize, p->scale,
      p->bias, ref_border_nick (p->border), p->border_value,
      p->filter_alpha ? "filter" : "passthrough");
  return g_string_free (s, FALSE);
}

/* Input sample c at (x, y) of a frame of any kind. */
typedef gdouble (*SampleFunc) (gconstpointer frame, guint x, guint y,
    guint c);

/* Where the taps of output column x read from, fx[0..kw), or of output row
 * y, with the size and anchor of one axis (-1 for the constant border):
 * correlation reads K over in(x + i - ax); convolution is the textbook sum
 * of K[j][i] * in(x - (i - ax)). */
static void
fold_taps (gint *f, gint x, gint n, gint k, gint anchor, const RefParams * p)
{
  for (gint i = 0; i < k; i++)
    f[i] = ref_border_fold (p->convolution ? x - i + anchor :
        x + i - anchor, n, p->border);
}

static gint
anchor_of (gint anchor, gint k)
{
  return anchor < 0 ? (k - 1) / 2 : anchor;
}

/* The formula of docs/filters.md at output sample c of the output pixel
 * whose taps read columns fx and rows fy (fold_taps()), `scale` being
 * ref_effective_scale(). A magnitude sums gx and gy over the same samples.
 * Inlined into each caller, so that the sample reads are too: ref_filter()
 * runs as fast as a loop over the image itself. */
G_ALWAYS_INLINE static inline gdouble
filter_at (SampleFunc get, gconstpointer frame, const RefParams * p,
    gdouble scale, const gint * fx, const gint * fy, guint c)
{
  const RefKernel *k = params_kernel (p);
  const gint kw = k->kw, kh = k->kh;
  gdouble sum = 0.0, sum_y = 0.0;

  for (gint j = 0; j < kh; j++)
    for (gint i = 0; i < kw; i++) {
      gdouble v = fx[i] < 0 || fy[j] < 0 ? p->border_value :
          get (frame, fx[i], fy[j], c);
      sum += k->k[j * kw + i] * v;
      if (p->kernel_y)
        sum_y += p->kernel_y->k[j * kw + i] * v;
    }
  if (p->kernel_y)
    sum = sqrt (sum * sum + sum_y * sum_y);
  return p->bias + scale * sum;
}

/* One sample of a w x h frame. */
static gdouble
filter_one (SampleFunc get, gconstpointer frame, gint w, gint h,
    const RefParams * p, gint x, gint y, guint c)
{
  const RefKernel *k = params_kernel (p);
  gint *fx = g_new (gint, k->kw), *fy = g_new (gint, k->kh);
  gdouble v;

  fold_taps (fx, x, w, k->kw, anchor_of (p->anchor_x, k->kw), p);
  fold_taps (fy, y, h, k->kh, anchor_of (p->anchor_y, k->kh), p);
  v = filter_at (get, frame, p, ref_effective_scale (p), fx, fy, c);
  g_free (fx);
  g_free (fy);
  return v;
}

static gdouble
image_sample (gconstpointer frame, guint x, guint y, guint c)
{
  return ref_pixel (frame, x, y)[c];
}

gdouble
ref_filter_at (const RefImage * in, const RefParams * p, guint x, guint y,
    guint c)
{
  return filter_one (image_sample, in, in->width, in->height, p, x, y, c);
}

RefImage *
ref_filter (const RefImage * in, const RefParams * p)
{
  RefImage *out = ref_image_copy (in);

  ref_filter_rows (in, p, out, 0, in->height);
  return out;
}

void
ref_filter_rows (const RefImage * in, const RefParams * p, RefImage * out,
    guint y0, guint y1)
{
  const RefKernel *k = params_kernel (p);
  const gint w = in->width, h = in->height, kw = k->kw, kh = k->kh;
  const guint filtered = in->channels == 4 && !p->filter_alpha ? 3 :
      in->channels;
  const gdouble scale = ref_effective_scale (p);
  /* the same taps for every row and every column: looked up once */
  gint *fx = g_new (gint, (gsize) w * kw), *fy = g_new (gint, (gsize) h * kh);

  for (gint x = 0; x < w; x++)
    fold_taps (fx + (gsize) x * kw, x, w, kw, anchor_of (p->anchor_x, kw), p);
  for (gint y = y0; y < (gint) y1; y++)
    fold_taps (fy + (gsize) y * kh, y, h, kh, anchor_of (p->anchor_y, kh), p);
  for (gint y = y0; y < (gint) y1; y++)
    for (gint x = 0; x < w; x++)
      for (guint c = 0; c < filtered; c++)
        ref_pixel (out, x, y)[c] = filter_at (image_sample, in, p, scale,
            fx + (gsize) x * kw, fy + (gsize) y * kh, c);
  g_free (fx);
  g_free (fy);
}

gdouble
ref_view_get (const RefView * v, guint x, guint y, guint c)
{
  const guint8 *px = v->data + (gsize) y * v->stride +
      (gsize) x * v->pixel_bytes;
  gfloat f;

  if (!v->is_float)
    return px[c];
  memcpy (&f, px, sizeof (f));
  return f;
}

static gdouble
view_sample (gconstpointer frame, guint x, guint y, guint c)
{
  return ref_view_get (frame, x, y, c);
}

gdouble
ref_filter_view_at (const RefView * in, const RefParams * p, guint x,
    guint y, guint c)
{
  return filter_one (view_sample, in, in->width, in->height, p, x, y, c);
}

/* --- 4:2:0 frames ------------------------------------------------------- */

guint
ref_chroma_size (guint n)
{
  return (n + 1) / 2;
}

void
ref_planes_new (RefImage * planes[3], guint width, guint height)
{
  planes[0] = ref_image_new (width, height, 1);
  for (guint c = 1; c < 3; c++)
    planes[c] = ref_image_new (ref_chroma_size (width),
        ref_chroma_size (height), 1);
}

void
ref_planes_free (RefImage * planes[3])
{
  for (guint c = 0; c < 3; c++) {
    ref_image_free (planes[c]);
    planes[c] = NULL;
  }
}

void
ref_planes_crop (RefImage * out[3], RefImage * const in[3], guint x0,
    guint y0, guint width, guint height)
{
  ref_planes_new (out, width, height);
  for (guint c = 0; c < 3; c++) {
    guint dx = c ? x0 / 2 : x0, dy = c ? y0 / 2 : y0;
    for (guint y = 0; y < out[c]->height; y++)
      for (guint x = 0; x < out[c]->width; x++)
        *ref_pixel (out[c], x, y) = *ref_pixel (in[c], dx + x, dy + y);
  }
}

void
ref_planes_filter (RefImage * out[3], RefImage * const in[3],
    const RefParams * p, gboolean all)
{
  for (guint c = 0; c < 3; c++)
    out[c] = c == 0 || all ? ref_filter (in[c], p) : ref_image_copy (in[c]);
}

/* sum|K|, of both kernels of a magnitude (its error is at most the sum of
 * theirs) */
static gdouble
taps_sum_abs (const RefParams * p)
{
  return ref_kernel_sum_abs (params_kernel (p)) +
      (p->kernel_y ? ref_kernel_sum_abs (p->kernel_y) : 0.0);
}

gdouble
ref_float_bound (const RefParams * p, gdouble max_abs_in, gdouble unit)
{
  gdouble m = max_abs_in;

  if (p->border == REF_BORDER_CONSTANT)
    m = MAX (m, fabs (p->border_value));
  return 1e-5 * fabs (ref_effective_scale (p)) * taps_sum_abs (p) * m * unit
      + 1e-6;
}

gdouble
ref_float_tolerance (const RefParams * p, const RefImage * in, gdouble unit)
{
  return ref_float_bound (p, ref_image_max_abs (in), unit);
}

gdouble
ref_u8_bound (const RefParams * p, gdouble m)
{
  return MAX (1.0, 1e-5 * fabs (ref_effective_scale (p)) *
      taps_sum_abs (p) * m);
}

gdouble
ref_u8_tolerance (const RefParams * p, const RefImage * in,
    gboolean in_is_float)
{
  gdouble m = in_is_float ? ref_image_max_abs (in) * 255.0 : 255.0;

  if (p->border == REF_BORDER_CONSTANT)
    m = MAX (m, fabs (p->border_value) * (in_is_float ? 255.0 : 1.0));
  return ref_u8_bound (p, m);
}

void
ref_stats (const RefImage * img, guint c, gdouble unit, gdouble threshold,
    gdouble tol, RefStats * s)
{
  memset (s, 0, sizeof (*s));
  s->min = s->max = NAN;
  for (guint y = 0; y < img->height; y++)
    for (guint x = 0; x < img->width; x++) {
      gdouble v = ref_pixel (img, x, y)[c] * unit;
      s->count++;
      s->sum += v;
      s->sum_squares += v * v;
      if (fabs (v) > threshold)
        s->above++;
      if (fabs (fabs (v) - threshold) <= tol)
        s->near++;
      if (isnan (v))
        continue;
      if (isnan (s->min) || v < s->min) {
        s->min = v;
        s->min_x = x;
        s->min_y = y;
      }
      if (isnan (s->max) || v > s->max) {
        s->max = v;
        s->max_x = x;
        s->max_y = y;
      }
    }
}

gboolean
ref_region_filtered (const gint * rects, guint n, guint mode, guint frame_w,
    guint frame_h, guint sub, guint x, guint y)
{
  gboolean in = FALSE;

  if (mode == 0)
    return TRUE;
  for (guint py = y * sub; py < (y + 1) * sub && py < frame_h; py++)
    for (guint px = x * sub; px < (x + 1) * sub && px < frame_w; px++)
      for (guint i = 0; i < n; i++) {
        const gint *r = rects + 4 * i;
        if ((gint64) px >= r[0] && (gint64) px < (gint64) r[0] + r[2]
            && (gint64) py >= r[1] && (gint64) py < (gint64) r[1] + r[3])
          in = TRUE;
      }
  return mode == 1 ? in : !in;
}

guint
ref_to_uint (gdouble v, guint max)
{
  gdouble r;

  if (isnan (v) || v <= 0.0)
    return 0;
  if (v >= max)
    return max;
  r = floor (v + 0.5);
  if (r - v == 0.5 && fmod (r, 2.0) != 0.0)
    r -= 1.0;                   /* a tie goes to the even neighbour */
  return (guint) r;
}

guint8
ref_to_u8 (gdouble v)
{
  return (guint8) ref_to_uint (v, 255);
}

GRand *
ref_rand_new (const gchar * what)
{
  return ref_rand_new_seeded (what,
      (guint32) (g_get_real_time () ^ ((gint64) getpid () << 16)));
}

GRand *
ref_rand_new_seeded (const gchar * what, guint32 seed)
{
  const gchar *env = g_getenv ("GPUCONVOLVE_TEST_SEED");

  if (env && *env)
    seed = (guint32) strtoul (env, NULL, 0);
  g_print ("%s: seed %u (GPUCONVOLVE_TEST_SEED=%u repeats it)\n", what, seed,
      seed);
  return g_rand_new_with_seed (seed);
}
