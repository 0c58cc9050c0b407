/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The error catalogue of docs/errors.md, for the cases the
 * other suites leave out: values GObject refuses by their range or type,
 * array elements that are not numbers, settings still invalid at start in
 * each way, a missing device or device id, what the frame-size errors say,
 * GRAY32F buffers whose size or layout is not a whole number of floats,
 * caps outside the limits in a pipeline, unusable tuning files, preset
 * files with junk in them, and memory for frames that runs out (under an
 * address-space limit) in the output pool, in the pool offered upstream and
 * in a whole pipeline. Each case checks the error domain and code and that
 * the message names what is wrong.
 *
 * Already covered elsewhere (not repeated here): kernel lengths, NaN and
 * infinite coefficients and scalars, anchors outside K, separable=always
 * and algorithm=separable with a kernel that is not rank 1, built-in sizes
 * (test-properties.c); three settings invalid at start, backend=cuda with no
 * device, the backend=auto fallback, caps limits on the pad
 * (test-properties.c); short buffers and strides, settings made invalid
 * while playing (test-stream.c); an unknown preset (test-presets.c). */
#include "common.h"

#include <gst/video/video.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- captured messages -------------------------------------------------- */

/* GLib-GObject warnings (GObject's own range and type checks): counted and
 * kept, instead of failing the test as gst-check would. GLib 2.76 and
 * later report them as criticals, 2.74 as warnings: the level of the GLib
 * running is expected, and the other one still fails the test. */
static GPtrArray *glib_warnings;

static GLogLevelFlags
gobject_check_level (void)
{
  return glib_check_version (2, 76, 0) == NULL ? G_LOG_LEVEL_CRITICAL :
      G_LOG_LEVEL_WARNING;
}

static gboolean
keep_glib_warning (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  g_ptr_array_add (glib_warnings, g_strdup (message));
  return TRUE;                  /* handled: not a test failure */
}

static GstCheckLogFilter *
glib_warnings_start (void)
{
  g_clear_pointer (&glib_warnings, g_ptr_array_unref);
  glib_warnings = g_ptr_array_new_with_free_func (g_free);
  return gst_check_add_log_filter ("GLib-GObject", gobject_check_level (),
      g_regex_new (".*", 0, 0, NULL), keep_glib_warning, NULL, NULL);
}

static guint
glib_warnings_naming (const gchar * word)
{
  guint n = 0;
  for (guint i = 0; i < glib_warnings->len; i++)
    n += gcvt_names (g_ptr_array_index (glib_warnings, i), word);
  return n;
}

static void
glib_warnings_stop (GstCheckLogFilter * filter)
{
  gst_check_remove_log_filter (filter);
  g_clear_pointer (&glib_warnings, g_ptr_array_unref);
}

/* GST_WARNINGs of the "preset" category (GstPreset's own messages). */
static GMutex preset_lock;
static GPtrArray *preset_lines;

static void
preset_log_hook (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (level != GST_LEVEL_WARNING
      || g_strcmp0 (gst_debug_category_get_name (category), "preset"))
    return;
  g_mutex_lock (&preset_lock);
  if (preset_lines)
    g_ptr_array_add (preset_lines, g_strdup (gst_debug_message_get (message)));
  g_mutex_unlock (&preset_lock);
}

static void
preset_log_start (void)
{
  static gboolean hooked = FALSE;

  /* hooked once: GStreamer keeps a copy of its list of log functions at
   * every change */
  if (!hooked) {
    gst_debug_set_threshold_for_name ("preset", GST_LEVEL_WARNING);
    gst_debug_add_log_function (preset_log_hook, NULL, NULL);
    hooked = TRUE;
  }
  g_mutex_lock (&preset_lock);
  g_clear_pointer (&preset_lines, g_ptr_array_unref);
  preset_lines = g_ptr_array_new_with_free_func (g_free);
  g_mutex_unlock (&preset_lock);
}

static guint
preset_log_naming (const gchar * word)
{
  guint n = 0;
  g_mutex_lock (&preset_lock);
  for (guint i = 0; preset_lines && i < preset_lines->len; i++)
    n += gcvt_names (g_ptr_array_index (preset_lines, i), word);
  g_mutex_unlock (&preset_lock);
  return n;
}

static void
preset_log_stop (void)
{
  g_mutex_lock (&preset_lock);
  g_clear_pointer (&preset_lines, g_ptr_array_unref);
  g_mutex_unlock (&preset_lock);
}

/* The text of an error or warning message (and its debug text). */
static gchar *
message_text (GstMessage * msg, GQuark domain, gint code, gchar ** debug)
{
  GError *err = NULL;
  gchar *text, *dbg = NULL;

  fail_unless (msg != NULL, "no message");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, &dbg);
  else
    gst_message_parse_warning (msg, &err, &dbg);
  fail_unless (err->domain == domain && err->code == code,
      "expected %s %d, got %s %d: %s", g_quark_to_string (domain), code,
      g_quark_to_string (err->domain), err->code, err->message);
  text = g_strdup (err->message);
  g_error_free (err);
  if (debug)
    *debug = dbg;
  else
    g_free (dbg);
  return text;
}

/* --- values refused by GObject ------------------------------------------ */

/* Setting `value` must give a GLib-GObject warning naming the property and
 * leave it as it was (GObject's range or type check, before the element's
 * setter runs). */
static void
expect_gobject_refuses (GstElement * e, const gchar * property,
    const GValue * value)
{
  gchar *before = gcvt_prop_string (e, property), *after;
  gchar *attempt = g_strdup_value_contents (value);
  GstCheckLogFilter *filter = glib_warnings_start ();

  g_object_set_property (G_OBJECT (e), property, value);
  fail_unless (glib_warnings_naming (property) == 1, "%s=%s: %u GLib warnings "
      "naming it (%u in all)", property, attempt,
      glib_warnings_naming (property), glib_warnings->len);
  glib_warnings_stop (filter);
  after = gcvt_prop_string (e, property);
  fail_unless (g_str_equal (before, after), "%s changed from %s to %s after "
      "the refused value %s", property, before, after, attempt);
  g_free (before);
  g_free (after);
  g_free (attempt);
}

static void
refuse_uint (GstElement * e, const gchar * property, guint v)
{
  GValue value = G_VALUE_INIT;
  g_value_init (&value, G_TYPE_UINT);
  g_value_set_uint (&value, v);
  expect_gobject_refuses (e, property, &value);
  g_value_unset (&value);
}

static void
refuse_int (GstElement * e, const gchar * property, gint v)
{
  GValue value = G_VALUE_INIT;
  g_value_init (&value, G_TYPE_INT);
  g_value_set_int (&value, v);
  expect_gobject_refuses (e, property, &value);
  g_value_unset (&value);
}

static void
refuse_double (GstElement * e, const gchar * property, gdouble v)
{
  GValue value = G_VALUE_INIT;
  g_value_init (&value, G_TYPE_DOUBLE);
  g_value_set_double (&value, v);
  expect_gobject_refuses (e, property, &value);
  g_value_unset (&value);
}

static void
refuse_enum (GstElement * e, const gchar * property, gint v)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (e), property);
  GValue value = G_VALUE_INIT;

  g_value_init (&value, pspec->value_type);
  g_value_set_enum (&value, v);
  expect_gobject_refuses (e, property, &value);
  g_value_unset (&value);
}

static void
refuse_string (GstElement * e, const gchar * property, const gchar * s)
{
  GValue value = G_VALUE_INIT;
  g_value_init (&value, G_TYPE_STRING);
  g_value_set_string (&value, s);
  expect_gobject_refuses (e, property, &value);
  g_value_unset (&value);
}

/* Every property with a bounded range, just outside it, and values of the
 * wrong type. Away from the defaults first, so "kept" means something. */
GST_START_TEST (test_out_of_range_values)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 5, "kernel-height", 7, "size", 9,
      "sigma", 2.5, "anchor-x", 1, "anchor-y", 2, "queue-depth", 3,
      "cuda-device-id", 0, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "border", "wrap");

  refuse_uint (e, "kernel-width", 0);
  refuse_uint (e, "kernel-width", 1024);
  refuse_uint (e, "kernel-height", 0);
  refuse_uint (e, "kernel-height", 1024);
  refuse_uint (e, "size", 0);
  refuse_uint (e, "size", 1024);
  refuse_double (e, "sigma", 0.0);
  refuse_double (e, "sigma", -1.0);
  refuse_double (e, "sigma", 1000.5);
  refuse_double (e, "sigma", NAN);
  refuse_double (e, "sigma", INFINITY);
  refuse_int (e, "anchor-x", -2);
  refuse_int (e, "anchor-x", 1023);
  refuse_int (e, "anchor-y", -2);
  refuse_int (e, "anchor-y", 1023);
  refuse_uint (e, "queue-depth", 0);
  refuse_uint (e, "queue-depth", 9);
  refuse_int (e, "cuda-device-id", -2);
  refuse_enum (e, "filter", 99);
  refuse_enum (e, "mode", 7);
  refuse_enum (e, "border", 17);
  refuse_enum (e, "alpha", 5);
  refuse_enum (e, "separable", 9);
  refuse_enum (e, "algorithm", 42);
  refuse_enum (e, "backend", 6);
  /* the wrong type altogether */
  refuse_string (e, "kernel-width", "5");
  refuse_string (e, "scale", "2");
  refuse_string (e, "kernel", "<1, 2, 3>");
  gcvt_element_unref (e);
}

GST_END_TEST;

/* What gst_util_set_object_arg() does, less its leak: in GStreamer 1.22 it
 * does not unset the GValue when the text does not parse (an array's
 * storage is lost). */
static gboolean
set_from_text (GstElement * e, const gchar * property, const gchar * text)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (e), property);
  GValue v = G_VALUE_INIT;
  gboolean parsed;

  g_value_init (&v, pspec->value_type);
  parsed = gst_value_deserialize_with_pspec (&v, text, pspec);
  if (parsed)
    g_object_set_property (G_OBJECT (e), property, &v);
  g_value_unset (&v);
  return parsed;
}

/* Text that does not parse changes nothing (GStreamer's deserialisers, as
 * gst_util_set_object_arg() uses them). */
GST_START_TEST (test_unparsable_strings)
{
  static const struct
  {
    const gchar *property, *text;
  } cases[] = {
    {"size", "abc"}, {"size", "-3"}, {"sigma", "wide"}, {"filter",
        "nonsense"}, {"border", "mirrored"}, {"mode", "2"}, {"kernel",
        "<1, 2"}, {"kernel", "1, 2, 3"}, {"scale", "1,5"},
  };
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "size", 7, "scale", 3.0, "sigma", 2.0, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *before = gcvt_prop_string (e, cases[i].property), *after;
    GstCheckLogFilter *filter = glib_warnings_start ();
    set_from_text (e, cases[i].property, cases[i].text);
    glib_warnings_stop (filter);
    after = gcvt_prop_string (e, cases[i].property);
    fail_unless (g_str_equal (before, after), "%s changed from %s to %s "
        "after \"%s\"", cases[i].property, before, after, cases[i].text);
    g_free (before);
    g_free (after);
  }
  gcvt_element_unref (e);
}

GST_END_TEST;

/* Array elements that are not numbers count as NaN: the setter refuses the
 * array with its warning naming the property. The same for "nan" and "inf"
 * written as text. */
GST_START_TEST (test_array_elements_not_numbers)
{
  static const gchar *const arrays[] = { "kernel", "row-kernel",
    "column-kernel"
  };
  static const gdouble one[3] = { 1, 2, 1 };
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "kernel-width", 3, "kernel-height", 1, NULL);
  gcvt_set_floats (e, "kernel", one, 3);
  gcvt_set_floats (e, "row-kernel", one, 3);
  gcvt_set_floats (e, "column-kernel", one, 1);

  for (guint a = 0; a < G_N_ELEMENTS (arrays); a++) {
    guint n = a == 2 ? 1 : 3;
    gchar *before = gcvt_prop_string (e, arrays[a]), *after;
    GValue array = G_VALUE_INIT, s = G_VALUE_INIT;

    /* strings are not numbers (a GstValueArray holds one type) */
    g_value_init (&array, GST_TYPE_ARRAY);
    g_value_init (&s, G_TYPE_STRING);
    for (guint i = 0; i < n; i++) {
      g_value_set_string (&s, i == n / 2 ? "one" : "1");
      gst_value_array_append_value (&array, &s);
    }
    gcvt_log_capture_start ();
    g_object_set_property (G_OBJECT (e), arrays[a], &array);
    fail_unless (gcvt_log_count (arrays[a]) == 1, "a string in %s: %u "
        "warnings naming it", arrays[a], gcvt_log_count (arrays[a]));
    gcvt_log_capture_stop ();
    after = gcvt_prop_string (e, arrays[a]);
    fail_unless_equals_string (after, before);
    g_free (after);

    /* "nan" and "inf" in text, as gst-launch-1.0 and presets give them */
    for (guint t = 0; t < 2; t++) {
      gchar *text = n == 3 ? g_strdup_printf ("<1, %s, 1>",
          t ? "inf" : "nan") : g_strdup_printf ("<%s>", t ? "inf" : "nan");
      gcvt_log_capture_start ();
      gst_util_set_object_arg (G_OBJECT (e), arrays[a], text);
      fail_unless (gcvt_log_count (arrays[a]) == 1, "%s=%s: %u warnings "
          "naming it", arrays[a], text, gcvt_log_count (arrays[a]));
      gcvt_log_capture_stop ();
      after = gcvt_prop_string (e, arrays[a]);
      fail_unless_equals_string (after, before);
      g_free (after);
      g_free (text);
    }
    g_value_unset (&array);
    g_value_unset (&s);
    g_free (before);
  }
  gcvt_element_unref (e);
}

GST_END_TEST;

/* --- settings still invalid at start ------------------------------------ */

/* Each way of reaching READY->PAUSED with invalid settings that the setters
 * could not refuse (sizes and `filter` are always taken): LIBRARY SETTINGS
 * naming the property at fault. */
GST_START_TEST (test_start_invalid_settings)
{
  static const gdouble blur3[3] = { 1, 2, 1 };
  static const gdouble sharp[9] = { 0, -1, 0, -1, 5, -1, 0, -1, 0 };
  static const gdouble rank1[9] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };
  static const gdouble tens[9] = { 10, 10, 10, 10, 10, 10, 10, 10, 10 };
  guint n_cases = 7;

  for (guint c = 0; c < n_cases; c++) {
    GstElement *e = gcvt_element_new ();
    GObject *o = G_OBJECT (e);
    const gchar *culprit = NULL;

    switch (c) {
      case 0:                  /* size, then a filter that needs more */
        g_object_set (e, "size", 1, NULL);
        gst_util_set_object_arg (o, "filter", "sobel-x");
        culprit = "size";
        break;
      case 1:                  /* separable=always, then a filter that is not */
        gst_util_set_object_arg (o, "algorithm", "auto");
        gst_util_set_object_arg (o, "filter", "gaussian");
        gst_util_set_object_arg (o, "separable", "always");
        gst_util_set_object_arg (o, "filter", "laplacian");
        culprit = "separable";
        break;
      case 2:                  /* algorithm=separable, then a kernel that is not */
        g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
        gcvt_set_floats (e, "kernel", rank1, 9);
        gst_util_set_object_arg (o, "algorithm", "separable");
        gcvt_set_floats (e, "kernel", sharp, 9);
        culprit = "algorithm";
        break;
      case 3:                  /* scale times K beyond the float range */
        g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
        gcvt_set_floats (e, "kernel", tens, 9);
        g_object_set (e, "scale", 1e38, NULL);
        culprit = "scale";
        break;
      case 4:                  /* column-kernel without row-kernel */
        g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
        gcvt_set_floats (e, "column-kernel", blur3, 3);
        culprit = "row-kernel";
        break;
      case 5:                  /* anchor-y, then a smaller kernel */
        g_object_set (e, "kernel-width", 3, "kernel-height", 5, "anchor-y",
            4, NULL);
        g_object_set (e, "kernel-height", 2, NULL);
        culprit = "anchor-y";
        break;
      case 6:                  /* row-kernel, then another kernel-width */
        g_object_set (e, "kernel-width", 3, "kernel-height", 3, NULL);
        gcvt_set_floats (e, "row-kernel", blur3, 3);
        gcvt_set_floats (e, "column-kernel", blur3, 3);
        g_object_set (e, "kernel-width", 4, NULL);
        culprit = "row-kernel";
        break;
    }
    g_print ("start with invalid settings, case %u: expecting %s\n", c,
        culprit);
    gcvt_expect_start_error (e, GST_LIBRARY_ERROR,
        GST_LIBRARY_ERROR_SETTINGS, culprit);
    gcvt_element_unref (e);
  }
}

GST_END_TEST;

/* --- devices ------------------------------------------------------------ */

/* backend=cuda where no device is usable names the backend; with a device,
 * a device id out of range is named with its value. */
GST_START_TEST (test_missing_device_named)
{
  GstElement *e = gst_element_factory_make ("gpuconvolve", NULL);
  GstBus *bus = gcvt_bus (e);
  GstMessage *msg;
  gchar *text;

  gst_util_set_object_arg (G_OBJECT (e), "backend", "cuda");
  g_object_set (e, "cuda-device-id", 99, NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  msg = gcvt_pop (bus, GST_MESSAGE_ERROR);
  text = message_text (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      NULL);
  g_print ("backend=cuda cuda-device-id=99: %s\n", text);
  fail_unless (gcvt_names (text, "backend"), "\"%s\" does not name backend",
      text);
  if (gcvt_on_cuda ())
    fail_unless (gcvt_names (text, "cuda-device-id") && gcvt_names (text,
            "99"), "\"%s\" does not name cuda-device-id 99", text);
  g_free (text);
  gst_message_unref (msg);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* backend=auto with a device id that does not exist: the CPU, with the
 * warning naming the device id. Where there is a device to compare with
 * only; without one test-properties.c covers the fallback. */
GST_START_TEST (test_auto_bad_device_id_falls_back)
{
  GRand *r;
  GstElement *e;
  GstHarness *h;
  GstMessage *msg;
  RefKernel *k;
  RefImage *img;
  RefParams p;
  GstBuffer *out;
  gchar *text, *debug = NULL, *active = NULL;

  fail_unless (gcvt_on_cuda ());        /* registered only there */
  r = ref_rand_new ("auto_bad_device_id");
  e = gst_element_factory_make ("gpuconvolve", NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "auto");
  g_object_set (e, "cuda-device-id", 99, NULL);
  k = gcvt_random_kernel (r, 3, 3, FALSE);
  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  gcvt_set_params (e, &p);
  img = gcvt_random_image (r, REF_GRAY8, 13, 9, 0, 0);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 13, 9);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE));
  gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, img, &p, "fallback");
  gst_buffer_unref (out);
  g_object_get (e, "active-algorithm", &active, NULL);
  fail_unless (active && strstr (active, "on cpu"), "active-algorithm %s",
      active);
  msg = gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING);
  text = message_text (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
      &debug);
  fail_unless (debug && gcvt_names (debug, "cuda-device-id"), "debug text "
      "\"%s\" does not name cuda-device-id", GST_STR_NULL (debug));
  gst_message_unref (msg);
  g_free (text);
  g_free (debug);
  g_free (active);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* --- frames that do not fit: what the message says ----------------------- */

static GstBuffer *
filled_buffer (gsize size)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, 0x3c, size);
  return buf;
}

static GstBuffer *
with_meta (GstBuffer * buf, RefFormat fmt, guint w, guint hh, gsize offset,
    gint stride)
{
  gsize offsets[GST_VIDEO_MAX_PLANES] = { offset };
  gint strides[GST_VIDEO_MAX_PLANES] = { stride };

  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      gst_video_format_from_string (ref_format_info (fmt)->name), w, hh, 1,
      offsets, strides);
  return buf;
}

/* test-stream.c checks domain and code; here the words of the message:
 * the sizes, the stride and the format. */
GST_START_TEST (test_frame_errors_named)
{
  static const struct
  {
    RefFormat fmt;
    guint w, h;
    gsize size, offset;
    gint stride;                /* 0: no GstVideoMeta */
    const gchar *words[4];
  } cases[] = {
    {REF_GRAY32F, 8, 6, 8 * 4 * 6 - 1, 0, 0, {"191", "192", "8x6",
            "GRAY32F"}},
    {REF_RGBA, 7, 5, 28, 0, 0, {"28", "140", "7x5", "RGBA"}},
    {REF_GRAY8, 9, 4, 0, 0, 0, {"0", "45", "9x4", "GRAY8"}},
    {REF_GRAY32F, 8, 6, 4096, 0, 30, {"stride", "30", "32", "GRAY32F"}},
    {REF_BGRX, 5, 3, 4096, 0, -20, {"stride", "-20", "20", "BGRx"}},
    {REF_GRAY8, 9, 3, 36, 4, 12, {"36", "37", "9x3", "GRAY8"}},
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    GstElement *e = gcvt_element_new ();
    GstHarness *h;
    GstBuffer *buf = filled_buffer (cases[c].size);
    GstMessage *msg;
    gchar *text;

    gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
    g_object_set (e, "size", 3, NULL);
    gcvt_apply_algorithm (e);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, cases[c].fmt, cases[c].fmt, cases[c].w, cases[c].h);
    if (cases[c].stride)
      with_meta (buf, cases[c].fmt, cases[c].w, cases[c].h, cases[c].offset,
          cases[c].stride);
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
    msg = gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR);
    text = message_text (msg, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT,
        NULL);
    for (guint i = 0; i < G_N_ELEMENTS (cases[c].words); i++)
      fail_unless (gcvt_names (text, cases[c].words[i]), "case %u: \"%s\" "
          "does not name %s", c, text, cases[c].words[i]);
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
        "more than one error");
    g_free (text);
    gst_message_unref (msg);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
  }
}

GST_END_TEST;

/* GRAY32F buffers whose size or layout is not a whole number of floats: one
 * byte more than a frame is a whole frame (the extra byte is not read); a
 * stride or offset that is not a multiple of 4 is honoured (floats read
 * unaligned); one byte less is the STREAM FORMAT error of test-stream.c. */
GST_START_TEST (test_gray32f_odd_layouts)
{
  static const struct
  {
    gsize stride, offset;
    gboolean meta;
    gsize extra;
  } cases[] = {
    {0, 0, FALSE, 1},           /* a frame and one byte */
    {0, 0, FALSE, 3},
    {11 * 4 + 1, 0, TRUE, 0},   /* stride of 45 bytes */
    {11 * 4 + 2, 3, TRUE, 0},   /* and an offset of 3 */
    {11 * 4, 1, TRUE, 2},
  };
  GRand *r = ref_rand_new ("gray32f_odd_layouts");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    const guint w = 11, hh = 7;
    GstElement *e = gcvt_element_new ();
    RefKernel *k = gcvt_random_kernel (r, 3, 3, TRUE);
    RefImage *img = gcvt_random_image (r, REF_GRAY32F, w, hh, -2.0, 2.0);
    GstBuffer *buf, *out;
    GstHarness *h;
    RefParams p;
    gchar *what = g_strdup_printf ("GRAY32F layout %u", c);

    ref_params_init (&p, k);
    p.border = REF_BORDER_REFLECT101;
    gcvt_set_params (e, &p);
    buf = gcvt_buffer_new (img, REF_GRAY32F, cases[c].stride,
        cases[c].offset, cases[c].meta);
    if (cases[c].extra) {
      GstMemory *more = gst_allocator_alloc (NULL, cases[c].extra, NULL);
      gst_buffer_append_memory (buf, more);
    }
    fail_if (gst_buffer_get_size (buf) % 4 == 0,
        "case %u is a whole number of floats", c);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, w, hh);
    out = gcvt_process (h, buf);
    gcvt_assert_frame (out, REF_GRAY32F, REF_GRAY32F, img, &p, what);
    gst_buffer_unref (out);
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_image_free (img);
    ref_kernel_free (k);
    g_free (what);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* --- caps outside the limits, in a pipeline ----------------------------- */

/* appsrc offers caps the element's template refuses: the caps event is not
 * accepted, the first buffer returns not-negotiated, and the error comes
 * from the source (STREAM FAILED, "not-negotiated" in its debug text);
 * gpuconvolve posts nothing and is never configured. */
GST_START_TEST (test_caps_outside_limits_pipeline)
{
  static const gint sizes[][2] = { {0, 16}, {16, 0}, {32768, 2}, {2, 40000} };

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++) {
    gchar *props = gcvt_launch_props ();
    gchar *line = g_strdup_printf ("appsrc name=src format=time "
        "caps=video/x-raw,format=GRAY8,width=%d,height=%d,framerate=30/1 ! "
        "gpuconvolve name=f %s filter=box size=3 ! fakesink name=sink",
        sizes[i][0], sizes[i][1], props);
    GError *err = NULL;
    GstElement *pipeline = gst_parse_launch (line, &err), *src, *f;
    GstBus *bus;
    GstMessage *msg;
    GstFlowReturn flow = GST_FLOW_OK;
    gchar *text, *debug = NULL, *active = NULL;

    fail_unless (pipeline != NULL, "%s: %s", line, err ? err->message : "");
    src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
    f = gst_bin_get_by_name (GST_BIN (pipeline), "f");
    bus = gst_element_get_bus (pipeline);
    fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
    {
      GstBuffer *buf = filled_buffer (64);
      g_signal_emit_by_name (src, "push-buffer", buf, &flow);
      gst_buffer_unref (buf);   /* the signal does not take it */
    }
    msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
        "%dx%d: no error", sizes[i][0], sizes[i][1]);
    fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (src), "%dx%d: the "
        "error came from %s", sizes[i][0], sizes[i][1],
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)));
    text = message_text (msg, GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED,
        &debug);
    fail_unless (debug && strstr (debug, "not-negotiated"), "debug text "
        "\"%s\"", GST_STR_NULL (debug));
    gst_message_unref (msg);
    g_object_get (f, "active-algorithm", &active, NULL);
    fail_unless (active == NULL, "configured for %dx%d: %s", sizes[i][0],
        sizes[i][1], active);
    fail_unless_equals_int (gst_element_set_state (pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    /* nothing else was posted as an error */
    while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
      fail_if (GST_MESSAGE_SRC (msg) == GST_OBJECT (f),
          "gpuconvolve posted an error");
      gst_message_unref (msg);
    }
    g_free (text);
    g_free (debug);
    gst_object_unref (bus);
    gst_object_unref (src);
    gst_object_unref (f);
    gst_object_unref (pipeline);
    g_free (line);
    g_free (props);
  }
}

GST_END_TEST;

/* --- tuning files ------------------------------------------------------- */

/* A tuning-file that cannot be used: one RESOURCE READ warning naming the
 * property and the file, and filtering goes on with the built-in choices.
 * A good table (the last case) gives no warning. */
GST_START_TEST (test_tuning_file_unusable)
{
  static const guint8 junk[] = { 0x7f, 'E', 'L', 'F', 0x02, 0x01, 0x01, 0x00,
    0xff, 0xfe, 0x00, 0x00, 0xc3, 0x28, 0x0a, 0x80, 0x81
  };
  static const gchar bad_row[] = "# a table\ngpu: Some GPU\narch: sm_90\n"
      "GRAY8 3 3 0 640x480 0.25 tiled ty=2\nRGBA three 3 0 640x480 0.5 "
      "direct\n";
  static const gchar bad_variant[] = "gpu: Some GPU\n"
      "GRAY32F 5 5 1 1920x1080 0.1 warp-speed\n";
  static const gchar good[] = "gpu: Some GPU\narch: sm_90\n"
      "GRAY8 3 3 0 640x480 0.25 tiled ty=2\n";
  gchar *dir = g_dir_make_tmp ("gcvt-tuning-XXXXXX", NULL);
  struct
  {
    const gchar *name;
    const void *data;
    gssize len;                 /* -1: no file; -2: a directory */
    const gchar *reason;        /* a word of the reason, NULL: no warning */
  } cases[] = {
    {"missing.tbl", NULL, -1, "cannot read"},
    {"binary.tbl", junk, sizeof (junk), "UTF-8"},
    {"bad-row.tbl", bad_row, sizeof (bad_row) - 1, ":5:"},
    {"bad-variant.tbl", bad_variant, sizeof (bad_variant) - 1, "warp-speed"},
    {"empty.tbl", "", 0, "rows"},
    {"a-directory", NULL, -2, "not a regular file"},
    {"good.tbl", good, sizeof (good) - 1, NULL},
  };
  GRand *r = ref_rand_new ("tuning_file_unusable");

  fail_unless (dir != NULL);
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *path = g_build_filename (dir, cases[c].name, NULL);
    GstElement *e = gcvt_element_new ();
    RefKernel *k = gcvt_random_kernel (r, 3, 3, TRUE);
    RefImage *img = gcvt_random_image (r, REF_GRAY8, 16, 12, 0, 0);
    GstHarness *h;
    GstBuffer *out;
    GstBus *bus;
    GstMessage *msg;
    RefParams p;
    guint warnings = 0;

    if (cases[c].len >= 0)
      fail_unless (g_file_set_contents (path, cases[c].data, cases[c].len,
              NULL));
    else if (cases[c].len == -2)
      fail_unless (g_mkdir (path, 0700) == 0);
    ref_params_init (&p, k);
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    gcvt_set_params (e, &p);
    g_object_set (e, "tuning-file", path, NULL);
    h = gcvt_harness_new (e);
    bus = gcvt_bus (e);
    gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 16, 12);
    out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE));
    gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, img, &p, cases[c].name);
    gst_buffer_unref (out);
    while ((msg = gcvt_pop (bus, GST_MESSAGE_WARNING))) {
      gchar *text = message_text (msg, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_READ, NULL);
      g_print ("%s: %s\n", cases[c].name, text);
      warnings++;
      fail_unless (gcvt_names (text, "tuning-file"), "\"%s\" does not name "
          "tuning-file", text);
      fail_unless (strstr (text, path) != NULL, "\"%s\" does not name %s",
          text, path);
      fail_unless (cases[c].reason && strstr (text, cases[c].reason),
          "\"%s\" does not say %s", text, GST_STR_NULL (cases[c].reason));
      g_free (text);
      gst_message_unref (msg);
    }
    fail_unless_equals_int (warnings, cases[c].reason ? 1 : 0);
    fail_unless (gcvt_pop (bus, GST_MESSAGE_ERROR) == NULL);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_image_free (img);
    ref_kernel_free (k);
    if (cases[c].len == -2)
      g_rmdir (path);
    else
      g_unlink (path);
    g_free (path);
  }
  g_rmdir (dir);
  g_free (dir);
  g_rand_free (r);
}

GST_END_TEST;

/* READY->PAUSED in a thread, waited for a bounded time: a tuning-file that
 * blocks or never ends must not hang the test. */
typedef struct
{
  GstElement *element;
  GstStateChangeReturn ret;
  gboolean done;
  GMutex lock;
  GCond cond;
} BoundedStart;

static gpointer
bounded_start_thread (gpointer data)
{
  BoundedStart *s = data;
  GstStateChangeReturn ret = gst_element_set_state (s->element,
      GST_STATE_PAUSED);

  g_mutex_lock (&s->lock);
  s->ret = ret;
  s->done = TRUE;
  g_cond_signal (&s->cond);
  g_mutex_unlock (&s->lock);
  return NULL;
}

/* The state change of `e` to PAUSED, which must return within `seconds`.
 * When it does not, a reader blocked on the FIFO `fifo` is let go (a writer
 * comes and leaves) and the test fails; a reader of an endless file cannot
 * be stopped, so the test fails and, in a process of its own or not, the
 * process ends. */
static GstStateChangeReturn
start_within (GstElement * e, gdouble seconds, const gchar * fifo,
    const gchar * what)
{
  BoundedStart s = { e, GST_STATE_CHANGE_FAILURE, FALSE };
  gint64 deadline = g_get_monotonic_time () + (gint64) (seconds *
      G_TIME_SPAN_SECOND);
  GThread *t;
  gboolean done;

  g_mutex_init (&s.lock);
  g_cond_init (&s.cond);
  t = g_thread_new ("bounded-start", bounded_start_thread, &s);
  g_mutex_lock (&s.lock);
  while (!s.done && g_cond_wait_until (&s.cond, &s.lock, deadline));
  done = s.done;
  g_mutex_unlock (&s.lock);
  if (!done && fifo) {
    gint fd = open (fifo, O_WRONLY | O_NONBLOCK);
    if (fd >= 0)
      close (fd);
    g_thread_join (t);
    t = NULL;
  }
  if (!done) {
    g_printerr ("%s: READY->PAUSED still blocked after %.0f s\n", what,
        seconds);
    /* the reader goes on: nothing to come back to */
    if (t && !gcvt_forked ())
      _exit (1);
    ck_abort_msg ("%s: READY->PAUSED still blocked after %.0f s", what,
        seconds);
  }
  g_thread_join (t);
  g_mutex_clear (&s.lock);
  g_cond_clear (&s.cond);
  return s.ret;
}

/* A valid table of exactly `size` bytes: three lines, then comment lines
 * (each within the 512-character limit) up to the size. */
static gchar *
padded_table (gsize size)
{
  GString *s = g_string_new ("gpu: Some GPU\narch: sm_90\n"
      "GRAY8 3 3 0 640x480 0.25 tiled ty=2\n");

  g_assert (size >= s->len + 2);
  while (s->len < size) {
    gsize line = MIN (size - s->len, 400);
    if (size - s->len - line == 1)
      line--;                   /* no 1-byte line left over: "#\n" needs 2 */
    g_string_append_c (s, '#');
    for (gsize i = 2; i < line; i++)
      g_string_append_c (s, 'x');
    g_string_append_c (s, '\n');
  }
  g_assert (s->len == size);
  return g_string_free (s, FALSE);
}

/* Files named by tuning-file are read with a limit of 1 MiB and never
 * block (docs/errors.md): a character device that never ends, a FIFO with
 * no writer, a directory and a regular file over 1 MiB are each refused at
 * once with one RESOURCE READ warning naming the property, the file and the
 * reason, and the element filters on with the built-in choices. A valid
 * table of exactly 1 MiB is read. */
GST_START_TEST (test_tuning_file_not_regular_or_too_large)
{
  gchar *dir = g_dir_make_tmp ("gcvt-tuning-XXXXXX", NULL);
  gchar *fifo = g_build_filename (dir, "a-fifo", NULL);
  gchar *big = g_build_filename (dir, "over-1MiB.tbl", NULL);
  gchar *limit = g_build_filename (dir, "1MiB.tbl", NULL);
  gchar *text;
  struct
  {
    const gchar *path;
    const gchar *reason;        /* NULL: read without a warning */
  } cases[] = {
    {"/dev/zero", "not a regular file"},
    {"/dev/urandom", "not a regular file"},
    {fifo, "not a regular file"},
    {dir, "not a regular file"},
    {big, "1 MiB"},
    {limit, NULL},
  };
  GRand *r = ref_rand_new ("tuning_file_not_regular_or_too_large");

  fail_unless (dir != NULL);
  fail_unless (mkfifo (fifo, 0600) == 0, "mkfifo: %s", g_strerror (errno));
  text = padded_table (1024 * 1024 + 1);
  fail_unless (g_file_set_contents (big, text, -1, NULL));
  g_free (text);
  text = padded_table (1024 * 1024);
  fail_unless (g_file_set_contents (limit, text, -1, NULL));
  g_free (text);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    const gchar *path = cases[c].path;
    GstElement *e;
    RefKernel *k;
    RefImage *img;
    RefParams p;
    GstHarness *h;
    GstBuffer *out;
    GstBus *bus;
    GstMessage *msg;
    guint warnings = 0;

    if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
      g_print ("%s: not on this system, case not run\n", path);
      continue;
    }
    e = gcvt_element_new ();
    k = gcvt_random_kernel (r, 3, 3, TRUE);
    img = gcvt_random_image (r, REF_GRAY8, 16, 12, 0, 0);
    ref_params_init (&p, k);
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    gcvt_set_params (e, &p);
    g_object_set (e, "tuning-file", path, NULL);
    bus = gcvt_bus (e);
    /* a blocked read never ends: a minute is far beyond a CUDA set-up on
     * a busy machine */
    fail_unless_equals_int (start_within (e, 60.0, path == fifo ? fifo : NULL,
            path), GST_STATE_CHANGE_SUCCESS);
    while ((msg = gcvt_pop (bus, GST_MESSAGE_WARNING))) {
      gchar *t = message_text (msg, GST_RESOURCE_ERROR,
          GST_RESOURCE_ERROR_READ, NULL);
      g_print ("%s: %s\n", path, t);
      warnings++;
      fail_unless (gcvt_names (t, "tuning-file"), "\"%s\" does not name "
          "tuning-file", t);
      fail_unless (strstr (t, path) != NULL, "\"%s\" does not name %s", t,
          path);
      fail_unless (cases[c].reason && strstr (t, cases[c].reason),
          "\"%s\" does not say %s", t, GST_STR_NULL (cases[c].reason));
      g_free (t);
      gst_message_unref (msg);
    }
    fail_unless_equals_int (warnings, cases[c].reason ? 1 : 0);
    /* and it filters on */
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 16, 12);
    out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE));
    gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, img, &p, path);
    gst_buffer_unref (out);
    fail_unless (gcvt_pop (bus, GST_MESSAGE_ERROR) == NULL);
    fail_unless (gcvt_pop (bus, GST_MESSAGE_WARNING) == NULL);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_image_free (img);
    ref_kernel_free (k);
  }
  g_unlink (limit);
  g_unlink (big);
  g_unlink (fifo);
  g_rmdir (dir);
  g_free (limit);
  g_free (big);
  g_free (fifo);
  g_free (dir);
  g_rand_free (r);
}

GST_END_TEST;

/* --- preset files with junk --------------------------------------------- */

static gchar *
write_preset_dir (const gchar * name, const gchar * contents, gssize len)
{
  gchar *dir = g_dir_make_tmp (name, NULL);
  gchar *path = g_build_filename (dir, "GstGpuConvolve.prs", NULL);

  fail_unless (dir && g_file_set_contents (path, contents, len, NULL));
  g_free (path);
  return dir;
}

static void
remove_preset_dir (gchar * dir)
{
  gchar *path = g_build_filename (dir, "GstGpuConvolve.prs", NULL);
  g_unlink (path);
  g_rmdir (dir);
  g_free (path);
  g_free (dir);
}

/* Properties a preset may set, and their values as text. */
static const gchar *const preset_props[] = {
  "filter", "size", "sigma", "kernel-width", "kernel-height", "kernel",
  "row-kernel", "column-kernel", "normalize", "scale", "bias", "mode",
  "anchor-x", "anchor-y", "border", "border-value", "alpha", "separable",
  "algorithm", NULL
};

static GHashTable *
snapshot (GstElement * e)
{
  GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
      g_free);
  for (guint i = 0; preset_props[i]; i++)
    g_hash_table_insert (t, (gpointer) preset_props[i],
        gcvt_prop_string (e, preset_props[i]));
  return t;
}

/* Loads `preset` and checks: each of `refused` kept its value and was
 * named in a warning (GstPreset's, the element's or GObject's); each of
 * `taken` has the value `taken_values` gives; nothing else changed. */
static void
load_junk_preset (GstElement * e, const gchar * preset,
    const gchar * const *refused, const gchar * const *taken,
    const gchar * const *taken_values)
{
  GHashTable *before = snapshot (e), *after;
  GstCheckLogFilter *filter = glib_warnings_start ();

  gcvt_log_capture_start ();
  preset_log_start ();
  fail_unless (gst_preset_load_preset (GST_PRESET (e), preset),
      "preset %s did not load", preset);
  for (guint i = 0; refused && refused[i]; i++) {
    guint n = preset_log_naming (refused[i]) + gcvt_log_count (refused[i])
        + glib_warnings_naming (refused[i]);
    fail_unless (n >= 1, "%s: no warning names %s", preset, refused[i]);
  }
  preset_log_stop ();
  gcvt_log_capture_stop ();
  glib_warnings_stop (filter);

  after = snapshot (e);
  for (guint i = 0; preset_props[i]; i++) {
    const gchar *prop = preset_props[i];
    const gchar *b = g_hash_table_lookup (before, prop);
    const gchar *a = g_hash_table_lookup (after, prop);
    const gchar *want = b;
    for (guint t = 0; taken && taken[t]; t++)
      if (g_str_equal (taken[t], prop))
        want = taken_values[t];
    fail_unless (g_str_equal (a, want), "%s: %s is %s, expected %s",
        preset, prop, a, want);
  }
  g_hash_table_unref (before);
  g_hash_table_unref (after);
}

/* Presets with values that do not parse or are invalid on their own:
 * loading does not crash, each such value is refused with a warning naming
 * the property and the old value stays; the valid values of the same preset
 * are taken, also those that do not fit the others (an anchor outside the
 * kernel), which are judged when the filter is built. A truncated file and a binary one are not
 * read at all; a valid file in another GST_PRESET_PATH folder still is.
 * One test: GStreamer reads the preset files once per process. */
GST_START_TEST (test_preset_junk)
{
  static const gchar junk[] =
      "[_presets_]\nversion=1.22.0\nelement-name=GstGpuConvolve\n\n"
      "[junk-size]\nsize=abc\nsigma=2.5\n\n"
      "[junk-kernel]\nkernel-width=1\nkernel-height=2\nkernel=<1,nan>\n\n"
      "[junk-filter]\nfilter=nonsense\nborder=wrap\n\n"
      "[junk-range]\nsize=0\nsigma=-1\nkernel-width=5000\nqueue-depth=9\n\n"
      "[junk-anchor]\nanchor-x=7\nbias=3\n\n"
      "[junk-scale]\nscale=inf\nborder-value=nan\nmode=sideways\n\n"
      "[junk-cut]\nkernel-width=2\nkernel-height=1\nkernel=< 0.25, 0.7\n";
  static const gchar truncated[] =
      "[_presets_]\nversion=1.20.0\nelement-name=GstGpuConvolve\n\n"
      "[broken-one]\nfilter=gaussian\nsize=3\nsi";
  static const gchar other[] =
      "[_presets_]\nversion=1.20.0\nelement-name=GstGpuConvolve\n\n"
      "[good-extra]\nfilter=box\nsize=3\n";
  guint8 binary[256];
  gchar *dirs[4], *path;
  gchar **names;
  GstElement *e;

  for (guint i = 0; i < sizeof (binary); i++)
    binary[i] = (guint8) (i * 37 + 11);
  dirs[0] = write_preset_dir ("gcvt-prs-junk-XXXXXX", junk, -1);
  dirs[1] = write_preset_dir ("gcvt-prs-cut-XXXXXX", truncated, -1);
  dirs[2] = write_preset_dir ("gcvt-prs-bin-XXXXXX", (const gchar *) binary,
      sizeof (binary));
  dirs[3] = write_preset_dir ("gcvt-prs-other-XXXXXX", other, -1);
  path = g_strjoin (G_SEARCHPATH_SEPARATOR_S, dirs[0], dirs[1], dirs[2],
      dirs[3], "/nonexistent/gpuconvolve-presets", NULL);
  g_setenv ("GST_PRESET_PATH", path, TRUE);

  e = gcvt_element_new ();
  names = gst_preset_get_preset_names (GST_PRESET (e));
  fail_unless (names != NULL, "no presets read from %s", path);
  fail_unless (g_strv_contains ((const gchar * const *) names, "junk-size"));
  fail_unless (g_strv_contains ((const gchar * const *) names, "good-extra"),
      "a valid file beside broken ones was not read");
  fail_if (g_strv_contains ((const gchar * const *) names, "broken-one"),
      "the truncated file was read");
  g_strfreev (names);

  /* away from the defaults, so a kept value is not a default */
  g_object_set (e, "size", 7, "sigma", 1.5, "kernel-width", 3,
      "kernel-height", 3, "anchor-x", 1, "scale", 2.0, "border-value", 4.0,
      NULL);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
  gst_util_set_object_arg (G_OBJECT (e), "mode", "convolution");
  {
    const gchar *refused[] = { "size", NULL };
    const gchar *taken[] = { "sigma", NULL }, *values[] = { "2.5" };
    load_junk_preset (e, "junk-size", refused, taken, values);
  }
  gst_util_set_object_arg (G_OBJECT (e), "filter", "custom");
  {
    const gchar *refused[] = { "kernel", NULL };
    const gchar *taken[] = { "kernel-width", "kernel-height", NULL };
    const gchar *values[] = { "1", "2" };
    load_junk_preset (e, "junk-kernel", refused, taken, values);
  }
  {
    const gchar *refused[] = { "filter", NULL };
    const gchar *taken[] = { "border", NULL }, *values[] = { "wrap" };
    load_junk_preset (e, "junk-filter", refused, taken, values);
  }
  {
    const gchar *refused[] = { "size", "sigma", "kernel-width", NULL };
    load_junk_preset (e, "junk-range", refused, NULL, NULL);
  }
  {
    /* outside the 1x2 kernel: taken, judged when the filter is built */
    const gchar *taken[] = { "anchor-x", "bias", NULL };
    const gchar *values[] = { "7", "3" };
    load_junk_preset (e, "junk-anchor", NULL, taken, values);
  }
  {
    const gchar *refused[] = { "scale", "border-value", "mode", NULL };
    load_junk_preset (e, "junk-scale", refused, NULL, NULL);
  }
  {
    const gchar *refused[] = { "kernel", NULL };
    const gchar *taken[] = { "kernel-width", "kernel-height", NULL };
    const gchar *values[] = { "2", "1" };
    load_junk_preset (e, "junk-cut", refused, taken, values);
  }
  /* the preset of the truncated file does not exist */
  {
    GHashTable *before = snapshot (e), *after;
    fail_if (gst_preset_load_preset (GST_PRESET (e), "broken-one"));
    after = snapshot (e);
    for (guint i = 0; preset_props[i]; i++)
      fail_unless_equals_string (g_hash_table_lookup (after, preset_props[i]),
          g_hash_table_lookup (before, preset_props[i]));
    g_hash_table_unref (before);
    g_hash_table_unref (after);
  }
  /* and the element still works with what it has */
  fail_unless (gst_preset_load_preset (GST_PRESET (e), "good-extra"));
  {
    GRand *r = ref_rand_new ("preset_junk");
    RefImage *img = gcvt_random_image (r, REF_RGBA, 12, 9, 0, 0);
    RefKernel *k = ref_builtin ("box", 3, 1.0);
    RefParams p;
    GstElement *f = gcvt_element_new ();

    fail_unless (gst_preset_load_preset (GST_PRESET (f), "good-extra"));
    gcvt_apply_algorithm (f);
    ref_params_init (&p, k);
    gcvt_run_and_check (f, REF_RGBA, REF_RGBA, img, &p, 0, 0, "good-extra");
    gcvt_element_unref (f);
    ref_kernel_free (k);
    ref_image_free (img);
    g_rand_free (r);
  }
  gcvt_element_unref (e);
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    remove_preset_dir (dirs[i]);
  g_free (path);
}

GST_END_TEST;

/* --- memory that runs out ------------------------------------------------ */

/* Room for what is small (pools, messages, thread stacks), not for a
 * 16384x16384 GRAY8 frame (256 MiB). */
#define BIG_SIDE 16384
#define BIG_HEADROOM (128 * 1024 * 1024)

/* The errors `element` posted: exactly one, RESOURCE/FAILED, "Could not
 * allocate <what>: could not allocate <n> bytes of system memory". */
static void
assert_one_alloc_error (GstElement * element, const gchar * what)
{
  GstBus *bus = gcvt_bus (element);
  GstMessage *msg = gcvt_pop (bus, GST_MESSAGE_ERROR), *more;
  gchar *expect = g_strdup_printf ("Could not allocate %s: could not "
      "allocate ", what);
  GError *err = NULL;

  fail_unless (msg != NULL, "no error posted for %s", what);
  gst_message_parse_error (msg, &err, NULL);
  g_print ("%s\n", err->message);
  fail_unless (err->domain == GST_RESOURCE_ERROR
      && err->code == GST_RESOURCE_ERROR_FAILED, "%s %d: %s",
      g_quark_to_string (err->domain), err->code, err->message);
  fail_unless (g_str_has_prefix (err->message, expect)
      && strstr (err->message, " bytes of system memory") != NULL,
      "the message \"%s\" is not \"%s<n> bytes of system memory\"",
      err->message, expect);
  more = gcvt_pop (bus, GST_MESSAGE_ERROR);
  fail_unless (more == NULL, "a second error after \"%s\"", err->message);
  g_error_free (err);
  g_free (expect);
  gst_message_unref (msg);
}

/* A big GRAY8 frame, allocated before any limit. */
static GstBuffer *
big_frame (void)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, (gsize) BIG_SIDE * BIG_SIDE,
      NULL);

  gst_buffer_memset (buf, 0, 0x80, (gsize) BIG_SIDE * BIG_SIDE);
  return buf;
}

/* The output pool cannot be filled: the documented RESOURCE/FAILED error,
 * GST_FLOW_ERROR, no frame and no abort (GStreamer's own pool aborts the
 * process where g_malloc fails). _i: the frame in which memory runs out:
 * the first (the pool's start) or the second (the pool grows, the first
 * output still held downstream). */
GST_START_TEST (test_output_pool_out_of_memory)
{
  GstElement *e = gcvt_element_new ();
  GstBuffer *in = big_frame ();
  struct rlimit saved;
  GstHarness *h;
  GstFlowReturn ret;

  g_object_set (e, "size", 3, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  /* the harness asks for the pools with the caps */
  if (__i__ == 1) {
    gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, BIG_SIDE, BIG_SIDE);
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_ref (in)),
        GST_FLOW_OK);
  }
  if (!gcvt_limit_memory (BIG_HEADROOM, &saved)) {
    g_print ("output_pool_out_of_memory: an address-space limit does not "
        "work here, skipped\n");
  } else {
    if (__i__ == 0)
      gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, BIG_SIDE, BIG_SIDE);
    ret = gst_harness_push (h, gst_buffer_ref (in));
    gcvt_unlimit_memory (&saved);
    fail_unless_equals_int (ret, GST_FLOW_ERROR);
    assert_one_alloc_error (e, __i__ ? "an output buffer" : "output buffers");
    fail_unless_equals_int (gst_harness_buffers_received (h), __i__);
  }
  gst_buffer_unref (in);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* The pool offered upstream cannot be filled: activating it fails (no
 * abort) and the element says why, as upstream itself only stops
 * ("not-negotiated"). */
GST_START_TEST (test_upstream_pool_out_of_memory)
{
  GstElement *e = gcvt_element_new ();
  GstCaps *caps = gcvt_caps (REF_GRAY8, BIG_SIDE, BIG_SIDE);
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  struct rlimit saved;
  GstHarness *h;
  gboolean active;

  g_object_set (e, "size", 3, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, BIG_SIDE, BIG_SIDE);
  fail_unless (gst_pad_peer_query (h->srcpad, query));
  fail_unless (gst_query_get_n_allocation_pools (query) > 0,
      "no pool offered upstream");
  gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  fail_unless (pool != NULL);
  if (!gcvt_limit_memory (BIG_HEADROOM, &saved)) {
    g_print ("upstream_pool_out_of_memory: an address-space limit does not "
        "work here, skipped\n");
  } else {
    active = gst_buffer_pool_set_active (pool, TRUE);
    gcvt_unlimit_memory (&saved);
    fail_if (active, "a pool of 256 MiB buffers started under the limit");
    assert_one_alloc_error (e, "input buffers");
  }
  gst_object_unref (pool);
  gst_query_unref (query);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* appsrc ! gpuconvolve ! fakesink with 256 MiB frames under the limit: the
 * pipeline ends with gpuconvolve's error first, and goes to NULL, with no
 * abort on the way. The frames are made before the limit: a source that
 * allocates its own (videotestsrc falls back to GStreamer's pool, whose
 * g_malloc aborts) would race gpuconvolve's error with its own abort. */
GST_START_TEST (test_pipeline_out_of_memory)
{
  gchar *props = gcvt_launch_props ();
  gchar *line = g_strdup_printf ("appsrc name=src format=time "
      "caps=video/x-raw,format=GRAY8,width=%u,height=%u,framerate=30/1 ! "
      "gpuconvolve name=f %s filter=box size=3 ! fakesink", BIG_SIDE,
      BIG_SIDE, props);
  GstElement *pipeline = gst_parse_launch (line, NULL), *f, *src;
  GstBuffer *frames[2] = { big_frame (), big_frame () };
  GstMessage *msg;
  struct rlimit saved;

  fail_unless (pipeline != NULL, "%s", line);
  f = gst_bin_get_by_name (GST_BIN (pipeline), "f");
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  gst_element_set_state (pipeline, GST_STATE_READY);
  if (!gcvt_limit_memory (BIG_HEADROOM, &saved)) {
    g_print ("pipeline_out_of_memory: an address-space limit does not work "
        "here, skipped\n");
  } else {
    GstBus *bus = gst_element_get_bus (pipeline);
    GstFlowReturn flow;
    GError *err = NULL;

    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    for (guint i = 0; i < G_N_ELEMENTS (frames); i++)
      g_signal_emit_by_name (src, "push-buffer", frames[i], &flow);
    g_signal_emit_by_name (src, "end-of-stream", &flow);
    msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless (msg != NULL, "the pipeline did not end in 60 s");
    fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
        "the pipeline ended without an error");
    gst_message_parse_error (msg, &err, NULL);
    g_print ("%s: %s\n", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
        err->message);
    fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (f)
        && g_error_matches (err, GST_RESOURCE_ERROR,
            GST_RESOURCE_ERROR_FAILED)
        && g_str_has_prefix (err->message, "Could not allocate "),
        "the first error is %s's \"%s\"",
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), err->message);
    fail_unless_equals_int (gst_element_set_state (pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    gcvt_unlimit_memory (&saved);
    g_error_free (err);
    gst_message_unref (msg);
    gst_object_unref (bus);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  for (guint i = 0; i < G_N_ELEMENTS (frames); i++)
    gst_buffer_unref (frames[i]);
  gst_object_unref (src);
  gst_object_unref (f);
  gst_object_unref (pipeline);
  g_free (line);
  g_free (props);
}

GST_END_TEST;

/* A pool that never gives a buffer, as downstream might offer. */
typedef struct
{
  GstBufferPool parent;
} EmptyPool;

typedef struct
{
  GstBufferPoolClass parent_class;
} EmptyPoolClass;

static GType empty_pool_get_type (void);
G_DEFINE_TYPE (EmptyPool, empty_pool, GST_TYPE_BUFFER_POOL);

static GstFlowReturn
empty_pool_alloc (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  return GST_FLOW_ERROR;
}

static void
empty_pool_class_init (EmptyPoolClass * klass)
{
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = empty_pool_alloc;
}

static void
empty_pool_init (EmptyPool * self)
{
}

/* Downstream's answer to the ALLOCATION query gets the empty pool. */
static GstPadProbeReturn
offer_empty_pool (GstPad * pad, GstPadProbeInfo * info, gpointer pool)
{
  GstQuery *query = GST_PAD_PROBE_INFO_QUERY (info);

  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION) {
    gst_query_add_allocation_pool (query, pool, 64 * 48, 2, 0);
    g_object_set_data (pool, "offered", GINT_TO_POINTER (TRUE));
  }
  return GST_PAD_PROBE_OK;
}

/* A pool downstream offers is never filled by the element (its output
 * comes from its own pool), so one that cannot allocate changes nothing. */
GST_START_TEST (test_downstream_pool_not_used)
{
  GstBufferPool *empty = g_object_new (empty_pool_get_type (), NULL);
  GstElement *e = gcvt_element_new ();
  GRand *r = ref_rand_new ("downstream_pool_not_used");
  RefKernel *k = ref_builtin ("box", 3, 1.0);
  RefImage *img = gcvt_random_image (r, REF_GRAY8, 64, 48, 0, 0);
  RefParams p;
  GstHarness *h;
  GstPad *src;
  GstBuffer *out;

  gst_object_ref_sink (empty);
  ref_params_init (&p, k);
  gcvt_set_params (e, &p);
  src = gst_element_get_static_pad (e, "src");
  /* after the harness answered */
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM |
      GST_PAD_PROBE_TYPE_PULL, offer_empty_pool, empty, NULL);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 64, 48);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE));
  fail_unless (g_object_get_data (G_OBJECT (empty), "offered") != NULL,
      "the element asked downstream for no pool");
  fail_unless (out->pool != empty, "the output came from downstream's pool");
  gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, img, &p, "downstream pool");
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gst_object_unref (src);
  gcvt_element_unref (e);
  gst_object_unref (empty);
  ref_image_free (img);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
errors_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-errors");
  TCase *tc = tcase_create ("errors");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_out_of_range_values);
  tcase_add_test (tc, test_unparsable_strings);
  tcase_add_test (tc, test_array_elements_not_numbers);
  tcase_add_test (tc, test_start_invalid_settings);
  tcase_add_test (tc, test_missing_device_named);
  GCVT_ADD_TEST_IF (tc, test_auto_bad_device_id_falls_back, gcvt_on_cuda (),
      "needs a CUDA device (test-properties.c covers backend=auto without "
      "one)");
  tcase_add_test (tc, test_frame_errors_named);
  tcase_add_test (tc, test_gray32f_odd_layouts);
  tcase_add_test (tc, test_caps_outside_limits_pipeline);
  tcase_add_test (tc, test_tuning_file_unusable);
  tcase_add_test (tc, test_tuning_file_not_regular_or_too_large);
  tcase_add_test (tc, test_preset_junk);
  /* system memory: the CPU backend's pools (on CUDA they hold pinned
   * memory, which test-cuda-failure.c makes fail) */
  GCVT_ADD_LOOP_TEST_IF (tc, test_output_pool_out_of_memory, 0, 2,
      !gcvt_on_cuda (), "system memory pools are the CPU backend's");
  GCVT_ADD_TEST_IF (tc, test_upstream_pool_out_of_memory, !gcvt_on_cuda (),
      "system memory pools are the CPU backend's");
  GCVT_ADD_TEST_IF (tc, test_pipeline_out_of_memory, !gcvt_on_cuda (),
      "system memory pools are the CPU backend's");
  tcase_add_test (tc, test_downstream_pool_not_used);
  return s;
}

GCVT_MAIN (errors);
