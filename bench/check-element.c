/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The element against the engine's device path on small frames. */
#include "check-element.h"
#include "common.h"
#include "compare.h"
#include "gst-util.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <string.h>

#define CHECK_WIDTH 97
#define CHECK_HEIGHT 61

/* A filter given to the engine and to the element the same way. */
typedef struct {
  const char *name;
  GcvBuiltin builtin;           /* CUSTOM: kernel or row/column below */
  guint size;
  gdouble sigma;
  guint kw, kh;
  gboolean as_row_column;       /* custom: row-kernel and column-kernel */
} Case;

static const Case cases[] = {
  {"gaussian-5", GCV_BUILTIN_GAUSSIAN, 5, 1.2, 0, 0, FALSE},
  {"sobel-x-3", GCV_BUILTIN_SOBEL_X, 3, 1.0, 0, 0, FALSE},
  {"random-7x7", GCV_BUILTIN_CUSTOM, 0, 1.0, 7, 7, FALSE},
  {"random-3x15", GCV_BUILTIN_CUSTOM, 0, 1.0, 3, 15, FALSE},
  {"random-17x5", GCV_BUILTIN_CUSTOM, 0, 1.0, 17, 5, FALSE},
  {"rowcol-9x1", GCV_BUILTIN_CUSTOM, 0, 1.0, 9, 1, TRUE},
  {"rowcol-1x31", GCV_BUILTIN_CUSTOM, 0, 1.0, 1, 31, TRUE},
};

static const GcvFormat formats[] = { GCV_FORMAT_GRAY32F, GCV_FORMAT_RGBA };

/* The taps of a custom case: a random kernel with a positive centre, or
 * random row and column kernels. */
typedef struct {
  gfloat *kernel, *row, *column;
} Taps;

static void
make_taps (const Case * c, guint32 seed, Taps * t)
{
  GRand *rand = g_rand_new_with_seed (seed);

  memset (t, 0, sizeof (*t));
  if (c->builtin != GCV_BUILTIN_CUSTOM) {
    g_rand_free (rand);
    return;
  }
  if (c->as_row_column) {
    t->row = g_new (gfloat, c->kw);
    t->column = g_new (gfloat, c->kh);
    for (guint i = 0; i < c->kw; i++)
      t->row[i] = (gfloat) g_rand_double_range (rand, 0.0, 2.0 / c->kw);
    for (guint j = 0; j < c->kh; j++)
      t->column[j] = (gfloat) g_rand_double_range (rand, 0.0, 2.0 / c->kh);
  } else {
    guint n = c->kw * c->kh;
    t->kernel = g_new (gfloat, n);
    for (guint i = 0; i < n; i++)
      t->kernel[i] = (gfloat) g_rand_double_range (rand, -0.5, 1.5) / n;
  }
  g_rand_free (rand);
}

static void
free_taps (Taps * t)
{
  g_free (t->kernel);
  g_free (t->row);
  g_free (t->column);
}

static GcvFilter *
make_filter (const Case * c, const Taps * t, GError ** error)
{
  GcvFilterDesc desc;

  gcv_filter_desc_init (&desc);
  desc.builtin = c->builtin;
  desc.size = c->size;
  desc.sigma = c->sigma;
  if (c->builtin == GCV_BUILTIN_CUSTOM) {
    desc.kernel_width = c->kw;
    desc.kernel_height = c->kh;
    if (t->row) {
      desc.row_kernel = t->row;
      desc.n_row_kernel = c->kw;
      desc.column_kernel = t->column;
      desc.n_column_kernel = c->kh;
    } else {
      desc.kernel = t->kernel;
      desc.n_kernel = c->kw * c->kh;
    }
  }
  return gcv_filter_new (&desc, error);
}

/* The engine's device path: frame into the slot's device input, submitted
 * in place to a pitched device output, then read back. */
static gboolean
run_engine (GcvEngine * engine, GcvFormat format, const GcvFilter * filter,
    const guint8 * in, guint8 * out, gchar ** description, GError ** error)
{
  GcvGeometry g = { format, format, CHECK_WIDTH, CHECK_HEIGHT };
  gsize row = bench_row_bytes (format, CHECK_WIDTH);
  GcvPlan *plan = gcv_plan_new (engine, &g, filter, GCV_FAMILY_AUTO, 1,
      error);
  GcvImage src, dst;
  cudaStream_t stream;
  gboolean ok;

  if (!plan)
    return FALSE;
  *description = g_strdup (gcv_plan_describe (plan));
  stream = gcv_plan_get_cuda_stream (plan, 0);
  if (!stream || !gcv_plan_get_device_input (plan, 0, &src))
    bench_die ("the plan has no CUDA stream or device input");
  BENCH_CUDA (cudaStreamSynchronize (stream));
  BENCH_CUDA (cudaMemcpy2DAsync (src.data, src.stride, in, row, row,
          CHECK_HEIGHT, cudaMemcpyHostToDevice, stream));
  BENCH_CUDA (cudaStreamSynchronize (stream));
  src.on_device = TRUE;
  BENCH_CUDA (cudaMallocPitch (&dst.data, &dst.stride, row, CHECK_HEIGHT));
  /* 0xff bytes (NaN floats) wherever the engine would write nothing */
  BENCH_CUDA (cudaMemset2DAsync (dst.data, dst.stride, 0xff, row,
          CHECK_HEIGHT, stream));
  BENCH_CUDA (cudaStreamSynchronize (stream));
  dst.on_device = TRUE;
  ok = gcv_plan_run (plan, &src, &dst, error);
  if (ok) {
    BENCH_CUDA (cudaMemcpy2D (out, row, dst.data, dst.stride, row,
            CHECK_HEIGHT, cudaMemcpyDeviceToHost));
  }
  BENCH_CUDA (cudaFree (dst.data));
  gcv_plan_free (plan);
  return ok;
}

/* The element: one frame through appsrc ! gpuconvolve ! appsink. */
static gboolean
run_element (GcvFormat format, const Case * c, const Taps * t, guint8 * in,
    guint8 * out, gchar ** active, GError ** error)
{
  GstElement *pipeline, *src, *conv, *sink;
  GstCaps *caps = bench_gst_caps (format, CHECK_WIDTH, CHECK_HEIGHT);
  gsize row = bench_row_bytes (format, CHECK_WIDTH);
  GstSample *sample = NULL;
  GstBuffer *buf;
  gboolean ok = FALSE;

  pipeline = bench_gst_pipeline ("appsink name=sink sync=false", &src, &conv,
      &sink, error);
  if (!pipeline) {
    gst_caps_unref (caps);
    return FALSE;
  }
  g_object_set (src, "caps", caps, "format", GST_FORMAT_TIME, NULL);
  g_object_set (sink, "caps", caps, NULL);
  gst_util_set_object_arg (G_OBJECT (conv), "backend", "cuda");
  g_object_set (conv, "queue-depth", 2u, NULL);
  if (c->builtin != GCV_BUILTIN_CUSTOM) {
    gst_util_set_object_arg (G_OBJECT (conv), "filter",
        gcv_builtin_nick (c->builtin));
    g_object_set (conv, "size", c->size, "sigma", c->sigma, NULL);
  } else {
    g_object_set (conv, "kernel-width", c->kw, "kernel-height", c->kh, NULL);
    if (t->row) {
      bench_gst_set_floats (G_OBJECT (conv), "row-kernel", t->row, c->kw);
      bench_gst_set_floats (G_OBJECT (conv), "column-kernel", t->column,
          c->kh);
    } else {
      bench_gst_set_floats (G_OBJECT (conv), "kernel", t->kernel,
          c->kw * c->kh);
    }
  }

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE) {
    bench_gst_wait_eos (pipeline, 0, error);
    if (error && !*error)
      g_set_error (error, BENCH_GST_ERROR, 0, "the pipeline did not start");
    goto done;
  }
  buf = bench_gst_wrap (in, row * CHECK_HEIGHT);
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  if (gst_app_src_push_buffer (GST_APP_SRC (src), buf) != GST_FLOW_OK
      || gst_app_src_end_of_stream (GST_APP_SRC (src)) != GST_FLOW_OK) {
    g_set_error (error, BENCH_GST_ERROR, 0, "appsrc refused the frame");
    goto done;
  }
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
      30 * GST_SECOND);
  if (!sample) {
    if (bench_gst_wait_eos (pipeline, GST_SECOND, error))
      g_set_error (error, BENCH_GST_ERROR, 0, "end of stream without a frame");
    goto done;
  }
  {
    GstBuffer *outbuf = gst_sample_get_buffer (sample);
    GstVideoMeta *meta = gst_buffer_get_video_meta (outbuf);
    gsize offset = meta ? meta->offset[0] : 0;
    gsize stride = meta ? (gsize) meta->stride[0] : row;
    GstMapInfo map;

    if (!gst_buffer_map (outbuf, &map, GST_MAP_READ)) {
      g_set_error (error, BENCH_GST_ERROR, 0, "cannot map the output");
      goto done;
    }
    if (map.size < offset + stride * (CHECK_HEIGHT - 1) + row) {
      g_set_error (error, BENCH_GST_ERROR, 0, "output buffer of %"
          G_GSIZE_FORMAT " bytes is too small", map.size);
      gst_buffer_unmap (outbuf, &map);
      goto done;
    }
    for (guint y = 0; y < CHECK_HEIGHT; y++)
      memcpy (out + y * row, map.data + offset + y * stride, row);
    gst_buffer_unmap (outbuf, &map);
  }
  g_object_get (conv, "active-algorithm", active, NULL);
  ok = bench_gst_wait_eos (pipeline, 30 * GST_SECOND, error);

done:
  if (sample)
    gst_sample_unref (sample);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (conv);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  gst_caps_unref (caps);
  return ok;
}

static gboolean
check_case (GcvEngine * engine, GcvFormat format, const Case * c,
    guint32 seed, const BenchSamples * all)
{
  gsize row = bench_row_bytes (format, CHECK_WIDTH);
  guint8 *in = bench_random_frame (format, CHECK_WIDTH, CHECK_HEIGHT, seed);
  guint8 *from_engine = g_malloc0 (row * CHECK_HEIGHT);
  guint8 *from_element = g_malloc0 (row * CHECK_HEIGHT);
  gchar *description = NULL, *active = NULL;
  GcvFilter *filter;
  GError *error = NULL;
  Taps taps;
  gboolean ok = FALSE;
  double tol, d_engine, d_element, d_between;

  make_taps (c, seed, &taps);
  filter = make_filter (c, &taps, &error);
  if (!filter) {
    printf ("FAIL: check-element %s %s: %s\n", gcv_format_name (format),
        c->name, error->message);
    goto out;
  }
  if (!run_engine (engine, format, filter, in, from_engine, &description,
          &error)) {
    printf ("FAIL: check-element %s %s: engine: %s\n",
        gcv_format_name (format), c->name, error->message);
    goto out;
  }
  if (!run_element (format, c, &taps, in, from_element, &active, &error)) {
    printf ("FAIL: check-element %s %s: element: %s\n",
        gcv_format_name (format), c->name, error->message);
    goto out;
  }
  tol = bench_tolerance (format, filter, bench_max_abs (format, in,
          CHECK_WIDTH, CHECK_HEIGHT));
  d_engine = bench_check_samples (format, in, row, from_engine, row,
      CHECK_WIDTH, CHECK_HEIGHT, filter, all, TRUE);
  d_element = bench_check_samples (format, in, row, from_element, row,
      CHECK_WIDTH, CHECK_HEIGHT, filter, all, TRUE);
  d_between = bench_max_diff (format, from_engine, row, from_element, row,
      CHECK_WIDTH, CHECK_HEIGHT, TRUE);
  ok = d_engine <= tol && d_element <= tol
      && d_between <= (format == GCV_FORMAT_GRAY32F ? 2.0 * tol : 1.0);
  printf ("%s: check-element %-7s %-12s engine-vs-ref %.3g element-vs-ref "
      "%.3g engine-vs-element %.3g (tolerance %.3g)%s; engine: %s; "
      "element: %s\n", ok ? "ok" : "FAIL", gcv_format_name (format), c->name,
      d_engine, d_element, d_between, tol,
      memcmp (from_engine, from_element, row * CHECK_HEIGHT) == 0 ?
      ", bit-exact" : "", description, active ? active : "?");

out:
  fflush (stdout);
  g_clear_error (&error);
  gcv_filter_free (filter);
  free_taps (&taps);
  g_free (description);
  g_free (active);
  g_free (in);
  g_free (from_engine);
  g_free (from_element);
  return ok;
}

guint
bench_check_element (gint device_id, guint32 seed)
{
  GError *error = NULL;
  GcvEngine *engine = gcv_engine_new (GCV_BACKEND_CUDA, device_id, &error);
  BenchSamples *all = bench_samples_all (CHECK_WIDTH, CHECK_HEIGHT);
  guint failures = 0, n = 0;

  if (!engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  printf ("\nElement check: %ux%u frames through the engine's device path and "
      "through appsrc ! gpuconvolve backend=cuda ! appsink\n", CHECK_WIDTH,
      CHECK_HEIGHT);
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++, n++)
      if (!check_case (engine, formats[f], &cases[i], seed + 17 * n, all))
        failures++;
  printf ("Element check: %u of %u cases %s\n", failures ? failures : n, n,
      failures ? "FAILED" : "agree");
  bench_samples_free (all);
  gcv_engine_free (engine);
  return failures;
}
