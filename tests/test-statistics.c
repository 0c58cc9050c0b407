/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics (docs/statistics.md): the meta on every output
 * buffer, its channels, and each field against the statistics of the
 * reference's output (ref_filter, ref_stats) within bounds that follow
 * from the per-sample bound of docs/filters.md; every packed format, the
 * conversions, every border, the direct, separable and fixed-point paths,
 * gradient magnitudes, strides, crops, frames in flight, thresholds, NaN
 * and infinities, NV12 and I420; the element messages and their times;
 * and frames that are the same with statistics on and off. */
#include "common.h"

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

#define STATS_META "GstGpuConvolveStatisticsMeta"
#define STATS_NAME "gpuconvolve-statistics"

/* Sums are taken in float over short runs of samples and in double across
 * them: on top of the samples' own error, |error| <= SUM_REL * sum|v|. */
#define SUM_REL 1e-5

static const gchar *const channel_fields[] = {
  "count", "sum", "sum-squares", "min", "min-x", "min-y", "max", "max-x",
  "max-y", "above",
};

/* --- reading the numbers ------------------------------------------------ */

static const GstStructure *
stats_of (GstBuffer * buf, const gchar * what)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buf, STATS_META);

  fail_unless (meta != NULL, "%s: no %s on the output", what, STATS_META);
  return gst_custom_meta_get_structure (meta);
}

static const GValue *
channel_value (const GstStructure * s, const gchar * field, guint c,
    GType type, const gchar * what)
{
  const GValue *a = gst_structure_get_value (s, field);
  const GValue *v;

  fail_unless (a && GST_VALUE_HOLDS_ARRAY (a), "%s: no array %s", what,
      field);
  fail_unless (c < gst_value_array_get_size (a), "%s: %s has no channel %u",
      what, field, c);
  v = gst_value_array_get_value (a, c);
  fail_unless (G_VALUE_HOLDS (v, type), "%s: %s holds %s, not %s", what,
      field, G_VALUE_TYPE_NAME (v), g_type_name (type));
  return v;
}

#define GET_DOUBLE(s, f, c, w) \
  g_value_get_double (channel_value (s, f, c, G_TYPE_DOUBLE, w))
#define GET_UINT64(s, f, c, w) \
  g_value_get_uint64 (channel_value (s, f, c, G_TYPE_UINT64, w))
#define GET_UINT(s, f, c, w) \
  g_value_get_uint (channel_value (s, f, c, G_TYPE_UINT, w))

/* The channels of frames of `format` in the order of the arrays: three of
 * the RGBA family, four with alpha=filter. */
static const gchar *const channel_names[REF_N_FORMATS][4] = {
  [REF_RGBA] = {"R", "G", "B", "A"}, [REF_RGBX] = {"R", "G", "B", "A"},
  [REF_BGRA] = {"B", "G", "R", "A"}, [REF_BGRX] = {"B", "G", "R", "A"},
  [REF_GRAY8] = {"gray"}, [REF_GRAY32F] = {"gray"},
};

static guint
n_channels (RefFormat format, gboolean filter_alpha)
{
  return ref_format_info (format)->channels == 1 ? 1 : filter_alpha ? 4 : 3;
}

/* `channels` gives the n names and every per-channel field has one value
 * for each; the threshold is the one asked for. */
static void
assert_layout (const GstStructure * s, const gchar * const *names, guint n,
    gdouble threshold, const gchar * what)
{
  const GValue *a = gst_structure_get_value (s, "channels");
  gdouble t = -1.0;

  fail_unless (a && GST_VALUE_HOLDS_ARRAY (a), "%s: no channels", what);
  fail_unless_equals_int (gst_value_array_get_size (a), n);
  for (guint i = 0; i < n; i++)
    fail_unless_equals_string (g_value_get_string (gst_value_array_get_value
            (a, i)), names[i]);
  for (guint f = 0; f < G_N_ELEMENTS (channel_fields); f++) {
    a = gst_structure_get_value (s, channel_fields[f]);
    fail_unless (a && gst_value_array_get_size (a) == n, "%s: %s does not "
        "have %u values", what, channel_fields[f], n);
  }
  fail_unless (gst_structure_get_double (s, "threshold", &t));
  fail_unless (t == threshold, "%s: threshold %g, asked for %g", what, t,
      threshold);
}

/* got within `allowed` of want; NaN and infinities exactly. */
static gboolean
close_to (gdouble got, gdouble want, gdouble allowed)
{
  if (isnan (want) || isinf (want))
    return isnan (want) ? isnan (got) : got == want;
  return fabs (got - want) <= allowed;
}

/* One extreme: within tol of the reference's, and at a place where the
 * reference holds a value within tol of it; where the arithmetic is exact
 * (tol 0), the first such place in row order. */
static void
check_extreme (const GstStructure * s, guint c, const gchar * which,
    const RefImage * ref, guint rc, gdouble unit, gdouble want, guint want_x,
    guint want_y, gdouble tol, const gchar * what)
{
  gchar *fx = g_strdup_printf ("%s-x", which), *fy = g_strdup_printf ("%s-y",
      which);
  const gdouble got = GET_DOUBLE (s, which, c, what);
  const guint x = GET_UINT (s, fx, c, what), y = GET_UINT (s, fy, c, what);

  fail_unless (close_to (got, want, tol), "%s: channel %u %s %.9g, expected "
      "%.9g (+-%.3g)", what, c, which, got, want, tol);
  if (!isnan (want)) {
    gdouble there;
    fail_unless (x < ref->width && y < ref->height, "%s: channel %u %s at "
        "(%u,%u), outside %ux%u", what, c, which, x, y, ref->width,
        ref->height);
    there = ref_pixel (ref, x, y)[rc] * unit;
    fail_unless (close_to (there, got, tol), "%s: channel %u %s %.9g at "
        "(%u,%u), where the reference is %.9g", what, c, which, got, x, y,
        there);
    if (tol == 0.0)
      fail_unless (x == want_x && y == want_y, "%s: channel %u %s at "
          "(%u,%u), first met at (%u,%u)", what, c, which, x, y, want_x,
          want_y);
  }
  g_free (fx);
  g_free (fy);
}

/* Channel c of `s` against channel rc of the reference output `ref`
 * (input units, times `unit` into output units), each sample within `tol`
 * of it; tol 0 where the arithmetic is exact. */
static void
check_channel (const GstStructure * s, guint c, const RefImage * ref,
    guint rc, gdouble unit, gdouble threshold, gdouble tol,
    const gchar * what)
{
  gdouble sum_abs = 0.0, sum_sq = 0.0, got, allowed;
  guint64 n, above;
  RefStats rs;

  ref_stats (ref, rc, unit, threshold, tol, &rs);
  for (guint y = 0; y < ref->height; y++)
    for (guint x = 0; x < ref->width; x++) {
      const gdouble v = ref_pixel (ref, x, y)[rc] * unit;
      if (isfinite (v)) {
        sum_abs += fabs (v);
        sum_sq += v * v;
      }
    }
  n = GET_UINT64 (s, "count", c, what);
  fail_unless (n == rs.count, "%s: channel %u count %" G_GUINT64_FORMAT
      ", expected %" G_GUINT64_FORMAT, what, c, n, rs.count);

  got = GET_DOUBLE (s, "sum", c, what);
  allowed = n * tol + SUM_REL * sum_abs;
  fail_unless (close_to (got, rs.sum, allowed), "%s: channel %u sum %.17g, "
      "expected %.17g (+-%.3g)", what, c, got, rs.sum, allowed);
  /* |a^2 - b^2| = |a - b| |a + b| <= tol (2 |b| + tol) */
  got = GET_DOUBLE (s, "sum-squares", c, what);
  allowed = tol * (2.0 * sum_abs + n * tol) + SUM_REL * sum_sq;
  fail_unless (close_to (got, rs.sum_squares, allowed), "%s: channel %u "
      "sum-squares %.17g, expected %.17g (+-%.3g)", what, c, got,
      rs.sum_squares, allowed);

  check_extreme (s, c, "min", ref, rc, unit, rs.min, rs.min_x, rs.min_y, tol,
      what);
  check_extreme (s, c, "max", ref, rc, unit, rs.max, rs.max_x, rs.max_y, tol,
      what);

  /* a sample within tol of the threshold may fall on either side; with
   * exact arithmetic none does */
  above = GET_UINT64 (s, "above", c, what);
  fail_unless (tol == 0.0 ? above == rs.above : (above <= rs.above + rs.near
          && above + rs.near >= rs.above), "%s: channel %u above %"
      G_GUINT64_FORMAT " (threshold %g), expected %" G_GUINT64_FORMAT
      " (%" G_GUINT64_FORMAT " near it)", what, c, above, threshold,
      rs.above, rs.near);
}

/* Output units per input unit. */
static gdouble
unit_of (RefFormat in, RefFormat out)
{
  if (in == REF_GRAY8 && out == REF_GRAY32F)
    return 1.0 / 255.0;
  if (in == REF_GRAY32F && out == REF_GRAY8)
    return 255.0;
  return 1.0;
}

/* `img` with its NaN and infinities as 0: what the bound of a finite
 * output counts (its footprint holds none), or NULL when all are finite. */
static RefImage *
finite_part (const RefImage * img)
{
  const gsize n = (gsize) img->width * img->height * img->channels;
  RefImage *f = NULL;

  for (gsize i = 0; i < n; i++)
    if (!isfinite (img->v[i])) {
      if (!f)
        f = ref_image_copy (img);
      f->v[i] = 0.0;
    }
  return f;
}

/* The statistics on `out` against those of ref_filter (in, p); `exact`:
 * integer data and taps, where every sample is exact. The samples are the
 * values before rounding to an 8-bit format, so each is held to the float
 * bound in output units whatever the output format. */
static void
check_stats (GstBuffer * out, RefFormat in_format, RefFormat out_format,
    const RefImage * in, const RefParams * p, gdouble threshold,
    gboolean exact, const gchar * what)
{
  const gdouble unit = unit_of (in_format, out_format);
  RefImage *finite = finite_part (in);
  const RefImage *b = finite ? finite : in;
  const gdouble tol = exact ? 0.0 : ref_float_tolerance (p, b, unit);
  const guint n = n_channels (in_format, p->filter_alpha);
  const GstStructure *s = stats_of (out, what);
  RefImage *ref = ref_filter (in, p);

  assert_layout (s, channel_names[in_format], n, threshold, what);
  for (guint c = 0; c < n; c++)
    check_channel (s, c, ref, c, unit, threshold, tol, what);
  ref_image_free (ref);
  if (finite)
    ref_image_free (finite);
}

/* --- running frames ----------------------------------------------------- */

/* Integer data through integer taps (or the identity) comes out exact, but
 * for the FFT family. */
static gboolean
exact_arithmetic (void)
{
  return !(gcvt_on_cuda () && g_str_equal (gcvt_algorithm (), "fft"));
}

static GstElement *
stats_element (const RefParams * p, gdouble threshold)
{
  GstElement *e = gcvt_element_new ();

  gcvt_set_params (e, p);
  g_object_set (e, "statistics", TRUE, "statistics-threshold", threshold,
      NULL);
  return e;
}

/* One frame through `e` (stride 0: the default, else with a GstVideoMeta):
 * statistics checked, and the pixels unless they hold NaN (those are
 * test-nonfinite's). */
static void
run_checked (GstElement * e, RefFormat in, RefFormat out,
    const RefImage * img, const RefParams * p, gdouble threshold,
    gboolean exact, gsize stride, const gchar * what)
{
  GstHarness *h = gcvt_harness_new (e);
  RefImage *finite = finite_part (img);
  GstBuffer *o;

  gcvt_set_caps (h, in, out, img->width, img->height);
  o = gcvt_process (h, gcvt_buffer_new (img, in, stride, stride ? 12 : 0,
          stride != 0));
  if (finite)
    ref_image_free (finite);
  else
    gcvt_assert_frame (o, in, out, img, p, what);
  check_stats (o, in, out, img, p, threshold, exact, what);
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
      "%s: error on the bus", what);
  gst_buffer_unref (o);
  gst_harness_teardown (h);
}

/* A threshold that some samples of the output pass: the magnitude of one
 * of them, in output units (or 0). */
static gdouble
random_threshold (GRand * r, const RefImage * in, const RefParams * p,
    gdouble unit)
{
  RefImage *ref;
  gdouble t;

  if (g_rand_int_range (r, 0, 4) == 0)
    return 0.0;
  ref = ref_filter (in, p);
  t = fabs (ref->v[g_rand_int_range (r, 0, ref->width * ref->height
              * ref->channels)] * unit);
  ref_image_free (ref);
  return isfinite (t) ? t : 0.0;
}

/* The paths of the formats test. */
typedef enum {
  KIND_DIRECT,                  /* a kernel that is not rank 1 */
  KIND_SEPARABLE,               /* rank 1, taps of both signs */
  KIND_BLUR,                    /* a gaussian: fixed point from 8-bit to 8-bit */
  KIND_MAGNITUDE,               /* filter=sobel */
  N_KINDS
} Kind;

/* One random case of `kind`: kernel, settings and a frame of w x h. */
static void
run_random_case (GRand * r, RefFormat in, RefFormat out, RefBorder border,
    Kind kind, guint w, guint h, gsize stride)
{
  const RefFormatInfo *fi = ref_format_info (in);
  const guint size = 2 * g_rand_int_range (r, 1, 4) + 1;
  RefKernel *k = NULL, *ky = NULL;
  GstElement *e;
  RefImage *img;
  RefParams p;
  gdouble threshold;
  gchar *what;

  switch (kind) {
    case KIND_DIRECT:
    case KIND_SEPARABLE:
      k = gcvt_random_kernel (r, g_rand_int_range (r, 1, 8),
          g_rand_int_range (r, 1, 8), kind == KIND_SEPARABLE
          || gcvt_forced_separable ());
      break;
    case KIND_BLUR:
      k = ref_builtin ("gaussian", size, g_rand_double_range (r, 0.7, 2.0));
      break;
    default:
      k = ref_builtin ("sobel-x", size, 1.0);
      ky = ref_builtin ("sobel-y", size, 1.0);
      break;
  }
  ref_params_init (&p, k);
  p.kernel_y = ky;
  p.border = border;
  p.filter_alpha = fi->channels == 4 && g_rand_boolean (r);
  if (kind == KIND_DIRECT || kind == KIND_SEPARABLE) {
    p.scale = g_rand_double_range (r, 0.5, 1.5) / ref_kernel_sum_abs (k);
    p.bias = fi->is_float ? g_rand_double_range (r, -0.5, 0.5) :
        g_rand_double_range (r, -30.0, 90.0);
  } else if (kind == KIND_MAGNITUDE) {
    /* the magnitude within range, or its negative around a bias */
    p.scale = 1.0 / (2.0 * ref_kernel_sum_abs (k));
    if (g_rand_boolean (r)) {
      p.scale = -p.scale;
      p.bias = fi->is_float ? 1.0 : 255.0;
    }
  }
  if (border == REF_BORDER_CONSTANT)
    p.border_value = fi->is_float ? 0.75 : g_rand_double_range (r, 10, 250);
  img = gcvt_random_image (r, in, w, h, -1.0, 1.0);
  threshold = random_threshold (r, img, &p, unit_of (in, out));
  what = g_strdup_printf ("%s -> %s %ux%u stride %" G_GSIZE_FORMAT " border "
      "%s, kind %d, %ux%u kernel, threshold %g", fi->name,
      ref_format_info (out)->name, w, h, stride, ref_border_nick (border),
      kind, k->kw, k->kh, threshold);
  e = stats_element (&p, threshold);
  if (kind == KIND_MAGNITUDE) {
    gst_util_set_object_arg (G_OBJECT (e), "filter", "sobel");
    g_object_set (e, "size", size, NULL);
  }
  if (!gcvt_refused_as_not_separable (e, kind != KIND_MAGNITUDE
          && ref_kernel_is_rank1 (k)))
    run_checked (e, in, out, img, &p, threshold, FALSE, stride, what);
  gcvt_element_unref (e);
  g_free (what);
  ref_image_free (img);
  ref_kernel_free (k);
  ref_kernel_free (ky);
}

/* --- the tests ---------------------------------------------------------- */

/* Every border and path of a format, at odd sizes, sizes that cross tiles,
 * strips and bands, and with padded strides; GRAY8 and GRAY32F also into
 * each other. loop index: the format */
GST_START_TEST (test_formats)
{
  const RefFormat fmt = (RefFormat) __i__;
  const RefFormatInfo *fi = ref_format_info (fmt);
  gchar *name = g_strdup_printf ("statistics formats %s", fi->name);
  GRand *r = ref_rand_new (name);

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (Kind kind = 0; kind < N_KINDS; kind++) {
      /* one small odd frame, one of several tiles, strips and bands */
      guint w = g_rand_int_range (r, 1, 40) | 1, h = g_rand_int_range (r, 1,
          30);
      gsize stride = 0;
      if ((b + kind) % 2) {
        w = g_rand_int_range (r, 260, 330);
        h = g_rand_int_range (r, 130, 200);
      }
      if ((b + kind) % 3 == 0)
        stride = GST_ROUND_UP_4 (w * fi->pixel_bytes) + 4 * kind + 8;
      run_random_case (r, fmt, fmt, b, kind, w, h, stride);
    }
  if (fmt == REF_GRAY8 || fmt == REF_GRAY32F)
    for (Kind kind = 0; kind < N_KINDS; kind++)
      run_random_case (r, fmt, fmt == REF_GRAY8 ? REF_GRAY32F : REF_GRAY8,
          (RefBorder) (kind % REF_N_BORDERS), kind, g_rand_int_range (r, 1,
              300) | 1, g_rand_int_range (r, 1, 160), 0);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Integer samples and taps, so that every output is exact: the extremes,
 * the first place each is met in row order (ties everywhere: few levels),
 * and `above` at thresholds equal to outputs are exact too, on frames wider
 * than a CPU strip and taller than a band. (Not on the FFT family, whose
 * outputs are not exact.) loop index: the format */
GST_START_TEST (test_exact_positions)
{
  static const RefFormat formats[] = { REF_GRAY8, REF_RGBA, REF_BGRX,
    REF_GRAY32F
  };
  const RefFormat fmt = formats[__i__];
  const gboolean exact = exact_arithmetic ();
  gchar *name = g_strdup_printf ("statistics exact %s",
      ref_format_info (fmt)->name);
  GRand *r = ref_rand_new (name);
  static const guint sizes[][2] = { {1300, 150}, {333, 71}, {17, 5} };

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++) {
    const guint w = sizes[i][0], h = sizes[i][1];
    const gboolean rank1 = i % 2 || gcvt_forced_separable ();
    RefImage *img = ref_image_new (w, h, ref_format_info (fmt)->channels);
    RefKernel *k = rank1 ? ref_kernel_outer ((const gdouble[]) { 1, -1, 2 },
        3, (const gdouble[]) { -1, 0, 1, 1 }, 4) : ref_kernel_new (3, 3);
    RefImage *ref;
    GstElement *e;
    RefParams p;
    gdouble threshold;
    gchar *what;

    for (gsize s = 0; s < (gsize) w * h * img->channels; s++)
      img->v[s] = g_rand_int_range (r, 0, 4) * 5;
    if (!rank1)
      for (guint t = 0; t < 9; t++)
        k->k[t] = g_rand_int_range (r, -1, 2);
    ref_params_init (&p, k);
    p.bias = 40;
    p.border = (RefBorder) (i % REF_N_BORDERS);
    p.border_value = 5;
    p.filter_alpha = i == 1;
    /* an output value itself: equal is not above */
    ref = ref_filter (img, &p);
    threshold = fabs (ref->v[g_rand_int_range (r, 0, w * h)]);
    ref_image_free (ref);
    what = g_strdup_printf ("exact %s %ux%u rank1 %d threshold %g",
        ref_format_info (fmt)->name, w, h, rank1, threshold);
    e = stats_element (&p, threshold);
    run_checked (e, fmt, fmt, img, &p, threshold, exact, 0, what);
    gcvt_element_unref (e);
    g_free (what);
    ref_kernel_free (k);
    ref_image_free (img);
  }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* With a crop meta on the input the crop region is what is measured,
 * positions within it: the frame around it holds the largest samples. */
GST_START_TEST (test_crop)
{
  static const RefFormat formats[] = { REF_GRAY8, REF_RGBA, REF_GRAY32F };
  GRand *r = ref_rand_new ("statistics crop");

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    const RefFormat fmt = formats[f];
    const gboolean is_float = ref_format_info (fmt)->is_float;
    const guint x0 = 7, y0 = 5, w = 61, h = 43;
    RefImage *sub = gcvt_random_image (r, fmt, w, h, -1.0, 1.0);
    RefImage *full = ref_image_new (90, 70, sub->channels);
    RefKernel *k = gcvt_random_kernel (r, 3, 5, gcvt_forced_separable ());
    GstVideoCropMeta *crop;
    GstElement *e;
    GstHarness *hn;
    GstBuffer *in, *out;
    RefParams p;

    /* the region in a frame of larger samples */
    for (gsize i = 0; i < (gsize) 90 * 70 * sub->channels; i++)
      full->v[i] = is_float ? 50.0 : 255.0;
    for (gsize i = 0; i < (gsize) w * h * sub->channels; i++)
      sub->v[i] = is_float ? sub->v[i] : floor (sub->v[i] / 2);
    for (guint y = 0; y < h; y++)
      memcpy (ref_pixel (full, x0, y0 + y), ref_pixel (sub, 0, y),
          sizeof (gdouble) * w * sub->channels);
    ref_params_init (&p, k);
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    p.border = REF_BORDER_REFLECT101;
    e = stats_element (&p, is_float ? 0.2 : 40.0);
    hn = gcvt_harness_new (e);
    gcvt_set_caps (hn, fmt, fmt, w, h);
    in = gcvt_buffer_new (full, fmt, 0, 0, TRUE);
    crop = gst_buffer_add_video_crop_meta (in);
    crop->x = x0;
    crop->y = y0;
    crop->width = w;
    crop->height = h;
    out = gcvt_process (hn, in);
    gcvt_assert_frame (out, fmt, fmt, sub, &p, "crop");
    check_stats (out, fmt, fmt, sub, &p, is_float ? 0.2 : 40.0, FALSE,
        "crop");
    gst_buffer_unref (out);
    gst_harness_teardown (hn);
    gcvt_element_unref (e);
    ref_kernel_free (k);
    ref_image_free (sub);
    ref_image_free (full);
  }
  g_rand_free (r);
}

GST_END_TEST;

#define N_FRAMES 7

/* frame i of a stream that starts at `start` */
static GstBuffer *
stamped (const RefImage * img, RefFormat format, guint i, GstClockTime start)
{
  GstBuffer *b = gcvt_timed_buffer (img, format, i);

  GST_BUFFER_PTS (b) += start;
  return b;
}

/* queue-depth 3: frames in flight, each output with its own frame's
 * numbers, and the threshold each frame was submitted with (changed
 * between pushes, statistics off for one frame). */
GST_START_TEST (test_frames_in_flight)
{
  static const RefFormat formats[] = { REF_GRAY32F, REF_RGBA };
  GRand *r = ref_rand_new ("statistics in flight");

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    const RefFormat fmt = formats[f];
    const gboolean is_float = ref_format_info (fmt)->is_float;
    RefKernel *k = gcvt_random_kernel (r, 5, 3, gcvt_forced_separable ());
    RefImage *img[N_FRAMES];
    gdouble threshold[N_FRAMES];
    GstElement *e;
    GstHarness *hn;
    RefParams p;

    ref_params_init (&p, k);
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    p.bias = is_float ? 0.0 : 100.0;
    e = stats_element (&p, 0.0);
    g_object_set (e, "queue-depth", 3, NULL);
    hn = gcvt_harness_new (e);
    gcvt_set_caps (hn, fmt, fmt, 75, 41);
    for (guint i = 0; i < N_FRAMES; i++) {
      /* a frame of its own range, so that frames cannot pass for each other */
      img[i] = gcvt_random_image (r, fmt, 75, 41, -1.0 - i, 1.0 + i);
      threshold[i] = (is_float ? 0.1 : 10.0) * i;
      g_object_set (e, "statistics-threshold", threshold[i], "statistics",
          i != 4, NULL);
      fail_unless_equals_int (gst_harness_push (hn, stamped (img[i], fmt, i,
                  0)), GST_FLOW_OK);
    }
    fail_unless (gst_harness_push_event (hn, gst_event_new_eos ()));
    fail_unless_equals_int (gst_harness_buffers_in_queue (hn), N_FRAMES);
    for (guint i = 0; i < N_FRAMES; i++) {
      GstBuffer *out = gst_harness_pull (hn);
      gchar *what = g_strdup_printf ("%s frame %u in flight",
          ref_format_info (fmt)->name, i);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_SECOND / 30);
      gcvt_assert_frame (out, fmt, fmt, img[i], &p, what);
      if (i == 4)
        fail_unless (gst_buffer_get_custom_meta (out, STATS_META) == NULL,
            "%s: a meta with statistics=false", what);
      else
        check_stats (out, fmt, fmt, img[i], &p, threshold[i], FALSE, what);
      gst_buffer_unref (out);
      ref_image_free (img[i]);
      g_free (what);
    }
    gst_harness_teardown (hn);
    gcvt_element_unref (e);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* post-messages=true: one element message per frame, in frame order, with
 * the meta's fields and the buffer's times in a segment whose start, time
 * and base make timestamp, stream time and running time all differ. */
GST_START_TEST (test_messages)
{
  const GstClockTime start = 2 * GST_SECOND, time = 7 * GST_SECOND,
      base = 3 * GST_SECOND;
  GRand *r = ref_rand_new ("statistics messages");
  RefKernel *k = gcvt_random_kernel (r, 3, 3, gcvt_forced_separable ());
  GstStructure *metas[N_FRAMES];
  GstElement *e;
  GstHarness *hn;
  GstSegment seg;
  GstMessage *msg;
  RefParams p;

  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  e = stats_element (&p, 60.0);
  g_object_set (e, "post-messages", TRUE, NULL);
  hn = gcvt_harness_new (e);
  gcvt_set_caps (hn, REF_GRAY8, REF_GRAY8, 32, 24);
  gst_segment_init (&seg, GST_FORMAT_TIME);
  seg.start = start;
  seg.time = time;
  seg.base = base;
  fail_unless (gst_harness_push_event (hn, gst_event_new_segment (&seg)));
  for (guint i = 0; i < N_FRAMES; i++) {
    RefImage *img = gcvt_random_image (r, REF_GRAY8, 32, 24, 0, 0);
    GstBuffer *out = gcvt_process (hn, stamped (img, REF_GRAY8, i, start));
    check_stats (out, REF_GRAY8, REF_GRAY8, img, &p, 60.0, FALSE, "message");
    metas[i] = gst_structure_copy (stats_of (out, "message"));
    gst_buffer_unref (out);
    ref_image_free (img);
  }

  for (guint i = 0; i < N_FRAMES; i++) {
    const GstClockTime pts = start + i * GST_SECOND / 30;
    const GstStructure *s;
    guint64 v;

    msg = gcvt_pop (gcvt_bus (e), GST_MESSAGE_ELEMENT);
    fail_unless (msg != NULL, "no element message for frame %u", i);
    fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (e));
    s = gst_message_get_structure (msg);
    fail_unless (gst_structure_has_name (s, STATS_NAME));
    fail_unless (gst_structure_get_uint64 (s, "timestamp", &v));
    fail_unless_equals_uint64 (v, pts);
    fail_unless (gst_structure_get_uint64 (s, "stream-time", &v));
    fail_unless_equals_uint64 (v, pts - start + time);
    fail_unless (gst_structure_get_uint64 (s, "running-time", &v));
    fail_unless_equals_uint64 (v, pts - start + base);
    fail_unless (gst_structure_get_uint64 (s, "duration", &v));
    fail_unless_equals_uint64 (v, GST_SECOND / 30);
    /* the frame's own numbers, as in its meta */
    for (guint f = 0; f < (guint) gst_structure_n_fields (metas[i]); f++) {
      const gchar *field = gst_structure_nth_field_name (metas[i], f);
      const GValue *got = gst_structure_get_value (s, field);
      fail_unless (got && gst_value_compare (got,
              gst_structure_get_value (metas[i], field)) == GST_VALUE_EQUAL,
          "frame %u: message field %s differs from the meta's", i, field);
    }
    gst_structure_free (metas[i]);
    gst_message_unref (msg);
  }
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ELEMENT) == NULL,
      "more element messages than frames");

  /* post-messages=false: the meta alone */
  g_object_set (e, "post-messages", FALSE, NULL);
  {
    RefImage *img = gcvt_random_image (r, REF_GRAY8, 32, 24, 0, 0);
    GstBuffer *out = gcvt_process (hn, stamped (img, REF_GRAY8, 9, start));
    stats_of (out, "post-messages=false");
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ELEMENT) == NULL,
        "an element message with post-messages=false");
    gst_buffer_unref (out);
    ref_image_free (img);
  }
  gst_harness_teardown (hn);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* Statistics on and off give the same bytes on every path: fixed-point
 * blur, separable, direct, magnitude, both conversions. */
GST_START_TEST (test_on_off_identical)
{
  static const struct
  {
    RefFormat in, out;
    Kind kind;
  } cases[] = {
    {REF_RGBA, REF_RGBA, KIND_BLUR},
    {REF_GRAY8, REF_GRAY8, KIND_BLUR},
    {REF_BGRX, REF_BGRX, KIND_SEPARABLE},
    {REF_GRAY32F, REF_GRAY32F, KIND_DIRECT},
    {REF_GRAY8, REF_GRAY32F, KIND_MAGNITUDE},
    {REF_GRAY32F, REF_GRAY8, KIND_DIRECT},
  };
  GRand *r = ref_rand_new ("statistics on off");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    const guint w = 204, h = 77;
    const gboolean rank1 = cases[c].kind == KIND_BLUR
        || cases[c].kind == KIND_SEPARABLE;
    RefKernel *k = cases[c].kind == KIND_BLUR ? ref_builtin ("gaussian", 5,
        1.3) : gcvt_random_kernel (r, 5, 5, rank1);
    RefImage *img = gcvt_random_image (r, cases[c].in, w, h, -1.0, 1.0);
    GstBuffer *out[2];
    GstMapInfo map;
    RefParams p;

    if (!rank1 && gcvt_forced_separable ()) {
      ref_kernel_free (k);
      ref_image_free (img);
      continue;                 /* refused (test_formats checks that) */
    }
    ref_params_init (&p, k);
    if (cases[c].kind != KIND_BLUR)
      p.scale = 1.0 / ref_kernel_sum_abs (k);
    for (guint on = 0; on < 2; on++) {
      GstElement *e = gcvt_element_new ();
      GstHarness *hn;

      gcvt_set_params (e, &p);
      if (cases[c].kind == KIND_MAGNITUDE)
        gst_util_set_object_arg (G_OBJECT (e), "filter", "sobel");
      g_object_set (e, "statistics", on, NULL);
      hn = gcvt_harness_new (e);
      gcvt_set_caps (hn, cases[c].in, cases[c].out, w, h);
      out[on] = gcvt_process (hn, gcvt_buffer_new (img, cases[c].in, 0, 0,
              FALSE));
      fail_unless (!on == !gst_buffer_get_custom_meta (out[on], STATS_META));
      gst_harness_teardown (hn);
      gcvt_element_unref (e);
    }
    /* rows have no padding at this width: the buffers are the frames */
    fail_unless (gst_buffer_map (out[0], &map, GST_MAP_READ));
    fail_unless (gst_buffer_get_size (out[1]) == map.size
        && gst_buffer_memcmp (out[1], 0, map.data, map.size) == 0,
        "case %u: statistics on changed the output", c);
    gst_buffer_unmap (out[0], &map);
    gst_buffer_unref (out[0]);
    gst_buffer_unref (out[1]);
    ref_kernel_free (k);
    ref_image_free (img);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* The identity between equal formats runs in passthrough, but not with
 * statistics: the buffer is measured (exactly: its own samples). Switched
 * on while playing, from the next frame. */
GST_START_TEST (test_identity_measured)
{
  static const RefFormat formats[] = { REF_BGRA, REF_GRAY32F };
  GRand *r = ref_rand_new ("statistics identity");

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    const RefFormat fmt = formats[f];
    RefImage *img = gcvt_random_image (r, fmt, 45, 33, -2.0, 2.0);
    GstElement *e = gcvt_element_new ();
    GstHarness *hn;
    GstBuffer *in, *out;
    gdouble threshold;
    RefParams p;

    ref_params_init (&p, NULL);
    gcvt_set_params (e, &p);
    hn = gcvt_harness_new (e);
    gcvt_set_caps (hn, fmt, fmt, 45, 33);
    in = gcvt_buffer_new (img, fmt, 0, 0, FALSE);
    out = gcvt_process (hn, gst_buffer_ref (in));
    fail_unless (out == in, "the identity is not in passthrough");
    fail_unless (gst_buffer_get_custom_meta (out, STATS_META) == NULL);
    gst_buffer_unref (out);
    gst_buffer_unref (in);

    /* just below a sample, between two floats: that sample is above it
     * (compared as doubles, not at the threshold rounded to float) */
    threshold = MAX (fabs (img->v[17]) - 1e-12, 0.0);
    g_object_set (e, "statistics", TRUE, "statistics-threshold", threshold,
        NULL);
    in = gcvt_buffer_new (img, fmt, 0, 0, FALSE);
    out = gcvt_process (hn, gst_buffer_ref (in));
    fail_unless (out != in, "statistics=true: still in passthrough");
    fail_if (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (e)));
    gcvt_assert_frame (out, fmt, fmt, img, &p, "identity");
    check_stats (out, fmt, fmt, img, &p, threshold, exact_arithmetic (),
        "identity");
    gst_buffer_unref (out);
    gst_buffer_unref (in);
    gst_harness_teardown (hn);
    gcvt_element_unref (e);
    ref_image_free (img);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* GRAY32F with NaN and infinities: NaN makes the sums NaN and is skipped by
 * the extremes (NaN when every sample is NaN), is never above; an
 * infinity counts as itself. Through the identity (exact), a box and into
 * GRAY8. */
GST_START_TEST (test_nonfinite)
{
  GRand *r = ref_rand_new ("statistics nonfinite");
  const guint w = 37, h = 29;

  for (guint c = 0; c < 5; c++) {
    RefImage *img = gcvt_random_image (r, REF_GRAY32F, w, h, -1.0, 1.0);
    RefKernel *box = ref_builtin ("box", 3, 1.0);
    const RefFormat out_fmt = c == 4 ? REF_GRAY8 : REF_GRAY32F;
    GstElement *e;
    RefParams p;
    gchar *what = g_strdup_printf ("nonfinite case %u", c);

    ref_params_init (&p, c >= 2 ? box : NULL);
    if (c == 1)
      for (guint i = 0; i < w * h; i++)
        img->v[i] = NAN;
    else {
      ref_pixel (img, 3, 2)[0] = NAN;
      ref_pixel (img, 30, 20)[0] = NAN;
      if (c != 3) {
        ref_pixel (img, 5, 5)[0] = INFINITY;
        ref_pixel (img, 7, 1)[0] = -INFINITY;
      }
    }
    e = stats_element (&p, 0.5);
    run_checked (e, REF_GRAY32F, out_fmt, img, &p, 0.5, c < 2
        && exact_arithmetic (), 0, what);
    gcvt_element_unref (e);
    ref_kernel_free (box);
    ref_image_free (img);
    g_free (what);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* --- NV12 and I420 ------------------------------------------------------- */

/* A frame of `format` in GStreamer's default layout from its planes, each
 * a GRAY8 image (Y, then U and V at half size). */
static GstBuffer *
planar_buffer (GstVideoFormat format, RefImage * const planes[3])
{
  const gboolean nv12 = format == GST_VIDEO_FORMAT_NV12;
  GstVideoInfo info;
  GstBuffer *buf;
  GstMapInfo map;

  fail_unless (gst_video_info_set_format (&info, format, planes[0]->width,
          planes[0]->height));
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  for (guint c = 0; c < 3; c++) {
    /* NV12: U and V interleaved in memory plane 1 */
    const guint mp = nv12 ? MIN (c, 1) : c, step = nv12 && c ? 2 : 1;
    guint8 *base = map.data + GST_VIDEO_INFO_PLANE_OFFSET (&info, mp)
        + (nv12 && c == 2);
    for (guint y = 0; y < planes[c]->height; y++)
      for (guint x = 0; x < planes[c]->width; x++)
        base[y * GST_VIDEO_INFO_PLANE_STRIDE (&info, mp) + x * step] =
            (guint8) ref_pixel (planes[c], x, y)[0];
  }
  gst_buffer_unmap (buf, &map);
  return buf;
}

static GstCaps *
planar_caps (const gchar * format, guint w, guint h)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, format,
      "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
}

/* A channel per filtered plane, in its own samples: Y, or Y, U and V with
 * planes=all; Y alone into GRAY8 or GRAY32F. loop index: the case */
GST_START_TEST (test_planar)
{
  static const struct
  {
    GstVideoFormat format;
    const gchar *out;
    gboolean all;
  } cases[] = {
    {GST_VIDEO_FORMAT_NV12, "NV12", FALSE},
    {GST_VIDEO_FORMAT_NV12, "NV12", TRUE},
    {GST_VIDEO_FORMAT_I420, "I420", TRUE},
    {GST_VIDEO_FORMAT_I420, "I420", FALSE},
    {GST_VIDEO_FORMAT_NV12, "GRAY32F", TRUE},
    {GST_VIDEO_FORMAT_I420, "GRAY8", FALSE},
  };
  static const gchar *const yuv[] = { "Y", "U", "V" };
  const guint w = 67, h = 45, cw = (w + 1) / 2, ch = (h + 1) / 2;
  const gboolean to_float = g_str_equal (cases[__i__].out, "GRAY32F");
  const gdouble unit = to_float ? 1.0 / 255.0 : 1.0;
  const gboolean all = cases[__i__].all
      && !g_str_has_prefix (cases[__i__].out, "GRAY");
  gchar *what = g_strdup_printf ("%s -> %s planes=%s",
      gst_video_format_to_string (cases[__i__].format), cases[__i__].out,
      cases[__i__].all ? "all" : "luma");
  GRand *r = ref_rand_new (what);
  RefKernel *k = gcvt_random_kernel (r, 3, 3, gcvt_forced_separable ());
  RefImage *planes[3];
  const GstStructure *s;
  GstElement *e;
  GstHarness *hn;
  GstBuffer *out;
  RefParams p;

  for (guint c = 0; c < 3; c++)
    planes[c] = gcvt_random_image (r, REF_GRAY8, c ? cw : w, c ? ch : h, 0,
        0);
  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  p.bias = 20.0;
  p.border = (RefBorder) (__i__ % REF_N_BORDERS);
  p.border_value = 77.0;
  e = stats_element (&p, to_float ? 0.3 : 80.0);
  gst_util_set_object_arg (G_OBJECT (e), "planes", cases[__i__].all ? "all" :
      "luma");
  hn = gcvt_harness_new (e);
  gst_harness_set_caps (hn, planar_caps (gst_video_format_to_string
          (cases[__i__].format), w, h), planar_caps (cases[__i__].out, w, h));
  out = gcvt_process (hn, planar_buffer (cases[__i__].format, planes));
  s = stats_of (out, what);
  assert_layout (s, yuv, all ? 3 : 1, to_float ? 0.3 : 80.0, what);
  for (guint c = 0; c < (all ? 3u : 1u); c++) {
    RefImage *ref = ref_filter (planes[c], &p);
    check_channel (s, c, ref, 0, unit, to_float ? 0.3 : 80.0, to_float ?
        ref_float_tolerance (&p, planes[c], unit) : ref_u8_tolerance (&p,
            planes[c], FALSE), what);
    ref_image_free (ref);
  }
  gst_buffer_unref (out);
  gst_harness_teardown (hn);
  gcvt_element_unref (e);
  for (guint c = 0; c < 3; c++)
    ref_image_free (planes[c]);
  ref_kernel_free (k);
  g_rand_free (r);
  g_free (what);
}

GST_END_TEST;

static Suite *
statistics_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-statistics");
  TCase *tc = tcase_create ("statistics");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_formats, 0, REF_N_FORMATS);
  tcase_add_loop_test (tc, test_exact_positions, 0, 4);
  tcase_add_test (tc, test_crop);
  tcase_add_test (tc, test_frames_in_flight);
  tcase_add_test (tc, test_messages);
  tcase_add_test (tc, test_on_off_identical);
  tcase_add_test (tc, test_identity_measured);
  tcase_add_test (tc, test_nonfinite);
  tcase_add_loop_test (tc, test_planar, 0, 6);
  return s;
}

GCVT_MAIN (statistics);
