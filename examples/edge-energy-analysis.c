/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The edge-energy analysis (edge-energy-analysis.h): per-frame edge
 * statistics of a video.
 *
 * For every frame one CSV line, frame,pts,energy,fraction:
 *   pts       presentation time in seconds (empty when the buffer has none)
 *   energy    mean over the frame of gx^2 + gy^2
 *   fraction  share of pixels where sqrt(gx^2 + gy^2) > threshold
 * with gx and gy the 3x3 Sobel derivatives (replicate border) of the grey
 * image in 0..1 units (v / 255): a full black-to-white step gives 4.
 *
 * Two ways to reduce the frames to these numbers (EdgeEnergyReduce):
 *
 *   statistics  (default) one gpuconvolve filter=sobel gives the gradient
 *         magnitude sqrt(gx^2 + gy^2) with statistics=true and
 *         statistics-threshold=T (docs/statistics.md): energy is
 *         sum-squares / count and fraction above / count, read from the
 *         statistics meta of each output buffer in a pad probe of a
 *         fakesink. The frames are never mapped: where the element runs on
 *         CUDA they stay in CUDA memory, and only the numbers (a few
 *         hundred bytes) cross PCIe. The output is GRAY8 with scale=1/255:
 *         the statistics are taken before rounding, in those v / 255 units,
 *         and a GRAY8 frame is the least the element can write (1 byte a
 *         pixel: a quarter of GRAY32F's, and NV12 out would copy the
 *         chroma too).
 *   host  the reference: a Sobel derivative in x (a custom 3x3 kernel) and
 *         one in y (filter=sobel-y) behind a tee, each giving GRAY32F into
 *         an appsink; both images are mapped and reduced here on one CPU
 *         thread.
 *
 * A file is read through uridecodebin, and the decoded video reaches the
 * element(s) by one of two paths, chosen by the caps of the decoded pad
 * (EdgeEnergyPath):
 *
 *   gpu   the decoder gives CUDA memory (nvcodec's nvh264dec and the other
 *         NVDEC decoders) and gpuconvolve takes it: the NV12 frames go
 *         straight in, and the luma plane is filtered on the GPU. Nothing
 *         is converted on the CPU.
 *   host  any other decoder (or backend cpu, or path host): videoconvert
 *         makes GRAY8 on the CPU, as for the test source (after
 *         cudadownload where the decoder gave CUDA memory all the same).
 *
 * To get CUDA memory from the start, the analysis answers the NVDEC
 * decoder's caps and context queries inside uridecodebin with what
 * gpuconvolve accepts (as playbin does for its sinks), and ranks NVDEC
 * decoders above the software ones. What ran goes to stderr:
 *   edge-energy: path: gpu (nvh264dec -> gpuconvolve, CUDA memory)
 *   edge-energy: path: host (videoconvert -> GRAY8)
 *   edge-energy: path: host (cudadownload -> videoconvert -> GRAY8)
 *   edge-energy: sobel: separable on cuda    (one line per element)
 *
 * The two paths see slightly different grey images. The gpu path filters
 * the luma plane as the stream codes it, v / 255 (limited range: black 16,
 * white 235). The host path filters videoconvert's GRAY8, which follows
 * the stream's colorimetry: for a BT.601 stream it is the same luma plane,
 * so the CSV agrees to float rounding; for a BT.709 stream (most HD video)
 * videoconvert recomputes grey from R'G'B' with other weights and
 * stretches it towards full range (black 0, white about 253), so the host
 * path's derivatives come out up to about 1.16 times larger (energy 1.2 to
 * 1.35 times; 1.23 to 1.26 on SMPTE colour bars at 1080p) and differ more
 * where the picture is coloured. Compare runs of one path only. The two
 * reductions agree to float rounding on either path.
 *
 * A file that does not preroll within 30 s (damaged, or no video) fails,
 * as does any pipeline error.
 */
#include "edge-energy-private.h"

#include <string.h>

/* seconds a file has to preroll in (see edge_energy_run) */
#define PREROLL_SECONDS 30
#define STATISTICS_META "GstGpuConvolveStatisticsMeta"
/* the statistics path's output: GRAY8 in whichever memory the input is */
#define STATISTICS_CAPS "video/x-raw(" CUDA_FEATURE "), format=GRAY8; " \
  "video/x-raw, format=GRAY8"

void
edge_energy_options_init (EdgeEnergyOptions * options)
{
  memset (options, 0, sizeof (*options));
  options->backend = "auto";
  options->threshold = EDGE_ENERGY_DEFAULT_THRESHOLD;
  options->frames = 60;
  options->width = 320;
  options->height = 240;
  options->pattern = "ball";
}

gboolean
edge_energy_parse_path (const gchar * text, EdgeEnergyPath * path)
{
  static const gchar *const names[] = { "auto", "gpu", "host" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_str_equal (text, names[i])) {
      *path = (EdgeEnergyPath) i;
      return TRUE;
    }
  return FALSE;
}

gboolean
edge_energy_parse_reduce (const gchar * text, EdgeEnergyReduce * reduce)
{
  if (g_str_equal (text, "statistics"))
    *reduce = EDGE_ENERGY_REDUCE_STATISTICS;
  else if (g_str_equal (text, "host"))
    *reduce = EDGE_ENERGY_REDUCE_HOST;
  else
    return FALSE;
  return TRUE;
}

gboolean
edge_energy_backend_valid (const gchar * text)
{
  return g_str_equal (text, "auto") || g_str_equal (text, "cuda")
      || g_str_equal (text, "cpu");
}

/* Whether any structure of `caps` has the CUDA memory feature. */
static gboolean
caps_have_cuda (const GstCaps * caps)
{
  for (guint i = 0; caps && i < gst_caps_get_size (caps); i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    if (f && !gst_caps_features_is_any (f)
        && gst_caps_features_contains (f, CUDA_FEATURE))
      return TRUE;
  }
  return FALSE;
}

/* Whether a pad template of `factory` in `direction` offers CUDA memory. */
static gboolean
factory_has_cuda (GstElementFactory * factory, GstPadDirection direction)
{
  const GList *l = gst_element_factory_get_static_pad_templates (factory);
  gboolean found = FALSE;

  for (; l && !found; l = l->next) {
    GstStaticPadTemplate *t = l->data;
    GstCaps *caps;
    if (t->direction != direction)
      continue;
    caps = gst_static_pad_template_get_caps (t);
    found = caps_have_cuda (caps);
    gst_caps_unref (caps);
  }
  return found;
}

/* Video decoders that give CUDA memory (nvcodec's NVDEC decoders) are
 * ranked above the others for this process, so that uridecodebin takes
 * nvh264dec rather than a software H.264 decoder of the same rank. Once a
 * process: a worker runs file after file. */
static void
prefer_cuda_decoders (void)
{
  static gsize done = 0;
  GList *list;

  if (!g_once_init_enter (&done))
    return;
  list = gst_element_factory_list_get_elements
      (GST_ELEMENT_FACTORY_TYPE_DECODER | GST_ELEMENT_FACTORY_TYPE_MEDIA_VIDEO,
      GST_RANK_MARGINAL);
  for (GList * l = list; l; l = l->next) {
    GstPluginFeature *f = l->data;
    if (factory_has_cuda (GST_ELEMENT_FACTORY (f), GST_PAD_SRC))
      gst_plugin_feature_set_rank (f, gst_plugin_feature_get_rank (f)
          + GST_RANK_PRIMARY);
  }
  gst_plugin_feature_list_free (list);
  g_once_init_leave (&done, 1);
}

/* uridecodebin asks the application the queries of its elements before it
 * exposes their pads (the signal "autoplug-query"). An NVDEC decoder decides
 * between CUDA and system memory by the caps downstream allows when it
 * first negotiates, which is before the pad is exposed: answer with what
 * gpuconvolve takes in CUDA memory, plus any system memory video (which the
 * host path converts), and let its context query find gpuconvolve's CUDA
 * context. Other elements get the default. */
static gboolean
on_autoplug_query (GstElement * bin, GstPad * pad, GstElement * element,
    GstQuery * query, App * app)
{
  GstElementFactory *factory = gst_element_get_factory (element);
  GstCaps *filter = NULL, *ours, *result;

  if (!app->gpu_possible || !factory
      || !factory_has_cuda (factory, GST_PAD_SRC))
    return FALSE;
  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:
      gst_query_parse_caps (query, &filter);
      ours = gst_pad_query_caps (app->entry, filter);
      result = gst_caps_new_empty ();
      for (guint i = 0; i < gst_caps_get_size (ours); i++) {
        GstCapsFeatures *f = gst_caps_get_features (ours, i);
        if (f && !gst_caps_features_is_any (f)
            && gst_caps_features_contains (f, CUDA_FEATURE))
          result = gst_caps_merge_structure_full (result,
              gst_structure_copy (gst_caps_get_structure (ours, i)),
              gst_caps_features_copy (f));
      }
      gst_caps_unref (ours);
      ours = gst_caps_new_empty_simple ("video/x-raw");
      if (filter) {
        GstCaps *tmp = gst_caps_intersect_full (filter, ours,
            GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref (ours);
        ours = tmp;
      }
      result = gst_caps_merge (result, ours);
      gst_query_set_caps_result (query, result);
      gst_caps_unref (result);
      return TRUE;
    case GST_QUERY_CONTEXT:
      return gst_pad_query (app->entry, query);
    default:
      return FALSE;
  }
}

/* Remembers the video decoder that uridecodebin plugs, for the report. */
static void
on_deep_element_added (GstBin * bin, GstBin * sub_bin, GstElement * element,
    App * app)
{
  GstElementFactory *factory = gst_element_get_factory (element);
  const gchar *klass;

  if (!factory)
    return;
  klass = gst_element_factory_get_metadata (factory,
      GST_ELEMENT_METADATA_KLASS);
  if (klass && strstr (klass, "Decoder") && strstr (klass, "Video")) {
    g_rec_mutex_lock (&app->lock);
    g_free (app->decoder);
    app->decoder = g_strdup (GST_OBJECT_NAME (factory));
    g_rec_mutex_unlock (&app->lock);
  }
}

/* Adds `factories` (NULL-terminated) between `pad` and the entry, or fails
 * with app->link_error. */
static gboolean
link_through (App * app, GstPad * pad, const gchar * const *factories)
{
  GstElement *first = NULL, *prev = NULL;
  GstPad *other;
  gboolean ok;

  for (; *factories; factories++) {
    GstElement *e = g_str_has_prefix (*factories, "video/") ?
        ee_make_caps_filter (*factories) : ee_make (*factories, NULL);
    if (!e) {
      app->link_error = g_strdup_printf ("element %s is missing", *factories);
      return FALSE;
    }
    gst_bin_add (GST_BIN (app->pipeline), e);
    gst_element_sync_state_with_parent (e);
    if (prev && !gst_element_link (prev, e)) {
      app->link_error = g_strdup_printf ("could not link %s",
          GST_OBJECT_NAME (e));
      return FALSE;
    }
    if (!first)
      first = e;
    prev = e;
  }
  other = gst_element_get_static_pad (prev, "src");
  ok = gst_pad_link (other, app->entry) == GST_PAD_LINK_OK;
  gst_object_unref (other);
  if (!ok) {
    app->link_error = g_strdup ("could not link the GRAY8 video to "
        "gpuconvolve");
    return FALSE;
  }
  other = gst_element_get_static_pad (first, "sink");
  ok = gst_pad_link (pad, other) == GST_PAD_LINK_OK;
  gst_object_unref (other);
  if (!ok)
    app->link_error = g_strdup_printf ("could not link the decoded video "
        "to %s", GST_OBJECT_NAME (first));
  return ok;
}

/* uridecodebin: link its first video pad, straight to gpuconvolve when it
 * gives CUDA memory gpuconvolve takes, else through videoconvert to GRAY8
 * (downloaded first when it is CUDA memory). */
static void
on_pad_added (GstElement * decodebin, GstPad * pad, App * app)
{
  GstCaps *caps = gst_pad_get_current_caps (pad);
  EdgeEnergyPath choice = app->options->path;
  gboolean cuda;
  const gchar *decoder;

  if (!caps)
    caps = gst_pad_query_caps (pad, NULL);
  g_rec_mutex_lock (&app->lock);
  if (app->linked || app->link_error || gst_caps_is_empty (caps)
      || !g_str_has_prefix (gst_structure_get_name (gst_caps_get_structure
              (caps, 0)), "video/x-raw"))
    goto done;
  cuda = caps_have_cuda (caps);
  decoder = app->decoder ? app->decoder : "decoder";
  if (cuda && app->gpu_possible && choice != EDGE_ENERGY_PATH_HOST
      && gst_pad_query_accept_caps (app->entry, caps)) {
    if (gst_pad_link (pad, app->entry) == GST_PAD_LINK_OK) {
      app->linked = TRUE;
      app->path = g_strdup_printf ("gpu (%s -> gpuconvolve, CUDA memory)",
          decoder);
    } else {
      app->link_error = g_strdup ("could not link the decoded CUDA memory "
          "to gpuconvolve");
    }
  } else if (choice == EDGE_ENERGY_PATH_GPU) {
    app->link_error = g_strdup_printf ("--path=gpu: %s", !cuda ?
        "the decoder gives no CUDA memory (no NVDEC decoder for this stream)"
        : "gpuconvolve does not take the decoder's CUDA memory format");
  } else if (cuda) {
    static const gchar *const chain[] = { "cudadownload", "videoconvert",
      "video/x-raw, format=GRAY8", NULL
    };
    app->linked = link_through (app, pad, chain);
    app->path = g_strdup ("host (cudadownload -> videoconvert -> GRAY8)");
  } else {
    static const gchar *const chain[] = { "videoconvert",
      "video/x-raw, format=GRAY8", NULL
    };
    app->linked = link_through (app, pad, chain);
    app->path = g_strdup ("host (videoconvert -> GRAY8)");
  }
  if (app->link_error)
    GST_ELEMENT_ERROR (app->pipeline, CORE, NEGOTIATION,
        ("%s", app->link_error), (NULL));
done:
  g_rec_mutex_unlock (&app->lock);
  gst_caps_unref (caps);
}

GstElement *
ee_make (const gchar * factory, const gchar * name)
{
  GstElement *e = gst_element_factory_make (factory, name);
  if (!e)
    g_printerr ("edge-energy: GStreamer element '%s' is missing%s\n", factory,
        g_str_equal (factory, "gpuconvolve") ?
        " (set GST_PLUGIN_PATH to the build's gst/ folder, or install it)" :
        "");
  return e;
}

GstElement *
ee_make_caps_filter (const gchar * caps_str)
{
  GstElement *f = gst_element_factory_make ("capsfilter", NULL);
  GstCaps *caps = gst_caps_from_string (caps_str);
  g_object_set (f, "caps", caps, NULL);
  gst_caps_unref (caps);
  return f;
}

/* The names of the elements inside `element` (a decodebin's demuxer and
 * decoders), comma-separated, or "none". */
static gchar *
bin_children (GstElement * element)
{
  GString *names = g_string_new (NULL);
  GValue item = G_VALUE_INIT;
  GstIterator *it;

  if (GST_IS_BIN (element)) {
    it = gst_bin_iterate_recurse (GST_BIN (element));
    while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
      g_string_append_printf (names, "%s%s", names->len ? ", " : "",
          GST_OBJECT_NAME (g_value_get_object (&item)));
      g_value_reset (&item);
    }
    g_value_unset (&item);
    gst_iterator_free (it);
  }
  return names->len ? g_string_free (names, FALSE) :
      (g_string_free (names, TRUE), g_strdup ("none"));
}

/* Prints warnings; returns FALSE (and prints it) for an error. */
static gboolean
handle_message (GstMessage * msg)
{
  GError *err = NULL;
  gchar *debug = NULL;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_ERROR:
      gst_message_parse_error (msg, &err, &debug);
      g_printerr ("edge-energy: error from %s: %s\n%s%s",
          GST_OBJECT_NAME (msg->src), err->message, debug ? debug : "",
          debug ? "\n" : "");
      g_clear_error (&err);
      g_free (debug);
      return FALSE;
    case GST_MESSAGE_WARNING:{
      /* the reason is the last line of the debug text */
      const gchar *reason = debug = NULL;
      gst_message_parse_warning (msg, &err, &debug);
      if (debug)
        reason = strrchr (debug, '\n') ? strrchr (debug, '\n') + 1 : debug;
      g_printerr ("edge-energy: warning from %s: %s%s%s%s\n",
          GST_OBJECT_NAME (msg->src), err->message, reason ? " (" : "",
          reason ? reason : "", reason ? ")" : "");
      g_clear_error (&err);
      g_free (debug);
      return TRUE;
    }
    default:
      return TRUE;
  }
}

gboolean
ee_past (gint64 deadline)
{
  return deadline && g_get_monotonic_time () >= deadline;
}

/* How long a bus may be waited on: until `deadline` (0: none), at most
 * `cap` (GST_CLOCK_TIME_NONE: no cap). */
static GstClockTime
bus_wait (gint64 deadline, GstClockTime cap)
{
  GstClockTime left;

  if (!deadline)
    return cap;
  left = (GstClockTime) MAX (deadline - g_get_monotonic_time (), 0)
      * GST_USECOND;
  return MIN (left, cap);
}

/* Waits for the end of the stream (or an error, or the deadline) on the
 * bus; FALSE when it did not end well. */
static gboolean
wait_for_eos (GstBus * bus, gint64 deadline, gboolean * timed_out)
{
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus,
        bus_wait (deadline, GST_CLOCK_TIME_NONE),
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING);
    gboolean ok;
    GstMessageType type;

    if (!msg) {
      if (ee_past (deadline)) {
        *timed_out = TRUE;
        return FALSE;
      }
      continue;
    }
    type = GST_MESSAGE_TYPE (msg);
    ok = handle_message (msg);
    gst_message_unref (msg);
    if (!ok)
      return FALSE;
    if (type == GST_MESSAGE_EOS)
      return TRUE;
  }
}

/* Handles what is on the bus now; FALSE after an error. */
gboolean
ee_poll_bus (GstBus * bus)
{
  GstMessage *msg;
  gboolean ok = TRUE;

  while (ok && (msg = gst_bus_pop_filtered (bus,
              GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))) {
    ok = handle_message (msg);
    gst_message_unref (msg);
  }
  return ok;
}

/* One CSV line: the same text whichever reduction made the numbers. */
void
ee_print_row (FILE * out, guint n, GstClockTime pts, gdouble energy,
    gdouble fraction)
{
  if (GST_CLOCK_TIME_IS_VALID (pts))
    fprintf (out, "%u,%.6f,%.9g,%.9g\n", n, (gdouble) pts / GST_SECOND,
        energy, fraction);
  else
    fprintf (out, "%u,,%.9g,%.9g\n", n, energy, fraction);
}

/* ---- the statistics reduction ---------------------------------------- */

/* Channel 0 (gray, or the Y plane) of a per-channel field of the meta. */
static gboolean
meta_field (const GstStructure * s, const gchar * name, GType type,
    GValue * value)
{
  const GValue *array = gst_structure_get_value (s, name);
  const GValue *first;

  if (!array || !GST_VALUE_HOLDS_ARRAY (array)
      || gst_value_array_get_size (array) < 1)
    return FALSE;
  first = gst_value_array_get_value (array, 0);
  if (!G_VALUE_HOLDS (first, type))
    return FALSE;
  g_value_init (value, type);
  g_value_copy (first, value);
  return TRUE;
}

/* On the fakesink's sink pad: each frame's numbers from its statistics
 * meta; the frame itself is never mapped. */
static GstPadProbeReturn
on_statistics_buffer (GstPad * pad, GstPadProbeInfo * info, App * app)
{
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER (info);
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buffer, STATISTICS_META);
  GValue count = G_VALUE_INIT, squares = G_VALUE_INIT, above = G_VALUE_INIT;
  GstStructure *s;
  guint64 n;

  if (app->meta_missing)
    return GST_PAD_PROBE_DROP;
  s = meta ? gst_custom_meta_get_structure (meta) : NULL;
  if (!s || !meta_field (s, "count", G_TYPE_UINT64, &count)
      || !meta_field (s, "sum-squares", G_TYPE_DOUBLE, &squares)
      || !meta_field (s, "above", G_TYPE_UINT64, &above)
      || (n = g_value_get_uint64 (&count)) == 0) {
    app->meta_missing = TRUE;
    GST_ELEMENT_ERROR (app->pipeline, STREAM, FAILED,
        ("frame %u has no usable " STATISTICS_META, app->frames),
        ("meta %s", s ? "without count, sum-squares or above" : "missing"));
    return GST_PAD_PROBE_DROP;
  }
  ee_print_row (app->out, app->frames, GST_BUFFER_PTS (buffer),
      g_value_get_double (&squares) / n,
      (gdouble) g_value_get_uint64 (&above) / n);
  app->frames++;
  if (app->options->on_frame)
    app->options->on_frame (app->frames, app->options->data);
  return GST_PAD_PROBE_OK;
}

/* Whether this gpuconvolve has what the statistics reduction needs. */
static gboolean
has_statistics (GstElement * element)
{
  GObjectClass *klass = G_OBJECT_GET_CLASS (element);
  GParamSpec *filter = g_object_class_find_property (klass, "filter");
  gboolean sobel = FALSE;

  if (filter && G_IS_PARAM_SPEC_ENUM (filter)) {
    GEnumClass *e = G_PARAM_SPEC_ENUM (filter)->enum_class;
    sobel = g_enum_get_value_by_nick (e, "sobel") != NULL;
  }
  return sobel && g_object_class_find_property (klass, "statistics")
      && g_object_class_find_property (klass, "statistics-threshold");
}

gboolean
ee_add_all (App * app, GstElement ** elements, guint n)
{
  gboolean all = TRUE;

  for (guint i = 0; i < n; i++) {
    if (elements[i])
      gst_bin_add (GST_BIN (app->pipeline), elements[i]);
    else
      all = FALSE;
  }
  return all;
}

/* gpuconvolve filter=sobel ! GRAY8 ! fakesink, the numbers read in a probe. */
static GstElement *
build_statistics (App * app, GPtrArray * elements)
{
  const EdgeEnergyOptions *o = app->options;
  GstElement *sobel = ee_make ("gpuconvolve", "sobel");
  GstElement *caps = ee_make_caps_filter (STATISTICS_CAPS);
  GstElement *sink = ee_make ("fakesink", NULL);
  GstElement *all[] = { sobel, caps, sink };
  GstPad *pad;

  if (!ee_add_all (app, all, G_N_ELEMENTS (all)))
    return NULL;
  if (!has_statistics (sobel)) {
    g_printerr ("edge-energy: this gpuconvolve has no per-frame statistics "
        "or no filter=sobel (an older plugin); use --reduce=host\n");
    return NULL;
  }
  /* filter before size, size before the rest (properties.md) */
  gst_util_set_object_arg (G_OBJECT (sobel), "filter", "sobel");
  g_object_set (sobel, "size", 3, "scale", 1.0 / 255.0,
      "statistics", TRUE, "statistics-threshold", o->threshold, NULL);
  gst_util_set_object_arg (G_OBJECT (sobel), "border", "replicate");
  gst_util_set_object_arg (G_OBJECT (sobel), "backend", o->backend);
  /* the last sample would hold a frame of the element's pool */
  g_object_set (sink, "sync", FALSE, "enable-last-sample", FALSE, NULL);
  if (!gst_element_link_many (sobel, caps, sink, NULL))
    return NULL;
  pad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      (GstPadProbeCallback) on_statistics_buffer, app, NULL);
  gst_object_unref (pad);
  g_ptr_array_add (elements, sobel);
  return sobel;
}

/* ---- the run ----------------------------------------------------------- */

/* The source: uridecodebin for a file (linked when it exposes its video),
 * else videotestsrc linked to the entry through videoconvert. */
static GstElement *
build_source (App * app)
{
  const EdgeEnergyOptions *o = app->options;
  GstElement *src;

  if (o->input) {
    GError *error = NULL;
    gchar *uri = !o->input_is_path && gst_uri_is_valid (o->input) ?
        g_strdup (o->input) : gst_filename_to_uri (o->input, &error);

    if (!uri) {
      g_printerr ("edge-energy: %s\n", error->message);
      g_clear_error (&error);
      return NULL;
    }
    src = ee_make ("uridecodebin", NULL);
    if (src) {
      g_object_set (src, "uri", uri, NULL);
      g_signal_connect (src, "pad-added", G_CALLBACK (on_pad_added), app);
      if (app->gpu_possible) {
        prefer_cuda_decoders ();
        g_signal_connect (src, "autoplug-query",
            G_CALLBACK (on_autoplug_query), app);
      }
      /* the decoded video is linked when uridecodebin exposes it */
      gst_bin_add (GST_BIN (app->pipeline), src);
    }
    g_free (uri);
  } else {
    gchar *caps = g_strdup_printf ("video/x-raw, width=%d, height=%d, "
        "framerate=30/1", o->width, o->height);
    GstElement *size = ee_make_caps_filter (caps);
    GstElement *convert = ee_make ("videoconvert", NULL);
    GstElement *gray = ee_make_caps_filter ("video/x-raw, format=GRAY8");
    GstPad *pad;
    gboolean ok;

    g_free (caps);
    src = ee_make ("videotestsrc", NULL);
    if (!src || !convert)
      return NULL;
    g_object_set (src, "num-buffers", o->frames, NULL);
    gst_util_set_object_arg (G_OBJECT (src), "pattern", o->pattern);
    gst_bin_add_many (GST_BIN (app->pipeline), src, size, convert, gray, NULL);
    pad = gst_element_get_static_pad (gray, "src");
    ok = gst_element_link_many (src, size, convert, gray, NULL)
        && gst_pad_link (pad, app->entry) == GST_PAD_LINK_OK;
    gst_object_unref (pad);
    if (!ok) {
      g_printerr ("edge-energy: bad test source size\n");
      return NULL;
    }
    app->linked = TRUE;
    app->path = g_strdup ("host (videoconvert -> GRAY8)");
  }
  return src;
}

/* Preroll, then say what runs. A damaged file can leave the demuxer
 * waiting with no error posted (about one run in 150 on a WebM header
 * followed by garbage): a file that has not prerolled within
 * PREROLL_SECONDS fails, rather than hanging. *eos: the stream ended
 * already. */
static gboolean
preroll (App * app, GstBus * bus, GstElement * src, GPtrArray * elements,
    gboolean * eos, EdgeEnergyResult * result)
{
  gint64 deadline = app->options->deadline;

  gst_element_set_state (app->pipeline, GST_STATE_PAUSED);
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, bus_wait (deadline,
            PREROLL_SECONDS * GST_SECOND), GST_MESSAGE_ASYNC_DONE
        | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_EOS);
    GstMessageType type;
    gboolean ok;

    if (!msg && ee_past (deadline)) {
      result->timed_out = TRUE;
      return FALSE;
    }
    if (!msg) {
      gchar *plugged = bin_children (src);
      g_printerr ("edge-energy: no video frame within %d s (plugged: %s): "
          "the file may be damaged or hold no decodable video\n",
          PREROLL_SECONDS, plugged);
      g_free (plugged);
      return FALSE;
    }
    type = GST_MESSAGE_TYPE (msg);
    ok = handle_message (msg);
    gst_message_unref (msg);
    if (!ok)
      return FALSE;
    *eos = type == GST_MESSAGE_EOS;
    if (type == GST_MESSAGE_ASYNC_DONE || type == GST_MESSAGE_EOS)
      break;
  }
  g_rec_mutex_lock (&app->lock);
  if (app->decoder)
    g_printerr ("edge-energy: decoder: %s\n", app->decoder);
  g_printerr ("edge-energy: path: %s\n",
      app->path ? app->path : "(no video linked)");
  g_rec_mutex_unlock (&app->lock);
  for (guint i = 0; i < elements->len; i++) {
    GstElement *e = g_ptr_array_index (elements, i);
    gchar *algo = NULL;

    g_object_get (e, "active-algorithm", &algo, NULL);
    g_printerr ("edge-energy: %s: %s\n", GST_OBJECT_NAME (e),
        algo ? algo : "(not running)");
    g_ptr_array_add (result->algorithms, g_strdup (GST_OBJECT_NAME (e)));
    g_ptr_array_add (result->algorithms, algo ? algo :
        g_strdup ("(not running)"));
  }
  return TRUE;
}

/* What the options ask that cannot be done, or NULL. */
static const gchar *
refusal (const EdgeEnergyOptions * o)
{
  if (!edge_energy_backend_valid (o->backend))
    return "--backend must be auto, cuda or cpu";
  if (o->path == EDGE_ENERGY_PATH_GPU && !o->input)
    return "--path=gpu needs a file: the test source gives system memory";
  if (!o->input && (o->frames < 1 || o->width < 1 || o->height < 1))
    return "the test source needs at least one frame of at least 1x1";
  if (!(o->threshold >= 0))
    return "--threshold must be 0 or more";
  return NULL;
}

EdgeEnergyStatus
edge_energy_run (const EdgeEnergyOptions * o, FILE * out,
    EdgeEnergyResult * result)
{
  App app = { 0 };
  GPtrArray *elements = g_ptr_array_new ();     /* the gpuconvolve elements */
  GstElement *sinks[2] = { NULL, NULL }, *entry, *src = NULL;
  GstBus *bus = NULL;
  EdgeEnergyStatus status = EDGE_ENERGY_FAILED;
  gboolean eos = FALSE;
  const gchar *refused = refusal (o);

  memset (result, 0, sizeof (*result));
  result->algorithms = g_ptr_array_new_with_free_func (g_free);
  if (refused) {
    g_printerr ("edge-energy: %s\n", refused);
    g_ptr_array_unref (elements);
    return EDGE_ENERGY_USAGE;
  }
  app.options = o;
  app.out = out;
  g_rec_mutex_init (&app.lock);
  app.pipeline = gst_object_ref_sink (gst_pipeline_new ("edge-energy"));
  g_signal_connect (app.pipeline, "deep-element-added",
      G_CALLBACK (on_deep_element_added), &app);
  if (o->on_pipeline)
    o->on_pipeline (app.pipeline, FALSE, o->data);

  entry = o->reduce == EDGE_ENERGY_REDUCE_STATISTICS ?
      build_statistics (&app, elements) : ee_build_host (&app, elements, sinks);
  if (!entry)
    goto out;
  app.entry = gst_element_get_static_pad (entry, "sink");
  /* CUDA memory straight into gpuconvolve: where this gpuconvolve takes it
   * (a build with GStreamer's CUDA library) and may filter on CUDA */
  app.gpu_possible = o->path != EDGE_ENERGY_PATH_HOST
      && !g_str_equal (o->backend, "cpu")
      && factory_has_cuda (gst_element_get_factory
      (g_ptr_array_index (elements, 0)), GST_PAD_SINK);
  if (o->path == EDGE_ENERGY_PATH_GPU && !app.gpu_possible) {
    g_printerr ("edge-energy: --path=gpu: %s\n", g_str_equal (o->backend,
            "cpu") ? "--backend=cpu filters on the CPU" : "this gpuconvolve "
        "takes no CUDA memory (built without GStreamer's CUDA library)");
    status = EDGE_ENERGY_USAGE;
    goto out;
  }
  src = build_source (&app);
  if (!src)
    goto out;

  fprintf (out, "frame,pts,energy,fraction\n");
  bus = gst_element_get_bus (app.pipeline);
  if (!preroll (&app, bus, src, elements, &eos, result))
    goto out;
  gst_element_set_state (app.pipeline, GST_STATE_PLAYING);
  if (o->reduce == EDGE_ENERGY_REDUCE_HOST) {
    if (ee_reduce_on_host (&app, bus, sinks, result) && ee_poll_bus (bus))
      status = EDGE_ENERGY_OK;
  } else if (eos || wait_for_eos (bus, o->deadline, &result->timed_out)) {
    status = EDGE_ENERGY_OK;
  }
  if (status == EDGE_ENERGY_OK && app.frames == 0)
    g_printerr ("edge-energy: no frames\n");

out:
  if (result->timed_out)
    g_printerr ("edge-energy: stopped at the time limit after %u frame(s)\n",
        app.frames);
  fflush (out);
  gst_element_set_state (app.pipeline, GST_STATE_NULL);
  if (o->on_pipeline)
    o->on_pipeline (app.pipeline, TRUE, o->data);
  result->frames = app.frames;
  if (bus)
    gst_object_unref (bus);
  if (app.entry)
    gst_object_unref (app.entry);
  gst_object_unref (app.pipeline);
  g_rec_mutex_clear (&app.lock);
  g_free (app.decoder);
  g_free (app.path);
  g_free (app.link_error);
  g_ptr_array_unref (elements);
  return status;
}

void
edge_energy_result_clear (EdgeEnergyResult * result)
{
  g_clear_pointer (&result->algorithms, g_ptr_array_unref);
  memset (result, 0, sizeof (*result));
}
