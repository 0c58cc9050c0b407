/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared helpers of the gpuconvolve tests. */
#include "common.h"

#include <gst/video/video.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcv.h"                /* only for gcv_backend_available() */

static const gchar *backend_nick = "cpu";
static const gchar *algorithm_nick = "auto";

static const gchar *const algorithms[] = {
  "auto", "direct", "tiled", "register", "separable", "fft", NULL
};

/* --- environment -------------------------------------------------------- */

static GMutex log_lock;
static GPtrArray *log_lines;    /* captured warnings, NULL when not capturing */

static void
log_hook (GstDebugCategory * category, GstDebugLevel level, const gchar * file,
    const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (level != GST_LEVEL_WARNING
      || g_strcmp0 (gst_debug_category_get_name (category), "gpuconvolve"))
    return;
  g_mutex_lock (&log_lock);
  if (log_lines)
    g_ptr_array_add (log_lines, g_strdup (gst_debug_message_get (message)));
  g_mutex_unlock (&log_lock);
}

/* g_warning()s of the element (values its setters refuse) are captured
 * like its GST_WARNINGs; outside a capture one fails the test. */
static void
glog_hook (const gchar * domain, GLogLevelFlags level, const gchar * message,
    gpointer user_data)
{
  gboolean captured;

  g_mutex_lock (&log_lock);
  captured = log_lines != NULL;
  if (captured)
    g_ptr_array_add (log_lines, g_strdup (message));
  g_mutex_unlock (&log_lock);
  if (!captured)
    fail ("unexpected warning from %s: %s", domain, message);
}

/* The element's debug category must let warnings through to the hook. */
static void
open_warning_category (void)
{
  GstElement *e = gst_element_factory_make ("gpuconvolve", NULL);
  GSList *cats, *l;
  gboolean found = FALSE;

  if (!e) {
    g_printerr ("The gpuconvolve element is not available; check "
        "GST_PLUGIN_PATH_1_0\n");
    exit (1);
  }
  gst_object_unref (e);
  cats = gst_debug_get_all_categories ();
  for (l = cats; l; l = l->next) {
    GstDebugCategory *cat = l->data;
    if (g_str_equal (gst_debug_category_get_name (cat), "gpuconvolve")) {
      found = TRUE;
      if (gst_debug_category_get_threshold (cat) < GST_LEVEL_WARNING)
        gst_debug_category_set_threshold (cat, GST_LEVEL_WARNING);
    }
  }
  g_slist_free (cats);
  if (!found) {
    g_printerr ("No \"gpuconvolve\" debug category\n");
    exit (1);
  }
  gst_debug_set_active (TRUE);
  gst_debug_add_log_function (log_hook, NULL, NULL);
  g_log_set_handler ("gpuconvolve", G_LOG_LEVEL_WARNING | G_LOG_FLAG_FATAL
      | G_LOG_FLAG_RECURSION, glog_hook, NULL);
}

/* Whether a CUDA device is usable, asked in a child process: CUDA set up in
 * this process would not work in the processes gst-check forks for the
 * tests. */
static gboolean
cuda_usable (gchar ** reason)
{
  GString *msg = g_string_new (NULL);
  gchar buf[256];
  gssize n;
  gint fds[2], status = 0;
  pid_t pid;

  if (pipe (fds) != 0 || (pid = fork ()) < 0) {
    *reason = g_strdup ("could not start a process to look for one");
    return FALSE;
  }
  if (pid == 0) {
    GError *err = NULL;
    gboolean ok = gcv_backend_available (GCV_BACKEND_CUDA, -1, &err);
    const gchar *why = ok ? "" : err ? err->message : "unknown reason";
    close (fds[0]);
    if (write (fds[1], why, strlen (why)) < 0)
      _exit (2);
    _exit (ok ? 0 : 1);
  }
  close (fds[1]);
  while ((n = read (fds[0], buf, sizeof (buf))) > 0)
    g_string_append_len (msg, buf, n);
  close (fds[0]);
  waitpid (pid, &status, 0);
  *reason = g_string_free (msg, FALSE);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

void
gcvt_init (int *argc, char ***argv)
{
  const gchar *b = g_getenv ("GPUCONVOLVE_TEST_BACKEND");
  const gchar *a = g_getenv ("GPUCONVOLVE_TEST_ALGORITHM");

  if (b && *b)
    backend_nick = b;
  if (a && *a)
    algorithm_nick = a;
  if (strcmp (backend_nick, "cpu") && strcmp (backend_nick, "cuda")) {
    g_printerr ("GPUCONVOLVE_TEST_BACKEND must be cpu or cuda, not %s\n",
        backend_nick);
    exit (1);
  }
  if (!g_strv_contains (algorithms, algorithm_nick)) {
    g_printerr ("GPUCONVOLVE_TEST_ALGORITHM must be one of auto, direct, "
        "tiled, register, separable, fft, not %s\n", algorithm_nick);
    exit (1);
  }
  if (gcvt_on_cuda ()) {
    gchar *reason = NULL;
    if (!cuda_usable (&reason)) {
      g_print ("SKIP: no usable CUDA device: %s\n", reason);
      exit (77);
    }
    g_free (reason);
  }
  g_print ("gpuconvolve tests: backend=%s algorithm=%s\n", backend_nick,
      algorithm_nick);
  /* The leaks tracer, from gst_init on: objects still alive when a test's
   * process exits fail that test, and test_state_cycles_no_leaks counts
   * objects through it. */
  g_setenv ("GST_TRACERS", "leaks", FALSE);
  gst_check_init (argc, argv);
  open_warning_category ();
}

/* tests registered, and those that could not be ("name: reason") */
static guint n_registered;
static GPtrArray *not_run;

void
gcvt_tcase_add_test (TCase * tc, TFun tf, const char *name, int signal,
    int allowed_exit_value, int start, int end)
{
  if (!_gst_check_list_tests && _gst_check_run_test_func (name))
    n_registered++;
  __gst_tcase_add_test (tc, tf, name, signal, allowed_exit_value, start, end);
}

void
gcvt_add_test_if (TCase * tc, TFun tf, const gchar * name, gint start,
    gint end, gboolean runnable, const gchar * reason)
{
  if (runnable) {
    gcvt_tcase_add_test (tc, tf, name, 0, 0, start, end);
    return;
  }
  if (!_gst_check_list_tests && !_gst_check_run_test_func (name))
    return;                     /* GST_CHECKS leaves it out anyway */
  if (!not_run)
    not_run = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (not_run, g_strdup_printf ("%s: %s", name, reason));
  g_print ("SKIP: %s: %s\n", name, reason);
}

void
gcvt_skip_unless (gboolean runnable, const gchar * reason)
{
  if (runnable)
    return;
  g_print ("SKIP: %s\n", reason);
  exit (77);
}

int
gcvt_run (Suite * suite, const gchar * name)
{
  gint failed = 0;
  gboolean run = n_registered > 0 || !not_run;

  /* a suite of none but skipped tests is not run, and is a skip */
  if (run)
    failed = gst_check_run_suite (suite, name, __FILE__);
  else
    srunner_free (srunner_create (suite));      /* frees the suite */
  if (not_run) {
    g_print ("%u test(s) of %s not run here:\n", not_run->len, name);
    for (guint i = 0; i < not_run->len; i++)
      g_print ("SKIP: %s\n", (const gchar *) g_ptr_array_index (not_run, i));
    g_ptr_array_unref (not_run);
    not_run = NULL;
  }
  if (!run)
    return 77;
  return failed == 0 ? 0 : 1;
}

const gchar *
gcvt_backend (void)
{
  return backend_nick;
}

const gchar *
gcvt_algorithm (void)
{
  return algorithm_nick;
}

gboolean
gcvt_on_cuda (void)
{
  return g_str_equal (backend_nick, "cuda");
}

gboolean
gcvt_forced_separable (void)
{
  return g_str_equal (algorithm_nick, "separable");
}

gboolean
gcvt_quick (void)
{
  return g_getenv ("GPUCONVOLVE_TEST_QUICK") != NULL;
}

gboolean
gcvt_forked (void)
{
  const gchar *f = g_getenv ("CK_FORK");
  return !f || g_strcmp0 (f, "no") != 0;
}

GstClockTime
gcvt_time_limit (GstClockTime base)
{
  const gchar *slower = g_getenv ("CK_TIMEOUT_MULTIPLIER");

  return base * (slower ? MAX (atoi (slower), 1) : 1);
}

GstElement *
gcvt_element_new (void)
{
  GstElement *e = gst_element_factory_make ("gpuconvolve", NULL);

  fail_unless (e != NULL, "no gpuconvolve element");
  gst_util_set_object_arg (G_OBJECT (e), "backend", backend_nick);
  gcvt_apply_algorithm (e);
  return e;
}

GstElement *
gcvt_element_new_depth (guint queue_depth)
{
  GstElement *e = gcvt_element_new ();

  g_object_set (e, "queue-depth", queue_depth, NULL);
  return e;
}

guint
gcvt_in_flight (guint queue_depth)
{
  return gcvt_on_cuda ()? queue_depth : 1;
}

void
gcvt_apply_algorithm (GstElement * element)
{
  gst_util_set_object_arg (G_OBJECT (element), "algorithm", algorithm_nick);
}

gchar *
gcvt_launch_props (void)
{
  return g_strdup_printf ("backend=%s algorithm=%s", backend_nick,
      algorithm_nick);
}

gboolean
gcvt_refused_as_not_separable (GstElement * element, gboolean rank1)
{
  if (!gcvt_forced_separable () || rank1)
    return FALSE;
  gcvt_expect_start_error (element, GST_LIBRARY_ERROR,
      GST_LIBRARY_ERROR_SETTINGS, "algorithm");
  g_print ("algorithm=separable refuses a kernel that is not rank 1, as "
      "documented; the rest of this case is skipped\n");
  return TRUE;
}

/* --- element and harness ------------------------------------------------ */

GstBus *
gcvt_bus (GstElement * element)
{
  GstBus *bus = gst_element_get_bus (element);

  if (!bus) {
    bus = gst_bus_new ();
    gst_element_set_bus (element, bus);
  }
  gst_object_unref (bus);       /* the element keeps it */
  return bus;
}

void
gcvt_element_unref (GstElement * element)
{
  GstBus *bus = gst_element_get_bus (element);

  if (bus) {
    /* dropped outside the element's lock: a message may hold the last
     * reference to a pad, whose unlinking posts to this bus */
    gst_bus_set_flushing (bus, TRUE);
    gst_element_set_bus (element, NULL);
    gst_object_unref (bus);
  }
  gst_object_unref (element);
}

GstHarness *
gcvt_harness_new (GstElement * element)
{
  gcvt_bus (element);
  return gst_harness_new_with_element (element, "sink", "src");
}

GstElement *
gcvt_pipeline_new (const gchar * line)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (line, &err);

  fail_unless (pipeline != NULL, "%s: %s", line, err ? err->message : "?");
  g_clear_error (&err);
  return pipeline;
}

GstMessage *
gcvt_pipeline_run (GstElement * pipeline, GstClockTime timeout,
    const gchar * what)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gst_object_unref (bus);
  fail_unless (msg != NULL, "%s: no EOS or error within %.0f s", what,
      (gdouble) timeout / GST_SECOND);
  return msg;
}

void
gcvt_pipeline_run_to_eos (GstElement * pipeline, GstClockTime timeout,
    const gchar * what)
{
  GstMessage *msg = gcvt_pipeline_run (pipeline, timeout, what);

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    ck_abort_msg ("%s: error from %s: %s", what,
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), err->message);
  }
  gst_message_unref (msg);
}

GstCaps *
gcvt_caps (RefFormat format, guint width, guint height)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
      ref_format_info (format)->name, "width", G_TYPE_INT, width, "height",
      G_TYPE_INT, height, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
}

void
gcvt_set_caps (GstHarness * h, RefFormat in, RefFormat out, guint width,
    guint height)
{
  gst_harness_set_caps (h, gcvt_caps (in, width, height), gcvt_caps (out,
          width, height));
}

GstClockTime
gcvt_frame_pts (guint n)
{
  return gst_util_uint64_scale_int (n, GST_SECOND, 30);
}

GstBuffer *
gcvt_timed_buffer (const RefImage * img, RefFormat format, guint n)
{
  GstBuffer *b = gcvt_buffer_new (img, format, 0, 0, FALSE);

  GST_BUFFER_PTS (b) = gcvt_frame_pts (n);
  GST_BUFFER_DURATION (b) = GCVT_FRAME_DURATION;
  return b;
}

void
gcvt_count_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad,
    gpointer counter)
{
  g_atomic_int_inc ((gint *) counter);
}

void
gcvt_drain (GstHarness * h)
{
  GstQuery *q = gst_query_new_drain ();
  gst_pad_peer_query (h->srcpad, q);
  gst_query_unref (q);
}

GstBuffer *
gcvt_process (GstHarness * h, GstBuffer * in)
{
  GstBuffer *out;

  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  gcvt_drain (h);
  out = gst_harness_try_pull (h);
  fail_unless (out != NULL, "no output buffer");
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  return out;
}

/* --- properties --------------------------------------------------------- */

void
gcvt_floats_value (GValue * array, const gdouble * v, guint n)
{
  g_value_init (array, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    GValue f = G_VALUE_INIT;
    g_value_init (&f, G_TYPE_FLOAT);
    g_value_set_float (&f, (gfloat) v[i]);
    gst_value_array_append_and_take_value (array, &f);
  }
}

void
gcvt_set_floats (GstElement * element, const gchar * property,
    const gdouble * v, guint n)
{
  GValue array = G_VALUE_INIT;

  gcvt_floats_value (&array, v, n);
  g_object_set_property (G_OBJECT (element), property, &array);
  g_value_unset (&array);
}

guint
gcvt_n_floats (GstElement * element, const gchar * property)
{
  GValue array = G_VALUE_INIT;
  guint n;

  g_value_init (&array, GST_TYPE_ARRAY);
  g_object_get_property (G_OBJECT (element), property, &array);
  n = gst_value_array_get_size (&array);
  g_value_unset (&array);
  return n;
}

gchar *
gcvt_prop_string (GstElement * element, const gchar * property)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (element), property);
  GValue v = G_VALUE_INIT;
  gchar *s;

  fail_unless (pspec != NULL, "no property %s", property);
  g_value_init (&v, pspec->value_type);
  g_object_get_property (G_OBJECT (element), property, &v);
  s = gst_value_serialize (&v);
  g_value_unset (&v);
  return s;
}

void
gcvt_set_params (GstElement * element, const RefParams * p)
{
  GObject *o = G_OBJECT (element);
  const RefKernel *k = p->kernel;

  /* anchors and the separable pair first, so nothing checks the new sizes
   * against stale values */
  g_object_set (o, "anchor-x", -1, "anchor-y", -1, NULL);
  gst_util_set_object_arg (o, "filter", "custom");
  gcvt_set_floats (element, "row-kernel", NULL, 0);
  gcvt_set_floats (element, "column-kernel", NULL, 0);
  if (k) {
    g_object_set (o, "kernel-width", k->kw, "kernel-height", k->kh, NULL);
    gcvt_set_floats (element, "kernel", k->k, k->kw * k->kh);
  } else {
    gcvt_set_floats (element, "kernel", NULL, 0);
  }
  g_object_set (o, "anchor-x", p->anchor_x, "anchor-y", p->anchor_y,
      "normalize", p->normalize, "scale", p->scale, "bias", p->bias,
      "border-value", p->border_value, NULL);
  gst_util_set_object_arg (o, "mode",
      p->convolution ? "convolution" : "correlation");
  gst_util_set_object_arg (o, "border", ref_border_nick (p->border));
  gst_util_set_object_arg (o, "alpha", p->filter_alpha ? "filter" :
      "passthrough");

  /* every value must have been taken */
  fail_unless_equals_int (gcvt_n_floats (element, "kernel"),
      k ? k->kw * k->kh : 0);
  {
    gint axr, ayr;
    g_object_get (o, "anchor-x", &axr, "anchor-y", &ayr, NULL);
    fail_unless (axr == p->anchor_x && ayr == p->anchor_y,
        "anchor (%d,%d) was not taken", p->anchor_x, p->anchor_y);
  }
}

RefKernel *
gcvt_random_kernel (GRand * rand, guint kw, guint kh, gboolean rank1)
{
  RefKernel *k;

  if (rank1) {
    gdouble *row = g_new (gdouble, kw), *column = g_new (gdouble, kh);
    for (guint i = 0; i < kw; i++)
      row[i] = g_rand_double_range (rand, -0.6, 1.0);
    for (guint j = 0; j < kh; j++)
      column[j] = g_rand_double_range (rand, -0.6, 1.0);
    k = ref_kernel_outer (column, kh, row, kw);
    g_free (row);
    g_free (column);
  } else {
    k = ref_kernel_new (kw, kh);
    for (guint i = 0; i < kw * kh; i++)
      k->k[i] = g_rand_double_range (rand, -0.5, 1.0);
  }
  /* what the element gets are floats */
  for (guint i = 0; i < kw * kh; i++)
    k->k[i] = (gfloat) k->k[i];
  return k;
}

/* --- frames ------------------------------------------------------------- */

guint
gcvt_threads (void)
{
  const gchar *n = g_getenv ("GPUCONVOLVE_TEST_THREADS");
  const gchar *preload = g_getenv ("LD_PRELOAD");

  /* valgrind runs one thread at a time: more would only add their cost */
  if (preload && strstr (preload, "vgpreload"))
    return 1;
  if (n && *n)
    return CLAMP (atoi (n), 1, 256);
  return MAX (g_get_num_processors (), 1);
}

typedef struct
{
  const RefImage *in;
  const RefParams *p;
  RefImage *out;
  guint y0, y1;
} FilterBand;

static gpointer
filter_band (gpointer data)
{
  FilterBand *b = data;

  ref_filter_rows (b->in, b->p, b->out, b->y0, b->y1);
  return NULL;
}

RefImage *
gcvt_filter (const RefImage * in, const RefParams * p)
{
  const RefKernel *k = p->kernel;
  /* multiply-adds: a thread is worth starting for a million or so */
  const gdouble work = (gdouble) in->width * in->height * in->channels *
      (k ? k->kw * k->kh : 1) * (p->kernel_y ? 2 : 1);
  const guint n = (guint) CLAMP (MIN (work / 1e6, (gdouble) in->height),
      1, gcvt_threads ());
  RefImage *out = ref_image_copy (in);
  FilterBand *bands = g_new (FilterBand, n);
  GThread **threads = g_new0 (GThread *, n);

  for (guint i = 0; i < n; i++) {
    bands[i].in = in;
    bands[i].p = p;
    bands[i].out = out;
    bands[i].y0 = in->height * i / n;
    bands[i].y1 = in->height * (i + 1) / n;
    /* the last band in this thread */
    if (i + 1 < n)
      threads[i] = g_thread_new ("gcvt-reference", filter_band, &bands[i]);
  }
  filter_band (&bands[n - 1]);
  for (guint i = 0; i + 1 < n; i++)
    g_thread_join (threads[i]);
  g_free (threads);
  g_free (bands);
  return out;
}

RefImage *
gcvt_random_image (GRand * rand, RefFormat format, guint width, guint height,
    gdouble lo, gdouble hi)
{
  const RefFormatInfo *fi = ref_format_info (format);
  RefImage *img = ref_image_new (width, height, fi->channels);
  gsize n = (gsize) width * height * fi->channels;

  for (gsize i = 0; i < n; i++)
    img->v[i] = fi->is_float ? (gfloat) g_rand_double_range (rand, lo, hi)
        : g_rand_int_range (rand, 0, 256);
  return img;
}

GstBuffer *
gcvt_buffer_new (const RefImage * img, RefFormat format, gsize stride,
    gsize offset, gboolean meta)
{
  const RefFormatInfo *fi = ref_format_info (format);
  gsize size;
  GstBuffer *buf;
  GstMapInfo map;

  if (stride == 0)
    stride = ref_default_stride (format, img->width);
  size = offset + stride * img->height;
  buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_map (buf, &map, GST_MAP_WRITE);
  memset (map.data, 0xa5, size);
  for (guint y = 0; y < img->height; y++) {
    guint8 *row = map.data + offset + y * stride;
    for (guint x = 0; x < img->width; x++) {
      const gdouble *px = ref_pixel (img, x, y);
      if (fi->is_float) {
        gfloat f = (gfloat) px[0];
        memcpy (row + 4 * x, &f, 4);
      } else {
        for (guint c = 0; c < fi->channels; c++)
          row[fi->pixel_bytes * x + c] = (guint8) px[c];
      }
    }
  }
  gst_buffer_unmap (buf, &map);
  if (meta) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = { offset };
    gint strides[GST_VIDEO_MAX_PLANES] = { (gint) stride };
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        gst_video_format_from_string (fi->name), img->width, img->height, 1,
        offsets, strides);
  }
  return buf;
}

gdouble
gcvt_check_frame (GstBuffer * out, RefFormat in_format, RefFormat out_format,
    const RefImage * in, const RefParams * p, const gchar * what)
{
  return gcvt_check_frame_masked (out, in_format, out_format, in, p, NULL,
      what);
}

/* `out` against `ref`, ref_filter (in, p) */
static gdouble
check_frame (GstBuffer * out, RefFormat in_format, RefFormat out_format,
    const RefImage * in, const RefParams * p, const RefImage * ref,
    const gboolean * filtered, const gchar * what)
{
  const RefFormatInfo *oi = ref_format_info (out_format);
  const guint w = in->width, h = in->height;
  /* output units per input unit */
  const gdouble unit = in_format == REF_GRAY8 && out_format == REF_GRAY32F ?
      1.0 / 255.0 : (in_format == REF_GRAY32F && out_format == REF_GRAY8 ?
      255.0 : 1.0);
  const gdouble tol = ref_float_tolerance (p, in, unit);
  const gdouble tol_u8 = ref_u8_tolerance (p, in,
      ref_format_info (in_format)->is_float);
  GstVideoMeta *meta = gst_buffer_get_video_meta (out);
  gsize stride = meta ? (gsize) meta->stride[0] :
      ref_default_stride (out_format, w);
  gsize offset = meta ? meta->offset[0] : 0;
  GstMapInfo map;
  guint bad = 0, total = 0;
  gchar *first = NULL;
  gdouble worst = 0.0;

  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  fail_unless (map.size >= offset + stride * (h - 1) + w * oi->pixel_bytes,
      "%s: output of %" G_GSIZE_FORMAT " bytes is too small", what, map.size);
  for (guint y = 0; y < h; y++) {
    const guint8 *row = map.data + offset + y * stride;
    for (guint x = 0; x < w; x++)
      for (guint c = 0; c < oi->channels; c++) {
        gdouble e = ref_pixel (ref, x, y)[c], got, expect, allowed;
        total++;
        if (filtered && !filtered[y * w + x]) {
          /* outside the filtered area: the input, exactly */
          if (oi->is_float) {
            gfloat f;
            memcpy (&f, row + 4 * x, 4);
            got = f;
          } else {
            got = row[oi->pixel_bytes * x + c];
          }
          expect = ref_pixel (in, x, y)[c];
          allowed = 0.0;
        } else if (oi->is_float) {
          gfloat f;
          memcpy (&f, row + 4 * x, 4);
          got = f;
          expect = e * unit;
          allowed = tol;
        } else {
          got = row[oi->pixel_bytes * x + c];
          if (c == 3 && !p->filter_alpha) {
            expect = ref_pixel (in, x, y)[3];   /* copied exactly */
            allowed = 0.0;
          } else {
            expect = ref_to_u8 (e * unit);
            allowed = tol_u8;
          }
        }
        if (allowed > 0.0 && fabs (got - expect) > worst)
          worst = fabs (got - expect);
        if (!(fabs (got - expect) <= allowed)) {
          if (!first)
            first = g_strdup_printf ("(%u,%u) channel %u: got %.9g, expected "
                "%.9g (+-%.3g)", x, y, c, got, expect, allowed);
          bad++;
        }
      }
  }
  gst_buffer_unmap (out, &map);
  if (bad) {
    gchar *desc = ref_params_describe (p);
    ck_abort_msg ("%s: %ux%u %s -> %s: %u of %u samples wrong, first at "
        "%s; %s", what, w, h, ref_format_info (in_format)->name, oi->name,
        bad, total, first, desc);
    g_free (desc);
  }
  g_free (first);
  return worst;
}

gdouble
gcvt_check_frame_masked (GstBuffer * out, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    const gboolean * filtered, const gchar * what)
{
  RefImage *ref = gcvt_filter (in, p);
  gdouble worst = check_frame (out, in_format, out_format, in, p, ref,
      filtered, what);

  ref_image_free (ref);
  return worst;
}

gdouble
gcvt_check_frame_ref (GstBuffer * out, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    const RefImage * ref, const gchar * what)
{
  return check_frame (out, in_format, out_format, in, p, ref, NULL, what);
}

void
gcvt_assert_frame (GstBuffer * out, RefFormat in_format, RefFormat out_format,
    const RefImage * in, const RefParams * p, const gchar * what)
{
  gcvt_check_frame (out, in_format, out_format, in, p, what);
}

void
gcvt_run_and_check (GstElement * element, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    gsize stride, gsize offset, const gchar * what)
{
  GstHarness *h = gcvt_harness_new (element);
  GstBuffer *out;

  gcvt_set_caps (h, in_format, out_format, in->width, in->height);
  out = gcvt_process (h, gcvt_buffer_new (in, in_format, stride, offset,
          stride != 0 || offset != 0));
  gcvt_assert_frame (out, in_format, out_format, in, p, what);
  gst_buffer_unref (out);
  fail_unless (gcvt_pop (gcvt_bus (element), GST_MESSAGE_ERROR) == NULL,
      "%s: error on the bus", what);
  gst_harness_teardown (h);
}

/* --- messages and logs -------------------------------------------------- */

static gboolean
word_char (gchar c)
{
  return g_ascii_isalnum (c) || c == '-' || c == '_';
}

gboolean
gcvt_names (const gchar * text, const gchar * word)
{
  gsize n = strlen (word);

  for (const gchar * s = text; s && (s = strstr (s, word)); s++)
    if ((s == text || !word_char (s[-1])) && !word_char (s[n]))
      return TRUE;
  return FALSE;
}

GstMessage *
gcvt_pop (GstBus * bus, GstMessageType type)
{
  return gst_bus_pop_filtered (bus, type);
}

void
gcvt_assert_message (GstMessage * msg, GQuark domain, gint code,
    const gchar * word)
{
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL, "expected a message naming %s",
      GST_STR_NULL (word));
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, &debug);
  else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING)
    gst_message_parse_warning (msg, &err, &debug);
  else
    ck_abort_msg ("a %s message, not an error or warning",
        GST_MESSAGE_TYPE_NAME (msg));
  fail_unless (err->domain == domain && err->code == code,
      "expected %s %d, got %s %d: %s", g_quark_to_string (domain), code,
      g_quark_to_string (err->domain), err->code, err->message);
  if (word)
    fail_unless (gcvt_names (err->message, word), "message \"%s\" does not "
        "name %s", err->message, word);
  g_clear_error (&err);
  g_free (debug);
  gst_message_unref (msg);
}

void
gcvt_expect_start_error (GstElement * element, GQuark domain, gint code,
    const gchar * word)
{
  GstBus *bus = gcvt_bus (element);

  fail_unless_equals_int (gst_element_set_state (element, GST_STATE_PAUSED),
      GST_STATE_CHANGE_FAILURE);
  gcvt_assert_message (gcvt_pop (bus, GST_MESSAGE_ERROR), domain, code, word);
  fail_unless_equals_int (gst_element_set_state (element, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
}

void
gcvt_log_capture_start (void)
{
  g_mutex_lock (&log_lock);
  g_clear_pointer (&log_lines, g_ptr_array_unref);
  log_lines = g_ptr_array_new_with_free_func (g_free);
  g_mutex_unlock (&log_lock);
}

guint
gcvt_log_count (const gchar * property)
{
  guint n = 0;

  g_mutex_lock (&log_lock);
  for (guint i = 0; log_lines && i < log_lines->len; i++)
    n += gcvt_names (g_ptr_array_index (log_lines, i), property);
  g_mutex_unlock (&log_lock);
  return n;
}

guint
gcvt_log_total (void)
{
  guint n;

  g_mutex_lock (&log_lock);
  n = log_lines ? log_lines->len : 0;
  g_mutex_unlock (&log_lock);
  return n;
}

void
gcvt_log_capture_stop (void)
{
  g_mutex_lock (&log_lock);
  g_clear_pointer (&log_lines, g_ptr_array_unref);
  g_mutex_unlock (&log_lock);
}

/* --- memory -------------------------------------------------------------- */

gboolean
gcvt_limit_memory (gsize headroom, struct rlimit *saved)
{
#ifdef __linux__
  const gchar *preload = g_getenv ("LD_PRELOAD");
  gchar *status = NULL, *line;
  guint64 kb = 0;
  struct rlimit lim;
  gpointer probe;

  if (preload && strstr (preload, "vgpreload"))
    return FALSE;
  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return FALSE;
  line = strstr (status, "VmSize:");
  if (line)
    kb = g_ascii_strtoull (line + 7, NULL, 10);
  g_free (status);
  if (kb == 0 || getrlimit (RLIMIT_AS, saved) != 0)
    return FALSE;
  lim = *saved;
  lim.rlim_cur = kb * 1024 + headroom;
  if (saved->rlim_max != RLIM_INFINITY && lim.rlim_cur > saved->rlim_max)
    return FALSE;
  if (setrlimit (RLIMIT_AS, &lim) != 0)
    return FALSE;
  /* the limit has to bite */
  probe = g_try_malloc (headroom + 64 * 1024 * 1024);
  if (probe) {
    g_free (probe);
    setrlimit (RLIMIT_AS, saved);
    return FALSE;
  }
  return TRUE;
#else
  return FALSE;
#endif
}

void
gcvt_unlimit_memory (const struct rlimit *saved)
{
  fail_unless (setrlimit (RLIMIT_AS, saved) == 0);
}
