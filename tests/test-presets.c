/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Presets (docs/presets.md): each shipped preset loads the kernel its
 * comment in GstGpuConvolve.prs documents and sets every filter property;
 * an unknown one is refused and changes nothing; the shipped file's
 * version and marks; how a user's file, saved or written by hand, combines
 * with the shipped one. Preset files with junk in them: test-errors.c. */
#include "common.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* --- the shipped presets on the element ---------------------------------- */

/* The presets and the kernels their comments in GstGpuConvolve.prs
 * document. */
static const struct
{
  const gchar *name, *filter;
  guint size;
  gdouble sigma;
} presets[] = {
  {"blur-gaussian-3", "gaussian", 3, 0.8},
  {"blur-gaussian-5", "gaussian", 5, 1.1},
  {"blur-gaussian-9", "gaussian", 9, 1.7},
  {"blur-box-5", "box", 5, 1.0},
  {"sharpen", "sharpen", 5, 1.0},
  {"emboss", "emboss", 3, 1.0},
  {"laplacian", "laplacian", 3, 1.0},
  {"log-9", "log", 9, 1.4},
  {"edge-sobel-x", "sobel-x", 3, 1.0},
  {"edge-sobel-y", "sobel-y", 3, 1.0},
  {"edge-scharr-x", "scharr-x", 3, 1.0},
  {"edge-scharr-y", "scharr-y", 3, 1.0},
};

/* Leaves every filter property away from its default, so a preset must
 * set them all. */
static void
scramble_properties (GstElement * e)
{
  static const gdouble k[15] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
    14, 15
  };
  g_object_set (e, "kernel-width", 5, "kernel-height", 3, NULL);
  gcvt_set_floats (e, "kernel", k, 15);
  g_object_set (e, "anchor-x", 4, "anchor-y", 2, "normalize", TRUE,
      "scale", 3.0, "bias", 7.0, "border-value", 9.0, "size", 7,
      "sigma", 2.5, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "mode", "convolution");
  gst_util_set_object_arg (G_OBJECT (e), "border", "wrap");
  gst_util_set_object_arg (G_OBJECT (e), "alpha", "filter");
}

GST_START_TEST (test_presets)
{
  GRand *r = ref_rand_new ("presets");
  GstElement *e = gcvt_element_new ();
  gchar **names = gst_preset_get_preset_names (GST_PRESET (e));

  /* the file and this table list the same presets */
  fail_unless (names != NULL, "no presets found (GST_PRESET_PATH=%s)",
      g_getenv ("GST_PRESET_PATH"));
  fail_unless_equals_int (g_strv_length (names), G_N_ELEMENTS (presets));
  for (guint i = 0; i < G_N_ELEMENTS (presets); i++)
    fail_unless (g_strv_contains ((const gchar * const *) names,
            presets[i].name), "preset %s is missing", presets[i].name);
  g_strfreev (names);
  gcvt_element_unref (e);

  for (guint i = 0; i < G_N_ELEMENTS (presets); i++) {
    RefKernel *k = ref_builtin (presets[i].filter, presets[i].size,
        presets[i].sigma);
    gboolean rank1 = ref_kernel_is_rank1 (k);
    RefImage *img = gcvt_random_image (r, REF_GRAY32F, 17, 12, -1.0, 1.0);
    gchar *algorithm;
    RefParams p;

    e = gcvt_element_new ();
    scramble_properties (e);
    fail_unless (gst_preset_load_preset (GST_PRESET (e), presets[i].name),
        "could not load preset %s", presets[i].name);
    /* a preset sets algorithm=auto; put back the one under test, which
     * the start refuses with separable for kernels that are not rank 1 */
    gcvt_apply_algorithm (e);
    algorithm = gcvt_prop_string (e, "algorithm");
    fail_unless_equals_string (algorithm, gcvt_algorithm ());
    g_free (algorithm);

    ref_params_init (&p, k);
    if (!gcvt_refused_as_not_separable (e, rank1))
      gcvt_run_and_check (e, REF_GRAY32F, REF_GRAY32F, img, &p, 0, 0,
          presets[i].name);
    gcvt_element_unref (e);
    ref_image_free (img);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* An unknown preset is refused and changes nothing. */
GST_START_TEST (test_unknown_preset)
{
  static const gchar *const props[] = {
    "filter", "size", "sigma", "kernel-width", "kernel-height", "kernel",
    "row-kernel", "column-kernel", "normalize", "scale", "bias", "mode",
    "anchor-x", "anchor-y", "border", "border-value", "alpha", "separable",
    "algorithm",
  };
  GstElement *e = gcvt_element_new ();
  gchar *before[G_N_ELEMENTS (props)];

  scramble_properties (e);
  for (guint i = 0; i < G_N_ELEMENTS (props); i++)
    before[i] = gcvt_prop_string (e, props[i]);
  fail_if (gst_preset_load_preset (GST_PRESET (e), "no-such-preset"));
  for (guint i = 0; i < G_N_ELEMENTS (props); i++) {
    gchar *after = gcvt_prop_string (e, props[i]);
    fail_unless_equals_string (after, before[i]);
    g_free (after);
    g_free (before[i]);
  }
  /* and a real one still loads afterwards */
  fail_unless (gst_preset_load_preset (GST_PRESET (e), "edge-sobel-x"));
  gcvt_element_unref (e);
}

GST_END_TEST;

/* --- the shipped file and the user's ------------------------------------ */

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
presets_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-presets");
  TCase *tc = tcase_create ("presets");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_presets);
  tcase_add_test (tc, test_unknown_preset);
  tcase_add_test (tc, test_shipped_presets_versioned);
  /* GStreamer and GLib read the preset files and XDG_DATA_HOME once per
   * process */
  GCVT_ADD_TEST_IF (tc, test_shipped_update_seen_after_save, gcvt_forked (),
      "needs a process of its own (CK_FORK=no)");
  GCVT_ADD_LOOP_TEST_IF (tc, test_hand_written_user_presets, 0, 4,
      gcvt_forked (), "needs a process of its own (CK_FORK=no)");
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
  ret = gcvt_run (presets_suite (), "presets");
  remove_tree (home);
  g_free (home);
  g_free (name);
  return ret;
}
