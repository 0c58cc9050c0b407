/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz target: preset files. The input is written as GstGpuConvolve.prs in
 * a folder of GST_PRESET_PATH and as the user's file (in the temporary
 * XDG_DATA_HOME of fuzz_gst_init(), which the element tidies before
 * GStreamer reads it), and GStreamer's own GstPreset code reads them
 * (gst_preset_get_preset_names(), gst_preset_load_preset() on a
 * gpuconvolve element for each preset): GKeyFile, the value deserialisers
 * and the element's setters, as `gst-launch-1.0 ... gpuconvolve
 * @preset=NAME` goes. After each load the element's settings are built into
 * a filter as its start does.
 *
 * GstPreset reads the files once per element type and keeps them on the
 * type (qdata "GstPreset::presets"); the target drops that copy before
 * each input so every input is read. Checked at start-up: if that name
 * changes in a later GStreamer, the target says so and stops. */
#define GST_FUZZ_WITH_GSTREAMER
#include "fuzz-common.h"

#include <gst/gst.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include "gstgpuconvolve.h"

static gchar *preset_dir, *preset_file, *user_file, *user_backup;
static GQuark presets_quark;

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static void
cleanup (void)
{
  if (preset_file)
    g_unlink (preset_file);
  if (user_file)
    g_unlink (user_file);
  if (user_backup)
    g_unlink (user_backup);
  if (preset_dir)
    g_rmdir (preset_dir);
}

static void
forget_presets (void)
{
  GKeyFile *kf = g_type_get_qdata (GST_TYPE_GPU_CONVOLVE, presets_quark);
  if (kf) {
    g_key_file_free (kf);
    g_type_set_qdata (GST_TYPE_GPU_CONVOLVE, presets_quark, NULL);
  }
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  static const gchar probe[] = "[_presets_]\nversion=1.22.0\n"
      "element-name=GstGpuConvolve\n\n[a]\nsize=3\n\n";
  GstElement *e;
  gchar **names;

  fuzz_gst_init ();
  preset_dir = g_dir_make_tmp ("gcv-fuzz-prs-XXXXXX", NULL);
  g_assert (preset_dir);
  preset_file = g_build_filename (preset_dir, "GstGpuConvolve.prs", NULL);
  atexit (cleanup);
  g_setenv ("GST_PRESET_PATH", preset_dir, TRUE);
  user_file = g_build_filename (g_get_user_data_dir (), "gstreamer-1.0",
      "presets", "GstGpuConvolve.prs", NULL);
  user_backup = g_strconcat (user_file, ".bak", NULL);

  /* the cache is where this target expects it: a file read, dropped, and a
   * new one read */
  g_file_set_contents (preset_file, probe, -1, NULL);
  e = g_object_new (GST_TYPE_GPU_CONVOLVE, NULL);
  gst_object_ref_sink (e);
  names = gst_preset_get_preset_names (GST_PRESET (e));
  presets_quark = g_quark_try_string ("GstPreset::presets");
  if (!names || !presets_quark || !g_type_get_qdata (GST_TYPE_GPU_CONVOLVE,
          presets_quark)) {
    fprintf (stderr, "fuzz-preset: GstPreset no longer keeps its files as "
        "qdata \"GstPreset::presets\"; this target cannot drop them\n");
    exit (1);
  }
  g_strfreev (names);
  forget_presets ();
  gst_object_unref (e);
  return 0;
}

/* Inputs that hit known bugs of GStreamer 1.22 itself, skipped so that the
 * fuzzer looks further (docs/reliability.md):
 * - the version of a preset file is read with sscanf() on what
 *   g_key_file_get_value() gave, NULL where [_presets_] has no version
 *   key: a file with element-name=GstGpuConvolve and no version crashes
 *   any program that lists or loads the element's presets (gstpreset.c,
 *   preset_open_and_parse_header());
 * - values with nested collections that do not parse leak.
 * And sizes above 64, which only make inputs slow. */
static gboolean
gst_preset_trouble_known (const uint8_t * data, size_t size)
{
  GKeyFile *kf = g_key_file_new ();
  gboolean crash = FALSE;

  if (g_key_file_load_from_data (kf, (const gchar *) data, size,
          G_KEY_FILE_KEEP_COMMENTS | G_KEY_FILE_KEEP_TRANSLATIONS, NULL)) {
    gchar *name = g_key_file_get_value (kf, "_presets_", "element-name", NULL);
    gchar *version = g_key_file_get_value (kf, "_presets_", "version", NULL);
    gchar **groups = g_key_file_get_groups (kf, NULL);
    crash = g_strcmp0 (name, "GstGpuConvolve") == 0 && !version;
    /* and GStreamer's value parser leaks on nested collections that do
     * not parse (fuzz-common.h) */
    for (guint g = 0; !crash && groups[g]; g++) {
      gchar **keys = g_key_file_get_keys (kf, groups[g], NULL, NULL);
      for (guint k = 0; !crash && keys && keys[k]; k++) {
        gchar *v = g_key_file_get_value (kf, groups[g], keys[k], NULL);
        crash = v && fuzz_nested_collection (v);
        /* not a bug, a cost: every property set validates the settings,
         * building the kernel (size x size values); beyond 64 inputs only
         * get slower (tens of them a second) */
        if (v && (g_str_equal (keys[k], "size")
                || g_str_has_prefix (keys[k], "kernel-"))
            && g_ascii_strtoll (v, NULL, 10) > 64)
          crash = TRUE;
        g_free (v);
      }
      g_strfreev (keys);
    }
    g_strfreev (groups);
    g_free (name);
    g_free (version);
  }
  g_key_file_free (kf);
  return crash;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GstElement *e;
  gchar **names;

  if (size > 16384 || gst_preset_trouble_known (data, size))
    return 0;
  if (!g_file_set_contents (preset_file, (const gchar *) data, size, NULL))
    return 0;
  /* GStreamer made the folder at the first read (the probe) */
  g_file_set_contents (user_file, (const gchar *) data, size, NULL);
  forget_presets ();
  e = g_object_new (GST_TYPE_GPU_CONVOLVE, NULL);
  gst_object_ref_sink (e);
  names = gst_preset_get_preset_names (GST_PRESET (e));
  for (guint i = 0; names && names[i] && i < 16; i++) {
    GcvFamily algorithm;
    GcvFilter *filter;

    gst_preset_load_preset (GST_PRESET (e), names[i]);
    filter = gst_gpu_convolve_build_filter (GST_GPU_CONVOLVE (e), &algorithm,
        NULL);
    if (filter)
      gcv_filter_free (filter);
  }
  /* a name that is not there changes nothing and says so */
  FUZZ_ASSERT (!gst_preset_load_preset (GST_PRESET (e),
          "no preset has this name \x01"), "an unknown preset loaded");
  g_strfreev (names);
  gst_object_unref (e);
  forget_presets ();
  return 0;
}
