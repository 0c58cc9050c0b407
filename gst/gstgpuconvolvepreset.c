/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GstPreset for gpuconvolve: GStreamer's implementation, wrapped so that
 * presets hold the filter and not the machine, and so that the presets
 * shipped with a release are not hidden by the user's copies of an earlier
 * release's (docs/presets.md). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstgpuconvolveprivate.h"

/* Presets hold the filter, not the machine it runs on; the order is the
 * order they are loaded in, sizes before the kernels they check. */
static const gchar *const preset_properties[] = {
  "filter", "size", "sigma", "kernel-width", "kernel-height", "kernel",
  "row-kernel", "column-kernel", "normalize", "scale", "bias", "mode",
  "anchor-x", "anchor-y", "border", "border-value", "alpha", "planes",
  "separable", "algorithm", NULL
};

/* GStreamer merges the shipped preset files (its system directory,
 * GST_PRESET_PATH) with the user's, which each save rewrites whole: the
 * shipped presets go in as copies, under GStreamer's own version. The
 * user's file wins for every preset it holds, so those copies would hide
 * the shipped presets of a later release for good. Shipped presets are
 * marked _meta/shipped=<release> (presets/GstGpuConvolve.prs); copies of
 * another release are dropped from the user's file before GStreamer reads
 * it, and a preset the user saves loses the mark. docs/presets.md. */
#define SHIPPED_TAG "shipped"
#define SHIPPED_KEY "_meta/" SHIPPED_TAG
#define PRESETS_HEADER "_presets_"

/* GStreamer's implementation, which ours wraps */
static GstPresetInterface default_preset;

/* The user's file before GStreamer reads it: copies of another release's
 * shipped presets dropped; a hand-written file given what GStreamer needs,
 * the header it otherwise ignores the file without, and the version it
 * crashes without (GStreamer 1.22 to 1.26 parse a missing one). */
static void
tidy_user_presets (GstPreset * preset)
{
  const gchar *type = G_OBJECT_TYPE_NAME (preset);
  gchar *file = g_strconcat (type, ".prs", NULL);
  gchar *path = g_build_filename (g_get_user_data_dir (), "gstreamer-1.0",
      "presets", file, NULL);
  GKeyFile *kf = g_key_file_new ();
  gchar **groups = NULL, *name = NULL;
  gboolean changed = FALSE;
  GError *error = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_KEEP_COMMENTS |
          G_KEY_FILE_KEEP_TRANSLATIONS, NULL))
    goto out;
  if (!g_key_file_has_group (kf, PRESETS_HEADER)) {
    g_key_file_set_string (kf, PRESETS_HEADER, "element-name", type);
    changed = TRUE;
  }
  name = g_key_file_get_value (kf, PRESETS_HEADER, "element-name", NULL);
  if (g_strcmp0 (name, type) != 0)
    goto out;                   /* another element's: GStreamer skips it */
  if (!g_key_file_has_key (kf, PRESETS_HEADER, "version", NULL)) {
    /* older than any shipped file, which it is then merged into */
    g_key_file_set_string (kf, PRESETS_HEADER, "version", "0.0");
    changed = TRUE;
  }
  groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i]; i++) {
    gchar *release = g_key_file_get_value (kf, groups[i], SHIPPED_KEY, NULL);
    if (release && g_strcmp0 (release, PACKAGE_VERSION) != 0) {
      GST_INFO ("%s: dropping [%s], shipped with %s", path, groups[i],
          release);
      g_key_file_remove_group (kf, groups[i], NULL);
      changed = TRUE;
    }
    g_free (release);
  }
  if (changed && !g_key_file_save_to_file (kf, path, &error)) {
    GST_WARNING ("could not rewrite %s: %s", path, error->message);
    g_error_free (error);
  }
out:
  g_strfreev (groups);
  g_free (name);
  g_key_file_free (kf);
  g_free (path);
  g_free (file);
}

/* A preset the user saves or renames is the user's, a shipped one's name
 * or not. */
static gboolean
unmark_preset (GstPreset * preset, const gchar * name)
{
  gchar *release = NULL;

  if (!default_preset.get_meta (preset, name, SHIPPED_TAG, &release)
      || !release)
    return TRUE;
  g_free (release);
  return default_preset.set_meta (preset, name, SHIPPED_TAG, NULL);
}

static gchar **
gst_gpu_convolve_get_preset_names (GstPreset * preset)
{
  tidy_user_presets (preset);
  return default_preset.get_preset_names (preset);
}

static gboolean
gst_gpu_convolve_load_preset (GstPreset * preset, const gchar * name)
{
  tidy_user_presets (preset);
  return default_preset.load_preset (preset, name);
}

static gboolean
gst_gpu_convolve_save_preset (GstPreset * preset, const gchar * name)
{
  tidy_user_presets (preset);
  return default_preset.save_preset (preset, name)
      && unmark_preset (preset, name);
}

static gboolean
gst_gpu_convolve_rename_preset (GstPreset * preset, const gchar * old_name,
    const gchar * new_name)
{
  tidy_user_presets (preset);
  return default_preset.rename_preset (preset, old_name, new_name)
      && unmark_preset (preset, new_name);
}

static gboolean
gst_gpu_convolve_delete_preset (GstPreset * preset, const gchar * name)
{
  tidy_user_presets (preset);
  return default_preset.delete_preset (preset, name);
}

static gboolean
gst_gpu_convolve_set_preset_meta (GstPreset * preset, const gchar * name,
    const gchar * tag, const gchar * value)
{
  tidy_user_presets (preset);
  return default_preset.set_meta (preset, name, tag, value);
}

static gboolean
gst_gpu_convolve_get_preset_meta (GstPreset * preset, const gchar * name,
    const gchar * tag, gchar ** value)
{
  tidy_user_presets (preset);
  return default_preset.get_meta (preset, name, tag, value);
}

static gchar **
gst_gpu_convolve_get_preset_property_names (GstPreset * preset)
{
  return g_strdupv ((gchar **) preset_properties);
}

void
gst_gpu_convolve_preset_init (GstPresetInterface * iface)
{
  /* GStreamer's defaults, which every implementation starts with */
  default_preset = *iface;
  iface->get_preset_names = gst_gpu_convolve_get_preset_names;
  iface->get_property_names = gst_gpu_convolve_get_preset_property_names;
  iface->load_preset = gst_gpu_convolve_load_preset;
  iface->save_preset = gst_gpu_convolve_save_preset;
  iface->rename_preset = gst_gpu_convolve_rename_preset;
  iface->delete_preset = gst_gpu_convolve_delete_preset;
  iface->set_meta = gst_gpu_convolve_set_preset_meta;
  iface->get_meta = gst_gpu_convolve_get_preset_meta;
}
