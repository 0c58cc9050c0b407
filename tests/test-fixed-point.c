/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU engine's 8.8 fixed-point path (cuda/cpu/gcv-cpu-setup.c) on
 * frames of three channels, RGB and BGR: blurs (rank-1 kernels of taps
 * >= 0, no bias) from a format to itself, on frames of several strips and
 * bands with padded strides, every border, against the reference within
 * the 8-bit bound of docs/formats.md; the plan's record says that the
 * fixed-point path is what ran. Per-frame statistics on that path (GRAY8
 * and the RGBA family, whole frames and regions) against the reference's
 * within the float bound of docs/statistics.md. GLib's test framework, in
 * TAP. */
#include "gcv-tools.h"
#include "reference.h"

#include <math.h>
#include <string.h>

#define PAD_BYTE 0xa5

/* Sizes: odd ones, one of several strips (1031 pixels: 3093 samples a row)
 * and bands, a long thin one. */
static const guint sizes[][2] = { {37, 23}, {1031, 67}, {2053, 9} };

/* Factors of a blur: whole 1/64ths (float-exact) of 1 to 64. */
static gfloat *
blur_factor (GRand * r, guint n, gdouble * sum)
{
  gfloat *v = g_new (gfloat, n);

  *sum = 0.0;
  for (guint i = 0; i < n; i++) {
    v[i] = g_rand_int_range (r, 1, 65) / 64.0f;
    *sum += v[i];
  }
  return v;
}

/* One frame of `fmt` (RGB or BGR) through a blur on the fixed-point path,
 * checked against the reference; nothing past a row's pixels written. */
static void
check_fixed (GcvEngine * e, GRand * r, GcvFormat fmt, guint w, guint h,
    RefBorder border, gsize pad)
{
  /* a factor of one tap is 1.0, which 0.16 taps do not hold: such blurs
   * run in floats */
  const guint kw = g_rand_int_range (r, 2, 10), kh = g_rand_int_range (r, 2,
      10);
  const gsize stride = (gsize) w * 3 + pad, size = stride * h;
  gdouble sum_row, sum_column, row_d[9], column_d[9];
  gfloat *row = blur_factor (r, kw, &sum_row);
  gfloat *column = blur_factor (r, kh, &sum_column);
  RefKernel *k;
  RefImage *img = ref_image_new (w, h, 3), *ref;
  RefParams p;
  GcvFilterDesc d;
  GcvFilter *f;
  GcvGeometry g = { fmt, fmt, w, h };
  GcvPlan *plan;
  GError *err = NULL;
  guint8 *in = g_malloc (size), *out = g_malloc (size);
  GcvImage src = { in, stride }, dst = { out, stride };
  gdouble tol;
  gchar *what;

  for (guint i = 0; i < kw; i++)
    row_d[i] = row[i];
  for (guint j = 0; j < kh; j++)
    column_d[j] = column[j];
  k = ref_kernel_outer (column_d, kh, row_d, kw);
  ref_params_init (&p, k);
  p.scale = 1.0 / (sum_row * sum_column);
  p.anchor_x = g_rand_int_range (r, 0, kw);
  p.anchor_y = g_rand_int_range (r, 0, kh);
  p.border = border;
  /* a whole 8-bit value keeps the constant border on the path */
  p.border_value = 200.0;

  gcv_filter_desc_init (&d);
  d.builtin = GCV_BUILTIN_CUSTOM;
  d.row_kernel = row;
  d.n_row_kernel = d.kernel_width = kw;
  d.column_kernel = column;
  d.n_column_kernel = d.kernel_height = kh;
  d.scale = p.scale;
  d.anchor_x = p.anchor_x;
  d.anchor_y = p.anchor_y;
  d.border = (GcvBorder) border;
  d.border_value = p.border_value;

  memset (in, PAD_BYTE, size);
  memset (out, PAD_BYTE, size);
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++)
      for (guint c = 0; c < 3; c++) {
        const guint v = g_rand_int_range (r, 0, 256);
        ref_pixel (img, x, y)[c] = v;
        in[y * stride + x * 3 + c] = (guint8) v;
      }
  what = g_strdup_printf ("%s %ux%u stride %" G_GSIZE_FORMAT ", %ux%u blur "
      "anchor (%d, %d), border=%s", gcv_format_name (fmt), w, h, stride, kw,
      kh, p.anchor_x, p.anchor_y, ref_border_nick (border));

  f = gcv_filter_new (&d, &err);
  g_assert_no_error (err);
  plan = gcv_plan_new (e, &g, f, GCV_FAMILY_AUTO, 1, &err);
  g_assert_no_error (err);
  if (gcv_plan_get_choice (plan)->cpu_path != GCV_CPU_PATH_FIXED_POINT)
    g_error ("%s: the path is %d (%s), not fixed point", what,
        gcv_plan_get_choice (plan)->cpu_path, gcv_plan_describe (plan));
  g_assert_true (gcv_plan_run (plan, &src, &dst, &err));
  g_assert_no_error (err);

  ref = ref_filter (img, &p);
  tol = ref_u8_bound (&p, MAX (255.0, p.border_value));
  for (guint y = 0; y < h; y++) {
    const guint8 *o = out + y * stride;
    for (guint x = 0; x < w; x++)
      for (guint c = 0; c < 3; c++) {
        const gdouble want = ref_to_u8 (ref_pixel (ref, x, y)[c]);
        if (!(fabs (o[x * 3 + c] - want) <= tol))
          g_error ("%s: (%u, %u) channel %u is %u, the reference %g (exact "
              "%.4f), off by more than %g", what, x, y, c, o[x * 3 + c],
              want, ref_pixel (ref, x, y)[c], tol);
      }
    for (gsize b = (gsize) w * 3; b < stride; b++)
      if (o[b] != PAD_BYTE)
        g_error ("%s: row %u's padding written", what, y);
  }
  gcv_plan_free (plan);
  gcv_filter_free (f);
  ref_image_free (ref);
  ref_image_free (img);
  ref_kernel_free (k);
  g_free (row);
  g_free (column);
  g_free (in);
  g_free (out);
  g_free (what);
}

/* Sums are taken in float over short runs of samples and in double across
 * them: on top of the samples' own error, |error| <= SUM_REL * sum|v|. */
#define SUM_REL 1e-5

/* A statistics case: a format, the blur's scale times 1/sum(K), alpha
 * filtered or not, and a region (width 0: the whole frame). */
typedef struct {
  GcvFormat format;
  guint channels;
  gdouble extra_scale;
  gboolean filter_alpha;
  GcvRect region;
} StatsCase;

/* Channel c of the frame's statistics `got` against those of the
 * reference's output `ref` (the measured area only), each sample within
 * `tol` of it: docs/statistics.md's bound. */
static void
check_stats_channel (const GcvChannelStats * got, const RefImage * ref,
    guint c, gdouble threshold, gdouble tol, const gchar * what)
{
  gdouble sum_abs = 0.0, allowed;
  RefStats rs;

  ref_stats (ref, c, 1.0, threshold, tol, &rs);
  for (guint y = 0; y < ref->height; y++)
    for (guint x = 0; x < ref->width; x++)
      sum_abs += fabs (ref_pixel (ref, x, y)[c]);
  if (got->count != rs.count)
    g_error ("%s: channel %u count %" G_GUINT64_FORMAT ", expected %"
        G_GUINT64_FORMAT, what, c, got->count, rs.count);
  allowed = rs.count * tol + SUM_REL * sum_abs;
  if (!(fabs (got->sum - rs.sum) <= allowed))
    g_error ("%s: channel %u mean %.9g, the reference's %.9g (sum off by "
        "%.4g, more than %.3g)", what, c, got->sum / got->count,
        rs.sum / rs.count, got->sum - rs.sum, allowed);
  if (!(fabs (got->min - rs.min) <= tol) || !(fabs (got->max - rs.max)
          <= tol))
    g_error ("%s: channel %u min %.9g max %.9g, the reference's %.9g and "
        "%.9g (+-%.3g)", what, c, got->min, got->max, rs.min, rs.max, tol);
  if (got->above > rs.above + rs.near || got->above + rs.near < rs.above)
    g_error ("%s: channel %u above %" G_GUINT64_FORMAT " (threshold %g), "
        "the reference's %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " near "
        "it)", what, c, got->above, threshold, rs.above, rs.near);
}

/* One frame through a normalized blur on the fixed-point path with
 * statistics, each measured channel checked against the reference. */
static void
check_stats_fixed (GcvEngine * e, GRand * r, const StatsCase * sc, guint w,
    guint h)
{
  const guint kw = g_rand_int_range (r, 2, 10), kh = g_rand_int_range (r, 2,
      10), ch = sc->channels;
  const gsize stride = (gsize) w * ch, size = stride * h;
  const GcvRect area = sc->region.width ? sc->region : (GcvRect) {
  0, 0, w, h};
  gdouble sum_row, sum_column, row_d[9], column_d[9], tol, threshold;
  gfloat *row = blur_factor (r, kw, &sum_row);
  gfloat *column = blur_factor (r, kh, &sum_column);
  RefKernel *k;
  RefImage *img = ref_image_new (w, h, ch), *ref, *measured;
  RefParams p;
  GcvFilterDesc d;
  GcvFilter *f;
  GcvGeometry g = { sc->format, sc->format, w, h };
  GcvFrameOptions o;
  GcvFrameStats stats;
  GcvTicket ticket;
  GcvPlan *plan;
  GError *err = NULL;
  guint8 *in = g_malloc (size), *out = g_malloc (size);
  GcvImage src = { in, stride }, dst = { out, stride };
  gchar *what;

  for (guint i = 0; i < kw; i++)
    row_d[i] = row[i];
  for (guint j = 0; j < kh; j++)
    column_d[j] = column[j];
  k = ref_kernel_outer (column_d, kh, row_d, kw);
  ref_params_init (&p, k);
  p.scale = sc->extra_scale / (sum_row * sum_column);
  p.border = REF_BORDER_REFLECT101;
  p.filter_alpha = sc->filter_alpha;

  gcv_filter_desc_init (&d);
  d.builtin = GCV_BUILTIN_CUSTOM;
  d.row_kernel = row;
  d.n_row_kernel = d.kernel_width = kw;
  d.column_kernel = column;
  d.n_column_kernel = d.kernel_height = kh;
  d.scale = p.scale;
  d.border = GCV_BORDER_REFLECT101;
  d.alpha = sc->filter_alpha ? GCV_ALPHA_FILTER : GCV_ALPHA_PASSTHROUGH;

  for (gsize i = 0; i < size; i++) {
    in[i] = (guint8) g_rand_int_range (r, 0, 256);
    img->v[i] = in[i];
  }
  ref = ref_filter (img, &p);
  /* the measured area of the reference's output, as ref_stats takes it */
  measured = ref_image_new (area.width, area.height, ch);
  for (guint y = 0; y < (guint) area.height; y++)
    memcpy (ref_pixel (measured, 0, y), ref_pixel (ref, area.x, area.y + y),
        sizeof (gdouble) * area.width * ch);
  threshold = fabs (measured->v[g_rand_int_range (r, 0, area.width
              * area.height * ch)]);
  tol = ref_float_tolerance (&p, img, 1.0);
  what = g_strdup_printf ("%s %ux%u, %ux%u blur at scale %g/sum(K), alpha "
      "%s, region (%d, %d) %dx%d", gcv_format_name (sc->format), w, h, kw,
      kh, sc->extra_scale, sc->filter_alpha ? "filter" : "passthrough",
      area.x, area.y, area.width, area.height);

  f = gcv_filter_new (&d, &err);
  g_assert_no_error (err);
  plan = gcv_plan_new (e, &g, f, GCV_FAMILY_AUTO, 1, &err);
  g_assert_no_error (err);
  if (gcv_plan_get_choice (plan)->cpu_path != GCV_CPU_PATH_FIXED_POINT)
    g_error ("%s: the path is %d (%s), not fixed point", what,
        gcv_plan_get_choice (plan)->cpu_path, gcv_plan_describe (plan));
  gcv_frame_options_init (&o);
  o.statistics = TRUE;
  o.statistics_threshold = threshold;
  if (sc->region.width) {
    o.region_mode = GCV_REGIONS_INSIDE;
    o.regions = &sc->region;
    o.n_regions = 1;
  }
  g_assert_true (gcv_plan_submit_with (plan, &src, &dst, &o, &ticket, &err));
  g_assert_no_error (err);
  g_assert_true (gcv_plan_wait_stats (plan, ticket, &stats, &err));
  g_assert_no_error (err);
  g_assert_cmpuint (stats.n_channels, ==, ch == 4 && !sc->filter_alpha ?
      3 : ch);
  for (guint c = 0; c < stats.n_channels; c++)
    check_stats_channel (&stats.channel[c], measured, c, threshold, tol,
        what);

  gcv_plan_free (plan);
  gcv_filter_free (f);
  ref_image_free (measured);
  ref_image_free (ref);
  ref_image_free (img);
  ref_kernel_free (k);
  g_free (row);
  g_free (column);
  g_free (in);
  g_free (out);
  g_free (what);
}

/* Statistics on the fixed-point path measure the exact output values, as
 * on the float paths: at scale=1/255 (outputs 0..1) and at 1, whole frames
 * of several strips and bands and a region. */
static void
test_fixed_statistics (void)
{
  static const StatsCase cases[] = {
    {GCV_FORMAT_GRAY8, 1, 1.0 / 255.0, FALSE, {0, 0, 0, 0}},
    {GCV_FORMAT_GRAY8, 1, 1.0, FALSE, {0, 0, 0, 0}},
    {GCV_FORMAT_RGBA, 4, 1.0 / 255.0, FALSE, {0, 0, 0, 0}},
    {GCV_FORMAT_RGBA, 4, 1.0, TRUE, {0, 0, 0, 0}},
    {GCV_FORMAT_GRAY8, 1, 1.0 / 255.0, FALSE, {301, 7, 517, 41}},
    {GCV_FORMAT_RGBA, 4, 1.0 / 255.0, TRUE, {13, 20, 200, 30}},
  };
  GRand *r = g_rand_new_with_seed (g_test_rand_int ());
  GcvEngine *e = gcv_engine_new (GCV_BACKEND_CPU, -1, NULL);

  g_assert_nonnull (e);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      if (!cases[i].region.width || (sizes[s][0] >= (guint)
              (cases[i].region.x + cases[i].region.width)
              && sizes[s][1] >= (guint) (cases[i].region.y
                  + cases[i].region.height)))
        check_stats_fixed (e, r, &cases[i], sizes[s][0], sizes[s][1]);
  gcv_engine_free (e);
  g_rand_free (r);
}

/* data: the format */
static void
test_fixed_three_channels (gconstpointer data)
{
  const GcvFormat fmt = GPOINTER_TO_INT (data);
  /* GLib's seed (its "# random seed" line; --seed repeats it): what
   * ref_rand_new() prints would not be TAP */
  GRand *r = g_rand_new_with_seed (g_test_rand_int ());
  GcvEngine *e = gcv_engine_new (GCV_BACKEND_CPU, -1, NULL);

  g_assert_nonnull (e);
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (RefBorder b = 0; b < REF_N_BORDERS; b++)
      /* odd pads leave rows of any alignment */
      check_fixed (e, r, fmt, sizes[s][0], sizes[s][1], b, (b + s) % 2 ?
          2 * b + 1 : 0);
  gcv_engine_free (e);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_data_func ("/fixed-point/rgb",
      GINT_TO_POINTER (GCV_FORMAT_RGB), test_fixed_three_channels);
  g_test_add_data_func ("/fixed-point/bgr",
      GINT_TO_POINTER (GCV_FORMAT_BGR), test_fixed_three_channels);
  g_test_add_func ("/fixed-point/statistics", test_fixed_statistics);
  return g_test_run ();
}
