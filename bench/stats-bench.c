/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-bench --statistics: each configuration's frame timed with
 * per-frame statistics off and on, in turn within each run, so that a busy
 * moment of the GPU falls on both alike.
 *
 * Frames are device frames (input and output in device memory, as behind
 * nvh264dec): for NV12 and I420 the whole frame, its planes run by their
 * own plans. Two times per frame: the GPU's, CUDA events around the
 * submit on the plan's stream (for NV12 and I420 the Y plane's, the one
 * measured with planes=luma), and the host's, from before the submit to
 * after gcv_plan_wait_stats() (launches and the statistics' read-back
 * included). Each configuration is also checked: with statistics the
 * output is the same bytes, and the statistics come back. And the device
 * memory a plan of the configuration holds at queue-depth 2, each slot
 * having run a frame with statistics: cudaMemGetInfo() before and after
 * (the frames' own buffers are made before). */
#include "stats-bench.h"
#include "common.h"
#include "configs.h"
#include "device-frame.h"
#include "timing.h"

#include <math.h>
#include <string.h>

/* One frame through the plan, with or without statistics: the GPU's time
 * on the plan's stream and the host's from submit to wait, in ms. */
static gboolean
run_frame (GcvPlan * plan, const BenchDeviceFrame * in,
    const BenchDeviceFrame * out, const GcvFrameOptions * options,
    cudaEvent_t start, cudaEvent_t stop, double *gpu_ms, double *host_ms,
    GcvFrameStats * stats, GError ** error)
{
  cudaStream_t stream = gcv_plan_get_cuda_stream (plan, 0);
  gint64 t0 = g_get_monotonic_time ();
  GcvTicket ticket;
  float ms = 0.0f;

  BENCH_CUDA (cudaEventRecord (start, stream));
  if (!gcv_plan_submit_with (plan, &in->img, &out->img, options, &ticket,
          error))
    return FALSE;
  BENCH_CUDA (cudaEventRecord (stop, stream));
  if (!gcv_plan_wait_stats (plan, ticket, stats, error))
    return FALSE;
  *host_ms = (g_get_monotonic_time () - t0) / 1000.0;
  BENCH_CUDA (cudaEventSynchronize (stop));
  BENCH_CUDA (cudaEventElapsedTime (&ms, start, stop));
  *gpu_ms = ms;
  return TRUE;
}

typedef struct {
  const BenchStatsRun *run;
  GcvEngine *engine;
  int device;
  cudaEvent_t start, stop;
  guint failures;
} Context;

/* MiB of device memory a plan of two slots holds once each has run a frame
 * with `options`. */
static double
plan_memory (Context * ctx, const GcvGeometry * g, const GcvFilter * filter,
    GcvFamily family, const BenchDeviceFrame * in,
    const BenchDeviceFrame * out, const GcvFrameOptions * options)
{
  gsize before, after, total;
  GError *error = NULL;
  GcvPlan *plan;
  GcvTicket t;

  BENCH_CUDA (cudaDeviceSynchronize ());
  if (!gcv_device_memory (ctx->device, &before, &total, &error))
    bench_die ("%s", error->message);
  plan = gcv_plan_new (ctx->engine, g, filter, family, 2, &error);
  for (guint i = 0; plan && i < 2; i++)
    if (!gcv_plan_submit_with (plan, &in->img, &out->img, options, &t,
            &error) || !gcv_plan_wait (plan, t, &error))
      bench_die ("a frame failed: %s", error->message);
  if (!plan)
    bench_die ("%s", error->message);
  BENCH_CUDA (cudaDeviceSynchronize ());
  if (!gcv_device_memory (ctx->device, &after, &total, &error))
    bench_die ("%s", error->message);
  gcv_plan_free (plan);
  return ((double) after - (double) before) / (1024.0 * 1024.0);
}

static void
run_config (Context * ctx, GcvFormat format, guint w, guint h,
    BenchShape shape, BenchForm form, GcvFamily family)
{
  const BenchStatsRun *r = ctx->run;
  const guint n = r->warmup + r->runs;
  GcvGeometry g = { format, format, w, h };
  GcvFrameOptions on;
  GcvFrameStats stats;
  GError *error = NULL;
  GcvFilter *filter;
  GcvPlan *plan = NULL;
  BenchDeviceFrame in, out;
  double *ms[2][2], gpu, host;  /* [statistics][gpu, host] */
  BenchStats med[2][2];
  guint8 *bytes[2];
  gsize size[2];
  gboolean same;
  double mib;

  filter = bench_make_filter (shape, form, r->seed, &error);
  if (filter)
    gcv_filter_set_planes (filter, r->planes_all ? GCV_PLANES_ALL :
        GCV_PLANES_LUMA);
  if (filter)
    plan = gcv_plan_new (ctx->engine, &g, filter, family, 1, &error);
  printf ("%-7s %5ux%-5u %3ux%-3u %-3s %-9s ", gcv_format_name (format), w,
      h, shape.kw, shape.kh, bench_form_name (form),
      gcv_family_nick (family));
  if (!plan) {
    printf ("error: %s\n", error->message);
    g_clear_error (&error);
    gcv_filter_free (filter);
    ctx->failures++;
    return;
  }
  gcv_frame_options_init (&on);
  on.statistics = TRUE;
  on.statistics_threshold = 0.5;
  bench_device_frame_alloc (&in, format, w, h);
  bench_device_frame_alloc (&out, format, w, h);
  bench_device_frame_fill (&in, format, r->seed);
  mib = plan_memory (ctx, &g, filter, family, &in, &out, &on);

  /* the output with statistics and without: the same bytes */
  for (guint s = 0; s < 2; s++) {
    BENCH_CUDA (cudaMemset2D (out.planes[0], out.pitch[0], s ? 0x5a : 0xa5,
            out.row[0], out.rows[0]));
    if (!run_frame (plan, &in, &out, s ? &on : NULL, ctx->start, ctx->stop,
            &gpu, &host, &stats, &error))
      bench_die ("a frame failed: %s", error->message);
    bytes[s] = bench_device_frame_download (&out, &size[s]);
  }
  same = size[0] == size[1] && memcmp (bytes[0], bytes[1], size[0]) == 0;
  g_free (bytes[0]);
  g_free (bytes[1]);

  for (guint s = 0; s < 2; s++)
    for (guint k = 0; k < 2; k++)
      ms[s][k] = g_new (double, r->runs);
  /* in turn, the order changing from run to run */
  for (guint i = 0; i < n; i++)
    for (guint j = 0; j < 2; j++) {
      const guint s = (i + j) % 2;
      if (!run_frame (plan, &in, &out, s ? &on : NULL, ctx->start,
              ctx->stop, &gpu, &host, &stats, &error))
        bench_die ("a frame failed: %s", error->message);
      if (s && stats.n_channels == 0)
        bench_die ("a frame that asked for statistics has none");
      if (i >= r->warmup) {
        ms[s][0][i - r->warmup] = gpu;
        ms[s][1][i - r->warmup] = host;
      }
    }
  for (guint s = 0; s < 2; s++)
    for (guint k = 0; k < 2; k++) {
      bench_stats_from (ms[s][k], r->runs, &med[s][k]);
      g_free (ms[s][k]);
    }
  printf ("%9.4f %9.4f %+7.1f%% %9.4f %9.4f %+7.1f%% %7.2f  %s  %s\n",
      med[0][0].median, med[1][0].median,
      100.0 * (med[1][0].median / med[0][0].median - 1.0),
      med[0][1].median, med[1][1].median,
      100.0 * (med[1][1].median / med[0][1].median - 1.0), mib,
      same ? "same" : "DIFFERENT", gcv_plan_describe (plan));
  if (!same)
    ctx->failures++;
  bench_device_frame_free (&in);
  bench_device_frame_free (&out);
  gcv_plan_free (plan);
  gcv_filter_free (filter);
}

static gboolean
parse_formats (const char *text, GArray * formats, GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    GcvFormat f;
    const char *name = g_strstrip (*p);
    if (!*name)
      continue;
    ok = gcv_format_from_name (name, &f);
    if (ok)
      g_array_append_val (formats, f);
    else
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "unknown format '%s'", name);
  }
  g_strfreev (items);
  return ok;
}

static gboolean
parse_sizes (const char *text, GArray * sizes, GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    guint wh[2];
    ok = bench_parse_size (g_strstrip (*p), &wh[0], &wh[1]);
    if (ok)
      g_array_append_vals (sizes, wh, 2);
    else
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "bad frame size '%s' (want WxH)", *p);
  }
  g_strfreev (items);
  return ok;
}

int
bench_stats (const BenchStatsRun * r)
{
  GArray *formats = g_array_new (FALSE, FALSE, sizeof (GcvFormat));
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (guint));
  GArray *shapes = g_array_new (FALSE, FALSE, sizeof (BenchShape));
  GArray *families = g_array_new (FALSE, FALSE, sizeof (GcvFamily));
  Context ctx = { r, NULL };
  GError *error = NULL;
  gchar *text;
  int device;

  if (!parse_formats (r->formats ? r->formats : "RGBA,NV12", formats, &error)
      || !parse_sizes (r->sizes ? r->sizes : "3840x2160", sizes, &error)
      || !bench_parse_shapes (r->kernels ? r->kernels : "3,9", shapes,
          &error)
      || !bench_parse_families (r->families ? r->families : "auto",
          families, &error)) {
    fprintf (stderr, "gpuconvolve-bench: %s\n", error->message);
    return 2;
  }
  bench_require_cuda (r->device);
  ctx.engine = gcv_engine_new (GCV_BACKEND_CUDA, r->device, &error);
  if (!ctx.engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  BENCH_CUDA (cudaGetDevice (&device));
  ctx.device = device;
  BENCH_CUDA (cudaEventCreate (&ctx.start));
  BENCH_CUDA (cudaEventCreate (&ctx.stop));
  text = bench_describe_device (device);
  printf ("gpuconvolve-bench --statistics %s\ndevice: %s\nengine: %s\n"
      "device frames; %u warm-up runs, median of %u, each run a frame "
      "without statistics and one with, in turn; NV12 and I420 planes=%s, "
      "GPU time of the Y plane's stream; ms; MiB: device memory of the "
      "plan at queue-depth 2\n", PACKAGE_VERSION, text,
      gcv_engine_describe (ctx.engine), r->warmup, r->runs,
      r->planes_all ? "all" : "luma");
  g_free (text);
  printf ("%-7s %11s %7s %-3s %-9s %9s %9s %8s %9s %9s %8s %7s  %s\n",
      "format", "frame", "kernel", "", "family", "gpu off", "gpu on",
      "added", "host off", "host on", "added", "MiB", "output, choice");
  for (guint f = 0; f < formats->len; f++)
    for (guint z = 0; z < sizes->len / 2; z++)
      for (guint s = 0; s < shapes->len; s++)
        for (BenchForm form = BENCH_FORM_2D; form <= BENCH_FORM_SEPARABLE;
            form++)
          for (guint a = 0; a < families->len; a++) {
            GcvFamily family = g_array_index (families, GcvFamily, a);
            if (r->forms[form] && bench_family_applies (family, form))
              run_config (&ctx, g_array_index (formats, GcvFormat, f),
                  g_array_index (sizes, guint, 2 * z),
                  g_array_index (sizes, guint, 2 * z + 1),
                  g_array_index (shapes, BenchShape, s), form, family);
          }
  if (ctx.failures)
    printf ("\n%u configuration(s) failed\n", ctx.failures);
  BENCH_CUDA (cudaEventDestroy (ctx.start));
  BENCH_CUDA (cudaEventDestroy (ctx.stop));
  gcv_engine_free (ctx.engine);
  g_array_unref (formats);
  g_array_unref (sizes);
  g_array_unref (shapes);
  g_array_unref (families);
  return ctx.failures ? 1 : 0;
}
