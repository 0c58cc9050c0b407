/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Property checks and the errors of docs/errors.md: refused values, invalid
 * settings at start, backends, and caps outside the limits; presets: the
 * shipped file's version and marks, and how a user's file combines with it
 * (docs/presets.md). */
#include "common.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* --- presets: the shipped file and the user's ---------------------------- */

static gboolean
forked (void)
{
  const gchar *f = g_getenv ("CK_FORK");
  return !f || g_strcmp0 (f, "no") != 0;
}

/* A version as GStreamer's gstpreset.c compares them: major.minor.micro.nano
 * a byte each, 0 for fewer than two numbers. */
static guint64
preset_version (const gchar * text)
{
  guint v[4] = { 0, 0, 0, 0 };

  if (!text || sscanf (text, "%u.%u.%u.%u", &v[0], &v[1], &v[2], &v[3]) < 2)
    return 0;
  return ((((v[0] << 8 | v[1]) << 8) | v[2]) << 8) | v[3];
}

/* The version GStreamer writes into the user's file at a save: its own. */
static gchar *
gstreamer_version (void)
{
  guint major, minor, micro, nano;

  gst_version (&major, &minor, &micro, &nano);
  return nano ? g_strdup_printf ("%u.%u.%u.%u", major, minor, micro, nano) :
      g_strdup_printf ("%u.%u.%u", major, minor, micro);
}

/* The project's version, as the plugin was built with it. */
static const gchar *
release (void)
{
  GstPlugin *plugin = gst_registry_find_plugin (gst_registry_get (),
      "gpuconvolve");
  static gchar *version;

  fail_unless (plugin != NULL);
  if (!version)
    version = g_strdup (gst_plugin_get_version (plugin));
  gst_object_unref (plugin);
  return version;
}

/* The shipped file the tests read: the source tree's (GST_PRESET_PATH) */
static gchar *
shipped_file (void)
{
  const gchar *dirs = g_getenv ("GST_PRESET_PATH");
  gchar **dir;
  gchar *path;

  fail_unless (dirs && *dirs, "GST_PRESET_PATH is not set");
  dir = g_strsplit (dirs, G_SEARCHPATH_SEPARATOR_S, 2);
  path = g_build_filename (dir[0], "GstGpuConvolve.prs", NULL);
  g_strfreev (dir);
  return path;
}

static GKeyFile *
key_file (const gchar * path)
{
  GKeyFile *kf = g_key_file_new ();
  GError *err = NULL;

  fail_unless (g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, &err),
      "%s: %s", path, err ? err->message : "");
  return kf;
}

static gchar *
preset_value (GKeyFile * kf, const gchar * group, const gchar * key)
{
  return g_key_file_get_value (kf, group, key, NULL);
}

/* The shipped file's version follows the project's, newer than any version
 * GStreamer writes into a user's file; each preset carries the release it
 * came with and sets every property a preset holds (planes too). */
GST_START_TEST (test_shipped_presets_versioned)
{
  gchar *path = shipped_file (), *gst = gstreamer_version ();
  gchar *want = g_strconcat ("2.", release (), NULL);
  GKeyFile *kf = key_file (path);
  gchar *version = preset_value (kf, "_presets_", "version");
  gchar *name = preset_value (kf, "_presets_", "element-name");
  GstElement *e = gcvt_element_new ();
  gchar **props = gst_preset_get_property_names (GST_PRESET (e));
  gchar **groups = g_key_file_get_groups (kf, NULL);
  guint presets = 0;

  fail_unless_equals_string (name, "GstGpuConvolve");
  fail_unless (g_strcmp0 (version, want) == 0, "%s: version=%s, not %s "
      "(2 and meson.build's project version)", path, version, want);
  fail_unless (preset_version (version) > preset_version (gst),
      "version=%s is not newer than GStreamer's %s, which a save writes into "
      "the user's file", version, gst);
  fail_unless (g_strv_contains ((const gchar * const *) props, "planes"));
  for (guint g = 0; groups[g]; g++) {
    gchar *mark;
    if (groups[g][0] == '_')
      continue;
    presets++;
    mark = preset_value (kf, groups[g], "_meta/shipped");
    fail_unless (g_strcmp0 (mark, release ()) == 0, "[%s] _meta/shipped=%s, "
        "not %s", groups[g], mark, release ());
    g_free (mark);
    for (guint i = 0; props[i]; i++)
      fail_unless (g_key_file_has_key (kf, groups[g], props[i], NULL),
          "[%s] does not set %s", groups[g], props[i]);
  }
  fail_unless (presets > 0);
  g_strfreev (groups);
  g_strfreev (props);
  gcvt_element_unref (e);
  g_free (name);
  g_free (version);
  g_key_file_free (kf);
  g_free (want);
  g_free (gst);
  g_free (path);
}

GST_END_TEST;

/* Removes `dir` and what is in it. */
static void
remove_tree (const gchar * dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const gchar *entry;

  while (d && (entry = g_dir_read_name (d))) {
    gchar *path = g_build_filename (dir, entry, NULL);
    if (g_file_test (path, G_FILE_TEST_IS_DIR))
      remove_tree (path);
    else
      g_unlink (path);
    g_free (path);
  }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

/* The user's preset file, in the data directory main() gave this program
 * (GLib reads XDG_DATA_HOME once, before any test), emptied: tests run one
 * after the other. */
static gchar *
private_user_presets (void)
{
  const gchar *home = g_getenv ("XDG_DATA_HOME");
  gchar *dir = g_build_filename (home, "gstreamer-1.0", "presets", NULL);
  gchar *path = g_build_filename (dir, "GstGpuConvolve.prs", NULL);

  fail_unless_equals_string (g_get_user_data_dir (), home);
  remove_tree (dir);
  fail_unless (g_mkdir_with_parents (dir, 0700) == 0);
  g_free (dir);
  return path;
}

/* GStreamer reads the preset files once per process and keeps them on the
 * element's type; dropping that copy makes it read them again, as a new
 * process would (the fuzz target does the same). */
static void
forget_presets (GstElement * e)
{
  GQuark quark = g_quark_try_string ("GstPreset::presets");
  GKeyFile *kf = quark ? g_type_get_qdata (G_OBJECT_TYPE (e), quark) : NULL;

  fail_unless (kf != NULL, "GStreamer no longer keeps the preset files as "
      "qdata \"GstPreset::presets\"");
  g_key_file_free (kf);
  g_type_set_qdata (G_OBJECT_TYPE (e), quark, NULL);
}

/* Loads `preset` into a new element and returns the value of `prop`. */
static gchar *
preset_prop (const gchar * preset, const gchar * prop)
{
  GstElement *e = gcvt_element_new ();
  gchar *value;

  fail_unless (gst_preset_load_preset (GST_PRESET (e), preset),
      "preset %s does not load", preset);
  value = gcvt_prop_string (e, prop);
  gcvt_element_unref (e);
  return value;
}

static gboolean
has_preset (const gchar * preset)
{
  GstElement *e = gcvt_element_new ();
  gchar **names = gst_preset_get_preset_names (GST_PRESET (e));
  gboolean has = names && g_strv_contains ((const gchar * const *) names,
      preset);

  g_strfreev (names);
  gcvt_element_unref (e);
  return has;
}

/* A user saves presets under release N; release N+1 changes a shipped one.
 * The user's file gets GStreamer's version and copies of every shipped
 * preset of N. Under N+1 the updated shipped preset shows, beside the
 * user's own presets and the shipped one the user saved over. */
GST_START_TEST (test_shipped_update_seen_after_save)
{
  gchar *user = private_user_presets ();
  gchar *shipped_dir = g_dir_make_tmp ("gcvt-prs-shipped-XXXXXX", NULL);
  gchar *shipped = g_build_filename (shipped_dir, "GstGpuConvolve.prs", NULL);
  gchar *source = shipped_file (), *text, *old, *value, *gst;
  gchar *mark = g_strconcat ("_meta/shipped=", release (), "\n", NULL);
  gchar *version = g_strconcat ("version=2.", release (), "\n", NULL);
  GRegex *bias = g_regex_new ("(\\[edge-sobel-x\\][^[]*\nbias=)0\n",
      0, 0, NULL);
  GstElement *e;
  GKeyFile *kf;

  g_setenv ("GST_PRESET_PATH", shipped_dir, TRUE);
  /* release N: an older version and mark, and edge-sobel-x with bias=7 */
  fail_unless (g_file_get_contents (source, &text, NULL, NULL));
  fail_unless (strstr (text, version) && strstr (text, mark));
  old = g_regex_replace (bias, text, -1, 0, "\\g<1>7\n", 0, NULL);
  fail_if (g_str_equal (old, text), "no bias=0 in [edge-sobel-x]");
  {
    gchar **parts = g_strsplit (old, version, -1);
    g_free (old);
    old = g_strjoinv ("version=2.0.0.1\n", parts);
    g_strfreev (parts);
    parts = g_strsplit (old, mark, -1);
    g_free (old);
    old = g_strjoinv ("_meta/shipped=previous\n", parts);
    g_strfreev (parts);
  }
  fail_unless (g_file_set_contents (shipped, old, -1, NULL));

  /* under N: the user saves a preset of their own and one over sharpen */
  e = gcvt_element_new ();
  fail_unless (gst_preset_load_preset (GST_PRESET (e), "edge-sobel-x"));
  value = gcvt_prop_string (e, "bias");
  fail_unless_equals_string (value, "7");
  g_free (value);
  g_object_set (e, "size", 3, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  fail_unless (gst_preset_save_preset (GST_PRESET (e), "my-blur"));
  fail_unless (gst_preset_load_preset (GST_PRESET (e), "sharpen"));
  g_object_set (e, "bias", 3.0, NULL);
  fail_unless (gst_preset_save_preset (GST_PRESET (e), "sharpen"));

  /* what a save writes: GStreamer's version, copies of the shipped ones */
  kf = key_file (user);
  gst = gstreamer_version ();
  value = preset_value (kf, "_presets_", "version");
  fail_unless_equals_string (value, gst);
  g_free (value);
  value = preset_value (kf, "edge-sobel-x", "bias");
  fail_unless_equals_string (value, "7");
  g_free (value);
  fail_unless (g_key_file_has_group (kf, "my-blur"));
  fail_if (g_key_file_has_key (kf, "my-blur", "_meta/shipped", NULL));
  fail_if (g_key_file_has_key (kf, "sharpen", "_meta/shipped", NULL),
      "sharpen, saved by the user, is still marked as shipped");
  g_key_file_free (kf);

  /* release N+1 */
  forget_presets (e);
  gcvt_element_unref (e);
  fail_unless (g_file_set_contents (shipped, text, -1, NULL));
  value = preset_prop ("edge-sobel-x", "bias");
  fail_unless (g_str_equal (value, "0"), "edge-sobel-x has bias=%s, the "
      "user's file's copy of the older release, not the shipped 0", value);
  g_free (value);
  fail_unless (has_preset ("my-blur") && has_preset ("edge-scharr-y"));
  value = preset_prop ("my-blur", "filter");
  fail_unless_equals_string (value, "box");
  g_free (value);
  value = preset_prop ("sharpen", "bias");
  fail_unless_equals_string (value, "3");
  g_free (value);

  g_regex_unref (bias);
  g_free (version);
  g_free (mark);
  g_free (gst);
  g_free (old);
  g_free (text);
  g_free (source);
  remove_tree (shipped_dir);
  g_free (shipped);
  g_free (shipped_dir);
  g_free (user);
}

GST_END_TEST;

/* User files written by hand, with a preset of their own: the shipped
 * presets and theirs both load. _i: the header, as GStreamer's own saves
 * write it; no version (which GStreamer 1.22 crashes on); no header (which
 * GStreamer skips); another element's, which stays as it was. */
GST_START_TEST (test_hand_written_user_presets)
{
  static const gchar *const files[] = {
    "[_presets_]\nelement-name=GstGpuConvolve\nversion=1.22.0\n\n"
        "[my-blur]\nfilter=box\nsize=3\n",
    "[_presets_]\nelement-name=GstGpuConvolve\n\n"
        "[my-blur]\nfilter=box\nsize=3\n",
    "# mine\n[my-blur]\nfilter=box\nsize=3\n",
    "[_presets_]\nelement-name=GstOtherElement\nversion=1.22.0\n\n"
        "[my-blur]\nfilter=box\nsize=3\n",
  };
  gchar *user = private_user_presets (), *value, *after;
  const gboolean ours = __i__ != 3;

  fail_unless (g_file_set_contents (user, files[__i__], -1, NULL));
  fail_unless (has_preset ("edge-sobel-x"), "the shipped presets are hidden "
      "by:\n%s", files[__i__]);
  value = preset_prop ("edge-sobel-x", "filter");
  fail_unless_equals_string (value, "sobel-x");
  g_free (value);
  fail_unless (has_preset ("my-blur") == ours);
  if (ours) {
    value = preset_prop ("my-blur", "size");
    fail_unless_equals_string (value, "3");
    g_free (value);
  } else {
    fail_unless (g_file_get_contents (user, &after, NULL, NULL));
    fail_unless_equals_string (after, files[__i__]);
    g_free (after);
  }
  g_free (user);
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
  tcase_add_test (tc, test_shipped_presets_versioned);
  /* GStreamer and GLib read the preset files and XDG_DATA_HOME once per
   * process */
  GCVT_ADD_TEST_IF (tc, test_shipped_update_seen_after_save, forked (),
      "needs a process of its own (CK_FORK=no)");
  GCVT_ADD_LOOP_TEST_IF (tc, test_hand_written_user_presets, 0, 4, forked (),
      "needs a process of its own (CK_FORK=no)");
  return s;
}

int
main (int argc, char **argv)
{
  /* The preset tests write the user's preset file: in a data directory of
   * this program's own, named before GLib first reads XDG_DATA_HOME (in
   * gst_init()), and made once gcvt_init() did not skip. */
  gchar *name = g_strdup_printf ("gcvt-xdg-%d", (gint) getpid ());
  gchar *home = g_build_filename (g_get_tmp_dir (), name, NULL);
  int ret;

  g_setenv ("XDG_DATA_HOME", home, TRUE);
  gcvt_init (&argc, &argv);
  g_mkdir_with_parents (home, 0700);
  ret = gcvt_run (properties_suite (), "properties");
  remove_tree (home);
  g_free (home);
  g_free (name);
  return ret;
}
