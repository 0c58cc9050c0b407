/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Soak test: many frames through appsrc ! gpuconvolve ! appsink, checking
 * that every frame pushed comes out, in order, and that memory does not
 * grow. Not a gst-check test: a program with options, run by CI on the CPU
 * and by hand on a GPU host:
 *
 *   soak [--frames=N] [--backend=cpu|cuda] [--width=W] [--height=H]
 *        [--csv=FILE] [--filter=NAME] [--size=N]
 *
 * Every 1000 frames it samples the resident set size (/proc/self/statm) and
 * writes a row to the CSV file. It fails (exit 1) when a frame is lost or
 * out of order, on any error message, or when RSS grows by more than 1%
 * after the warm-up: from the sample at 2000 frames to the largest later
 * one taken while frames still flow (the sample at the last frame, as
 * the stream winds down, is shown but not judged; so 4000 frames at least
 * for a verdict on memory). The warm-up is two samples: a CI run once
 * grew 69.0 to 76.9 MiB between the first two (malloc arenas of the
 * threads reaching their working size late) and stayed flat after. With --backend=cuda it samples the device
 * memory in use (gcv_device_memory(): the whole device, as cudaMemGetInfo
 * sees it) at the same points and judges it by the same rule; RSS covers
 * the pinned host buffers. */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include "gcv-interop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLE_EVERY 1000
#define WARM_UP (2 * SAMPLE_EVERY)  /* frames before the baseline sample */
#define N_INPUTS 4              /* distinct input frames, pushed in turn */

static gint frames = 5000;
static gint width = 1920, height = 1080;
static gchar *backend = NULL;
static gchar *csv_path = NULL;
static gchar *filter = NULL;
static gint size = 5;
static gdouble max_growth = 1.0;

static GOptionEntry entries[] = {
  {"frames", 0, 0, G_OPTION_ARG_INT, &frames, "Frames to push (5000)", "N"},
  {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "cpu or cuda (cpu)",
      "NAME"},
  {"width", 0, 0, G_OPTION_ARG_INT, &width, "Frame width (1920)", "W"},
  {"height", 0, 0, G_OPTION_ARG_INT, &height, "Frame height (1080)", "H"},
  {"csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path,
      "Write the samples to FILE", "FILE"},
  {"filter", 0, 0, G_OPTION_ARG_STRING, &filter,
      "Built-in filter (gaussian)", "NAME"},
  {"size", 0, 0, G_OPTION_ARG_INT, &size, "Filter size (5)", "N"},
  {"max-growth", 0, 0, G_OPTION_ARG_DOUBLE, &max_growth,
      "RSS growth allowed after warm-up, in percent (1)", "P"},
  {NULL}
};

static gsize
rss_bytes (void)
{
  gchar *text = NULL;
  gsize pages = 0, resident = 0;

  if (g_file_get_contents ("/proc/self/statm", &text, NULL, NULL))
    sscanf (text, "%zu %zu", &pages, &resident);
  g_free (text);
  return resident * (gsize) sysconf (_SC_PAGESIZE);
}

typedef struct
{
  GstElement *src;
  GstBuffer *inputs[N_INPUTS];
  GstFlowReturn ret;
  gint pushed;
} Pusher;

static gpointer
push_frames (gpointer data)
{
  Pusher *p = data;

  for (gint i = 0; i < frames; i++) {
    /* a new GstBuffer sharing the input's memory: its own timestamps */
    GstBuffer *buf = gst_buffer_copy (p->inputs[i % N_INPUTS]);
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale_int (i, GST_SECOND, 30);
    GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
    GST_BUFFER_OFFSET (buf) = i;
    p->ret = gst_app_src_push_buffer (GST_APP_SRC (p->src), buf);
    if (p->ret != GST_FLOW_OK)
      break;
    p->pushed++;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (p->src));
  return NULL;
}

/* The build tree's plugin, ahead of any installed one. */
static void
use_build_plugin (void)
{
#ifdef GCVT_PLUGIN_DIR
  const gchar *path = g_getenv ("GST_PLUGIN_PATH_1_0");
  gchar *p = path && *path ? g_strconcat (GCVT_PLUGIN_DIR,
      G_SEARCHPATH_SEPARATOR_S, path, NULL) : g_strdup (GCVT_PLUGIN_DIR);
  g_setenv ("GST_PLUGIN_PATH_1_0", p, TRUE);
  g_free (p);
#endif
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("- gpuconvolve soak test");
  GError *err = NULL;
  GstElement *pipeline, *conv, *sink;
  GstBus *bus;
  GstCaps *caps;
  Pusher pusher = { 0 };
  GThread *thread;
  FILE *csv = NULL;
  gchar *line, *active = NULL;
  gsize rss_warm = 0, rss_max = 0, rss;
  gsize dev_warm = 0, dev_max = 0, dev_used = 0, dev_total = 0;
  gint device_id = -1;
  gboolean sample_device;
  gint out = 0, errors = 0, n_messages = 0, n_judged = 0;
  gboolean ok = TRUE;
  gint64 t0, t_warm = 0;
  GstClockTime expect_pts = 0;

  use_build_plugin ();
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("soak: %s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (!backend)
    backend = g_strdup ("cpu");
  if (!filter)
    filter = g_strdup ("gaussian");
  if (frames < 1 || width < 1 || height < 1 || (g_strcmp0 (backend, "cpu")
          && g_strcmp0 (backend, "cuda"))) {
    g_printerr ("soak: --frames, --width and --height must be positive and "
        "--backend cpu or cuda\n");
    return 2;
  }
  gst_init (NULL, NULL);

  line = g_strdup_printf ("appsrc name=src format=time block=true "
      "max-bytes=%" G_GSIZE_FORMAT " ! gpuconvolve name=conv backend=%s "
      "filter=%s size=%d ! appsink name=sink sync=false max-buffers=1",
      (gsize) width * height * 4 * 3, backend, filter, size);
  pipeline = gst_parse_launch (line, &err);
  if (!pipeline) {
    g_printerr ("soak: %s: %s\n", line, err->message);
    return 2;
  }
  g_free (line);
  pusher.src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  caps = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, "RGBA",
      "width", G_TYPE_INT, width, "height", G_TYPE_INT, height, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
  gst_app_src_set_caps (GST_APP_SRC (pusher.src), caps);
  gst_caps_unref (caps);
  {
    GstPluginFeature *f = gst_registry_lookup_feature (gst_registry_get (),
        "gpuconvolve");
    GstPlugin *plugin = f ? gst_plugin_feature_get_plugin (f) : NULL;
    g_print ("soak: %d frames of %dx%d RGBA, backend=%s filter=%s size=%d; "
        "plugin %s\n", frames, width, height, backend, filter, size,
        plugin ? gst_plugin_get_filename (plugin) : "?");
    if (plugin)
      gst_object_unref (plugin);
    if (f)
      gst_object_unref (f);
  }

  /* a few different frames of noise */
  {
    GRand *r = g_rand_new_with_seed (1234);
    gsize n = (gsize) width * height * 4;
    for (guint i = 0; i < N_INPUTS; i++) {
      GstMapInfo map;
      pusher.inputs[i] = gst_buffer_new_allocate (NULL, n, NULL);
      gst_buffer_map (pusher.inputs[i], &map, GST_MAP_WRITE);
      for (gsize b = 0; b + 4 <= n; b += 4) {
        guint32 v = g_rand_int (r);
        memcpy (map.data + b, &v, 4);
      }
      gst_buffer_unmap (pusher.inputs[i], &map);
    }
    g_rand_free (r);
  }

  /* device memory: the CUDA backend only, on the element's device */
  sample_device = g_strcmp0 (backend, "cuda") == 0;
  g_object_get (conv, "cuda-device-id", &device_id, NULL);
  device_id = MAX (device_id, 0);

  if (csv_path) {
    csv = fopen (csv_path, "w");
    if (!csv) {
      g_printerr ("soak: cannot write %s\n", csv_path);
      return 2;
    }
    fprintf (csv, "frames,seconds,fps,rss_kib,device_used_kib\n");
  }

  bus = gst_element_get_bus (pipeline);
  if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    g_printerr ("soak: the pipeline did not start\n");
    ok = FALSE;
  }
  t0 = g_get_monotonic_time ();
  thread = g_thread_new ("pusher", push_frames, &pusher);

  while (ok) {
    GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        60 * GST_SECOND);
    GstMessage *msg;
    if (!sample) {
      if (!gst_app_sink_is_eos (GST_APP_SINK (sink))) {
        g_printerr ("soak: no frame for 60 s after %d\n", out);
        ok = FALSE;
      }
      break;
    }
    {
      GstBuffer *buf = gst_sample_get_buffer (sample);
      if (GST_BUFFER_PTS (buf) != expect_pts) {
        g_printerr ("soak: frame %d has PTS %" GST_TIME_FORMAT ", expected %"
            GST_TIME_FORMAT "\n", out, GST_TIME_ARGS (GST_BUFFER_PTS (buf)),
            GST_TIME_ARGS (expect_pts));
        ok = FALSE;
      }
      if (gst_buffer_get_size (buf) < (gsize) width * height * 4) {
        g_printerr ("soak: frame %d has %" G_GSIZE_FORMAT " bytes\n", out,
            gst_buffer_get_size (buf));
        ok = FALSE;
      }
    }
    gst_sample_unref (sample);
    out++;
    expect_pts = gst_util_uint64_scale_int (out, GST_SECOND, 30);
    /* every message is taken off the bus, so none piles up there */
    while ((msg = gst_bus_pop (bus))) {
      if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gst_message_parse_error (msg, &e, NULL);
        g_printerr ("soak: error from %s: %s\n",
            GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), e->message);
        g_error_free (e);
        errors++;
        ok = FALSE;
      } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
        GError *e = NULL;
        gst_message_parse_warning (msg, &e, NULL);
        g_printerr ("soak: warning from %s: %s\n",
            GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), e->message);
        g_error_free (e);
      }
      n_messages++;
      gst_message_unref (msg);
    }
    if (out % SAMPLE_EVERY == 0 || out == frames) {
      gdouble secs = (g_get_monotonic_time () - t0) / 1e6;
      gchar dev_text[64] = "";
      rss = rss_bytes ();
      if (sample_device) {
        GError *e = NULL;
        if (!gcv_device_memory (device_id, &dev_used, &dev_total, &e)) {
          g_printerr ("soak: device memory: %s\n", e->message);
          g_error_free (e);
          ok = FALSE;
        }
        g_snprintf (dev_text, sizeof dev_text, "  device %8.1f MiB",
            dev_used / 1048576.0);
      }
      /* the last sample, taken as the stream ends (appsrc and appsink
       * wind down), is shown but not judged */
      if (out == WARM_UP && out < frames) {
        rss_warm = rss;
        dev_warm = dev_used;
        t_warm = g_get_monotonic_time ();
      } else if (out > WARM_UP && out < frames) {
        rss_max = MAX (rss_max, rss);
        dev_max = MAX (dev_max, dev_used);
        n_judged++;
      }
      g_print ("soak: %6d frames  %7.1f s  %6.1f fps  RSS %8.1f MiB%s  (%d "
          "bus messages)\n", out, secs, out / secs, rss / 1048576.0,
          dev_text, n_messages);
      if (csv) {
        fprintf (csv, "%d,%.3f,%.2f,%" G_GSIZE_FORMAT ",%" G_GSIZE_FORMAT
            "\n", out, secs, out / secs, rss / 1024, dev_used / 1024);
        fflush (csv);
      }
    }
  }
  /* NULL first: a pusher blocked on a stalled pipeline is let go */
  g_object_get (conv, "active-algorithm", &active, NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  g_thread_join (thread);
  {
    GstMessage *msg;
    while ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
      GError *e = NULL;
      gst_message_parse_error (msg, &e, NULL);
      g_printerr ("soak: error from %s: %s\n",
          GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), e->message);
      g_error_free (e);
      gst_message_unref (msg);
      errors++;
      ok = FALSE;
    }
  }

  if (pusher.pushed != frames) {
    g_printerr ("soak: only %d of %d frames went in (%s)\n", pusher.pushed,
        frames, gst_flow_get_name (pusher.ret));
    ok = FALSE;
  }
  if (out != pusher.pushed) {
    g_printerr ("soak: %d frames in, %d out\n", pusher.pushed, out);
    ok = FALSE;
  }
  if (n_judged > 0) {
    gdouble growth = 100.0 * ((gdouble) rss_max - rss_warm) / rss_warm;
    gdouble per_s = (g_get_monotonic_time () - t_warm) / 1e6;
    g_print ("soak: RSS after warm-up %.1f MiB, largest later %.1f MiB: "
        "%+.2f%% (allowed %.2f%%) over %.0f s\n", rss_warm / 1048576.0,
        rss_max / 1048576.0, growth, max_growth, per_s);
    if (growth > max_growth)
      ok = FALSE;
    if (sample_device && dev_warm > 0) {
      growth = 100.0 * ((gdouble) dev_max - dev_warm) / dev_warm;
      g_print ("soak: device memory after warm-up %.1f MiB, largest later "
          "%.1f MiB (of %.0f): %+.2f%% (allowed %.2f%%)\n",
          dev_warm / 1048576.0, dev_max / 1048576.0, dev_total / 1048576.0,
          growth, max_growth);
      if (growth > max_growth)
        ok = FALSE;
    }
  }
  g_print ("soak: %s: %d frames in, %d out, %d errors, on %s\n",
      ok ? "PASS" : "FAIL", pusher.pushed, out, errors,
      active ? active : "?");

  if (csv)
    fclose (csv);
  for (guint i = 0; i < N_INPUTS; i++)
    gst_buffer_unref (pusher.inputs[i]);
  g_free (active);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (conv);
  gst_object_unref (pusher.src);
  gst_object_unref (pipeline);
  g_free (backend);
  g_free (filter);
  g_free (csv_path);
  return ok ? 0 : 1;
}
