/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GRAY16_LE, RGB, BGR and P010_10LE (docs/formats.md) against the plain
 * reference, on the backend and kernel family under test: each format to
 * itself and each conversion, at odd sizes and on frames of several CPU
 * strips and bands, with padded strides that leave 16-bit rows unaligned,
 * every border, separable and direct kernels; statistics of RGB and P010;
 * the backends' answer to which formats they take. The element's part is
 * test-formats-element.c. */
#include "common-formats.h"

#include <math.h>
#include <string.h>

#define PAD_BYTE 0xa5

/* A plane of `img` in memory, rows `stride` bytes apart from `offset` on
 * (an odd offset and stride leave 16-bit and float rows unaligned), the
 * rest of the buffer PAD_BYTE. */
static guint8 *
plane_to_memory (const RefImage * img, GcvFormat f, gsize stride,
    gsize offset, gsize step, gsize first, gsize * size)
{
  guint8 *mem;

  *size = offset + stride * img->height;
  mem = g_malloc (*size);
  memset (mem, PAD_BYTE, *size);
  for (guint y = 0; y < img->height; y++)
    for (guint x = 0; x < img->width; x++)
      for (guint c = 0; c < img->channels; c++)
        gcvt_fmt_put (mem + offset + y * stride + x * step + first
            + c * gcvt_fmt_sample_bytes (f), f, ref_pixel (img, x, y)[c]);
  return mem;
}

/* The engine of the backend under test, and the family under test. */
static GcvEngine *
test_engine (void)
{
  GError *err = NULL;
  GcvEngine *e = gcv_engine_new (gcvt_on_cuda ()? GCV_BACKEND_CUDA :
      GCV_BACKEND_CPU, -1, &err);

  fail_unless (e != NULL, "no %s engine: %s", gcvt_backend (),
      err ? err->message : "?");
  return e;
}

static GcvFamily
test_family (void)
{
  for (GcvFamily f = GCV_FAMILY_AUTO; f <= GCV_FAMILY_FFT; f++)
    if (g_str_equal (gcv_family_nick (f), gcvt_algorithm ()))
      return f;
  return GCV_FAMILY_AUTO;
}

/* A dense kernel cannot run where the separable family is forced: such
 * cases are left to the other families. */
static gboolean
runs_here (gboolean rank1)
{
  return rank1 || !gcvt_forced_separable ();
}

/* One frame of a one-plane format (or a conversion) through the engine
 * under test, against the reference. */
static void
check_one_plane (GcvEngine * e, GRand * r, GcvFormat in, GcvFormat out,
    guint w, guint h, gsize pad, RefBorder border, gboolean rank1)
{
  const guint ch = gcvt_fmt_channels (in);
  const gsize in_stride = (gsize) w * gcv_format_pixel_size (in) + pad,
      out_stride = (gsize) w * gcv_format_pixel_size (out) + pad,
      offset = pad % 4;
  const gdouble unit = gcvt_fmt_max (out) / gcvt_fmt_max (in);
  GcvGeometry g = { in, out, w, h };
  RefImage *img = gcvt_fmt_random_image (r, in, w, h, ch), *ref;
  RefParams p;
  GcvFilterDesc d;
  gfloat *taps;
  RefKernel *k = gcvt_fmt_random_params (r, in, border, rank1, &p, &d, &taps);
  GcvFilter *f = gcv_filter_new (&d, NULL);
  GcvPlan *plan;
  GError *err = NULL;
  gsize in_size, out_size;
  guint8 *src_mem = plane_to_memory (img, in, in_stride, offset,
      gcv_format_pixel_size (in), 0, &in_size);
  guint8 *dst_mem = g_malloc (out_size = offset + out_stride * h);
  GcvImage src = { src_mem + offset, in_stride }, dst = { dst_mem + offset,
    out_stride
  };
  gchar *what = gcvt_fmt_describe (in, out, w, h, pad, &p, rank1);
  const gdouble max_in = gcvt_fmt_largest_input (img, &p);

  if (!runs_here (rank1))
    goto done;
  fail_unless (f != NULL, "%s: filter refused", what);
  memset (dst_mem, PAD_BYTE, out_size);
  plan = gcv_plan_new (e, &g, f, test_family (), 1, &err);
  fail_unless (plan != NULL, "%s: %s", what, err ? err->message : "?");
  fail_unless (gcv_plan_run (plan, &src, &dst, &err), "%s: %s", what,
      err ? err->message : "?");
  ref = ref_filter (img, &p);
  for (guint y = 0; y < h; y++) {
    const guint8 *row = dst.data + y * out_stride;
    for (guint x = 0; x < w; x++)
      for (guint c = 0; c < ch; c++)
        gcvt_fmt_check_value (gcvt_fmt_get (row
                + x * gcv_format_pixel_size (out)
                + c * gcvt_fmt_sample_bytes (out), out),
            ref_pixel (ref, x, y)[c] * unit, out, &p, max_in, unit, what, x,
            y, c);
    /* nothing past the row's last pixel is written */
    for (gsize b = (gsize) w * gcv_format_pixel_size (out); b < out_stride;
        b++)
      fail_unless (row[b] == PAD_BYTE, "%s: row %u's padding written", what,
          y);
  }
  gcv_plan_free (plan);
  ref_image_free (ref);
done:
  gcv_filter_free (f);
  ref_image_free (img);
  ref_kernel_free (k);
  g_free (taps);
  g_free (src_mem);
  g_free (dst_mem);
  g_free (what);
}

static const GcvFormat new_formats[] = {
  GCV_FORMAT_GRAY16_LE, GCV_FORMAT_RGB, GCV_FORMAT_BGR,
};

/* The conversions of one-plane formats (docs/formats.md). */
static const struct
{
  GcvFormat in, out;
} conversions[] = {
  {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY32F},
  {GCV_FORMAT_GRAY32F, GCV_FORMAT_GRAY16_LE},
};

/* Sizes: odd ones, and one of several CPU strips and bands. */
static const guint sizes[][2] = { {37, 23}, {1031, 67}, {1, 5} };

/* loop index: the format */
GST_START_TEST (test_one_plane_formats)
{
  const GcvFormat fmt = new_formats[__i__];
  gchar *name = g_strdup_printf ("one_plane_formats %s",
      gcv_format_name (fmt));
  GRand *r = ref_rand_new (name);
  GcvEngine *e = test_engine ();

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (RefBorder b = 0; b < REF_N_BORDERS; b++)
      for (guint rank1 = 0; rank1 < 2; rank1++) {
        if (gcvt_quick () && s == 1 && (b + rank1) % 2)
          continue;
        check_one_plane (e, r, fmt, fmt, sizes[s][0], sizes[s][1],
            (b + rank1) % 2 ? 2 * b + 1 : 0, b, rank1);
      }
  gcv_engine_free (e);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* loop index: the conversion */
GST_START_TEST (test_conversions)
{
  GRand *r = ref_rand_new ("conversions");
  GcvEngine *e = test_engine ();

  for (guint i = 0; i < G_N_ELEMENTS (conversions); i++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      for (RefBorder b = 0; b < REF_N_BORDERS; b++)
        check_one_plane (e, r, conversions[i].in, conversions[i].out,
            sizes[s][0], sizes[s][1], b % 2 ? 3 : 0, b, b % 2);
  gcv_engine_free (e);
  g_rand_free (r);
}

GST_END_TEST;

/* Saturation and rounding at the ends of the 16-bit range, and GRAY32F's
 * NaN and infinities into GRAY16_LE: a 1x1 kernel of scale 1. */
GST_START_TEST (test_gray16_saturation)
{
  const gfloat in[] = { -5.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.0001f, 2.0f, NAN,
    INFINITY, -INFINITY
  };
  /* 0.5 is 32767.5: the tie goes to the even neighbour */
  const guint want[] = { 0, 16384, 32768, 49151, 65535, 65535, 65535, 0,
    65535, 0
  };
  const guint n = G_N_ELEMENTS (in);
  GcvEngine *e = test_engine ();
  GcvFilterDesc d;
  GcvFilter *f;
  GcvGeometry g = { GCV_FORMAT_GRAY32F, GCV_FORMAT_GRAY16_LE, n, 1 };
  GcvPlan *plan;
  guint8 out[2 * G_N_ELEMENTS (in)];
  GcvImage src = { (gpointer) in, sizeof (in) }, dst = { out, sizeof (out) };

  gcv_filter_desc_init (&d);
  d.kernel_width = d.kernel_height = 1;
  f = gcv_filter_new (&d, NULL);
  plan = gcv_plan_new (e, &g, f, test_family (), 1, NULL);
  fail_unless (plan && gcv_plan_run (plan, &src, &dst, NULL));
  for (guint i = 0; i < n; i++)
    fail_unless_equals_int (out[2 * i] | out[2 * i + 1] << 8, want[i]);
  gcv_plan_free (plan);
  gcv_filter_free (f);
  gcv_engine_free (e);
}

GST_END_TEST;

/* --- P010_10LE ----------------------------------------------------------- */

typedef struct {
  guint8 *y, *uv;
  gsize y_size, uv_size, y_stride, uv_stride;
} P010Frame;

static void
p010_frame_init (P010Frame * fr, RefImage * planes[3], gsize pad)
{
  const guint w = planes[0]->width, cw = planes[1]->width;

  fr->y_stride = (gsize) w * 2 + pad;
  fr->uv_stride = (gsize) cw * 4 + pad;
  fr->y = plane_to_memory (planes[0], GCV_FORMAT_P010_10LE, fr->y_stride, 0,
      2, 0, &fr->y_size);
  /* U and V interleaved: pairs of words */
  fr->uv = plane_to_memory (planes[1], GCV_FORMAT_P010_10LE, fr->uv_stride,
      0, 4, 0, &fr->uv_size);
  for (guint y = 0; y < planes[2]->height; y++)
    for (guint x = 0; x < cw; x++)
      gcvt_fmt_put (fr->uv + y * fr->uv_stride + x * 4 + 2,
          GCV_FORMAT_P010_10LE, ref_pixel (planes[2], x, y)[0]);
}

static void
p010_frame_clear (P010Frame * fr)
{
  g_free (fr->y);
  g_free (fr->uv);
}

static GcvImage
p010_image (const P010Frame * fr)
{
  GcvImage img = { fr->y, fr->y_stride, FALSE, {fr->uv}, {fr->uv_stride} };
  return img;
}

/* A P010 frame to P010 (planes=luma or all), GRAY16_LE or GRAY32F. */
static void
check_p010 (GcvEngine * e, GRand * r, GcvFormat out, guint w, guint h,
    gsize pad, RefBorder border, gboolean rank1, gboolean all)
{
  const GcvFormat in = GCV_FORMAT_P010_10LE;
  const gdouble unit = gcvt_fmt_max (out) / gcvt_fmt_max (in);
  GcvGeometry g = { in, out, w, h };
  RefImage *planes[3], *ref[3];
  RefParams p;
  GcvFilterDesc d;
  gfloat *taps;
  RefKernel *k = gcvt_fmt_random_params (r, in, border, rank1, &p, &d, &taps);
  GcvFilter *f;
  GcvPlan *plan;
  GError *err = NULL;
  P010Frame src_fr, dst_fr;
  GcvImage src, dst;
  gchar *what = gcvt_fmt_describe (in, out, w, h, pad, &p, rank1);
  gdouble max_in;
  guint8 *gray = NULL;
  gsize gray_stride = (gsize) w * gcv_format_pixel_size (out) + pad;

  if (!runs_here (rank1)) {
    ref_kernel_free (k);
    g_free (taps);
    g_free (what);
    return;
  }
  d.planes = all ? GCV_PLANES_ALL : GCV_PLANES_LUMA;
  f = gcv_filter_new (&d, NULL);
  ref_planes_new (planes, w, h);
  for (guint c = 0; c < 3; c++)
    for (gsize i = 0; i < (gsize) planes[c]->width * planes[c]->height; i++)
      planes[c]->v[i] = g_rand_int_range (r, 0, 1024);
  max_in = gcvt_fmt_largest_input (planes[0], &p);
  p010_frame_init (&src_fr, planes, pad);
  /* chroma words with their low 6 bits set at random: planes=luma copies
   * the words as they are */
  for (guint y = 0; y < planes[1]->height; y++)
    for (guint x = 0; x < planes[1]->width * 2; x++)
      src_fr.uv[y * src_fr.uv_stride + x * 2] |= g_rand_int_range (r, 0, 64);
  src = p010_image (&src_fr);
  if (out == in) {
    p010_frame_init (&dst_fr, planes, pad);
    memset (dst_fr.y, PAD_BYTE, dst_fr.y_size);
    memset (dst_fr.uv, PAD_BYTE, dst_fr.uv_size);
    dst = p010_image (&dst_fr);
  } else {
    gray = g_malloc (gray_stride * h);
    dst = (GcvImage) {
    gray, gray_stride};
  }
  plan = gcv_plan_new (e, &g, f, test_family (), 1, &err);
  fail_unless (plan != NULL, "%s: %s", what, err ? err->message : "?");
  fail_unless (gcv_plan_run (plan, &src, &dst, &err), "%s: %s", what,
      err ? err->message : "?");
  ref_planes_filter (ref, planes, &p, all);
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++) {
      const guint8 *s = (const guint8 *) dst.data + y * dst.stride
          + x * gcv_format_pixel_size (out);
      gcvt_fmt_check_value (gcvt_fmt_get (s, out),
          ref_pixel (ref[0], x, y)[0] * unit, out, &p, max_in, unit, what,
          x, y, 0);
    }
  if (out == in) {
    for (guint c = 1; c < 3; c++)
      for (guint y = 0; y < ref[c]->height; y++)
        for (guint x = 0; x < ref[c]->width; x++) {
          if (all)
            gcvt_fmt_check_value (gcvt_fmt_get (dst_fr.uv + y
                    * dst_fr.uv_stride + x * 4 + (c - 1) * 2, out),
                ref_pixel (ref[c], x, y)[0], out, &p,
                gcvt_fmt_largest_input (planes[c], &p), 1.0, what, x, y, c);
          else
            fail_unless (memcmp (dst_fr.uv + y * dst_fr.uv_stride + x * 4
                    + (c - 1) * 2, src_fr.uv + y * src_fr.uv_stride + x * 4
                    + (c - 1) * 2, 2) == 0, "%s: chroma %u word at (%u, %u) "
                "not copied exactly", what, c, x, y);
        }
    p010_frame_clear (&dst_fr);
  }
  gcv_plan_free (plan);
  gcv_filter_free (f);
  ref_planes_free (ref);
  ref_planes_free (planes);
  p010_frame_clear (&src_fr);
  ref_kernel_free (k);
  g_free (taps);
  g_free (gray);
  g_free (what);
}

/* loop index: 0 P010 to P010 with planes=luma, 1 with planes=all, 2 to
 * GRAY16_LE, 3 to GRAY32F */
GST_START_TEST (test_p010)
{
  static const GcvFormat outs[] = { GCV_FORMAT_P010_10LE,
    GCV_FORMAT_P010_10LE, GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY32F
  };
  gchar *name = g_strdup_printf ("p010 %d", __i__);
  GRand *r = ref_rand_new (name);
  GcvEngine *e = test_engine ();

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (RefBorder b = 0; b < REF_N_BORDERS; b++)
      for (guint rank1 = 0; rank1 < 2; rank1++) {
        if (gcvt_quick () && s == 1 && (b + rank1) % 2)
          continue;
        check_p010 (e, r, outs[__i__], sizes[s][0], sizes[s][1],
            (b + rank1) % 2 ? 2 * b + 2 : 0, b, rank1, __i__ == 1);
      }
  gcv_engine_free (e);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* --- statistics ---------------------------------------------------------- */

/* Statistics of channel c against the reference's, in output units before
 * rounding (docs/statistics.md): sums within the bound on every sample,
 * extremes within it, their places holding such a value. */
static void
check_channel_stats (const GcvChannelStats * got, const RefImage * ref,
    guint c, gdouble tol, const gchar * what)
{
  RefStats want;

  ref_stats (ref, c, 1.0, 1e30, tol, &want);
  fail_unless_equals_uint64 (got->count, want.count);
  fail_unless (fabs (got->sum - want.sum) <= tol * want.count + 1e-6
      * fabs (want.sum), "%s: channel %u sum %g, the reference %g", what, c,
      got->sum, want.sum);
  fail_unless (fabs (got->min - want.min) <= tol && fabs (got->max
          - want.max) <= tol, "%s: channel %u extremes %g..%g, the reference "
      "%g..%g", what, c, got->min, got->max, want.min, want.max);
  fail_unless (fabs (ref_pixel (ref, got->min_x, got->min_y)[c] - got->min)
      <= 2 * tol && fabs (ref_pixel (ref, got->max_x, got->max_y)[c]
          - got->max) <= 2 * tol, "%s: channel %u extremes' places", what, c);
}

/* RGB has three channels of statistics, P010 with planes=all three planes
 * in 10-bit units; frames of one band and of several. */
GST_START_TEST (test_statistics)
{
  GRand *r = ref_rand_new ("statistics");
  GcvEngine *e = test_engine ();
  GcvFrameOptions o;

  gcv_frame_options_init (&o);
  o.statistics = TRUE;
  for (guint s = 0; s < 2; s++) {
    const guint w = sizes[s][0], h = sizes[s][1];
    RefParams p;
    GcvFilterDesc d;
    gfloat *taps;
    RefKernel *k = gcvt_fmt_random_params (r, GCV_FORMAT_RGB,
        REF_BORDER_REFLECT, s == 0, &p, &d, &taps);
    GcvFilter *f;
    GcvGeometry g = { GCV_FORMAT_RGB, GCV_FORMAT_RGB, w, h };
    RefImage *img = gcvt_fmt_random_image (r, GCV_FORMAT_RGB, w, h, 3), *ref;
    gsize size;
    guint8 *in = plane_to_memory (img, GCV_FORMAT_RGB, w * 3, 0, 3, 0, &size);
    guint8 *out = g_malloc (size);
    GcvImage src = { in, w * 3 }, dst = { out, w * 3 };
    GcvPlan *plan;
    GcvTicket t;
    GcvFrameStats st;
    RefImage *planes[3], *pref[3];
    P010Frame pin, pout;
    GcvImage psrc, pdst;

    f = gcv_filter_new (&d, NULL);
    plan = gcv_plan_new (e, &g, f, runs_here (s == 0) ? test_family () :
        GCV_FAMILY_AUTO, 1, NULL);
    fail_unless (gcv_plan_submit_with (plan, &src, &dst, &o, &t, NULL));
    fail_unless (gcv_plan_wait_stats (plan, t, &st, NULL));
    fail_unless_equals_int (st.n_channels, 3);
    ref = ref_filter (img, &p);
    for (guint c = 0; c < 3; c++)
      check_channel_stats (&st.channel[c], ref, c,
          ref_float_bound (&p, gcvt_fmt_largest_input (img, &p), 1.0), "RGB");
    gcv_plan_free (plan);
    ref_image_free (ref);

    /* P010, planes=all: Y, U and V in 10-bit units */
    gcv_filter_free (f);
    d.planes = GCV_PLANES_ALL;
    p.border_value = d.border_value = 500.0;
    p.bias = d.bias = 30.0;
    f = gcv_filter_new (&d, NULL);
    g.in_format = g.out_format = GCV_FORMAT_P010_10LE;
    ref_planes_new (planes, w, h);
    for (guint c = 0; c < 3; c++)
      for (gsize i = 0; i < (gsize) planes[c]->width * planes[c]->height;
          i++)
        planes[c]->v[i] = g_rand_int_range (r, 0, 1024);
    p010_frame_init (&pin, planes, 0);
    p010_frame_init (&pout, planes, 0);
    psrc = p010_image (&pin);
    pdst = p010_image (&pout);
    plan = gcv_plan_new (e, &g, f, runs_here (s == 0) ? test_family () :
        GCV_FAMILY_AUTO, 1, NULL);
    fail_unless (gcv_plan_submit_with (plan, &psrc, &pdst, &o, &t, NULL));
    fail_unless (gcv_plan_wait_stats (plan, t, &st, NULL));
    fail_unless_equals_int (st.n_channels, 3);
    ref_planes_filter (pref, planes, &p, TRUE);
    for (guint c = 0; c < 3; c++)
      check_channel_stats (&st.channel[c], pref[c], 0,
          ref_float_bound (&p, 1023.0, 1.0), "P010");
    gcv_plan_free (plan);
    ref_planes_free (pref);
    ref_planes_free (planes);
    p010_frame_clear (&pin);
    p010_frame_clear (&pout);

    gcv_filter_free (f);
    ref_image_free (img);
    ref_kernel_free (k);
    g_free (taps);
    g_free (in);
    g_free (out);
  }
  gcv_engine_free (e);
  g_rand_free (r);
}

GST_END_TEST;

/* --- which backend takes which format ------------------------------------ */

static const GcvFormat all_formats[] = {
  GCV_FORMAT_RGBA, GCV_FORMAT_BGRA, GCV_FORMAT_RGBX, GCV_FORMAT_BGRX,
  GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY32F, GCV_FORMAT_NV12, GCV_FORMAT_I420,
  GCV_FORMAT_GRAY16_LE, GCV_FORMAT_RGB, GCV_FORMAT_BGR, GCV_FORMAT_P010_10LE,
};

/* Needs no device: every backend this build has takes every format; the
 * names are GStreamer's and go both ways. */
GST_START_TEST (test_backend_takes_format)
{
  const GcvNeeds none = { 0 };
  const gboolean cuda_built = gcv_backend_takes (GCV_BACKEND_CUDA, &none,
      NULL);

  for (guint i = 0; i < G_N_ELEMENTS (all_formats); i++) {
    const GcvFormat f = all_formats[i];
    GcvFormat back;

    fail_unless (gcv_backend_takes_format (GCV_BACKEND_CPU, f));
    fail_unless (gcv_backend_takes_format (GCV_BACKEND_AUTO, f));
    fail_unless (gcv_backend_takes_format (GCV_BACKEND_CUDA, f)
        == cuda_built, "CUDA does not take %s", gcv_format_name (f));
    fail_unless (gcv_format_from_name (gcv_format_name (f), &back));
    fail_unless_equals_int (back, f);
  }
  fail_unless_equals_string (gcv_format_name (GCV_FORMAT_P010_10LE),
      "P010_10LE");
  fail_unless_equals_string (gcv_format_name (GCV_FORMAT_GRAY16_LE),
      "GRAY16_LE");
  fail_unless_equals_int (gcv_format_pixel_size (GCV_FORMAT_RGB), 3);
  fail_unless_equals_int (gcv_format_pixel_size (GCV_FORMAT_P010_10LE), 2);
  fail_unless_equals_int (gcv_frame_size (GCV_FORMAT_BGR, 5, 2, 16), 31);
  fail_if (gcv_backend_takes_format (GCV_BACKEND_CPU,
          (GcvFormat) (GCV_FORMAT_P010_10LE + 1)));
}

GST_END_TEST;

/* The one decision (docs/formats.md): what each backend's table states,
 * what it lacks named, and auto on CUDA for every format and for regions
 * where a device is usable; an asked backend is kept. Needs no device:
 * what auto settles on follows from gcv_backend_available(). */
GST_START_TEST (test_backend_choose)
{
  const GcvNeeds none = { 0 };
  const gboolean cuda_built = gcv_backend_takes (GCV_BACKEND_CUDA, &none,
      NULL);
  const gboolean gpu = gcv_backend_available (GCV_BACKEND_CUDA, -1, NULL);
  GcvNeeds all = { 0 }, regions = { 0 }, device = { 0 };
  GError *why = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (all_formats); i++)
    all.formats |= GCV_FORMAT_BIT (all_formats[i]);
  regions.regions = TRUE;
  device.device_memory = TRUE;
  fail_unless (gcv_backend_takes (GCV_BACKEND_CPU, &all, NULL));
  fail_unless (gcv_backend_takes (GCV_BACKEND_CPU, &regions, NULL));
  fail_if (gcv_backend_takes (GCV_BACKEND_CPU, &device, &why));
  fail_unless (g_error_matches (why, GCV_ERROR, GCV_ERROR_SETTINGS));
  fail_unless (strstr (why->message, "system memory") != NULL);
  g_clear_error (&why);
  if (cuda_built) {
    fail_unless (gcv_backend_takes (GCV_BACKEND_CUDA, &all, NULL));
    fail_unless (gcv_backend_takes (GCV_BACKEND_CUDA, &device, NULL));
    fail_unless (gcv_backend_takes (GCV_BACKEND_CUDA, &regions, NULL));
  }

  /* every format: CUDA where a device is usable, else the CPU saying why */
  fail_unless_equals_int (gcv_backend_choose (GCV_BACKEND_AUTO, -1, &all,
          &why), gpu ? GCV_BACKEND_CUDA : GCV_BACKEND_CPU);
  fail_unless (gpu ? why == NULL : g_error_matches (why, GCV_ERROR,
          GCV_ERROR_NO_DEVICE));
  g_clear_error (&why);
  /* regions: the same, CUDA where a device is usable */
  fail_unless_equals_int (gcv_backend_choose (GCV_BACKEND_AUTO, -1,
          &regions, &why), gpu ? GCV_BACKEND_CUDA : GCV_BACKEND_CPU);
  fail_unless (gpu ? why == NULL : g_error_matches (why, GCV_ERROR,
          GCV_ERROR_NO_DEVICE));
  g_clear_error (&why);
  /* device memory and regions: CUDA takes both; without a device none
   * can, the CPU saying it takes system memory only */
  device.regions = TRUE;
  fail_unless_equals_int (gcv_backend_choose (GCV_BACKEND_AUTO, -1, &device,
          &why), gpu ? GCV_BACKEND_CUDA : GCV_BACKEND_AUTO);
  fail_unless (gpu ? why == NULL : g_error_matches (why, GCV_ERROR,
          GCV_ERROR_SETTINGS));
  g_clear_error (&why);
  /* an asked backend is kept where it can run, whatever the needs */
  fail_unless_equals_int (gcv_backend_choose (GCV_BACKEND_CPU, -1, &regions,
          NULL), GCV_BACKEND_CPU);
  fail_unless_equals_int (gcv_backend_choose (GCV_BACKEND_CUDA, -1, &all,
          &why), gpu ? GCV_BACKEND_CUDA : GCV_BACKEND_AUTO);
  fail_unless (gpu ? why == NULL : why != NULL);
  g_clear_error (&why);
}

GST_END_TEST;

/* Pairs the engine refuses, naming both formats, before any backend work. */
GST_START_TEST (test_refused_pairs)
{
  static const struct
  {
    GcvFormat in, out;
  } refused[] = {
    {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY8},
    {GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_RGB, GCV_FORMAT_RGBA},
    {GCV_FORMAT_BGR, GCV_FORMAT_RGB},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_GRAY8},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_NV12},
    {GCV_FORMAT_NV12, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_P010_10LE},
  };
  GcvEngine *e = test_engine ();
  GcvFilterDesc d;
  GcvFilter *f;

  gcv_filter_desc_init (&d);
  f = gcv_filter_new (&d, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++) {
    GcvGeometry g = { refused[i].in, refused[i].out, 8, 8 };
    GError *err = NULL;
    gchar *want = g_strdup_printf ("cannot convert %s to %s",
        gcv_format_name (refused[i].in), gcv_format_name (refused[i].out));

    fail_if (gcv_plan_new (e, &g, f, GCV_FAMILY_AUTO, 1, &err));
    fail_unless (g_error_matches (err, GCV_ERROR, GCV_ERROR_FRAME));
    fail_unless_equals_string (err->message, want);
    g_error_free (err);
    g_free (want);
  }
  gcv_filter_free (f);
  gcv_engine_free (e);
}

GST_END_TEST;

static Suite *
formats_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-formats");
  TCase *tc = tcase_create ("formats");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_one_plane_formats, 0,
      G_N_ELEMENTS (new_formats));
  tcase_add_test (tc, test_conversions);
  tcase_add_test (tc, test_gray16_saturation);
  tcase_add_loop_test (tc, test_p010, 0, 4);
  tcase_add_test (tc, test_statistics);
  tcase_add_test (tc, test_backend_takes_format);
  tcase_add_test (tc, test_backend_choose);
  tcase_add_test (tc, test_refused_pairs);
  return s;
}

GCVT_MAIN (formats)
