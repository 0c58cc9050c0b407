/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-bench: the engine's kernel families against the hardware's
 * limits and against NPP and cuFFT, on device frames, every output checked.
 * See bench/README.md. */
#include "common.h"
#include "check-dispatch.h"
#include "check-element.h"
#include "choices.h"
#include "configs.h"
#include "fft-peer.h"
#include "kernel-bench.h"
#include "hw-limits.h"
#include "npp-peer.h"
#include "regions-bench.h"
#include "report.h"
#include "stats-bench.h"

#include <gst/gst.h>
#include <math.h>
#include <string.h>

#define DEFAULT_KERNELS "3,5,7,9,11,13,15,17,21,25,31,43,3x15,15x3,1x31,31x1"
#define DEFAULT_FAMILIES "direct,tiled,register,separable,fft,auto"
#define QUICK_KERNELS "3,7,15,3x15,1x31"

static gchar *opt_formats = NULL;
static gchar *opt_gray_size = NULL;
static gchar *opt_rgba_size = NULL;
static gchar *opt_kernels = NULL;
static gchar *opt_forms = NULL;
static gchar *opt_families = NULL;
static gchar *opt_peers = NULL;
static gint opt_runs = 20;
static gint opt_warmup = 3;
static gchar *opt_csv = NULL;
static gboolean opt_quick = FALSE;
static gboolean opt_list = FALSE;
static gboolean opt_choices = FALSE;
static gboolean opt_check_element = FALSE;
static gboolean opt_no_bench = FALSE;
static gint opt_device = -1;
static gint opt_seed = 1;
static gboolean opt_check_dispatch = FALSE;
static gchar *opt_tuning_file = NULL;
static gchar *opt_sizes = NULL;
static gdouble opt_noise_ms = 0.003;
static gboolean opt_statistics = FALSE;
static gchar *opt_planes = NULL;
static gboolean opt_regions = FALSE;

static const GOptionEntry entries[] = {
  {"formats", 0, 0, G_OPTION_ARG_STRING, &opt_formats,
      "Frame formats (default GRAY32F,RGBA; also BGRA, RGBx, BGRx)", "LIST"},
  {"gray-size", 0, 0, G_OPTION_ARG_STRING, &opt_gray_size,
      "GRAY32F frame size (default 4096x4096)", "WxH"},
  {"rgba-size", 0, 0, G_OPTION_ARG_STRING, &opt_rgba_size,
      "RGBA-family frame size (default 3840x2160)", "WxH"},
  {"kernels", 0, 0, G_OPTION_ARG_STRING, &opt_kernels,
      "Kernel sizes, K or WxH (default " DEFAULT_KERNELS ")", "LIST"},
  {"forms", 0, 0, G_OPTION_ARG_STRING, &opt_forms,
      "Kernel forms: 2d (random, not rank 1), sep (Gaussian) (default both)",
      "LIST"},
  {"families", 0, 0, G_OPTION_ARG_STRING, &opt_families,
      "Engine families to force (default " DEFAULT_FAMILIES ")", "LIST"},
  {"peers", 0, 0, G_OPTION_ARG_STRING, &opt_peers,
      "Peers: npp, cufft, none (default npp,cufft)", "LIST"},
  {"runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs,
      "Timed runs per measurement; the median is reported (default 20)", "N"},
  {"warmup", 0, 0, G_OPTION_ARG_INT, &opt_warmup,
      "Untimed runs first (default 3)", "N"},
  {"csv", 0, 0, G_OPTION_ARG_FILENAME, &opt_csv,
      "CSV file to write (default bench.csv; empty: none)", "FILE"},
  {"quick", 0, 0, G_OPTION_ARG_NONE, &opt_quick,
      "A few small configurations (GRAY32F 512x512, RGBA 640x360, kernels "
      QUICK_KERNELS ")", NULL},
  {"list", 0, 0, G_OPTION_ARG_NONE, &opt_list,
      "Print the configurations and exit", NULL},
  {"choices", 0, 0, G_OPTION_ARG_NONE, &opt_choices,
      "Print what the engine settles for each configuration and family (the "
      "plan's record and its text), nothing timed, and exit; on the CPU "
      "engine where no CUDA device is usable", NULL},
  {"check-element", 0, 0, G_OPTION_ARG_NONE, &opt_check_element,
      "Also check the engine's device path against the gpuconvolve element "
      "on 97x61 frames", NULL},
  {"no-bench", 0, 0, G_OPTION_ARG_NONE, &opt_no_bench,
      "Skip limits and kernel-level measurements (with --check-element)", NULL},
  {"device", 'd', 0, G_OPTION_ARG_INT, &opt_device,
      "CUDA device id (default -1: the first usable)", "ID"},
  {"seed", 0, 0, G_OPTION_ARG_INT, &opt_seed,
      "Seed of the random frames and kernels (default 1)", "N"},
  {"check-dispatch", 0, 0, G_OPTION_ARG_NONE, &opt_check_dispatch,
      "Only check the dispatcher: at sizes between the tuned ones, its pick "
      "with the tuning table (within 10%) and without (within 20%) against "
      "the best measured variant; --formats, --kernels, --forms, --quick "
      "apply", NULL},
  {"tuning-file", 0, 0, G_OPTION_ARG_FILENAME, &opt_tuning_file,
      "With --check-dispatch: the table to check (default: the user cache "
      "table of this GPU)", "FILE"},
  {"sizes", 0, 0, G_OPTION_ARG_STRING, &opt_sizes,
      "With --check-dispatch: frame sizes (default "
      "1280x720,2560x1440,3840x2160)", "LIST"},
  {"noise-ms", 0, 0, G_OPTION_ARG_DOUBLE, &opt_noise_ms,
      "With --check-dispatch: a pick this close to the best passes whatever "
      "the ratio (default 0.003)", "MS"},
  {"statistics", 0, 0, G_OPTION_ARG_NONE, &opt_statistics,
      "Only time per-frame statistics: each configuration with and without "
      "them (--formats default RGBA,NV12, also GRAY8, GRAY32F, I420; "
      "--sizes default 3840x2160; --kernels default 3,9; --families default "
      "auto; --forms, --runs, --warmup apply)", NULL},
  {"planes", 0, 0, G_OPTION_ARG_STRING, &opt_planes,
      "With --statistics: luma or all, for NV12 and I420 (default luma)",
      "PLANES"},
  {"regions", 0, 0, G_OPTION_ARG_NONE, &opt_regions,
      "Only time privacy regions: NV12 3840x2160 in device memory, 8 "
      "regions of 200x200, 31x31 Gaussian; inside against a copy of the "
      "frame, outside against the whole frame (--runs, --warmup, --seed, "
      "--device apply; a CSV only where --csv is given)", NULL},
  {NULL}
};

static gboolean
parse_frames (BenchPlan * plan, GError ** error)
{
  const char *formats = opt_formats ? opt_formats : "GRAY32F,RGBA";
  guint gw = 4096, gh = 4096, cw = 3840, ch = 2160;
  gchar **items;
  gboolean ok = TRUE;

  if (opt_quick) {
    gw = gh = 512;
    cw = 640;
    ch = 360;
  }
  if ((opt_gray_size && !bench_parse_size (opt_gray_size, &gw, &gh))
      || (opt_rgba_size && !bench_parse_size (opt_rgba_size, &cw, &ch))) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "bad frame size (want WxH)");
    return FALSE;
  }
  items = g_strsplit (formats, ",", -1);
  for (gchar ** p = items; *p && ok; p++) {
    BenchFrame f;
    const char *name = g_strstrip (*p);
    if (!*name)
      continue;
    if (!gcv_format_from_name (name, &f.format)
        || f.format == GCV_FORMAT_GRAY8) {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "format '%s' is not one of GRAY32F, RGBA, BGRA, RGBx, BGRx", name);
      ok = FALSE;
      break;
    }
    f.width = f.format == GCV_FORMAT_GRAY32F ? gw : cw;
    f.height = f.format == GCV_FORMAT_GRAY32F ? gh : ch;
    g_array_append_val (plan->frames, f);
  }
  g_strfreev (items);
  return ok;
}

static gboolean
parse_options (int *argc, char ***argv, BenchPlan * plan, GError ** error)
{
  GOptionContext *ctx = g_option_context_new ("- time gpuconvolve's kernel "
      "families against the hardware's limits and against NPP and cuFFT");
  gboolean ok;

  g_option_context_add_main_entries (ctx, entries, NULL);
  ok = g_option_context_parse (ctx, argc, argv, error);
  g_option_context_free (ctx);
  if (!ok)
    return FALSE;
  if (opt_runs < 1 || opt_warmup < 0) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "--runs must be at least 1 and --warmup at least 0");
    return FALSE;
  }
  plan->frames = g_array_new (FALSE, FALSE, sizeof (BenchFrame));
  plan->shapes = g_array_new (FALSE, FALSE, sizeof (BenchShape));
  plan->families = g_array_new (FALSE, FALSE, sizeof (GcvFamily));
  /* --statistics reads its formats itself (NV12 among them) */
  return (opt_statistics || parse_frames (plan, error))
      && bench_parse_shapes (opt_kernels ? opt_kernels : opt_quick ?
      QUICK_KERNELS : DEFAULT_KERNELS, plan->shapes, error)
      && bench_parse_forms (opt_forms ? opt_forms : "2d,sep", plan->forms,
      error)
      && bench_parse_families (opt_families ? opt_families :
      DEFAULT_FAMILIES, plan->families, error)
      && bench_parse_peers (opt_peers ? opt_peers : "npp,cufft",
      &plan->peers, error);
}

static void
list_plan (const BenchPlan * plan)
{
  guint n = 0;

  for (guint f = 0; f < plan->frames->len; f++) {
    const BenchFrame *fr = &g_array_index (plan->frames, BenchFrame, f);
    for (guint s = 0; s < plan->shapes->len; s++) {
      BenchShape sh = g_array_index (plan->shapes, BenchShape, s);
      for (BenchForm form = BENCH_FORM_2D; form <= BENCH_FORM_SEPARABLE;
          form++) {
        GString *impls = g_string_new (NULL);
        if (!plan->forms[form])
          continue;
        for (guint i = 0; i < plan->families->len; i++) {
          GcvFamily a = g_array_index (plan->families, GcvFamily, i);
          if (bench_family_applies (a, form))
            g_string_append_printf (impls, " engine:%s",
                gcv_family_nick (a));
        }
        if (plan->peers & BENCH_PEER_NPP) {
          g_string_append (impls, " npp");
          if (form == BENCH_FORM_SEPARABLE
              && fr->format == GCV_FORMAT_GRAY32F)
            g_string_append (impls, " npp-sep");
        }
        if (plan->peers & BENCH_PEER_CUFFT)
          g_string_append (impls, " cufft");
        printf ("%-7s %5ux%-5u %3ux%-3u %-3s%s\n", gcv_format_name (fr->format),
            fr->width, fr->height, sh.kw, sh.kh, bench_form_name (form),
            impls->str);
        g_string_free (impls, TRUE);
        n++;
      }
    }
  }
  printf ("%u configurations; %s\n", n, bench_npp_built () ?
      "NPP peer built" : "NPP: not built");
}

static void
limit_row (BenchReport * report, const BenchFrame * f, const char *impl,
    const char *description, const BenchStats * st, double gbps,
    double gflops, double peak)
{
  BenchRow row;

  bench_row_init (&row, "limit");
  row.format = f->format;
  row.width = f->width;
  row.height = f->height;
  row.impl = impl;
  row.description = description;
  row.stats = *st;
  row.gbps = gbps;
  row.gflops = gflops;
  if (!isnan (gflops) && peak > 0.0)
    row.pct_peak = 100.0 * gflops / peak;
  bench_report_row (report, &row);
}

static void
run_limits (BenchReport * report, const BenchFrame * f,
    const BenchFmaLimit * fma, BenchCopyLimit * copy)
{
  gsize row = bench_row_bytes (f->format, f->width);
  gsize bytes = row * f->height;
  BenchPcieLimit pcie;
  gchar *d;

  bench_report_section (report, "Limits, %s %ux%u (%.1f MB a frame)",
      gcv_format_name (f->format), f->width, f->height, bytes / 1e6);
  bench_limit_copy (row, f->height, opt_warmup, opt_runs, copy);
  bench_limit_pcie (bytes, opt_warmup, opt_runs, &pcie);
  limit_row (report, f, "fma-peak", "FP32 FMA chains, 2 flops per FMA",
      &fma->stats, NAN, fma->gflops, fma->gflops);
  limit_row (report, f, "copy-memcpy2d", "cudaMemcpy2DAsync device to "
      "device; GB/s counts read + written bytes", &copy->memcpy2d,
      2.0 * bytes / (copy->memcpy2d.median * 1e6), NAN, 0);
  limit_row (report, f, "copy-kernel", "copy kernel, 16-byte words; GB/s "
      "counts read + written bytes", &copy->kernel,
      2.0 * bytes / (copy->kernel.median * 1e6), NAN, 0);
  d = g_strdup_printf ("the copy floor: %s, the faster copy",
      copy->best_name);
  limit_row (report, f, "copy-floor", d, &copy->best, copy->gbps, NAN, 0);
  g_free (d);
  limit_row (report, f, "pcie-h2d", "pinned host to device, one frame",
      &pcie.h2d, pcie.h2d_gbps, NAN, 0);
  limit_row (report, f, "pcie-d2h", "device to pinned host, one frame",
      &pcie.d2h, pcie.d2h_gbps, NAN, 0);
  d = g_strdup_printf ("H2D and D2H of one frame at once on two streams; "
      "GB/s counts both; bound %.1f frames/s", 1000.0 / pcie.duplex.median);
  limit_row (report, f, "pcie-duplex", d, &pcie.duplex, pcie.duplex_gbps,
      NAN, 0);
  g_free (d);
}

int
main (int argc, char **argv)
{
  BenchPlan plan;
  BenchReport *report;
  GcvEngine *engine;
  GError *error = NULL;
  BenchFmaLimit fma;
  int device;
  guint failures = 0;
  gchar *text;
  const char *csv;

  memset (&plan, 0, sizeof (plan));
  if (!parse_options (&argc, &argv, &plan, &error)) {
    fprintf (stderr, "gpuconvolve-bench: %s\n", error->message);
    return 2;
  }
  if (opt_list) {
    list_plan (&plan);
    return 0;
  }
  if (opt_choices)
    return bench_list_choices (&plan, opt_device, (guint32) opt_seed,
        opt_tuning_file);
  if (opt_regions) {
    BenchRegionsRun run = { opt_device, (guint32) opt_seed,
      (guint) opt_warmup, (guint) opt_runs, opt_csv
    };
    return bench_regions (&run);
  }
  if (opt_statistics) {
    BenchStatsRun run = { opt_device, (guint32) opt_seed, opt_formats,
      opt_sizes, opt_kernels, opt_families,
      {plan.forms[BENCH_FORM_2D], plan.forms[BENCH_FORM_SEPARABLE]},
      g_strcmp0 (opt_planes, "all") == 0, (guint) opt_warmup,
      (guint) opt_runs
    };
    if (opt_planes && strcmp (opt_planes, "all") != 0
        && strcmp (opt_planes, "luma") != 0) {
      fprintf (stderr, "gpuconvolve-bench: --planes is luma or all\n");
      return 2;
    }
    return bench_stats (&run);
  }
  if (opt_check_dispatch) {
    /* before any engine: it hides the cached and shipped tables */
    BenchDispatchCheck check = { opt_device, (guint32) opt_seed,
      opt_tuning_file, opt_formats, opt_sizes, opt_kernels,
      {plan.forms[BENCH_FORM_2D], plan.forms[BENCH_FORM_SEPARABLE]},
      opt_quick, MAX (opt_noise_ms, 0.0)
    };
    return bench_check_dispatch (&check);
  }
  bench_require_cuda (opt_device);
  engine = gcv_engine_new (GCV_BACKEND_CUDA, opt_device, &error);
  if (!engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  BENCH_CUDA (cudaGetDevice (&device));

  csv = opt_csv ? opt_csv : "bench.csv";
  report = bench_report_new (csv, &error);
  if (!report)
    bench_die ("%s", error->message);

  text = bench_describe_device (device);
  printf ("gpuconvolve-bench %s\ndevice: %s\nengine: %s\n", PACKAGE_VERSION,
      text, gcv_engine_describe (engine));
  g_free (text);
  text = bench_npp_describe_library ();
  printf ("%s\n", text);
  g_free (text);
  text = bench_fft_version ();
  printf ("%s\n", text);
  g_free (text);
  printf ("timing: CUDA events on the stream, %d warm-up runs, median of %d "
      "(min, max shown); border replicate everywhere\nGFLOP/s counts 2*kw*kh "
      "per output sample and colour channel (RGBA: 3, alpha copied), also for "
      "separable paths; GB/s counts one frame in and one out\n",
      opt_warmup, opt_runs);
  if (*csv)
    printf ("CSV: %s\n", csv);

  if (!opt_no_bench) {
    BenchKernelContext ctx = { engine, &plan, report, (guint) opt_warmup,
      (guint) opt_runs, (guint32) opt_seed, 0.0
    };
    bench_limit_fma (opt_warmup, opt_runs, &fma);
    ctx.fma_gflops = fma.gflops;
    for (guint f = 0; f < plan.frames->len; f++) {
      const BenchFrame *fr = &g_array_index (plan.frames, BenchFrame, f);
      BenchCopyLimit copy;
      run_limits (report, fr, &fma, &copy);
      bench_report_section (report, "Kernel level, %s %ux%u: FMA peak %.0f "
          "GFLOP/s, copy floor %.4f ms", gcv_format_name (fr->format),
          fr->width, fr->height, fma.gflops, copy.best.median);
      bench_kernels_run_frame (&ctx, fr, &copy);
    }
  }
  failures = bench_report_failures (report);
  if (failures)
    printf ("\n%u row(s) FAILED their check or could not run\n", failures);

  if (opt_check_element) {
    gst_init (NULL, NULL);
    failures += bench_check_element (device, (guint32) opt_seed);
  }

  bench_report_free (report);
  gcv_engine_free (engine);
  g_array_unref (plan.frames);
  g_array_unref (plan.shapes);
  g_array_unref (plan.families);
  return failures ? 1 : 0;
}
