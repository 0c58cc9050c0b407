/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in filters of the `filter` property. Their exact definitions are
 * written down in docs/filters.md; keep the two in step. */
#include "gcv-private.h"

#include <math.h>

gboolean
gcv_builtin_magnitude (GcvBuiltin filter, GcvBuiltin * x, GcvBuiltin * y)
{
  if (filter != GCV_BUILTIN_SOBEL && filter != GCV_BUILTIN_SCHARR)
    return FALSE;
  *x = filter == GCV_BUILTIN_SOBEL ? GCV_BUILTIN_SOBEL_X :
      GCV_BUILTIN_SCHARR_X;
  *y = filter == GCV_BUILTIN_SOBEL ? GCV_BUILTIN_SOBEL_Y :
      GCV_BUILTIN_SCHARR_Y;
  return TRUE;
}

void
gcv_builtin_get_size (GcvBuiltin filter, guint size, guint * kw, guint * kh)
{
  /* Scharr is defined for 3x3 only, whatever `size` says. */
  guint n = (filter == GCV_BUILTIN_SCHARR_X || filter == GCV_BUILTIN_SCHARR_Y
      || filter == GCV_BUILTIN_SCHARR) ? 3 : size;
  *kw = *kh = n;
}

guint
gcv_builtin_min_size (GcvBuiltin filter)
{
  switch (filter) {
    case GCV_BUILTIN_LAPLACIAN:
    case GCV_BUILTIN_SOBEL_X:
    case GCV_BUILTIN_SOBEL_Y:
    case GCV_BUILTIN_SOBEL:
      return 3;
    default:
      return 1;
  }
}

/* Row n-1 of Pascal's triangle: n binomial coefficients. */
static void
binomial (gdouble * out, guint n)
{
  out[0] = 1.0;
  for (guint i = 1; i < n; i++) {
    out[i] = 0.0;
    for (guint k = i; k > 0; k--)
      out[k] += out[k - 1];
  }
}

/* out[0..na+nb-2] = a (*) b, full discrete convolution */
static void
convolve_1d (gdouble * out, const gdouble * a, guint na, const gdouble * b,
    guint nb)
{
  for (guint k = 0; k < na + nb - 1; k++)
    out[k] = 0.0;
  for (guint i = 0; i < na; i++)
    for (guint j = 0; j < nb; j++)
      out[i + j] += a[i] * b[j];
}

/* Sampled Gaussian of n taps centred on (n-1)/2, normalised to sum 1.
 * Exponents are taken relative to the nearest tap, which keeps the sum at
 * 1 or more: a sigma far below a pixel then gives the limit (a centred
 * delta, split over the two middle taps of an even size) rather than 0/0. */
static void
gaussian_1d (gdouble * g, guint n, gdouble sigma)
{
  gdouble c = (n - 1) / 2.0, sum = 0.0, nearest = (n % 2) ? 0.0 : 0.25;
  for (guint i = 0; i < n; i++) {
    gdouble d = i - c;
    g[i] = exp (-(d * d - nearest) / (2.0 * sigma * sigma));
    sum += g[i];
  }
  for (guint i = 0; i < n; i++)
    g[i] /= sum;
}

/* k[j*n+i] = a[j] * b[i] + (c ? c[j] * d[i] : 0) */
static void
outer (gdouble * k, guint n, const gdouble * a, const gdouble * b,
    const gdouble * c, const gdouble * d)
{
  for (guint j = 0; j < n; j++)
    for (guint i = 0; i < n; i++)
      k[j * n + i] = a[j] * b[i] + (c ? c[j] * d[i] : 0.0);
}

/* Sobel of size n: smoothing = binomial(n), derivative = binomial(n-1) (*) [-1 1]. */
static void
sobel_1d (gdouble * smooth, gdouble * deriv, guint n)
{
  static const gdouble diff[2] = { -1.0, 1.0 };
  gdouble *b = g_newa (gdouble, n);
  binomial (smooth, n);
  binomial (b, n - 1);
  convolve_1d (deriv, b, n - 1, diff, 2);
}

gdouble *
gcv_builtin_generate (GcvBuiltin filter, guint size, gdouble sigma,
    guint * kw, guint * kh)
{
  guint n;
  gdouble *k, *a, *b;
  GcvBuiltin y;

  gcv_builtin_magnitude (filter, &filter, &y);
  gcv_builtin_get_size (filter, size, kw, kh);
  n = *kw;
  g_return_val_if_fail (n >= gcv_builtin_min_size (filter), NULL);

  k = g_new0 (gdouble, (gsize) n * n);
  a = g_new0 (gdouble, n);
  b = g_new0 (gdouble, n);
  guint centre = (n - 1) / 2;

  switch (filter) {
    case GCV_BUILTIN_BOX:
      for (guint i = 0; i < n * n; i++)
        k[i] = 1.0 / ((gdouble) n * n);
      break;
    case GCV_BUILTIN_GAUSSIAN:
      gaussian_1d (a, n, sigma);
      outer (k, n, a, a, NULL, NULL);
      break;
    case GCV_BUILTIN_SHARPEN:
      /* unsharp mask with amount 1: 2*delta - gaussian */
      gaussian_1d (a, n, sigma);
      outer (k, n, a, a, NULL, NULL);
      for (guint i = 0; i < n * n; i++)
        k[i] = -k[i];
      k[centre * n + centre] += 2.0;
      break;
    case GCV_BUILTIN_LAPLACIAN:{
      /* d2/dx2 + d2/dy2; each second derivative is binomial(n-2) (*) [1 -2 1],
       * smoothed across by binomial(n-2) centred in n taps. n=3 gives the
       * 4-neighbour Laplacian. */
      static const gdouble second[3] = { 1.0, -2.0, 1.0 };
      gdouble *s = g_newa (gdouble, n - 2);
      binomial (s, n - 2);
      convolve_1d (b, s, n - 2, second, 3);
      for (guint i = 0; i < n - 2; i++)
        a[i + 1] = s[i];
      outer (k, n, a, b, b, a);
      break;
    }
    case GCV_BUILTIN_SOBEL_X:
      sobel_1d (a, b, n);
      outer (k, n, a, b, NULL, NULL);
      break;
    case GCV_BUILTIN_SOBEL_Y:
      sobel_1d (a, b, n);
      outer (k, n, b, a, NULL, NULL);
      break;
    case GCV_BUILTIN_SCHARR_X:
    case GCV_BUILTIN_SCHARR_Y:{
      static const gdouble smooth[3] = { 3.0, 10.0, 3.0 };
      static const gdouble deriv[3] = { -1.0, 0.0, 1.0 };
      if (filter == GCV_BUILTIN_SCHARR_X)
        outer (k, 3, smooth, deriv, NULL, NULL);
      else
        outer (k, 3, deriv, smooth, NULL, NULL);
      break;
    }
    case GCV_BUILTIN_EMBOSS:{
      /* a ramp rising towards the bottom right, plus 1 at the centre */
      gdouble c = (n - 1) / 2.0;
      for (guint j = 0; j < n; j++)
        for (guint i = 0; i < n; i++)
          k[j * n + i] = (i - c) + (j - c);
      k[centre * n + centre] += 1.0;
      break;
    }
    case GCV_BUILTIN_LOG:{
      /* Laplacian of Gaussian, shifted to zero sum so flat areas give 0 */
      gdouble c = (n - 1) / 2.0, s2 = sigma * sigma, mean = 0.0;
      for (guint j = 0; j < n; j++)
        for (guint i = 0; i < n; i++) {
          gdouble r2 = (i - c) * (i - c) + (j - c) * (j - c);
          k[j * n + i] = -1.0 / (G_PI * s2 * s2) * (1.0 - r2 / (2.0 * s2))
              * exp (-r2 / (2.0 * s2));
          mean += k[j * n + i];
        }
      mean /= (gdouble) n *n;
      for (guint i = 0; i < n * n; i++)
        k[i] -= mean;
      break;
    }
    case GCV_BUILTIN_DOG:{
      /* gaussian(sigma) - gaussian(1.6 sigma), each summing to 1 */
      gdouble *wide = g_newa (gdouble, n);
      gaussian_1d (a, n, sigma);
      gaussian_1d (wide, n, 1.6 * sigma);
      for (guint i = 0; i < n; i++)
        b[i] = -wide[i];
      outer (k, n, a, a, b, wide);
      break;
    }
    case GCV_BUILTIN_CUSTOM:
    default:
      g_assert_not_reached ();
  }

  g_free (a);
  g_free (b);
  return k;
}
