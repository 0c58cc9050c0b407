/* edge-energy: per-frame edge statistics of a video, for archive analysis.
 *
 *   edge-energy [--backend=auto|cuda|cpu] [--threshold=T] FILE-OR-URI
 *   edge-energy [--frames=N] [--width=W] [--height=H] [--pattern=NAME]
 *
 * Without a file it reads N frames of videotestsrc. The video is converted to
 * GRAY8 and goes through two gpuconvolve elements in one pipeline: a Sobel
 * derivative in x, set as a custom 3x3 kernel, and one in y, set with
 * filter=sobel-y. Each turns GRAY8 into GRAY32F (because its output caps ask
 * for GRAY32F), so the derivatives come out as floats of intensity in 0..1
 * units (a full black-to-white step gives 4). Two appsinks receive them.
 *
 * For every frame it prints one CSV line, frame,pts,energy,fraction:
 *   pts       presentation time in seconds (empty when the buffer has none)
 *   energy    mean over the frame of gx^2 + gy^2
 *   fraction  share of pixels where sqrt(gx^2 + gy^2) > threshold
 * The backend and algorithm that ran go to stderr.
 */
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_THRESHOLD 0.5

typedef struct
{
  GstElement *pipeline;
  GstElement *convert;          /* where the decoded video goes in */
  gboolean linked;
} App;

/* uridecodebin: link its first video pad to videoconvert. */
static void
on_pad_added (GstElement * decodebin, GstPad * pad, App * app)
{
  GstCaps *caps = gst_pad_get_current_caps (pad);
  const GstStructure *s;
  GstPad *sink;

  if (!caps)
    caps = gst_pad_query_caps (pad, NULL);
  s = gst_caps_get_structure (caps, 0);
  if (!app->linked && g_str_has_prefix (gst_structure_get_name (s),
          "video/x-raw")) {
    sink = gst_element_get_static_pad (app->convert, "sink");
    if (gst_pad_link (pad, sink) == GST_PAD_LINK_OK)
      app->linked = TRUE;
    else
      g_printerr ("edge-energy: could not link the decoded video\n");
    gst_object_unref (sink);
  }
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
  gchar *backend = NULL, *pattern = NULL;
  gdouble threshold = DEFAULT_THRESHOLD;
  gint frames = 60, width = 320, height = 240;
  GOptionEntry entries[] = {
    {"backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
        "Where gpuconvolve filters: auto (default), cuda or cpu", "NAME"},
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
  GstElement *src, *gray, *tee, *qx, *qy, *gx, *gy, *fx, *fy, *sx, *sy;
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
  if (argc > 2 || frames < 1 || width < 1 || height < 1 || !(threshold >= 0)) {
    g_printerr ("edge-energy: bad arguments; see --help\n");
    return 2;
  }

  app.pipeline = gst_pipeline_new ("edge-energy");
  app.convert = make ("videoconvert", NULL);
  gray = make_caps_filter ("video/x-raw, format=GRAY8");
  tee = make ("tee", NULL);
  qx = make ("queue", NULL);
  qy = make ("queue", NULL);
  gx = make ("gpuconvolve", "sobel-x");
  gy = make ("gpuconvolve", "sobel-y");
  /* GRAY32F out: each gpuconvolve converts GRAY8 to float (v / 255). */
  fx = make_caps_filter ("video/x-raw, format=GRAY32F");
  fy = make_caps_filter ("video/x-raw, format=GRAY32F");
  sx = make ("appsink", "gx");
  sy = make ("appsink", "gy");
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
  if (!src || !app.convert || !tee || !qx || !qy || !gx || !gy || !sx || !sy)
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

  gst_bin_add_many (GST_BIN (app.pipeline), app.convert, gray, tee, qx, gx,
      fx, sx, qy, gy, fy, sy, NULL);
  if (argc == 2)
    gst_bin_add (GST_BIN (app.pipeline), src);
  else if (!gst_element_link (src, app.convert))
    return 1;
  if (!gst_element_link_many (app.convert, gray, tee, NULL)
      || !gst_element_link_many (tee, qx, gx, fx, sx, NULL)
      || !gst_element_link_many (tee, qy, gy, fy, sy, NULL)) {
    g_printerr ("edge-energy: could not link the pipeline\n");
    return 1;
  }

  /* Preroll, then report what runs. */
  bus = gst_element_get_bus (app.pipeline);
  gst_element_set_state (app.pipeline, GST_STATE_PAUSED);
  for (;;) {
    msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
        GST_MESSAGE_ASYNC_DONE | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING
        | GST_MESSAGE_EOS);
    GstMessageType type = GST_MESSAGE_TYPE (msg);
    if (!handle_message (msg))
      failed = TRUE;
    gst_message_unref (msg);
    if (failed || type == GST_MESSAGE_ASYNC_DONE || type == GST_MESSAGE_EOS)
      break;
  }
  if (!failed) {
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
  gst_object_unref (app.pipeline);
  g_free (algo_x);
  g_free (algo_y);
  g_free (backend);
  g_free (pattern);
  return status;
}
