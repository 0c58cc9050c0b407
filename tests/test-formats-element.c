/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The formats only the CPU backend takes (docs/formats.md) through the
 * gpuconvolve element: GRAY16_LE, RGB, BGR and P010_10LE and their
 * conversions negotiate and come out as the reference computes them, in
 * system memory with GStreamer's default layout; a pair the engine does
 * not convert is not negotiated. The engine's part is test-formats.c. */
#include "common-formats.h"

/* One frame of `in` through the element to `out`, against the reference
 * (the first plane; P010's chroma mid-grey). */
static void
check_element (GRand * r, GcvFormat in, GcvFormat out, guint w, guint h)
{
  const guint ch = gcvt_fmt_channels (in);
  const gdouble unit = gcvt_fmt_max (out) / gcvt_fmt_max (in);
  RefImage *img = gcvt_fmt_random_image (r, in, w, h, ch), *ref;
  RefImage *planes[3] = { img, NULL, NULL };
  RefParams p;
  GcvFilterDesc d;
  gfloat *taps;
  RefKernel *k = gcvt_fmt_random_params (r, in, REF_BORDER_REFLECT101, FALSE,
      &p, &d, &taps);
  GstElement *e = gcvt_element_new ();
  GstHarness *h_;
  GstVideoInfo info;
  GstVideoFrame frame;
  GstBuffer *outbuf;
  gchar *in_caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,"
      "height=%u,framerate=30/1", gcv_format_name (in), w, h);
  gchar *out_caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,"
      "height=%u,framerate=30/1", gcv_format_name (out), w, h);
  gchar *what = gcvt_fmt_describe (in, out, w, h, 0, &p, FALSE);

  gcvt_set_params (e, &p);
  h_ = gcvt_harness_new (e);
  gst_harness_set_caps_str (h_, in_caps, out_caps);
  outbuf = gcvt_process (h_, gcvt_fmt_buffer_new (in, planes));
  fail_unless (outbuf != NULL, "%s: no output", what);
  gcvt_fmt_video_info (&info, out, w, h);
  fail_unless (gst_video_frame_map (&frame, &info, outbuf, GST_MAP_READ));
  ref = ref_filter (img, &p);
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++)
      for (guint c = 0; c < ch; c++)
        gcvt_fmt_check_value (gcvt_fmt_get (gcvt_fmt_sample_ptr (&frame, out,
                    0, x, y, c), out), ref_pixel (ref, x, y)[c] * unit, out,
            &p, gcvt_fmt_largest_input (img, &p), unit, what, x, y, c);
  gst_video_frame_unmap (&frame);
  gst_buffer_unref (outbuf);
  gst_harness_teardown (h_);
  gcvt_element_unref (e);
  ref_image_free (ref);
  ref_image_free (img);
  ref_kernel_free (k);
  g_free (taps);
  g_free (in_caps);
  g_free (out_caps);
  g_free (what);
}

/* The new formats and their conversions negotiate through the element and
 * come out as the engine computes them. */
GST_START_TEST (test_element_formats)
{
  static const struct
  {
    GcvFormat in, out;
  } cases[] = {
    {GCV_FORMAT_RGB, GCV_FORMAT_RGB},
    {GCV_FORMAT_BGR, GCV_FORMAT_BGR},
    {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY32F},
    {GCV_FORMAT_GRAY32F, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_GRAY32F},
  };
  GRand *r = ref_rand_new ("element_formats");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    check_element (r, cases[c].in, cases[c].out, 37, 23);
  g_rand_free (r);
}

GST_END_TEST;

/* A pair the engine does not convert is not negotiated. */
GST_START_TEST (test_element_refuses_pair)
{
  GstElement *e = gcvt_element_new ();
  GstHarness *h = gcvt_harness_new (e);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16 * 8 * 3, NULL);

  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=P010_10LE,width=16,height=8,framerate=30/1");
  gst_harness_set_sink_caps_str (h,
      "video/x-raw,format=GRAY8,width=16,height=8,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* Whether `caps` offer `format` on any structure. */
static gboolean
caps_offer (GstCaps * caps, const gchar * format)
{
  GstCaps *want = gst_caps_new_simple ("video/x-raw", "format",
      G_TYPE_STRING, format, NULL);
  gboolean any = FALSE;

  for (guint i = 0; i < gst_caps_get_size (caps) && !any; i++) {
    GstCaps *one = gst_caps_copy_nth (caps, i);
    gst_caps_set_features (one, 0, NULL);
    any = gst_caps_can_intersect (one, want);
    gst_caps_unref (one);
  }
  gst_caps_unref (want);
  return any;
}

/* With backend=cuda the pads do not offer the formats only the CPU engine
 * takes, so that a converter in front picks another; backend=cpu and auto
 * offer them. A query, no device needed. */
GST_START_TEST (test_cuda_backend_caps)
{
  const gchar *backends[] = { "cuda", "cpu", "auto" };
  const gchar *cpu_only[] = { "GRAY16_LE", "RGB", "BGR", "P010_10LE" };

  for (guint b = 0; b < G_N_ELEMENTS (backends); b++) {
    GstElement *e = gst_element_factory_make ("gpuconvolve", NULL);
    const gboolean offered = b > 0;

    fail_unless (e != NULL);
    gst_util_set_object_arg (G_OBJECT (e), "backend", backends[b]);
    for (guint p = 0; p < 2; p++) {
      GstPad *pad = gst_element_get_static_pad (e, p ? "src" : "sink");
      GstCaps *caps = gst_pad_query_caps (pad, NULL);
      for (guint f = 0; f < G_N_ELEMENTS (cpu_only); f++)
        fail_unless (caps_offer (caps, cpu_only[f]) == offered,
            "backend=%s: the %s pad %s %s", backends[b], p ? "src" : "sink",
            offered ? "does not offer" : "offers", cpu_only[f]);
      fail_unless (caps_offer (caps, "RGBA"), "backend=%s: no RGBA",
          backends[b]);
      gst_caps_unref (caps);
      gst_object_unref (pad);
    }
    gst_object_unref (e);
  }
}

GST_END_TEST;

static Suite *
formats_element_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-formats-element");
  TCase *tc = tcase_create ("formats-element");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  GCVT_ADD_TEST_IF (tc, test_element_formats, !gcvt_on_cuda (),
      "the new formats run on the CPU backend only");
  tcase_add_test (tc, test_element_refuses_pair);
  tcase_add_test (tc, test_cuda_backend_caps);
  return s;
}

GCVT_MAIN (formats_element)
