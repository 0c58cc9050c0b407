/* edge-energy: per-frame edge statistics of a video, for archive analysis.
 *
 *   edge-energy [--backend=auto|cuda|cpu] [--path=auto|gpu|host]
 *               [--threshold=T] FILE-OR-URI
 *   edge-energy [--frames=N] [--width=W] [--height=H] [--pattern=NAME]
 *
 * Without a file it reads N frames of videotestsrc. The video goes through
 * two gpuconvolve elements in one pipeline: a Sobel derivative in x, set as a
 * custom 3x3 kernel, and one in y, set with filter=sobel-y. Each gives
 * GRAY32F (because its output caps ask for GRAY32F), so the derivatives come
 * out as floats of intensity in 0..1 units (a full black-to-white step gives
 * 4). Two appsinks receive them.
 *
 * A file is read through uridecodebin, and the decoded video reaches the two
 * elements by one of two paths, chosen by the caps of the decoded pad:
 *
 *   gpu   the decoder gives CUDA memory (nvcodec's nvh264dec and the other
 *         NVDEC decoders) and gpuconvolve takes it: the NV12 frames go
 *         straight into both elements, which filter the luma plane on the
 *         GPU and give it as GRAY32F. Nothing is converted on the CPU, and
 *         only the two float images cross PCIe.
 *   host  any other decoder (or --backend=cpu, or --path=host): videoconvert
 *         makes GRAY8 on the CPU, as for the test source (after
 *         cudadownload where the decoder gave CUDA memory all the same).
 *
 * To get CUDA memory from the start, the program answers the NVDEC decoder's
 * caps and context queries inside uridecodebin with what the two gpuconvolve
 * elements accept (as playbin does for its sinks), and ranks NVDEC decoders
 * above the software ones. The path that ran goes to stderr:
 *   edge-energy: path: gpu (nvh264dec -> gpuconvolve, CUDA memory)
 *   edge-energy: path: host (videoconvert -> GRAY8)
 *   edge-energy: path: host (cudadownload -> videoconvert -> GRAY8)
 *
 * The two paths see slightly different grey images. The gpu path filters
 * the luma plane as the stream codes it, v / 255 (limited range: black 16,
 * white 235). The host path filters videoconvert's GRAY8, which follows the
 * stream's colorimetry: for a BT.601 stream it is the same luma plane, so the
 * CSV agrees to float rounding; for a BT.709 stream (most HD video)
 * videoconvert recomputes grey from R'G'B' with other weights and stretches
 * it towards full range (black 0, white about 253), so the host path's
 * derivatives come out up to about 1.16 times larger (energy 1.2 to 1.35
 * times; 1.23 to 1.26 on SMPTE colour bars at 1080p) and differ more where
 * the picture is coloured. Compare runs of one path only.
 *
 * For every frame it prints one CSV line, frame,pts,energy,fraction:
 *   pts       presentation time in seconds (empty when the buffer has none)
 *   energy    mean over the frame of gx^2 + gy^2
 *   fraction  share of pixels where sqrt(gx^2 + gy^2) > threshold
 * The path, the backend and the algorithm that ran go to stderr. A file
 * that does not preroll within 30 s (damaged, or no video) fails with exit
 * status 1, as does any pipeline error.
 */
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_THRESHOLD 0.5
/* seconds a file has to preroll in (see main) */
#define PREROLL_SECONDS 30

#define CUDA_FEATURE "memory:CUDAMemory"

typedef enum
{
  PATH_AUTO,
  PATH_GPU,
  PATH_HOST,
} PathChoice;

typedef struct
{
  GstElement *pipeline;
  GstPad *tee_sink;             /* where the video goes in: the tee before the
                                 * two gpuconvolve elements */
  PathChoice choice;
  gboolean gpu_possible;        /* gpuconvolve may take CUDA memory */
  GRecMutex lock;               /* guards what follows */
  gboolean linked;
  gchar *decoder;               /* factory of the video decoder, or NULL */
  gchar *path;                  /* the path linked, for stderr */
  gchar *link_error;            /* why the decoded video was not linked */
} App;

static GstElement *make (const gchar * factory, const gchar * name);
static GstElement *make_caps_filter (const gchar * caps_str);

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
 * nvh264dec rather than a software H.264 decoder of the same rank. */
static void
prefer_cuda_decoders (void)
{
  GList *list = gst_element_factory_list_get_elements
      (GST_ELEMENT_FACTORY_TYPE_DECODER | GST_ELEMENT_FACTORY_TYPE_MEDIA_VIDEO,
      GST_RANK_MARGINAL);

  for (GList * l = list; l; l = l->next) {
    GstPluginFeature *f = l->data;
    if (factory_has_cuda (GST_ELEMENT_FACTORY (f), GST_PAD_SRC))
      gst_plugin_feature_set_rank (f, gst_plugin_feature_get_rank (f)
          + GST_RANK_PRIMARY);
  }
  gst_plugin_feature_list_free (list);
}

/* uridecodebin asks the application the queries of its elements before it
 * exposes their pads (the signal "autoplug-query"). An NVDEC decoder decides
 * between CUDA and system memory by the caps downstream allows when it
 * first negotiates, which is before the pad is exposed: answer with what the
 * two gpuconvolve elements take in CUDA memory, plus any system memory video
 * (which the host path converts), and let its context query find the CUDA
 * context of the gpuconvolve elements. Other elements get the default. */
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
      ours = gst_pad_query_caps (app->tee_sink, filter);
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
      return gst_pad_query (app->tee_sink, query);
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

/* Adds `factories` (NULL-terminated) between `pad` and the tee, or fails
 * with app->link_error. */
static gboolean
link_through (App * app, GstPad * pad, const gchar * const *factories)
{
  GstElement *first = NULL, *prev = NULL;
  GstPad *other;
  gboolean ok;

  for (; *factories; factories++) {
    GstElement *e = g_str_has_prefix (*factories, "video/") ?
        make_caps_filter (*factories) : make (*factories, NULL);
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
  ok = gst_pad_link (other, app->tee_sink) == GST_PAD_LINK_OK;
  gst_object_unref (other);
  if (!ok) {
    app->link_error = g_strdup ("could not link the GRAY8 video to the tee");
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

/* uridecodebin: link its first video pad, straight to the two gpuconvolve
 * elements when it gives CUDA memory they take, else through videoconvert
 * to GRAY8 (downloaded first when it is CUDA memory). */
static void
on_pad_added (GstElement * decodebin, GstPad * pad, App * app)
{
  GstCaps *caps = gst_pad_get_current_caps (pad);
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
  if (cuda && app->gpu_possible && app->choice != PATH_HOST
      && gst_pad_query_accept_caps (app->tee_sink, caps)) {
    if (gst_pad_link (pad, app->tee_sink) == GST_PAD_LINK_OK) {
      app->linked = TRUE;
      app->path = g_strdup_printf ("gpu (%s -> gpuconvolve, CUDA memory)",
          decoder);
    } else {
      app->link_error = g_strdup ("could not link the decoded CUDA memory "
          "to gpuconvolve");
    }
  } else if (app->choice == PATH_GPU) {
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

static GstElement *
make (const gchar * factory, const gchar * name)
{
  GstElement *e = gst_element_factory_make (factory, name);
  if (!e)
    g_printerr ("edge-energy: GStreamer element '%s' is missing%s\n", factory,
        g_str_equal (factory, "gpuconvolve") ?
        " (set GST_PLUGIN_PATH to the build's gst/ folder, or install it)" :
        "");
  return e;
}

static GstElement *
make_caps_filter (const gchar * caps_str)
{
  GstElement *f = gst_element_factory_make ("capsfilter", NULL);
  GstCaps *caps = gst_caps_from_string (caps_str);
  g_object_set (f, "caps", caps, NULL);
  gst_caps_unref (caps);
  return f;
}

/* A GValue array of floats, the type of gpuconvolve's kernel properties. */
static void
set_kernel (GstElement * element, const gchar * property, const gfloat * k,
    guint n)
{
  GValue array = G_VALUE_INIT;

  g_value_init (&array, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_FLOAT);
    g_value_set_float (&v, k[i]);
    gst_value_array_append_and_take_value (&array, &v);
  }
  g_object_set_property (G_OBJECT (element), property, &array);
  g_value_unset (&array);
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

/* Handles what is on the bus now; FALSE after an error. */
static gboolean
poll_bus (GstBus * bus)
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

/* The next sample of `sink`, NULL at the end of the stream or after an
 * error (then *failed is set). */
static GstSample *
pull (GstAppSink * sink, GstBus * bus, gboolean * failed)
{
  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (sink, GST_SECOND / 10);
    if (sample)
      return sample;
    if (!poll_bus (bus)) {
      *failed = TRUE;
      return NULL;
    }
    if (gst_app_sink_is_eos (sink))
      return NULL;
  }
}

/* A GRAY32F frame: rows are width*4 bytes apart unless a GstVideoMeta says
 * otherwise. */
typedef struct
{
  GstBuffer *buffer;
  GstMapInfo map;
  const guint8 *data;
  gint width, height;
  gsize stride;
} FloatFrame;

static gboolean
float_frame_map (FloatFrame * f, GstSample * sample)
{
  const GstStructure *s = gst_caps_get_structure (gst_sample_get_caps (sample),
      0);
  GstVideoMeta *meta;
  gsize offset = 0;

  memset (f, 0, sizeof (*f));
  if (!gst_structure_get_int (s, "width", &f->width)
      || !gst_structure_get_int (s, "height", &f->height)
      || g_strcmp0 (gst_structure_get_string (s, "format"), "GRAY32F") != 0) {
    g_printerr ("edge-energy: expected GRAY32F, got %" GST_PTR_FORMAT "\n", s);
    return FALSE;
  }
  f->buffer = gst_sample_get_buffer (sample);
  f->stride = (gsize) f->width * 4;
  meta = gst_buffer_get_video_meta (f->buffer);
  if (meta) {
    f->stride = meta->stride[0];
    offset = meta->offset[0];
  }
  if (!gst_buffer_map (f->buffer, &f->map, GST_MAP_READ))
    return FALSE;
  if (f->stride < (gsize) f->width * 4 || f->map.size < offset
      + f->stride * (f->height - 1) + (gsize) f->width * 4) {
    g_printerr ("edge-energy: a GRAY32F buffer is too small\n");
    gst_buffer_unmap (f->buffer, &f->map);
    return FALSE;
  }
  f->data = f->map.data + offset;
  return TRUE;
}

static inline gfloat
float_frame_get (const FloatFrame * f, gint x, gint y)
{
  gfloat v;
  memcpy (&v, f->data + y * f->stride + (gsize) x * 4, sizeof (v));
  return v;
}

int
main (int argc, char **argv)
{
  gchar *backend = NULL, *pattern = NULL, *path = NULL;
  gdouble threshold = DEFAULT_THRESHOLD;
  gint frames = 60, width = 320, height = 240;
  GOptionEntry entries[] = {
    {"backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
        "Where gpuconvolve filters: auto (default), cuda or cpu", "NAME"},
    {"path", 'p', 0, G_OPTION_ARG_STRING, &path,
          "How decoded video reaches gpuconvolve: auto (default: CUDA memory "
          "straight from an NVDEC decoder where there is one), gpu (that or "
          "an error) or host (videoconvert to GRAY8)", "NAME"},
    {"threshold", 't', 0, G_OPTION_ARG_DOUBLE, &threshold,
          "Gradient magnitude above which an edge is strong (intensity "
          "0..1 units; default 0.5)", "T"},
    {"frames", 'n', 0, G_OPTION_ARG_INT, &frames,
        "Test source: number of frames (default 60)", "N"},
    {"width", 0, 0, G_OPTION_ARG_INT, &width,
        "Test source: width (default 320)", "W"},
    {"height", 0, 0, G_OPTION_ARG_INT, &height,
        "Test source: height (default 240)", "H"},
    {"pattern", 0, 0, G_OPTION_ARG_STRING, &pattern,
        "Test source: videotestsrc pattern (default ball)", "NAME"},
    {NULL}
  };
  static const gfloat sobel_x[9] = {
    -1, 0, 1,
    -2, 0, 2,
    -1, 0, 1,
  };
  GOptionContext *ctx;
  GError *error = NULL;
  App app = { 0 };
  GstElement *src, *tee, *qx, *qy, *gx, *gy, *fx, *fy, *sx, *sy;
  GstBus *bus;
  GstMessage *msg;
  gchar *algo_x = NULL, *algo_y = NULL;
  gboolean failed = FALSE;
  guint n = 0;
  int status = 0;

  ctx = g_option_context_new ("[FILE-OR-URI] - edge energy of each frame, "
      "as CSV");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("edge-energy: %s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (!backend)
    backend = g_strdup ("auto");
  if (!g_str_equal (backend, "auto") && !g_str_equal (backend, "cuda")
      && !g_str_equal (backend, "cpu")) {
    g_printerr ("edge-energy: --backend must be auto, cuda or cpu\n");
    return 2;
  }
  if (!path)
    path = g_strdup ("auto");
  if (g_str_equal (path, "auto"))
    app.choice = PATH_AUTO;
  else if (g_str_equal (path, "gpu"))
    app.choice = PATH_GPU;
  else if (g_str_equal (path, "host"))
    app.choice = PATH_HOST;
  else {
    g_printerr ("edge-energy: --path must be auto, gpu or host\n");
    return 2;
  }
  if (argc > 2 || frames < 1 || width < 1 || height < 1 || !(threshold >= 0)) {
    g_printerr ("edge-energy: bad arguments; see --help\n");
    return 2;
  }
  if (app.choice == PATH_GPU && argc != 2) {
    g_printerr ("edge-energy: --path=gpu needs a file: the test source gives "
        "system memory\n");
    return 2;
  }

  g_rec_mutex_init (&app.lock);
  app.pipeline = gst_pipeline_new ("edge-energy");
  g_signal_connect (app.pipeline, "deep-element-added",
      G_CALLBACK (on_deep_element_added), &app);
  tee = make ("tee", NULL);
  qx = make ("queue", NULL);
  qy = make ("queue", NULL);
  gx = make ("gpuconvolve", "sobel-x");
  gy = make ("gpuconvolve", "sobel-y");
  /* GRAY32F out: each gpuconvolve converts GRAY8, or the luma plane of
   * NV12 or I420, to float (v / 255). */
  fx = make_caps_filter ("video/x-raw, format=GRAY32F");
  fy = make_caps_filter ("video/x-raw, format=GRAY32F");
  sx = make ("appsink", "gx");
  sy = make ("appsink", "gy");
  if (!tee || !qx || !qy || !gx || !gy || !fx || !fy || !sx || !sy)
    return 1;
  app.tee_sink = gst_element_get_static_pad (tee, "sink");
  /* CUDA memory straight into gpuconvolve: where this gpuconvolve takes it
   * (a build with GStreamer's CUDA library) and may filter on CUDA */
  {
    GstElementFactory *f = gst_element_get_factory (gx);
    app.gpu_possible = app.choice != PATH_HOST
        && !g_str_equal (backend, "cpu") && factory_has_cuda (f, GST_PAD_SINK);
  }
  if (app.choice == PATH_GPU && !app.gpu_possible) {
    g_printerr ("edge-energy: --path=gpu: %s\n", g_str_equal (backend, "cpu")
        ? "--backend=cpu filters on the CPU" : "this gpuconvolve takes no "
        "CUDA memory (built without GStreamer's CUDA library)");
    return 2;
  }
  if (argc == 2) {
    gchar *uri = gst_uri_is_valid (argv[1]) ? g_strdup (argv[1])
        : gst_filename_to_uri (argv[1], &error);
    if (!uri) {
      g_printerr ("edge-energy: %s\n", error->message);
      return 2;
    }
    src = make ("uridecodebin", NULL);
    if (src) {
      g_object_set (src, "uri", uri, NULL);
      g_signal_connect (src, "pad-added", G_CALLBACK (on_pad_added), &app);
      if (app.gpu_possible) {
        prefer_cuda_decoders ();
        g_signal_connect (src, "autoplug-query",
            G_CALLBACK (on_autoplug_query), &app);
      }
    }
    g_free (uri);
  } else {
    src = make ("videotestsrc", NULL);
    if (src) {
      gchar *caps = g_strdup_printf ("video/x-raw, width=%d, height=%d, "
          "framerate=30/1", width, height);
      GstElement *size = make_caps_filter (caps);
      g_free (caps);
      g_object_set (src, "num-buffers", frames, NULL);
      gst_util_set_object_arg (G_OBJECT (src), "pattern",
          pattern ? pattern : "ball");
      gst_bin_add_many (GST_BIN (app.pipeline), src, size, NULL);
      if (!gst_element_link (src, size)) {
        g_printerr ("edge-energy: bad test source size\n");
        return 2;
      }
      src = size;               /* what feeds videoconvert */
    }
  }
  if (!src)
    return 1;

  /* d/dx as a custom kernel: sizes first, then the coefficients. */
  g_object_set (gx, "kernel-width", 3, "kernel-height", 3, NULL);
  set_kernel (gx, "kernel", sobel_x, G_N_ELEMENTS (sobel_x));
  /* d/dy from the built-in filter of the same size */
  gst_util_set_object_arg (G_OBJECT (gy), "filter", "sobel-y");
  g_object_set (gy, "size", 3, NULL);
  for (GstElement ** e = (GstElement *[]) { gx, gy, NULL }; *e; e++) {
    gst_util_set_object_arg (G_OBJECT (*e), "border", "replicate");
    gst_util_set_object_arg (G_OBJECT (*e), "backend", backend);
  }
  /* the main thread pulls x and y in turn, so keep the queues short */
  g_object_set (sx, "sync", FALSE, "max-buffers", 4, NULL);
  g_object_set (sy, "sync", FALSE, "max-buffers", 4, NULL);

  gst_bin_add_many (GST_BIN (app.pipeline), tee, qx, gx, fx, sx, qy, gy, fy,
      sy, NULL);
  if (!gst_element_link_many (tee, qx, gx, fx, sx, NULL)
      || !gst_element_link_many (tee, qy, gy, fy, sy, NULL)) {
    g_printerr ("edge-energy: could not link the pipeline\n");
    return 1;
  }
  if (argc == 2) {
    /* the decoded video is linked when uridecodebin exposes it */
    gst_bin_add (GST_BIN (app.pipeline), src);
  } else {
    GstElement *convert = make ("videoconvert", NULL);
    GstElement *gray = make_caps_filter ("video/x-raw, format=GRAY8");
    if (!convert)
      return 1;
    gst_bin_add_many (GST_BIN (app.pipeline), convert, gray, NULL);
    if (!gst_element_link_many (src, convert, gray, tee, NULL)) {
      g_printerr ("edge-energy: could not link the pipeline\n");
      return 1;
    }
    app.linked = TRUE;
    app.path = g_strdup ("host (videoconvert -> GRAY8)");
  }

  /* Preroll, then report what runs. A damaged file can leave the demuxer
   * waiting with no error posted (about one run in 150 on a WebM header
   * followed by garbage): a file that has not prerolled within
   * PREROLL_SECONDS fails, rather than hanging. */
  bus = gst_element_get_bus (app.pipeline);
  gst_element_set_state (app.pipeline, GST_STATE_PAUSED);
  for (;;) {
    msg = gst_bus_timed_pop_filtered (bus, PREROLL_SECONDS * GST_SECOND,
        GST_MESSAGE_ASYNC_DONE | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING
        | GST_MESSAGE_EOS);
    if (!msg) {
      gchar *plugged = bin_children (src);
      g_printerr ("edge-energy: no video frame within %d s (plugged: %s): "
          "the file may be damaged or hold no decodable video\n",
          PREROLL_SECONDS, plugged);
      g_free (plugged);
      failed = TRUE;
      break;
    }
    GstMessageType type = GST_MESSAGE_TYPE (msg);
    if (!handle_message (msg))
      failed = TRUE;
    gst_message_unref (msg);
    if (failed || type == GST_MESSAGE_ASYNC_DONE || type == GST_MESSAGE_EOS)
      break;
  }
  if (!failed) {
    g_rec_mutex_lock (&app.lock);
    if (app.decoder)
      g_printerr ("edge-energy: decoder: %s\n", app.decoder);
    g_printerr ("edge-energy: path: %s\n",
        app.path ? app.path : "(no video linked)");
    g_rec_mutex_unlock (&app.lock);
    g_object_get (gx, "active-algorithm", &algo_x, NULL);
    g_object_get (gy, "active-algorithm", &algo_y, NULL);
    g_printerr ("edge-energy: sobel-x: %s\nedge-energy: sobel-y: %s\n",
        algo_x ? algo_x : "(not running)", algo_y ? algo_y : "(not running)");
    gst_element_set_state (app.pipeline, GST_STATE_PLAYING);
  }

  printf ("frame,pts,energy,fraction\n");
  while (!failed) {
    GstSample *a = pull (GST_APP_SINK (sx), bus, &failed), *b = NULL;
    FloatFrame x, y;
    GstClockTime pts;
    gdouble energy = 0.0;
    guint64 strong = 0;

    if (a)
      b = pull (GST_APP_SINK (sy), bus, &failed);
    if (!a || !b) {
      if (a && !failed) {
        g_printerr ("edge-energy: sobel-y ended before sobel-x\n");
        failed = TRUE;
      }
      g_clear_pointer (&a, gst_sample_unref);
      break;
    }
    if (!float_frame_map (&x, a)) {
      failed = TRUE;
    } else if (!float_frame_map (&y, b)) {
      gst_buffer_unmap (x.buffer, &x.map);
      failed = TRUE;
    } else {
      if (x.width != y.width || x.height != y.height
          || GST_BUFFER_PTS (x.buffer) != GST_BUFFER_PTS (y.buffer)) {
        g_printerr ("edge-energy: the two derivatives do not pair up\n");
        failed = TRUE;
      }
      for (gint j = 0; !failed && j < x.height; j++)
        for (gint i = 0; i < x.width; i++) {
          gdouble dx = float_frame_get (&x, i, j);
          gdouble dy = float_frame_get (&y, i, j);
          gdouble m2 = dx * dx + dy * dy;
          energy += m2;
          strong += sqrt (m2) > threshold;
        }
      pts = GST_BUFFER_PTS (x.buffer);
      if (!failed) {
        gdouble npix = (gdouble) x.width * x.height;
        if (GST_CLOCK_TIME_IS_VALID (pts))
          printf ("%u,%.6f,%.9g,%.9g\n", n, (gdouble) pts / GST_SECOND,
              energy / npix, strong / npix);
        else
          printf ("%u,,%.9g,%.9g\n", n, energy / npix, strong / npix);
        n++;
      }
      gst_buffer_unmap (x.buffer, &x.map);
      gst_buffer_unmap (y.buffer, &y.map);
    }
    gst_sample_unref (a);
    gst_sample_unref (b);
  }
  fflush (stdout);
  if (!failed && !poll_bus (bus))
    failed = TRUE;
  if (failed)
    status = 1;
  else if (n == 0)
    g_printerr ("edge-energy: no frames\n");

  gst_element_set_state (app.pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (app.tee_sink);
  gst_object_unref (app.pipeline);
  g_rec_mutex_clear (&app.lock);
  g_free (app.decoder);
  g_free (app.path);
  g_free (app.link_error);
  g_free (path);
  g_free (algo_x);
  g_free (algo_y);
  g_free (backend);
  g_free (pattern);
  return status;
}
