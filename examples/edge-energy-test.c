/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test of edge-energy: runs it, then computes the same statistics here from
 * the same input frames, with plain double-precision Sobel 3x3 and the
 * replicate border, and compares the CSV with them. The input frames are
 * those of the path edge-energy reports on stderr: videoconvert's GRAY8 for
 * "path: host (...)", the decoder's luma plane for "path: gpu (...)" (CUDA
 * memory from an NVDEC decoder, where nvcodec and a GPU are present). Each
 * case runs both reductions, gpuconvolve's per-frame statistics (the
 * default) and the host reference (--reduce=host), and checks that they
 * agree frame by frame too.
 *
 *   edge-energy-test PATH-TO-EDGE-ENERGY
 */
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <glib/gstdio.h>
#include <sys/wait.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct
{
  guint frame;
  gboolean has_pts;
  gdouble pts, energy, fraction;
  guint64 pixels, ambiguous;    /* reference only: pixels near the threshold */
} Row;

static const gchar *program;
static guint passed, failed;

static void
check (gboolean ok, const gchar * what, ...)
{
  va_list args;
  gchar *msg;

  va_start (args, what);
  msg = g_strdup_vprintf (what, args);
  va_end (args);
  g_print ("%s: %s\n", ok ? "ok" : "FAIL", msg);
  g_free (msg);
  if (ok)
    passed++;
  else
    failed++;
}

/* Runs edge-energy with `args`; its stdout, stderr and exit status. */
static gboolean
run_program (const gchar * const *args, gchar ** out, gchar ** err,
    gint * status)
{
  GPtrArray *argv = g_ptr_array_new ();
  GError *error = NULL;
  gint wait_status = 0;
  gboolean ok;

  g_ptr_array_add (argv, (gpointer) program);
  for (; *args; args++)
    g_ptr_array_add (argv, (gpointer) * args);
  g_ptr_array_add (argv, NULL);
  ok = g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, G_SPAWN_DEFAULT,
      NULL, NULL, out, err, &wait_status, &error);
  g_ptr_array_free (argv, TRUE);
  if (!ok) {
    g_printerr ("could not run %s: %s\n", program, error->message);
    g_error_free (error);
    return FALSE;
  }
  *status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
  return TRUE;
}

/* CSV rows of edge-energy's output; NULL when it is malformed. */
static GArray *
parse_csv (const gchar * text)
{
  gchar **lines = g_strsplit (text, "\n", -1);
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (Row));

  if (!lines[0] || strcmp (lines[0], "frame,pts,energy,fraction") != 0)
    goto bad;
  for (guint i = 1; lines[i]; i++) {
    gchar **f;
    Row r = { 0 };
    if (!*lines[i])
      continue;
    f = g_strsplit (lines[i], ",", -1);
    if (g_strv_length (f) != 4) {
      g_strfreev (f);
      goto bad;
    }
    r.frame = (guint) g_ascii_strtoull (f[0], NULL, 10);
    r.has_pts = *f[1] != '\0';
    r.pts = g_ascii_strtod (f[1], NULL);
    r.energy = g_ascii_strtod (f[2], NULL);
    r.fraction = g_ascii_strtod (f[3], NULL);
    g_array_append_val (rows, r);
    g_strfreev (f);
  }
  g_strfreev (lines);
  return rows;
bad:
  g_strfreev (lines);
  g_array_unref (rows);
  return NULL;
}

/* in(x, y) of a GRAY8 frame with the replicate border */
static inline gdouble
pixel (const guint8 * data, gint stride, gint w, gint h, gint x, gint y)
{
  x = CLAMP (x, 0, w - 1);
  y = CLAMP (y, 0, h - 1);
  return data[(gsize) y * stride + x];
}

/* The next sample of the reference pipeline; NULL at its end. An error
 * ends the test (an appsink alone would wait for ever). */
static GstSample *
reference_pull (GstAppSink * sink, GstBus * bus)
{
  for (;;) {
    GstSample *sample = gst_app_sink_try_pull_sample (sink, GST_SECOND / 10);
    GstMessage *msg;

    if (sample)
      return sample;
    if ((msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR))) {
      GError *err = NULL;
      gst_message_parse_error (msg, &err, NULL);
      g_printerr ("reference pipeline: %s\n", err->message);
      exit (1);
    }
    if (gst_app_sink_is_eos (sink))
      return NULL;
  }
}

/* The path edge-energy reports ("gpu (...)", "host (...)"), or NULL. */
static gchar *
reported_path (const gchar * err)
{
  const gchar *p = strstr (err, "edge-energy: path: ");
  if (!p)
    return NULL;
  p += strlen ("edge-energy: path: ");
  return g_strndup (p, strcspn (p, "\n"));
}

/* The reference: statistics of every frame `source` produces, as GRAY8
 * from videoconvert (the host path) or, with `luma`, of the luma plane of
 * the decoded frames (the gpu path: gpuconvolve filters NV12's Y plane). */
static GArray *
reference (const gchar * source, gdouble threshold, gboolean luma)
{
  static const gdouble kx[3][3] = { {-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1} };
  gchar *desc = g_strdup_printf ("%s ! videoconvert ! "
      "video/x-raw,format=%s ! appsink name=sink sync=false", source,
      luma ? "(string){NV12,I420}" : "GRAY8");
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &error);
  GstElement *sink;
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (Row));
  GstSample *sample;
  GstBus *bus;

  g_free (desc);
  if (!pipeline) {
    g_printerr ("reference pipeline: %s\n", error->message);
    g_error_free (error);
    exit (1);
  }
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  bus = gst_element_get_bus (pipeline);
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  while ((sample = reference_pull (GST_APP_SINK (sink), bus))) {
    GstVideoInfo info;
    GstVideoFrame frame;
    Row r = { 0 };
    gdouble energy = 0.0;

    if (!gst_video_info_from_caps (&info, gst_sample_get_caps (sample))
        || !gst_video_frame_map (&frame, &info, gst_sample_get_buffer (sample),
            GST_MAP_READ)) {
      g_printerr ("reference: cannot map a frame\n");
      exit (1);
    }
    {
      /* stride and offset from the GstVideoMeta when there is one */
      const guint8 *data = GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
      gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
      gint w = GST_VIDEO_FRAME_WIDTH (&frame), h =
          GST_VIDEO_FRAME_HEIGHT (&frame);
      for (gint y = 0; y < h; y++)
        for (gint x = 0; x < w; x++) {
          gdouble gx = 0.0, gy = 0.0, m;
          for (gint j = 0; j < 3; j++)
            for (gint i = 0; i < 3; i++) {
              gdouble v = pixel (data, stride, w, h, x + i - 1, y + j - 1);
              gx += kx[j][i] * v;
              gy += kx[i][j] * v;       /* sobel-y is the transpose */
            }
          gx /= 255.0;
          gy /= 255.0;
          m = sqrt (gx * gx + gy * gy);
          energy += gx * gx + gy * gy;
          r.fraction += m > threshold;
          /* float rounding may put these on either side */
          r.ambiguous += fabs (m - threshold) <= 1e-5 * (1.0 + threshold);
        }
      r.pixels = (guint64) w *h;
    }
    r.frame = rows->len;
    r.energy = energy / r.pixels;
    r.fraction /= r.pixels;
    r.has_pts = GST_BUFFER_PTS_IS_VALID (frame.buffer);
    r.pts = (gdouble) GST_BUFFER_PTS (frame.buffer) / GST_SECOND;
    g_array_append_val (rows, r);
    gst_video_frame_unmap (&frame);
    gst_sample_unref (sample);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return rows;
}

/* Whether two runs of edge-energy agree frame by frame: the same frames
 * and times, energy within float rounding, fraction within the pixels the
 * reference `want` finds on the threshold. */
static gboolean
rows_agree (GArray * a, GArray * b, GArray * want)
{
  gboolean ok = a->len == b->len && a->len == want->len;

  for (guint i = 0; ok && i < a->len; i++) {
    Row *x = &g_array_index (a, Row, i), *y = &g_array_index (b, Row, i);
    Row *w = &g_array_index (want, Row, i);
    gdouble ftol = (gdouble) w->ambiguous / w->pixels + 1e-9;

    if (x->frame != y->frame || x->has_pts != y->has_pts
        || fabs (x->pts - y->pts) > 1e-6
        || fabs (x->energy - y->energy) > 1e-5 * w->energy + 1e-12
        || fabs (x->fraction - y->fraction) > ftol) {
      g_print ("  frame %u: %u,%.6f,%.9g,%.9g against %u,%.6f,%.9g,%.9g\n", i,
          x->frame, x->pts, x->energy, x->fraction, y->frame, y->pts,
          y->energy, y->fraction);
      ok = FALSE;
    }
  }
  return ok;
}

/* Runs edge-energy with `args` and `reduce` (the --reduce option, or NULL
 * for the default) and compares with the reference of `source`. `path`:
 * the path it must report ("host (videoconvert -> GRAY8)"), or only its
 * kind ("host", "gpu"), or NULL for either. Returns its rows (NULL when it
 * did not run), and the reference in *reference_rows. */
static GArray *
compare (const gchar * name, const gchar * const *args, const gchar * reduce,
    const gchar * source, gdouble threshold, const gchar * path,
    GArray ** reference_rows)
{
  gchar *out = NULL, *err = NULL, *ran;
  gint status = -1;
  GArray *got, *want;
  gboolean rows_ok = TRUE, luma;
  GPtrArray *all = g_ptr_array_new ();
  const gchar *element = reduce && g_str_equal (reduce, "--reduce=host") ?
      "sobel-x: " : "sobel: ";

  if (reduce)
    g_ptr_array_add (all, (gpointer) reduce);
  for (; *args; args++)
    g_ptr_array_add (all, (gpointer) * args);
  g_ptr_array_add (all, NULL);
  name = g_strdup_printf ("%s, %s", name, reduce ? reduce + 9 : "statistics");
  *reference_rows = NULL;
  if (!run_program ((const gchar * const *) all->pdata, &out, &err, &status)) {
    check (FALSE, "%s: edge-energy runs", name);
    g_ptr_array_unref (all);
    g_free ((gchar *) name);
    return NULL;
  }
  g_ptr_array_unref (all);
  check (status == 0, "%s: edge-energy exits with 0 (got %d)%s%s", name,
      status, status ? "; stderr:\n" : "", status ? err : "");
  check (strstr (err, element) && strstr (err, " on "),
      "%s: edge-energy reports the backend and algorithm (%s...)", name,
      element);
  ran = reported_path (err);
  check (ran && (g_str_has_prefix (ran, "gpu (") || g_str_has_prefix (ran,
              "host (")), "%s: edge-energy reports the path: %s", name,
      ran ? ran : "(none)");
  if (path && strchr (path, '('))
    check (ran && g_str_equal (ran, path), "%s: the path is %s", name, path);
  else if (path) {
    gchar *kind = g_strdup_printf ("%s (", path);
    check (ran && g_str_has_prefix (ran, kind), "%s: the path is %s", name,
        path);
    g_free (kind);
  }
  luma = ran && g_str_has_prefix (ran, "gpu (");
  g_free (ran);
  got = parse_csv (out);
  want = reference (source, threshold, luma);
  check (got != NULL, "%s: CSV header and rows are well formed", name);
  if (got) {
    check (got->len == want->len && want->len > 0,
        "%s: %u frames in the CSV, %u in the reference", name, got->len,
        want->len);
    for (guint i = 0; i < MIN (got->len, want->len); i++) {
      Row *g = &g_array_index (got, Row, i), *w = &g_array_index (want, Row,
          i);
      gdouble etol = 1e-5 * w->energy + 1e-12;
      gdouble ftol = (gdouble) w->ambiguous / w->pixels + 1e-9;
      if (g->frame != i || g->has_pts != w->has_pts
          || (w->has_pts && fabs (g->pts - w->pts) > 1e-6)
          || fabs (g->energy - w->energy) > etol
          || fabs (g->fraction - w->fraction) > ftol) {
        g_print ("  frame %u: got %u,%.6f,%.9g,%.9g want %u,%.6f,%.9g,%.9g\n",
            i, g->frame, g->pts, g->energy, g->fraction, i, w->pts, w->energy,
            w->fraction);
        rows_ok = FALSE;
      }
    }
    check (rows_ok, "%s: energy and fraction match the reference", name);
    /* a test that compares only zeros would prove little */
    if (want->len > 0) {
      Row *w = &g_array_index (want, Row, 0);
      check (w->energy > 0.0 && w->fraction > 0.0 && w->fraction < 1.0,
          "%s: the input has edges (energy %g, fraction %g)", name,
          w->energy, w->fraction);
    }
  }
  *reference_rows = want;
  g_free (out);
  g_free (err);
  g_free ((gchar *) name);
  return got;
}

/* compare() with both reductions, and the two against each other. */
static void
compare_both (const gchar * name, const gchar * const *args,
    const gchar * source, gdouble threshold, const gchar * path)
{
  GArray *want = NULL, *want_host = NULL;
  GArray *stats = compare (name, args, NULL, source, threshold, path, &want);
  GArray *host = compare (name, args, "--reduce=host", source, threshold,
      path, &want_host);

  if (stats && host && want)
    check (rows_agree (stats, host, want), "%s: the statistics and the host "
        "reduction agree frame by frame (%u frames)", name, stats->len);
  else
    check (FALSE, "%s: both reductions ran", name);
  g_clear_pointer (&stats, g_array_unref);
  g_clear_pointer (&host, g_array_unref);
  g_clear_pointer (&want, g_array_unref);
  g_clear_pointer (&want_host, g_array_unref);
}

/* Whether every element in `names` (NULL-terminated) is installed. */
static gboolean
have_elements (const gchar * const *names)
{
  for (; *names; names++) {
    GstElementFactory *f = gst_element_factory_find (*names);
    if (!f)
      return FALSE;
    gst_object_unref (f);
  }
  return TRUE;
}

/* Whether a decoder for `caps_str` is installed. */
static gboolean
can_decode (const gchar * caps_str)
{
  GList *all = gst_element_factory_list_get_elements
      (GST_ELEMENT_FACTORY_TYPE_DECODER, GST_RANK_MARGINAL);
  GstCaps *caps = gst_caps_from_string (caps_str);
  GList *ok = gst_element_factory_list_filter (all, caps, GST_PAD_SINK,
      FALSE);
  gboolean found = ok != NULL;

  gst_plugin_feature_list_free (ok);
  gst_plugin_feature_list_free (all);
  gst_caps_unref (caps);
  return found;
}

/* Writes 8 frames of videotestsrc `pattern`, 96x64, through `encode` (a
 * pipeline fragment ending in a muxer) into a file `basename` and runs
 * edge-energy on it: as it chooses, and with --backend=cpu (host path). */
static void
file_cases (const gchar * what, const gchar * const *elements,
    const gchar * stream_caps, const gchar * basename, const gchar * pattern,
    const gchar * encode)
{
  GError *error = NULL;
  gchar *dir, *file, *uri, *desc, *src, *name;
  GstElement *p;
  GstBus *bus;
  GstMessage *msg;
  gboolean written;

  const gchar *read[] = { "uridecodebin", "videoconvert", NULL };

  if (!have_elements (elements) || !have_elements (read)
      || !can_decode (stream_caps)) {
    g_print ("skip: no %s encoder, muxer or decoder (or no uridecodebin) "
        "to test a %s file\n", what, what);
    return;
  }
  dir = g_dir_make_tmp ("edge-energy-XXXXXX", NULL);
  file = g_build_filename (dir, basename, NULL);
  uri = gst_filename_to_uri (file, NULL);
  /* 8-bit 4:2:0, which every decoder takes (x264enc may pick 10-bit 4:4:4
   * where it is free to) */
  desc = g_strdup_printf ("videotestsrc pattern=%s num-buffers=8 ! "
      "video/x-raw,format=I420,width=96,height=64,framerate=25/1 ! %s ! "
      "filesink location=\"%s\"", pattern, encode, file);
  p = gst_parse_launch (desc, &error);
  if (!p) {
    g_printerr ("%s: %s\n", desc, error->message);
    exit (1);
  }
  bus = gst_element_get_bus (p);
  gst_element_set_state (p, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  written = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  check (written, "wrote a %s test video file", what);
  if (msg)
    gst_message_unref (msg);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  if (written) {
    const gchar *args[] = { file, NULL };
    const gchar *cpu_args[] = { "--backend=cpu", file, NULL };
    src = g_strdup_printf ("uridecodebin uri=\"%s\"", uri);
    name = g_strdup_printf ("%s file", what);
    compare_both (name, args, src, 0.5, NULL);
    g_free (name);
    name = g_strdup_printf ("%s file, cpu", what);
    compare_both (name, cpu_args, src, 0.5, "host");
    g_free (name);
    g_free (src);
  }
  g_unlink (file);
  g_rmdir (dir);
  g_free (desc);
  g_free (uri);
  g_free (file);
  g_free (dir);
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  if (argc != 2) {
    g_printerr ("usage: %s PATH-TO-EDGE-ENERGY\n", argv[0]);
    return 2;
  }
  program = argv[1];

  /* Test source; an odd width gives GRAY8 rows padded to 4 bytes. */
  {
    const gchar *args[] = { "--backend=cpu", "--pattern=ball", "--width=67",
      "--height=45", "--frames=6", NULL
    };
    compare_both ("ball, cpu", args, "videotestsrc pattern=ball "
        "num-buffers=6 ! video/x-raw,width=67,height=45,framerate=30/1", 0.5,
        "host (videoconvert -> GRAY8)");
  }
  {
    const gchar *args[] = { "--backend=auto", "--pattern=smpte",
      "--width=80", "--height=50", "--frames=3", "--threshold=0.2", NULL
    };
    compare_both ("smpte, auto", args, "videotestsrc pattern=smpte "
        "num-buffers=3 ! video/x-raw,width=80,height=50,framerate=30/1", 0.2,
        "host (videoconvert -> GRAY8)");
  }

  /* Video files, where this GStreamer can write and read them: VP8 (the host
   * path, unless an NVDEC VP8 decoder is found), and H.264 (the gpu path
   * where nvcodec's nvh264dec and a GPU are, and gpuconvolve takes CUDA
   * memory); each also with --backend=cpu, which must take the host path. */
  {
    const gchar *vp8[] = { "vp8enc", "webmmux", NULL };
    file_cases ("vp8", vp8, "video/x-vp8", "pinwheel.webm", "pinwheel",
        "vp8enc ! webmmux");
  }
  {
    const gchar *x264[] = { "x264enc", "h264parse", "mp4mux", NULL };
    const gchar *openh264[] = { "openh264enc", "h264parse", "mp4mux", NULL };
    if (have_elements (x264))
      file_cases ("h264", x264, "video/x-h264", "smpte.mp4", "smpte",
          "x264enc ! h264parse ! mp4mux");
    else
      file_cases ("h264", openh264, "video/x-h264", "smpte.mp4", "smpte",
          "openh264enc ! h264parse ! mp4mux");
  }

  /* Bad arguments are refused. */
  {
    const gchar *args[] = { "--backend=gpu", NULL };
    gchar *out = NULL, *err = NULL;
    gint status = -1;
    gboolean ran = run_program (args, &out, &err, &status);
    check (ran && status == 2 && strstr (err, "--backend"),
        "--backend=gpu is refused (status %d)", status);
    g_free (out);
    g_free (err);
  }
  {
    const gchar *args[] = { "--reduce=gpu", NULL };
    gchar *out = NULL, *err = NULL;
    gint status = -1;
    gboolean ran = run_program (args, &out, &err, &status);
    check (ran && status == 2 && strstr (err, "--reduce"),
        "--reduce=gpu is refused (status %d)", status);
    g_free (out);
    g_free (err);
  }
  {
    const gchar *args[] = { "--path=gpu-please", NULL };
    gchar *out = NULL, *err = NULL;
    gint status = -1;
    gboolean ran = run_program (args, &out, &err, &status);
    check (ran && status == 2 && strstr (err, "--path"),
        "--path=gpu-please is refused (status %d)", status);
    g_free (out);
    g_free (err);
  }
  {
    /* the test source gives system memory: no gpu path */
    const gchar *args[] = { "--path=gpu", "--frames=2", NULL };
    gchar *out = NULL, *err = NULL;
    gint status = -1;
    gboolean ran = run_program (args, &out, &err, &status);
    check (ran && status == 2 && strstr (err, "--path=gpu"),
        "--path=gpu without a file is refused (status %d)", status);
    g_free (out);
    g_free (err);
  }
  {
    const gchar *args[] = { "/nonexistent/video.webm", NULL };
    gchar *out = NULL, *err = NULL;
    gint status = -1;
    gboolean ran = run_program (args, &out, &err, &status);
    check (ran && status == 1, "a missing file is an error (status %d)",
        status);
    g_free (out);
    g_free (err);
  }

  g_print ("%u passed, %u failed\n", passed, failed);
  return failed ? 1 : 0;
}
