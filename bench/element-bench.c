/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-element-bench: frames/s through the gpuconvolve element,
 * appsrc ! gpuconvolve ! fakesink sync=false, with pre-filled input buffers
 * (pinned: memory of gcv_engine_host_alloc; pageable: g_malloc; both
 * pushed as shallow copies of one buffer per frame; appsrc: an
 * application's ring of g_malloc'd frames, each wrapped anew for each push
 * and reused once that buffer is freed) at several queue depths, against
 * the duplex bound of the same frame measured in the same run (one H2D and
 * one D2H at once on two streams). See README.md. */
#include "common.h"
#include "gst-util.h"
#include "hw-limits.h"

#include <gst/app/gstappsrc.h>
#include <math.h>
#include <string.h>

#define N_INPUTS 4              /* distinct input frames, pushed in turn */

typedef struct {
  GcvFormat format;
  guint width, height;
  guint size;                   /* gaussian size */
} Config;

static gchar *opt_configs = NULL;
static gchar *opt_depths = NULL;
static gchar *opt_inputs = NULL;
static gchar *opt_filter = NULL;
static gchar *opt_algorithm = NULL;
static gdouble opt_sigma = 0.0;
static gint opt_frames = 100;
static gint opt_warmup = 10;
static gint opt_runs = 20;
static gchar *opt_csv = NULL;
static gint opt_device = -1;
static gboolean opt_quick = FALSE;
static gint opt_app_buffers = 3;

static const GOptionEntry entries[] = {
  {"configs", 0, 0, G_OPTION_ARG_STRING, &opt_configs,
      "FORMAT:WxH:SIZE list (default RGBA:3840x2160:5,GRAY32F:4096x4096:17)",
      "LIST"},
  {"filter", 0, 0, G_OPTION_ARG_STRING, &opt_filter,
      "Built-in filter of the element (default gaussian)", "NAME"},
  {"sigma", 0, 0, G_OPTION_ARG_DOUBLE, &opt_sigma,
      "sigma of the filter (default 0: size/6)", "S"},
  {"algorithm", 0, 0, G_OPTION_ARG_STRING, &opt_algorithm,
      "algorithm property of the element (default auto)", "NAME"},
  {"depths", 0, 0, G_OPTION_ARG_STRING, &opt_depths,
      "queue-depth values (default 1,2,3)", "LIST"},
  {"inputs", 0, 0, G_OPTION_ARG_STRING, &opt_inputs,
      "Input memory: pinned, pageable, appsrc (default pinned,pageable)",
      "LIST"},
  {"app-buffers", 0, 0, G_OPTION_ARG_INT, &opt_app_buffers,
      "Frames in the application's ring of the appsrc input (default 3)",
      "N"},
  {"frames", 'n', 0, G_OPTION_ARG_INT, &opt_frames,
      "Frames timed per measurement (default 100)", "N"},
  {"warmup-frames", 0, 0, G_OPTION_ARG_INT, &opt_warmup,
      "Frames before the timing starts (default 10)", "N"},
  {"runs", 0, 0, G_OPTION_ARG_INT, &opt_runs,
      "Timed runs of the duplex bound (default 20)", "N"},
  {"csv", 0, 0, G_OPTION_ARG_FILENAME, &opt_csv,
      "CSV file to write (default element-bench.csv; empty: none)", "FILE"},
  {"device", 'd', 0, G_OPTION_ARG_INT, &opt_device,
      "CUDA device id (default -1: the first usable)", "ID"},
  {"quick", 0, 0, G_OPTION_ARG_NONE, &opt_quick,
      "Small frames, few frames (RGBA:640x360:5,GRAY32F:512x512:17, 30 "
      "frames)", NULL},
  {NULL}
};

static gboolean
parse_configs (const char *text, GArray * configs, GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    gchar **parts = g_strsplit (g_strstrip (*p), ":", -1);
    Config c;
    char *end = NULL;

    ok = g_strv_length (parts) == 3
        && gcv_format_from_name (parts[0], &c.format)
        && bench_parse_size (parts[1], &c.width, &c.height);
    if (ok) {
      c.size = (guint) strtoul (parts[2], &end, 10);
      ok = *end == '\0' && c.size >= 1 && c.size <= GCV_MAX_KERNEL_SIZE;
    }
    if (ok)
      g_array_append_val (configs, c);
    else
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "bad configuration '%s' (want FORMAT:WxH:SIZE)", *p);
    g_strfreev (parts);
  }
  g_strfreev (items);
  return ok;
}

static gboolean
parse_uints (const char *text, GArray * values, guint lo, guint hi,
    GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    char *end;
    unsigned long v = strtoul (*p, &end, 10);
    guint u = (guint) v;
    ok = end != *p && *end == '\0' && v >= lo && v <= hi;
    if (ok)
      g_array_append_val (values, u);
    else
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "bad value '%s' (want %u..%u)", *p, lo, hi);
  }
  g_strfreev (items);
  return ok;
}

/* --- one measurement ------------------------------------------------------ */

typedef struct {
  gint64 *times;                /* arrival of each frame at the sink, us */
  guint n;
  gint count;
} Arrivals;

static void
on_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer user)
{
  Arrivals *a = user;
  gint i = g_atomic_int_add (&a->count, 1);
  if (i >= 0 && (guint) i < a->n)
    a->times[i] = g_get_monotonic_time ();
}

typedef struct {
  double fps;
  gchar *active;
} Result;

/* The appsrc input: an application's ring of frames, each pushed wrapped
 * anew and reused only once that buffer was freed. */
typedef struct {
  GMutex lock;
  GCond freed;
  gboolean *in_use;
} Ring;

typedef struct {
  Ring *ring;
  guint index;
} RingFrame;

static void
ring_frame_freed (gpointer data)
{
  RingFrame *f = data;

  g_mutex_lock (&f->ring->lock);
  f->ring->in_use[f->index] = FALSE;
  g_cond_broadcast (&f->ring->freed);
  g_mutex_unlock (&f->ring->lock);
}

/* Frame i of the ring wrapped, once its last buffer was freed; NULL after
 * 30 s without (the element holds it). */
static GstBuffer *
ring_take (Ring * ring, RingFrame * frames, guint8 ** data, guint i,
    gsize size)
{
  gint64 until = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  gboolean given = TRUE;

  g_mutex_lock (&ring->lock);
  while (ring->in_use[i] && (given = g_cond_wait_until (&ring->freed,
              &ring->lock, until)));
  if (given)
    ring->in_use[i] = TRUE;
  g_mutex_unlock (&ring->lock);
  return given ? gst_buffer_new_wrapped_full (0, data[i], size, 0, size,
      &frames[i], ring_frame_freed) : NULL;
}

/* Pushes opt_warmup + opt_frames shallow copies of `inputs` in turn, or
 * with `n_ring` the frames of `inputs` (n_ring of them) wrapped anew, each
 * reused once freed; the rate counts the frames after the warm-up. */
static gboolean
measure (const Config * c, guint depth, guint8 ** inputs, guint n_ring,
    gsize frame_size, Result * result, GError ** error)
{
  Ring ring;
  RingFrame *ring_frames = g_new0 (RingFrame, MAX (n_ring, 1));
  GstElement *pipeline, *src, *conv, *sink;
  GstCaps *caps;
  GstBuffer *templates[N_INPUTS];
  Arrivals arrivals;
  guint total = (guint) (opt_warmup + opt_frames);
  gboolean ok = FALSE;
  gchar *sigma;

  pipeline = bench_gst_pipeline ("fakesink name=sink sync=false "
      "signal-handoffs=true", &src, &conv, &sink, error);
  if (!pipeline)
    return FALSE;
  caps = bench_gst_caps (c->format, c->width, c->height);
  g_object_set (src, "caps", caps, "format", GST_FORMAT_TIME, "block", TRUE,
      "max-bytes", (guint64) (2 * frame_size), NULL);
  gst_caps_unref (caps);
  gst_util_set_object_arg (G_OBJECT (conv), "backend", "cuda");
  gst_util_set_object_arg (G_OBJECT (conv), "filter",
      opt_filter ? opt_filter : "gaussian");
  gst_util_set_object_arg (G_OBJECT (conv), "algorithm",
      opt_algorithm ? opt_algorithm : "auto");
  sigma = g_strdup_printf ("%.17g", opt_sigma > 0.0 ? opt_sigma :
      MAX (c->size / 6.0, 0.5));
  gst_util_set_object_arg (G_OBJECT (conv), "sigma", sigma);
  g_free (sigma);
  g_object_set (conv, "size", c->size, "queue-depth", depth, NULL);
  if (opt_device >= 0)
    g_object_set (conv, "cuda-device-id", opt_device, NULL);

  arrivals.n = total;
  arrivals.count = 0;
  arrivals.times = g_new0 (gint64, total);
  g_signal_connect (sink, "handoff", G_CALLBACK (on_handoff), &arrivals);
  /* the application keeps its ring allocated until the pipeline stops */
  if (n_ring)
    gst_util_set_object_arg (G_OBJECT (conv), "host-register", "kept");
  g_mutex_init (&ring.lock);
  g_cond_init (&ring.freed);
  ring.in_use = g_new0 (gboolean, MAX (n_ring, 1));
  for (guint i = 0; i < n_ring; i++)
    ring_frames[i] = (RingFrame) { &ring, i };
  for (guint i = 0; i < N_INPUTS; i++)
    templates[i] = n_ring ? NULL : bench_gst_wrap (inputs[i], frame_size);

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE) {
    if (bench_gst_wait_eos (pipeline, GST_SECOND, error) || !*error)
      g_set_error (error, BENCH_GST_ERROR, 0, "the pipeline did not start");
    goto done;
  }
  for (guint i = 0; i < total; i++) {
    GstBuffer *b = n_ring ? ring_take (&ring, ring_frames, inputs, i % n_ring,
        frame_size) : gst_buffer_copy (templates[i % N_INPUTS]);
    if (!b) {
      g_set_error (error, BENCH_GST_ERROR, 0, "frame %u of the application's "
          "ring was not given back within 30 s", i % n_ring);
      break;
    }
    GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
    GST_BUFFER_DURATION (b) = GST_SECOND / 30;
    if (gst_app_src_push_buffer (GST_APP_SRC (src), b) != GST_FLOW_OK) {
      g_set_error (error, BENCH_GST_ERROR, 0, "appsrc refused frame %u", i);
      break;
    }
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  ok = bench_gst_wait_eos (pipeline, 300 * GST_SECOND, error);
  if (ok && (guint) g_atomic_int_get (&arrivals.count) < total) {
    g_set_error (error, BENCH_GST_ERROR, 0, "only %d of %u frames came out",
        g_atomic_int_get (&arrivals.count), total);
    ok = FALSE;
  }
  if (ok) {
    gint64 first = arrivals.times[opt_warmup - 1];
    gint64 last = arrivals.times[total - 1];
    result->fps = last > first ? opt_frames * 1e6 / (double) (last - first) :
        NAN;
    g_object_get (conv, "active-algorithm", &result->active, NULL);
  }

done:
  gst_element_set_state (pipeline, GST_STATE_NULL);
  for (guint i = 0; i < N_INPUTS; i++)
    if (templates[i])
      gst_buffer_unref (templates[i]);
  g_free (ring.in_use);
  g_free (ring_frames);
  g_mutex_clear (&ring.lock);
  g_cond_clear (&ring.freed);
  g_free (arrivals.times);
  gst_object_unref (src);
  gst_object_unref (conv);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return ok;
}

/* --- main ----------------------------------------------------------------- */

static void
csv_row (FILE * f, const Config * c, const char *input, guint depth,
    double fps, double bound, const char *active, const char *error)
{
  if (!f)
    return;
  fprintf (f, "%s,%u,%u,%s,%u,%s,%u,", gcv_format_name (c->format), c->width,
      c->height, opt_filter ? opt_filter : "gaussian", c->size, input, depth);
  if (!isnan (fps))
    fprintf (f, "%.3f", fps);
  fputc (',', f);
  if (!isnan (fps))
    fprintf (f, "%.4f", 1000.0 / fps);
  fprintf (f, ",%.3f,", bound);
  if (!isnan (fps))
    fprintf (f, "%.4f", fps / bound);
  fputc (',', f);
  bench_csv_field (f, active);
  fputc (',', f);
  bench_csv_field (f, error);
  fputc ('\n', f);
  fflush (f);
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx;
  GError *error = NULL;
  GArray *configs = g_array_new (FALSE, FALSE, sizeof (Config));
  GArray *depths = g_array_new (FALSE, FALSE, sizeof (guint));
  /* pinned, pageable, appsrc */
  static const char *const input_names[] = { "pinned", "pageable", "appsrc" };
  gboolean inputs[3] = { FALSE, FALSE, FALSE };
  GcvEngine *engine;
  FILE *csv = NULL;
  const char *csv_path;
  guint failures = 0;
  int device;
  gchar *text;

  ctx = g_option_context_new ("- frames/s through the gpuconvolve element");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &error)
      || !parse_configs (opt_configs ? opt_configs : opt_quick ?
          "RGBA:640x360:5,GRAY32F:512x512:17" :
          "RGBA:3840x2160:5,GRAY32F:4096x4096:17", configs, &error)
      || !parse_uints (opt_depths ? opt_depths : "1,2,3", depths, 1, 8,
          &error)) {
    fprintf (stderr, "gpuconvolve-element-bench: %s\n", error->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (opt_quick && opt_frames == 100)
    opt_frames = 30;
  if (opt_frames < 1 || opt_warmup < 1 || opt_runs < 1
      || opt_app_buffers < 1 || opt_app_buffers > 256) {
    fprintf (stderr, "gpuconvolve-element-bench: --frames, --warmup-frames "
        "and --runs must be at least 1, --app-buffers 1 to 256\n");
    return 2;
  }
  {
    gchar **items = g_strsplit (opt_inputs ? opt_inputs : "pinned,pageable",
        ",", -1);
    for (gchar ** p = items; *p; p++) {
      guint k = 0;
      while (k < G_N_ELEMENTS (input_names) && strcmp (*p, input_names[k]))
        k++;
      if (k == G_N_ELEMENTS (input_names)) {
        fprintf (stderr, "gpuconvolve-element-bench: unknown input '%s' "
            "(pinned, pageable, appsrc)\n", *p);
        return 2;
      }
      inputs[k] = TRUE;
    }
    g_strfreev (items);
  }

  bench_require_cuda (opt_device);
  gst_init (NULL, NULL);
  engine = gcv_engine_new (GCV_BACKEND_CUDA, opt_device, &error);
  if (!engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  BENCH_CUDA (cudaGetDevice (&device));
  csv_path = opt_csv ? opt_csv : "element-bench.csv";
  if (*csv_path) {
    gchar *dir = g_path_get_dirname (csv_path);
    g_mkdir_with_parents (dir, 0755);
    g_free (dir);
    csv = fopen (csv_path, "w");
    if (!csv)
      bench_die ("cannot write %s", csv_path);
    fputs ("format,width,height,filter,size,input,queue_depth,fps,"
        "ms_per_frame,duplex_bound_fps,fraction_of_bound,active_algorithm,"
        "error\n", csv);
  }
  text = bench_describe_device (device);
  printf ("gpuconvolve-element-bench %s\ndevice: %s\n%s\nframes/s over %d "
      "frames after %d warm-up frames, appsrc ! gpuconvolve ! fakesink "
      "sync=false\n", PACKAGE_VERSION, text, gst_version_string (),
      opt_frames, opt_warmup);
  if (inputs[2])
    printf ("appsrc: a ring of %d g_malloc'd frames, each wrapped anew, "
        "host-register=kept\n", opt_app_buffers);
  g_free (text);

  for (guint ci = 0; ci < configs->len; ci++) {
    const Config *c = &g_array_index (configs, Config, ci);
    gsize frame_size = bench_row_bytes (c->format, c->width) * c->height;
    BenchPcieLimit pcie;
    double bound;

    bench_limit_pcie (frame_size, 3, (guint) opt_runs, &pcie);
    bound = 1000.0 / pcie.duplex.median;
    printf ("\n%s %ux%u, %s %ux%u: duplex bound %.1f frames/s (H2D+D2H of "
        "one %.1f MB frame at once: %.3f ms; H2D alone %.3f ms, D2H alone "
        "%.3f ms)\n", gcv_format_name (c->format), c->width, c->height,
        opt_filter ? opt_filter : "gaussian", c->size, c->size, bound,
        frame_size / 1e6, pcie.duplex.median, pcie.h2d.median,
        pcie.d2h.median);
    printf ("%-9s %5s %10s %10s %8s  %s\n", "input", "depth", "frames/s",
        "ms/frame", "xbound", "active algorithm");
    for (guint k = 0; k < G_N_ELEMENTS (input_names); k++) {
      /* appsrc: the application's ring, else a frame per input */
      guint n_ring = k == 2 ? (guint) opt_app_buffers : 0;
      guint n_frames = k == 2 ? n_ring : N_INPUTS;
      guint8 **frames;
      const char *input = input_names[k];
      if (!inputs[k])
        continue;
      frames = g_new0 (guint8 *, n_frames);
      for (guint i = 0; i < n_frames; i++) {
        guint8 *random = bench_random_frame (c->format, c->width, c->height,
            1 + i % N_INPUTS);
        if (k == 0) {
          frames[i] = gcv_engine_host_alloc (engine, frame_size, &error);
          if (!frames[i])
            bench_die ("gcv_engine_host_alloc failed: %s", error->message);
          memcpy (frames[i], random, frame_size);
          g_free (random);
        } else {
          frames[i] = random;
        }
      }
      for (guint d = 0; d < depths->len; d++) {
        guint depth = g_array_index (depths, guint, d);
        Result r = { NAN, NULL };
        if (measure (c, depth, frames, n_ring, frame_size, &r, &error)) {
          printf ("%-9s %5u %10.2f %10.3f %8.3f  %s\n", input, depth, r.fps,
              1000.0 / r.fps, r.fps / bound, r.active ? r.active : "?");
          csv_row (csv, c, input, depth, r.fps, bound, r.active, NULL);
        } else {
          printf ("%-9s %5u %10s %10s %8s  FAIL: %s\n", input, depth, "-",
              "-", "-", error->message);
          csv_row (csv, c, input, depth, NAN, bound, NULL, error->message);
          g_clear_error (&error);
          failures++;
        }
        fflush (stdout);
        g_free (r.active);
      }
      for (guint i = 0; i < n_frames; i++) {
        if (k == 0)
          gcv_engine_host_free (engine, frames[i]);
        else
          g_free (frames[i]);
      }
      g_free (frames);
    }
  }
  if (csv)
    fclose (csv);
  gcv_engine_free (engine);
  g_array_unref (configs);
  g_array_unref (depths);
  return failures ? 1 : 0;
}
