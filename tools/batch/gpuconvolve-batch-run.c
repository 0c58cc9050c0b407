/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-batch-run: the worker of gpuconvolve-batch (docs/batch.md).
 *
 *   gpuconvolve-batch-run serve
 *   gpuconvolve-batch-run run INPUT OUTPUT WORD...
 *   gpuconvolve-batch-run check [--property NAME=VALUE]... [--preset NAME]
 *                               [-- WORD...]
 *
 * serve: a warm worker that runs job after job sent on its standard input,
 * a description on a file or the edge-energy analysis, with the replies on
 * its standard output (batch-serve.c has the protocol). This is what each
 * slot of a batch runs.
 *
 * run: one file through a description (batch-pipeline.c): the WORDs are
 * the description, split into words as gst-launch-1.0 gets them from a
 * shell, with {input} and {output} standing for INPUT and OUTPUT, which
 * are never parsed. Exit status 0 when the stream ended, 1 when the
 * pipeline failed, 2 when the arguments or the description were refused.
 *
 * check: what gpuconvolve-batch checks before a batch starts. Sets each
 * property, in the order given, on a gpuconvolve element of its own, as
 * gst-launch-1.0 does (gst_value_deserialize_with_pspec), and takes GLib's
 * warnings (a value out of range, one the element refuses) as errors; loads
 * the preset on another; parses the description with placeholder paths and
 * checks where {input} and {output} land. Prints the properties a preset
 * sets, one line each: "preset-property NAME". Exit status 0 when all is
 * well, 2 when something was refused, 3 when only an element is missing
 * here (the nodes of a cluster may have it).
 */
#include "batch-pipeline.h"
#include "batch-serve.h"

#include <string.h>

typedef BatchStatus Status;

/* A refusal outweighs a missing element. */
static Status
worse (Status a, Status b)
{
  if (a == BATCH_REFUSED || b == BATCH_REFUSED)
    return BATCH_REFUSED;
  return MAX (a, b);
}

static Status
check_properties (GstElement * element, GPtrArray * properties)
{
  Status status = BATCH_OK;

  for (guint i = 0; i < properties->len; i++) {
    const gchar *item = g_ptr_array_index (properties, i);
    const gchar *eq = strchr (item, '=');
    gchar *name = eq ? g_strndup (item, eq - item) : g_strdup (item);
    GError *error = NULL;

    if (!eq) {
      g_printerr (BATCH_PROGRAM ": error: --property %s: expected "
          "NAME=VALUE\n", item);
      status = BATCH_REFUSED;
    } else if (!batch_set_from_string (G_OBJECT (element), name, eq + 1,
            &error)) {
      g_printerr (BATCH_PROGRAM ": error: --property %s: %s\n", item,
          error->message);
      g_clear_error (&error);
      status = BATCH_REFUSED;
    }
    g_free (name);
  }
  return status;
}

static Status
check_preset (const gchar * preset)
{
  GstElement *element = batch_make_gpuconvolve ();
  gboolean loaded;
  gchar *refused;
  Status status = BATCH_OK;

  if (!element)
    return BATCH_REFUSED;
  batch_collect_begin ();
  loaded = gst_preset_load_preset (GST_PRESET (element), preset);
  refused = batch_collect_end ();
  if (!loaded) {
    gchar **names = gst_preset_get_preset_names (GST_PRESET (element));
    gchar *list = names ? g_strjoinv (", ", names) : g_strdup ("none");
    g_printerr (BATCH_PROGRAM ": error: --preset %s: gpuconvolve has no such "
        "preset (it has: %s)\n", preset, list);
    g_free (list);
    g_strfreev (names);
    status = BATCH_REFUSED;
  } else if (refused) {
    g_printerr (BATCH_PROGRAM ": error: --preset %s: %s\n", preset, refused);
    status = BATCH_REFUSED;
  }
  g_free (refused);
  gst_object_unref (element);
  return status;
}

static Status
check (gint argc, gchar ** argv)
{
  GPtrArray *properties = g_ptr_array_new ();
  const gchar *preset = NULL;
  gchar **words = NULL;
  GstElement *element;
  Status status = BATCH_OK;
  gint i;

  for (i = 0; i < argc; i++) {
    if (g_str_equal (argv[i], "--") && i + 1 < argc) {
      words = argv + i + 1;
      break;
    } else if (g_str_equal (argv[i], "--property") && i + 1 < argc) {
      g_ptr_array_add (properties, argv[++i]);
    } else if (g_str_equal (argv[i], "--preset") && i + 1 < argc) {
      preset = argv[++i];
    } else {
      g_printerr (BATCH_PROGRAM ": error: check: unexpected '%s'\n", argv[i]);
      g_ptr_array_unref (properties);
      return BATCH_REFUSED;
    }
  }

  element = batch_make_gpuconvolve ();
  if (!element) {
    g_ptr_array_unref (properties);
    return BATCH_REFUSED;
  }
  status = check_properties (element, properties);
  if (preset)
    status = worse (status, check_preset (preset));
  {
    gchar **names = gst_preset_get_property_names (GST_PRESET (element));
    for (gchar ** n = names; n && *n; n++)
      g_print ("preset-property %s\n", *n);
    g_strfreev (names);
  }
  gst_object_unref (element);
  g_ptr_array_unref (properties);

  if (words) {
    /* never played: the paths only have to be paths */
    const gchar *paths[BATCH_N_PATHS] = { "/input", "/output" };
    BatchTemplate t;
    GError *error = NULL;
    GstElement *pipeline;

    batch_template_init (&t, words);
    pipeline = batch_build_pipeline (&t, paths, &error);
    if (pipeline) {
      gst_object_unref (pipeline);
    } else {
      g_printerr (BATCH_PROGRAM ": %s: %s\n", error->code == BATCH_MISSING ?
          "note" : "error", error->message);
      status = worse (status, (Status) error->code);
      g_clear_error (&error);
    }
    batch_template_clear (&t);
  }
  return status;
}

int
main (int argc, char **argv)
{
  Status status;

  batch_log_init ();
  /* no command line for GStreamer: a path may look like one of its
   * options */
  if (argc == 2 && g_str_equal (argv[1], "serve")) {
    gst_init (NULL, NULL);
    status = batch_serve ();
  } else if (argc >= 5 && g_str_equal (argv[1], "run")) {
    BatchTemplate t;

    gst_init (NULL, NULL);
    batch_template_init (&t, argv + 4);
    status = batch_run_job (&t, argv[2], argv[3], NULL);
    batch_template_clear (&t);
  } else if (argc >= 2 && g_str_equal (argv[1], "check")) {
    gst_init (NULL, NULL);
    status = check (argc - 2, argv + 2);
  } else {
    g_printerr ("usage: " BATCH_PROGRAM " serve\n"
        "       " BATCH_PROGRAM " run INPUT OUTPUT WORD...\n"
        "       " BATCH_PROGRAM " check [--property NAME=VALUE]... "
        "[--preset NAME] [-- WORD...]\n"
        "(tools/batch/gpuconvolve-batch-run.c says more)\n");
    return BATCH_REFUSED;
  }
  gst_deinit ();
  return status;
}
