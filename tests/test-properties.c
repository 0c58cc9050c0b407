/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Property checks and the errors of docs/errors.md: refused values, invalid
 * settings at start, backends, and caps outside the limits (presets:
 * test-presets.c). */
#include "common.h"

#include <math.h>
#include <string.h>

/* --- values the setter refuses ------------------------------------------ */

/* Setting `value` must log a warning in the gpuconvolve category naming
 * the property, and leave the property as it was. */
static void
expect_refused (GstElement * e, const gchar * property, const GValue * value)
{
  gchar *before = gcvt_prop_string (e, property), *after, *attempt;

  attempt = gst_value_serialize (value);
  gcvt_log_capture_start ();
  g_object_set_property (G_OBJECT (e), property, value);
  fail_unless (gcvt_log_count (property) >= 1, "setting %s=%s logged no "
      "warning naming it (%u other warnings)", property, attempt,
      gcvt_log_total ());
  gcvt_log_capture_stop ();
  after = gcvt_prop_string (e, property);
  fail_unless (g_str_equal (before, after), "%s changed from %s to %s after "
      "the refused value %s", property, before, after, attempt);
  g_free (before);
  g_free (after);
  g_free (attempt);
}

/* A valid value must be taken without a warning. */
static void
expect_taken (GstElement * e, const gchar * property, const GValue * value)
{
  gchar *want = gst_value_serialize (value), *got;

  gcvt_log_capture_start ();
  g_object_set_property (G_OBJECT (e), property, value);
  fail_unless_equals_int (gcvt_log_total (), 0);
  gcvt_log_capture_stop ();
  got = gcvt_prop_string (e, property);
  fail_unless (g_str_equal (want, got), "%s is %s, not %s", property, got,
      want);
  g_free (want);
  g_free (got);
}

static void
expect_floats_refused (GstElement * e, const gchar * property,
    const gdouble * f, guint n)
{
  GValue v = G_VALUE_INIT;
  gcvt_floats_value (&v, f, n);
  expect_refused (e, property, &v);
  g_value_unset (&v);
}

static void
expect_floats_taken (GstElement * e, const gchar * property,
    const gdouble * f, guint n)
{
  GValue v = G_VALUE_INIT;
  gcvt_floats_value (&v, f, n);
  expect_taken (e, property, &v);
  g_value_unset (&v);
}

static void
expect_double_refused (GstElement * e, const gchar * property, gdouble d)
{
  GValue v = G_VALUE_INIT;
  g_value_init (&v, G_TYPE_DOUBLE);
  g_value_set_double (&v, d);
  expect_refused (e, property, &v);
  g_value_unset (&v);
}

/* a 3x3 kernel that is not rank 1 */
static const gdouble sharp[9] = { 0, -1, 0, -1, 5, -1, 0, -1, 0 };
/* and one that is */
static const gdouble blur[9] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };

/* Lengths are not judged by the setter (the sizes may come later,
 * docs/properties.md): the kernel is taken, and the start names it. */
GST_START_TEST (test_kernel_length_judged_at_start)
{
  static const gdouble eight[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
  static const struct {
    const gchar *property;
    const gdouble *v;
    guint n;
  } cases[] = {
    { "kernel", eight, 8 },
    { "row-kernel", blur, 4 },
    { "column-kernel", blur, 2 },
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    GstElement *e = gcvt_element_new ();
    g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
    if (c > 0) {
      /* the other factor, of the right length */
      expect_floats_taken (e, c == 1 ? "column-kernel" : "row-kernel", blur,
          3);
    }
    expect_floats_taken (e, cases[c].property, cases[c].v, cases[c].n);
    gcvt_expect_start_error (e, GST_LIBRARY_ERROR,
        GST_LIBRARY_ERROR_SETTINGS, cases[c].property);
    gcvt_element_unref (e);
  }
}

GST_END_TEST;

/* NaN and infinities in any of the three arrays */
GST_START_TEST (test_non_finite_coefficients_refused)
{
  static const gchar *const arrays[] = { "kernel", "row-kernel",
    "column-kernel"
  };
  const gdouble bad[] = { NAN, INFINITY, -INFINITY, 1e300 };
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
  expect_floats_taken (e, "kernel", blur, 9);
  expect_floats_taken (e, "row-kernel", blur, 3);
  expect_floats_taken (e, "column-kernel", blur + 3, 3);
  for (guint a = 0; a < G_N_ELEMENTS (arrays); a++)
    for (guint b = 0; b < G_N_ELEMENTS (bad); b++) {
      guint n = a == 0 ? 9 : 3;
      gdouble v[9];
      for (guint i = 0; i < n; i++)
        v[i] = i == n / 2 ? bad[b] : 1.0;
      expect_floats_refused (e, arrays[a], v, n);
    }
  gcvt_element_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_non_finite_scalars_refused)
{
  static const gchar *const props[] = { "scale", "bias", "border-value" };
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "scale", 2.5, "bias", -3.0, "border-value", 17.0, NULL);
  for (guint p = 0; p < G_N_ELEMENTS (props); p++) {
    expect_double_refused (e, props[p], NAN);
    expect_double_refused (e, props[p], INFINITY);
    expect_double_refused (e, props[p], -INFINITY);
    /* finite, but beyond float's range: NaN and Inf in the frame */
    expect_double_refused (e, props[p], 1e300);
    expect_double_refused (e, props[p], -1e39);
  }
  gcvt_element_unref (e);
}

GST_END_TEST;

/* Values that do not fit together are taken, and the start names the
 * property at fault (docs/properties.md, docs/errors.md). */
static void
expect_taken_then_start_error (GstElement * e, const gchar * property,
    const gchar * value, const gchar * named)
{
  gcvt_log_capture_start ();
  gst_util_set_object_arg (G_OBJECT (e), property, value);
  fail_unless_equals_int (gcvt_log_total (), 0);
  gcvt_log_capture_stop ();
  gcvt_expect_start_error (e, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      named);
  gcvt_element_unref (e);
}

GST_START_TEST (test_anchor_outside_at_start)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 5, "kernel-height", 3, NULL);
  expect_taken_then_start_error (e, "anchor-x", "5", "anchor-x");
  e = gcvt_element_new ();
  g_object_set (e, "kernel-width", 5, "kernel-height", 3, NULL);
  expect_taken_then_start_error (e, "anchor-y", "100", "anchor-y");
  /* built-in filters have their own size */
  e = gcvt_element_new ();
  gst_util_set_object_arg (G_OBJECT (e), "filter", "scharr-x");
  expect_taken_then_start_error (e, "anchor-x", "3", "anchor-x");
}

GST_END_TEST;

GST_START_TEST (test_separable_always_at_start)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
  gcvt_set_floats (e, "kernel", sharp, 9);
  expect_taken_then_start_error (e, "separable", "always", "separable");
}

GST_END_TEST;

GST_START_TEST (test_algorithm_separable_at_start)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
  gcvt_set_floats (e, "kernel", sharp, 9);
  expect_taken_then_start_error (e, "algorithm", "separable", "algorithm");
  /* built-in filters that are not rank 1 too */
  e = gcvt_element_new ();
  gst_util_set_object_arg (G_OBJECT (e), "filter", "laplacian");
  expect_taken_then_start_error (e, "algorithm", "separable", "algorithm");
}

GST_END_TEST;

/* sizes below what a built-in filter needs */
GST_START_TEST (test_builtin_size_at_start)
{
  GstElement *e = gcvt_element_new ();

  gst_util_set_object_arg (G_OBJECT (e), "filter", "sobel-x");
  expect_taken_then_start_error (e, "size", "2", "size");
}

GST_END_TEST;

/* --- settings still invalid at start ------------------------------------ */

GST_START_TEST (test_start_kernel_width_mismatch)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
  gcvt_set_floats (e, "kernel", blur, 9);
  g_object_set (e, "kernel-width", 5, NULL);  /* sizes are always taken */
  gcvt_expect_start_error (e, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "kernel");
  gcvt_element_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_start_row_without_column)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
  gcvt_set_floats (e, "row-kernel", blur, 3);
  gcvt_expect_start_error (e, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "column-kernel");
  gcvt_element_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_start_anchor_after_resize)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 5, "kernel-height", 3, "anchor-x", 4,
      NULL);
  g_object_set (e, "kernel-width", 3, NULL);
  gcvt_expect_start_error (e, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
      "anchor-x");
  gcvt_element_unref (e);
}

GST_END_TEST;

/* --- backends ----------------------------------------------------------- */

static gboolean
cuda_usable (void)
{
  return gcvt_on_cuda ();       /* gcvt_init() skipped if it is not */
}

/* backend=cuda without a usable device: RESOURCE NOT_FOUND at READY->PAUSED.
 * A device id that does not exist stands in where there is a device. */
GST_START_TEST (test_backend_cuda_no_device)
{
  GstElement *e = gst_element_factory_make ("gpuconvolve", NULL);

  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  if (cuda_usable ())
    g_object_set (e, "cuda-device-id", 4096, NULL);
  gcvt_expect_start_error (e, GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NOT_FOUND, NULL);
  gcvt_element_unref (e);

  e = gst_element_factory_make ("gpuconvolve", NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  g_object_set (e, "cuda-device-id", 4096, NULL);
  gcvt_expect_start_error (e, GST_RESOURCE_ERROR,
      GST_RESOURCE_ERROR_NOT_FOUND, NULL);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* backend=auto without a device: one warning on the bus in the element's
 * lifetime (docs/errors.md), filtering on the CPU, through a renegotiation
 * and a restart. */
GST_START_TEST (test_backend_auto_fallback)
{
  GRand *r;
  GstElement *e;
  GstHarness *h;
  GstBus *bus;
  GstMessage *msg;
  RefKernel *k;
  RefParams p;
  gchar *active = NULL;
  guint warnings = 0;

  fail_if (cuda_usable ());     /* registered only there */
  r = ref_rand_new ("backend_auto_fallback");
  e = gst_element_factory_make ("gpuconvolve", NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
  k = gcvt_random_kernel (r, 3, 3, FALSE);
  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  gcvt_set_params (e, &p);
  h = gcvt_harness_new (e);
  bus = gcvt_bus (e);

  for (guint i = 0; i < 4; i++) {
    guint w = 9 + i, hh = 7 + 2 * i;
    RefImage *img = gcvt_random_image (r, REF_RGBA, w, hh, 0, 0);
    GstBuffer *out;
    if (i == 2) {
      /* a restart: the warning is once per element, not per start */
      fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
          GST_STATE_CHANGE_SUCCESS);
      gst_harness_play (h);
      fail_unless (gst_pad_push_event (h->srcpad,
              gst_event_new_stream_start ("restarted")));
    }
    gcvt_set_caps (h, REF_RGBA, REF_RGBA, w, hh);
    out = gcvt_process (h, gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE));
    gcvt_assert_frame (out, REF_RGBA, REF_RGBA, img, &p, "backend=auto");
    gst_buffer_unref (out);
    ref_image_free (img);
  }
  g_object_get (e, "active-algorithm", &active, NULL);
  fail_unless (active && strstr (active, "cpu"), "active-algorithm %s",
      active);
  g_free (active);

  while ((msg = gcvt_pop (bus, GST_MESSAGE_WARNING))) {
    warnings++;
    gcvt_assert_message (msg, GST_RESOURCE_ERROR,
        GST_RESOURCE_ERROR_NOT_FOUND, NULL);
  }
  fail_unless_equals_int (warnings, 1);
  fail_unless (gcvt_pop (bus, GST_MESSAGE_ERROR) == NULL);

  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* --- caps --------------------------------------------------------------- */

static GstCaps *
gray8_caps (gint width, gint height)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "GRAY8",
      "width", G_TYPE_INT, width, "height", G_TYPE_INT, height, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
}

/* width or height 0 or above 32767 does not negotiate; 32767 does */
GST_START_TEST (test_caps_limits)
{
  static const gint bad[][2] = { {0, 4}, {4, 0}, {32768, 1}, {1, 32768},
  {40000, 40000}
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    GstElement *e = gcvt_element_new ();
    GstHarness *h = gcvt_harness_new (e);
    GstCaps *caps = gray8_caps (bad[i][0], bad[i][1]);
    GstPad *sink = gst_element_get_static_pad (e, "sink");

    fail_if (gst_pad_query_accept_caps (sink, caps), "accepted %dx%d",
        bad[i][0], bad[i][1]);
    gst_harness_set_sink_caps (h, gst_caps_ref (caps));
    /* a sticky event is stored even where it is refused, so its result
     * says little; the buffer after it must not go through */
    gst_pad_push_event (h->srcpad, gst_event_new_caps (caps));
    gst_caps_unref (caps);
    {
      GstSegment seg;
      gst_segment_init (&seg, GST_FORMAT_TIME);
      gst_pad_push_event (h->srcpad, gst_event_new_segment (&seg));
    }
    fail_if (gst_harness_push (h, gst_buffer_new_allocate (NULL, 64, NULL))
        == GST_FLOW_OK, "a buffer went through with %dx%d caps", bad[i][0],
        bad[i][1]);
    fail_unless_equals_int (gst_harness_buffers_received (h), 0);
    gst_object_unref (sink);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
  }

  /* the largest sizes work */
  {
    static const gint good[][2] = { {32767, 1}, {1, 32767} };
    GRand *r = ref_rand_new ("caps_limits");
    for (guint i = 0; i < G_N_ELEMENTS (good); i++) {
      GstElement *e = gcvt_element_new ();
      RefKernel *k = gcvt_random_kernel (r, 3, 3, TRUE);
      RefImage *img = gcvt_random_image (r, REF_GRAY8, good[i][0],
          good[i][1], 0, 0);
      RefParams p;
      ref_params_init (&p, k);
      p.scale = 1.0 / ref_kernel_sum_abs (k);
      p.border = REF_BORDER_REFLECT;
      gcvt_set_params (e, &p);
      gcvt_run_and_check (e, REF_GRAY8, REF_GRAY8, img, &p, 0, 0,
          "largest frame");
      gcvt_element_unref (e);
      ref_image_free (img);
      ref_kernel_free (k);
    }
    g_rand_free (r);
  }
}

GST_END_TEST;

static Suite *
properties_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-properties");
  TCase *tc = tcase_create ("properties");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_kernel_length_judged_at_start);
  tcase_add_test (tc, test_non_finite_coefficients_refused);
  tcase_add_test (tc, test_non_finite_scalars_refused);
  tcase_add_test (tc, test_anchor_outside_at_start);
  tcase_add_test (tc, test_separable_always_at_start);
  tcase_add_test (tc, test_algorithm_separable_at_start);
  tcase_add_test (tc, test_builtin_size_at_start);
  tcase_add_test (tc, test_start_kernel_width_mismatch);
  tcase_add_test (tc, test_start_row_without_column);
  tcase_add_test (tc, test_start_anchor_after_resize);
  tcase_add_test (tc, test_backend_cuda_no_device);
  GCVT_ADD_TEST_IF (tc, test_backend_auto_fallback, !cuda_usable (),
      "backend=auto falls back only without a CUDA device");
  tcase_add_test (tc, test_caps_limits);
  return s;
}

GCVT_MAIN (properties);
