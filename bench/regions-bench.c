/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-bench --regions: what privacy regions cost on the GPU, with
 * the engine's public API. An NV12 3840x2160 frame in device memory (as
 * nvh264dec hands it on), eight regions of 200x200 spread over it, a
 * 31x31 Gaussian, planes=luma (the element's default: U and V copied):
 *
 *   inside   against a copy of the frame (cudaMemcpy2DAsync of both
 *            planes), the least a frame that is mostly copied can take:
 *            target <= 1.3x the copy;
 *   outside  against the whole frame filtered (no regions) by the same
 *            plan: target <= 1.1x the whole frame.
 *
 * Each time is the GPU's for the whole frame: the frame's planes run on
 * streams of their own (gcv_plan_get_next_cuda_streams()), so they fork
 * from the bench's stream after its start event and join it before its
 * stop event; the copy runs on that stream itself. bench_time() as the
 * kernel level (warm-up runs, the median), the host's submit included;
 * then again each run queued whole behind a hold (bench_time_held()), the
 * GPU's own time without the gaps where it waits for the host's submit.
 * Before the timing each mode's output is checked, cheaply: its copied
 * samples the input's bytes, its filtered ones within 1 of the whole
 * frame's output (docs/regions.md: inside the filtered area the output
 * is what filtering the whole frame gives), and the filter seen to change
 * them. */
#include "regions-bench.h"
#include "common.h"
#include "configs.h"
#include "device-frame.h"
#include "report.h"
#include "timing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 3840
#define HEIGHT 2160
#define KERNEL 31
#define N_REGIONS 8
#define SIDE 200
#define INSIDE_TARGET 1.3       /* x the copy */
#define OUTSIDE_TARGET 1.1      /* x the whole frame */
/* 8-bit outputs of two paths of the engine, each within 1 of the exact
 * value and rounding the same float (docs/filters.md), differ by 1 at
 * most, as the kernel level takes them */
#define TOLERANCE 1
/* The hold before each run of the second timing: some twenty times what
 * the host takes to queue one */
#define HOLD_US 2000

/* A region in the middle of each cell of a 4x2 grid over the frame. */
static void
layout (GcvRect * r)
{
  const gint cw = WIDTH / 4, ch = HEIGHT / 2;

  for (guint i = 0; i < N_REGIONS; i++)
    r[i] = (GcvRect) { (gint) (i % 4) * cw + (cw - SIDE) / 2,
      (gint) (i / 4) * ch + (ch - SIDE) / 2, SIDE, SIDE};
}

static gboolean
in_regions (const GcvRect * r, guint x, guint y)
{
  for (guint i = 0; i < N_REGIONS; i++)
    if ((gint) x >= r[i].x && (gint) x < r[i].x + r[i].width
        && (gint) y >= r[i].y && (gint) y < r[i].y + r[i].height)
      return TRUE;
  return FALSE;
}

/* One frame through the plan on its streams, forked from and joined to
 * the bench's stream; or the copy of the frame on that stream. */
typedef struct {
  GcvPlan *plan;
  const BenchDeviceFrame *in, *out;
  const GcvFrameOptions *options;       /* NULL: the whole frame */
  cudaStream_t stream;
  cudaEvent_t fork, join[3];
  GcvTicket ticket;
} Job;

static void
enqueue_frame (gpointer user)
{
  Job *j = user;
  gpointer streams[3];
  const guint n = MIN (gcv_plan_get_next_cuda_streams (j->plan, streams,
          3), 3);
  GError *error = NULL;

  if (n == 0)
    bench_die ("the plan names no CUDA stream");
  BENCH_CUDA (cudaEventRecord (j->fork, j->stream));
  for (guint i = 0; i < n; i++)
    BENCH_CUDA (cudaStreamWaitEvent (streams[i], j->fork, 0));
  if (!gcv_plan_submit_with (j->plan, &j->in->img, &j->out->img, j->options,
          &j->ticket, &error))
    bench_die ("a frame failed: %s", error->message);
  for (guint i = 0; i < n; i++) {
    BENCH_CUDA (cudaEventRecord (j->join[i], streams[i]));
    BENCH_CUDA (cudaStreamWaitEvent (j->stream, j->join[i], 0));
  }
}

static void
finish_frame (gpointer user)
{
  Job *j = user;
  GError *error = NULL;

  if (!gcv_plan_wait (j->plan, j->ticket, &error))
    bench_die ("a frame failed: %s", error->message);
}

static void
enqueue_copy (gpointer user)
{
  Job *j = user;

  for (guint i = 0; i < j->in->n_planes; i++)
    BENCH_CUDA (cudaMemcpy2DAsync (j->out->planes[i], j->out->pitch[i],
            j->in->planes[i], j->in->pitch[i], j->in->row[i],
            j->in->rows[i], cudaMemcpyDeviceToDevice, j->stream));
}

/* The output of one frame (its bytes, planes packed) into a frame set to
 * a pattern first, so that nothing of an earlier frame passes. */
static guint8 *
run_once (Job * j, gsize * size)
{
  bench_device_frame_set (j->out, 0xa5);
  BENCH_CUDA (cudaDeviceSynchronize ());
  enqueue_frame (j);
  finish_frame (j);
  BENCH_CUDA (cudaStreamSynchronize (j->stream));
  return bench_device_frame_download (j->out, size);
}

/* Checks a frame with regions against the input and the whole frame's
 * output; FALSE with the first sample that fails in `why`. */
static gboolean
check_frame (GcvRegionMode mode, const GcvRect * r, const guint8 * in,
    const guint8 * out, const guint8 * whole, gsize size, int *max_diff,
    GString * why)
{
  const gsize luma = (gsize) WIDTH * HEIGHT;
  guint64 filtered = 0, changed = 0, bad = 0;

  *max_diff = 0;
  for (guint y = 0; y < HEIGHT; y++)
    for (guint x = 0; x < WIDTH; x++) {
      const gsize i = (gsize) y * WIDTH + x;
      const int d = abs ((int) out[i] - (int) whole[i]);
      if (in_regions (r, x, y) != (mode == GCV_REGIONS_INSIDE)) {
        if (out[i] != in[i] && bad++ == 0)
          g_string_printf (why, "Y (%u, %u) is copied: %u, the input %u", x,
              y, out[i], in[i]);
        continue;
      }
      filtered++;
      changed += out[i] != in[i];
      *max_diff = MAX (*max_diff, d);
      if (d > TOLERANCE && bad++ == 0)
        g_string_printf (why, "Y (%u, %u) is filtered: %u, the whole "
            "frame's %u", x, y, out[i], whole[i]);
    }
  /* planes=luma: U and V copied */
  for (gsize i = luma; i < size; i++)
    if (out[i] != in[i] && bad++ == 0)
      g_string_printf (why, "UV byte %" G_GSIZE_FORMAT " is %u, the input "
          "%u", i - luma, out[i], in[i]);
  if (!bad && changed < filtered / 2)
    g_string_printf (why, "the filter changed %" G_GUINT64_FORMAT " of "
        "%" G_GUINT64_FORMAT " filtered samples", changed, filtered);
  else if (bad)
    g_string_append_printf (why, " (%" G_GUINT64_FORMAT " samples wrong)",
        bad);
  return why->len == 0;
}

static void
report_row (BenchReport * report, const char *impl, const BenchStats * st,
    double copy_ms, const char *description, int max_diff,
    const char *note)
{
  BenchRow row;
  const gsize bytes = (gsize) WIDTH * HEIGHT * 3 / 2;

  bench_row_init (&row, "regions");
  row.format = GCV_FORMAT_NV12;
  row.width = WIDTH;
  row.height = HEIGHT;
  if (g_str_has_prefix (impl, "engine")) {
    row.kw = row.kh = KERNEL;
    row.form = bench_form_name (BENCH_FORM_SEPARABLE);
    row.rank1 = 1;
  }
  row.impl = impl;
  row.description = description;
  row.stats = *st;
  row.gbps = 2.0 * bytes / (st->median * 1e6);
  row.x_copy = st->median / copy_ms;
  if (max_diff >= 0) {
    row.max_diff = max_diff;
    row.tolerance = TOLERANCE;
    row.check = "ok";
  }
  row.note = note;
  bench_report_row (report, &row);
}

/* One line of the summary: the ratio against its target, MET or MISSED. */
static void
verdict (const char *mode, double ms, const char *against, double base,
    double target)
{
  const double ratio = ms / base;
  gchar *goal = g_strdup_printf ("<= %.1fx %s", target, against);

  printf ("%-8s %9.4f  %-12s %9.4f %6.2f  %-20s %s\n", mode, ms, against,
      base, ratio, goal, ratio <= target ? "MET" : "MISSED");
  g_free (goal);
}

/* The copy, the whole frame and each mode, timed as the host queues them
 * (bench_time(): the host's submit included where the GPU waits for it),
 * or `held`, each run queued whole behind a hold (the GPU's own time). */
static void
time_rows (Job * job, const BenchRegionsRun * run,
    const GcvFrameOptions * options, gboolean held, GcvPlan * plan,
    const int *max_diff, BenchReport * report)
{
  const char *suffix = held ? "-held" : "";
  BenchStats copy, whole, with[2];
  gchar *notes[2], *impl;

#define TIME(fn, fin, st) (held ? bench_time_held (job->stream, fn, fin, job, \
        run->warmup, run->runs, HOLD_US, st) : bench_time (job->stream, fn,  \
        fin, job, run->warmup, run->runs, st))
  TIME (enqueue_copy, NULL, &copy);
  job->options = NULL;
  TIME (enqueue_frame, finish_frame, &whole);
  for (guint m = 0; m < 2; m++) {
    job->options = &options[m];
    TIME (enqueue_frame, finish_frame, &with[m]);
  }
#undef TIME
  notes[0] = g_strdup_printf ("%.2fx the copy, target <= %.1fx",
      with[0].median / copy.median, INSIDE_TARGET);
  notes[1] = g_strdup_printf ("%.2fx the whole frame, target <= %.1fx",
      with[1].median / whole.median, OUTSIDE_TARGET);
  bench_report_section (report, "Regions, NV12 %ux%u in device memory, "
      "%u of %ux%u, %ux%u Gaussian, %s: copy %.4f ms", WIDTH, HEIGHT,
      N_REGIONS, SIDE, SIDE, KERNEL, KERNEL, held ? "each run queued whole "
      "behind a hold (the GPU's own time)" : "as the host queues each run",
      copy.median);
  impl = g_strconcat ("copy-memcpy2d", suffix, NULL);
  report_row (report, impl, &copy, copy.median,
      "cudaMemcpy2DAsync device to device, both planes", -1, "");
  g_free (impl);
  impl = g_strconcat ("engine-whole", suffix, NULL);
  report_row (report, impl, &whole, copy.median, gcv_plan_describe (plan),
      -1, "no regions");
  g_free (impl);
  for (guint m = 0; m < 2; m++) {
    impl = g_strconcat (m ? "engine-outside" : "engine-inside", suffix, NULL);
    report_row (report, impl, &with[m], copy.median,
        gcv_plan_describe (plan), max_diff[m], notes[m]);
    g_free (impl);
  }
  printf ("\n%-8s %9s  %-12s %9s %6s  %-20s %s\n", "mode", "ms med",
      "against", "ms med", "ratio", "target", "verdict");
  verdict ("inside", with[0].median, "copy", copy.median, INSIDE_TARGET);
  verdict ("outside", with[1].median, "whole frame", whole.median,
      OUTSIDE_TARGET);
  g_free (notes[0]);
  g_free (notes[1]);
}

int
bench_regions (const BenchRegionsRun * run)
{
  const GcvGeometry g = { GCV_FORMAT_NV12, GCV_FORMAT_NV12, WIDTH, HEIGHT };
  const BenchShape shape = { KERNEL, KERNEL };
  const char *modes[] = { "inside", "outside" };
  GcvRect r[N_REGIONS];
  GcvFrameOptions options[2];
  BenchDeviceFrame in, out;
  BenchReport *report;
  GcvEngine *engine;
  GcvFilter *filter;
  GcvPlan *plan;
  GError *error = NULL;
  GString *why = g_string_new (NULL);
  Job job = { NULL };
  guint8 *in_bytes, *whole_bytes;
  gsize size;
  int device, max_diff[2];
  gchar *text;
  guint failures = 0;

  bench_require_cuda (run->device);
  engine = gcv_engine_new (GCV_BACKEND_CUDA, run->device, &error);
  if (!engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  BENCH_CUDA (cudaGetDevice (&device));
  filter = bench_make_filter (shape, BENCH_FORM_SEPARABLE, run->seed, &error);
  plan = filter ? gcv_plan_new (engine, &g, filter, GCV_FAMILY_AUTO, 1,
      &error) : NULL;
  if (!plan)
    bench_die ("cannot make the plan: %s", error->message);
  report = bench_report_new (run->csv, &error);
  if (!report)
    bench_die ("%s", error->message);

  layout (r);
  for (guint m = 0; m < 2; m++) {
    gcv_frame_options_init (&options[m]);
    options[m].region_mode = m ? GCV_REGIONS_OUTSIDE : GCV_REGIONS_INSIDE;
    options[m].regions = r;
    options[m].n_regions = N_REGIONS;
  }
  text = bench_describe_device (device);
  printf ("gpuconvolve-bench --regions %s\ndevice: %s\nengine: %s\n",
      PACKAGE_VERSION, text, gcv_engine_describe (engine));
  g_free (text);
  printf ("NV12 %ux%u in device memory, planes=luma (U and V copied); %u "
      "regions of %ux%u at", WIDTH, HEIGHT, N_REGIONS, SIDE, SIDE);
  for (guint i = 0; i < N_REGIONS; i++)
    printf (" (%d,%d)", r[i].x, r[i].y);
  printf ("; %ux%u Gaussian, sigma %u/6, as row and column kernels; border "
      "replicate\ntiming: CUDA events on one stream, the frame's plane "
      "streams forked from it and joined to it; %u warm-up runs, median of "
      "%u (min, max shown)\n", KERNEL, KERNEL, KERNEL, run->warmup,
      run->runs);
  if (run->csv && *run->csv)
    printf ("CSV: %s\n", run->csv);

  bench_device_frame_alloc (&in, GCV_FORMAT_NV12, WIDTH, HEIGHT);
  bench_device_frame_alloc (&out, GCV_FORMAT_NV12, WIDTH, HEIGHT);
  bench_device_frame_fill (&in, GCV_FORMAT_NV12, run->seed);
  BENCH_CUDA (cudaStreamCreateWithFlags (&job.stream,
          cudaStreamNonBlocking));
  BENCH_CUDA (cudaEventCreateWithFlags (&job.fork, cudaEventDisableTiming));
  for (guint i = 0; i < 3; i++)
    BENCH_CUDA (cudaEventCreateWithFlags (&job.join[i],
            cudaEventDisableTiming));
  job.plan = plan;
  job.in = &in;
  job.out = &out;

  /* the check, before anything is timed */
  in_bytes = bench_device_frame_download (&in, &size);
  whole_bytes = run_once (&job, &size);
  for (guint m = 0; m < 2; m++) {
    guint8 *bytes;
    job.options = &options[m];
    bytes = run_once (&job, &size);
    g_string_truncate (why, 0);
    if (!check_frame (options[m].region_mode, r, in_bytes, bytes,
            whole_bytes, size, &max_diff[m], why)) {
      printf ("FAIL: regions %s: %s\n", modes[m], why->str);
      fprintf (stderr, "gpuconvolve-bench: regions %s: the output is "
          "wrong: %s\n", modes[m], why->str);
      failures++;
    }
    g_free (bytes);
  }
  g_free (in_bytes);
  g_free (whole_bytes);

  if (!failures) {
    printf ("check: copied samples the input's bytes, filtered ones within "
        "%d of the whole frame's (largest difference %d inside, %d "
        "outside): ok\n", TOLERANCE, max_diff[0], max_diff[1]);
    for (guint held = 0; held < 2; held++)
      time_rows (&job, run, options, held, plan, max_diff, report);
  }

  BENCH_CUDA (cudaEventDestroy (job.fork));
  for (guint i = 0; i < 3; i++)
    BENCH_CUDA (cudaEventDestroy (job.join[i]));
  BENCH_CUDA (cudaStreamDestroy (job.stream));
  bench_device_frame_free (&in);
  bench_device_frame_free (&out);
  bench_report_free (report);
  gcv_plan_free (plan);
  gcv_filter_free (filter);
  gcv_engine_free (engine);
  g_string_free (why, TRUE);
  return failures ? 1 : 0;
}
