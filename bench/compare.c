/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Output checks against a double-precision reference and between frames. */
#include "compare.h"
#include "common.h"
#include "reference.h"

#include <math.h>

#define BAD_ALPHA 1e30

BenchSamples *
bench_samples_new (guint width, guint height, guint margin, guint n_inner,
    guint n_edge, guint32 seed)
{
  BenchSamples *s = g_new0 (BenchSamples, 1);
  GRand *rand = g_rand_new_with_seed (seed);
  guint mx = MIN (margin, width), my = MIN (margin, height);

  s->x = g_new (guint, n_inner + n_edge + 4);
  s->y = g_new (guint, n_inner + n_edge + 4);
  /* corners */
  s->x[0] = 0, s->y[0] = 0;
  s->x[1] = width - 1, s->y[1] = 0;
  s->x[2] = 0, s->y[2] = height - 1;
  s->x[3] = width - 1, s->y[3] = height - 1;
  s->n = 4;
  for (guint i = 0; i < n_inner; i++, s->n++) {
    s->x[s->n] = g_rand_int_range (rand, 0, width);
    s->y[s->n] = g_rand_int_range (rand, 0, height);
  }
  /* within `margin` of one of the four edges */
  for (guint i = 0; i < n_edge; i++, s->n++) {
    guint edge = g_rand_int_range (rand, 0, 4);
    guint along = g_rand_int_range (rand, 0, edge < 2 ? width : height);
    guint depth = g_rand_int_range (rand, 0, edge < 2 ? my : mx);
    switch (edge) {
      case 0:                  /* top */
        s->x[s->n] = along, s->y[s->n] = depth;
        break;
      case 1:                  /* bottom */
        s->x[s->n] = along, s->y[s->n] = height - 1 - depth;
        break;
      case 2:                  /* left */
        s->x[s->n] = depth, s->y[s->n] = along;
        break;
      default:                 /* right */
        s->x[s->n] = width - 1 - depth, s->y[s->n] = along;
        break;
    }
  }
  g_rand_free (rand);
  return s;
}

BenchSamples *
bench_samples_all (guint width, guint height)
{
  BenchSamples *s = g_new0 (BenchSamples, 1);

  s->n = width * height;
  s->x = g_new (guint, s->n);
  s->y = g_new (guint, s->n);
  for (guint y = 0; y < height; y++)
    for (guint x = 0; x < width; x++) {
      s->x[y * width + x] = x;
      s->y[y * width + x] = y;
    }
  return s;
}

void
bench_samples_free (BenchSamples * s)
{
  if (!s)
    return;
  g_free (s->x);
  g_free (s->y);
  g_free (s);
}

double
bench_tolerance (GcvFormat format, const GcvFilter * filter,
    double max_abs_in)
{
  GcvFilterTaps f;
  RefParams p;
  RefKernel *k;
  double tol;

  if (format != GCV_FORMAT_GRAY32F)
    return 1.0;
  gcv_filter_get_taps (filter, &f);
  k = ref_params_init_taps (&p, f.taps, f.kw, f.kh, f.ax, f.ay, f.bias);
  tol = ref_float_bound (&p, max_abs_in, 1.0);
  ref_kernel_free (k);
  return tol;
}

static double
diff (double a, double b)
{
  if (isnan (a) || isnan (b))
    return INFINITY;
  return fabs (a - b);
}

double
bench_check_samples (GcvFormat format, const guint8 * in, gsize in_stride,
    const guint8 * out, gsize out_stride, guint width, guint height,
    const GcvFilter * filter, const BenchSamples * samples,
    gboolean check_alpha)
{
  GcvFilterTaps f;
  gboolean gray = format == GCV_FORMAT_GRAY32F;
  guint channels = bench_channels (format);
  const RefView view = { in, in_stride, width, height, 4, gray };
  RefParams p;
  RefKernel *k;
  double worst = 0.0;

  gcv_filter_get_taps (filter, &f);
  k = ref_params_init_taps (&p, f.taps, f.kw, f.kh, f.ax, f.ay, f.bias);
  for (guint s = 0; s < samples->n; s++) {
    guint x = samples->x[s], y = samples->y[s];
    for (guint c = 0; c < channels; c++) {
      double acc = ref_filter_view_at (&view, &p, x, y, c), got;
      if (gray) {
        got = ((const float *) (out + y * out_stride))[x];
      } else {
        got = out[y * out_stride + x * 4 + c];
        acc = isnan (acc) ? 0.0 : CLAMP (acc, 0.0, 255.0);
      }
      worst = MAX (worst, diff (got, acc));
    }
    if (!gray && check_alpha
        && out[y * out_stride + x * 4 + 3] != in[y * in_stride + x * 4 + 3])
      worst = MAX (worst, BAD_ALPHA);
  }
  ref_kernel_free (k);
  return worst;
}

double
bench_max_diff (GcvFormat format, const guint8 * a, gsize a_stride,
    const guint8 * b, gsize b_stride, guint width, guint height,
    gboolean compare_alpha)
{
  double worst = 0.0;

  if (format == GCV_FORMAT_GRAY32F) {
    for (guint y = 0; y < height; y++) {
      const float *ra = (const float *) (a + y * a_stride);
      const float *rb = (const float *) (b + y * b_stride);
      for (guint x = 0; x < width; x++) {
        float d = fabsf (ra[x] - rb[x]);
        if (!(d <= (float) worst))      /* also NaN */
          worst = isnan (d) ? INFINITY : d;
      }
    }
    return worst;
  }
  for (guint y = 0; y < height; y++) {
    const guint8 *ra = a + y * a_stride, *rb = b + y * b_stride;
    guint n = width * 4;
    for (guint i = 0; i < n; i++) {
      int d;
      if (!compare_alpha && (i & 3) == 3)
        continue;
      d = ra[i] > rb[i] ? ra[i] - rb[i] : rb[i] - ra[i];
      if (d > worst)
        worst = d;
    }
  }
  return worst;
}

double
bench_max_abs (GcvFormat format, const guint8 * frame, guint width,
    guint height)
{
  double m = 0.0;

  if (format != GCV_FORMAT_GRAY32F) {
    for (gsize i = 0; i < (gsize) width * height * 4; i++)
      m = MAX (m, frame[i]);
    return m;
  }
  for (gsize i = 0; i < (gsize) width * height; i++)
    m = MAX (m, fabs (((const float *) frame)[i]));
  return m;
}
