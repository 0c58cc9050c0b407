/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-tune: measures, for the GPU it runs on, which kernel family and
 * parameters are fastest for each input format, kernel size and frame size,
 * and writes the dispatcher's tuning table (docs/tuning.md). */
#include "common.h"
#include "configs.h"
#include "sweep.h"
#include "gcv-tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_FORMATS "GRAY32F,RGBA"
#define DEFAULT_SIZES "1280x720,1920x1080,3840x2160,4096x4096"
/* Square odd sizes, even ones up to 32, and a grid of oblong shapes, so the
 * nearest row is near for any size a user picks. */
#define EVEN_KERNELS "2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32"
#define OBLONG_KERNELS "1x2,1x3,1x5,1x7,1x9,1x13,1x17,1x25,2x1,2x3,2x5,2x7,2x9,2x13,2x17,2x25,3x1,3x2,3x5,3x7,3x9,3x13,3x17,3x25,5x1,5x2,5x3,5x7,5x9,5x13,5x17,5x25,7x1,7x2,7x3,7x5,7x9,7x13,7x17,7x25,9x1,9x2,9x3,9x5,9x7,9x13,9x17,9x25,13x1,13x2,13x3,13x5,13x7,13x9,13x17,13x25,17x1,17x2,17x3,17x5,17x7,17x9,17x13,17x25,25x1,25x2,25x3,25x5,25x7,25x9,25x13,25x17,3x15,15x3,1x31,31x1"
#define DEFAULT_KERNELS "1-63," EVEN_KERNELS "," OBLONG_KERNELS
#define DEFAULT_SEP_KERNELS "3-63,71,79,95,127," EVEN_KERNELS "," OBLONG_KERNELS
#define QUICK_SIZES "1280x720"
#define QUICK_KERNELS "3,15,3x15"
#define QUICK_SEP_KERNELS "5,31"
#define QUICK_OUTPUT "tune-quick.tbl"

static gchar *opt_output = NULL;
static gchar *opt_formats = NULL;
static gchar *opt_sizes = NULL;
static gchar *opt_kernels = NULL;
static gchar *opt_sep_kernels = NULL;
static gboolean opt_quick = FALSE;
static gdouble opt_budget = 0.0;
static gint opt_runs = 7;
static gint opt_warmup = 2;
static gboolean opt_list = FALSE;
static gint opt_device = -1;
static gint opt_seed = 1;
static gchar *opt_candidates = NULL;
static gboolean opt_show_all = FALSE;

static const GOptionEntry entries[] = {
  {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
      "Table to write (default: the user cache table for this GPU, "
      "$XDG_CACHE_HOME/gpuconvolve/<gpu>.tbl, which the engine then uses; "
      "with --quick: " QUICK_OUTPUT ")", "FILE"},
  {"formats", 0, 0, G_OPTION_ARG_STRING, &opt_formats,
      "Input formats (default " DEFAULT_FORMATS ")", "LIST"},
  {"sizes", 0, 0, G_OPTION_ARG_STRING, &opt_sizes,
      "Frame sizes (default " DEFAULT_SIZES ")", "LIST"},
  {"kernels", 0, 0, G_OPTION_ARG_STRING, &opt_kernels,
      "Non-separable kernel sizes: K, WxH, or A-B for every odd K from A to "
      "B; none for none (default " DEFAULT_KERNELS ")", "LIST"},
  {"sep-kernels", 0, 0, G_OPTION_ARG_STRING, &opt_sep_kernels,
      "Separable (rank-1) kernel sizes, as --kernels (default "
      DEFAULT_SEP_KERNELS ")", "LIST"},
  {"quick", 0, 0, G_OPTION_ARG_NONE, &opt_quick,
      "A handful of points, for a smoke test: " QUICK_SIZES ", kernels "
      QUICK_KERNELS ", separable " QUICK_SEP_KERNELS, NULL},
  {"budget-seconds", 0, 0, G_OPTION_ARG_DOUBLE, &opt_budget,
      "Start no new point after this many seconds, and write what was "
      "measured (default 0: no limit)", "S"},
  {"runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs,
      "Timed runs per candidate; the median counts (default 7)", "N"},
  {"warmup", 0, 0, G_OPTION_ARG_INT, &opt_warmup,
      "Warm-up runs per candidate, the last one timed to drop a candidate "
      "3 times slower than the best early (default 2)", "N"},
  {"list", 0, 0, G_OPTION_ARG_NONE, &opt_list,
      "Print the points and the candidates and exit (no GPU needed)", NULL},
  {"device", 'd', 0, G_OPTION_ARG_INT, &opt_device,
      "CUDA device id (default -1: the first usable)", "ID"},
  {"seed", 0, 0, G_OPTION_ARG_INT, &opt_seed,
      "Seed of the random frames and kernels (default 1)", "N"},
  {"candidates", 0, 0, G_OPTION_ARG_STRING, &opt_candidates,
      "Time only these variants, comma-separated (default: every "
      "candidate; see --list)", "LIST"},
  {"show-all", 0, 0, G_OPTION_ARG_NONE, &opt_show_all,
      "Print every candidate's time at each point, not only the best two",
      NULL},
  {NULL}
};

/* One point of the sweep. */
typedef struct {
  GcvFormat format;
  guint width, height;
  BenchShape shape;
  BenchForm form;
  double weight;                /* for the estimate of the time left */
} Point;

static gboolean
parse_options (int *argc, char ***argv, GArray * points, GError ** error)
{
  GOptionContext *ctx = g_option_context_new ("- measure the fastest "
      "gpuconvolve kernel variants on this GPU and write a tuning table");
  GArray *formats = g_array_new (FALSE, FALSE, sizeof (GcvFormat));
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (BenchFrame));
  GArray *shapes[2] = {
    g_array_new (FALSE, FALSE, sizeof (BenchShape)),
    g_array_new (FALSE, FALSE, sizeof (BenchShape))
  };
  gboolean ok;

  g_option_context_add_main_entries (ctx, entries, NULL);
  ok = g_option_context_parse (ctx, argc, argv, error);
  g_option_context_free (ctx);
  if (ok && (opt_runs < 1 || opt_warmup < 1 || opt_budget < 0.0)) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "--runs and --warmup must be at least 1, --budget-seconds at "
        "least 0");
    ok = FALSE;
  }
  ok = ok
      && sweep_parse_formats (opt_formats ? opt_formats : DEFAULT_FORMATS,
      formats, error)
      && sweep_parse_sizes (opt_sizes ? opt_sizes : opt_quick ? QUICK_SIZES :
      DEFAULT_SIZES, sizes, error)
      && sweep_parse_kernels (opt_kernels ? opt_kernels : opt_quick ?
      QUICK_KERNELS : DEFAULT_KERNELS, shapes[BENCH_FORM_2D], error)
      && sweep_parse_kernels (opt_sep_kernels ? opt_sep_kernels : opt_quick ?
      QUICK_SEP_KERNELS : DEFAULT_SEP_KERNELS, shapes[BENCH_FORM_SEPARABLE],
      error);
  /* format, then frame size, then the 2D and the separable kernels, each
   * by size: one plan per format and size, its buffers grown step by step */
  for (guint f = 0; ok && f < formats->len; f++)
    for (guint z = 0; z < sizes->len; z++)
      for (BenchForm form = BENCH_FORM_2D; form <= BENCH_FORM_SEPARABLE;
          form++)
        for (guint s = 0; s < shapes[form]->len; s++) {
          Point p;
          const BenchFrame *fr = &g_array_index (sizes, BenchFrame, z);
          p.format = g_array_index (formats, GcvFormat, f);
          p.width = fr->width;
          p.height = fr->height;
          p.shape = g_array_index (shapes[form], BenchShape, s);
          p.form = form;
          /* the frame's work, plus what every point costs whatever its
           * size (setting variants up, launches) */
          p.weight = (double) p.width * p.height * bench_channels (p.format)
              * (4.0 + sqrt ((double) p.shape.kw * p.shape.kh)) + 3e7;
          g_array_append_val (points, p);
        }
  if (ok && points->len == 0) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "no kernel sizes given");
    ok = FALSE;
  }
  g_array_unref (formats);
  g_array_unref (sizes);
  g_array_unref (shapes[0]);
  g_array_unref (shapes[1]);
  return ok;
}

static void
point_key (const Point * p, GcvDispatchKey * key)
{
  key->format = p->format;
  key->kw = p->shape.kw;
  key->kh = p->shape.kh;
  key->separable = p->form == BENCH_FORM_SEPARABLE;
  key->width = p->width;
  key->height = p->height;
}

static void
list_points (GArray * points, const char *const *candidates)
{
  GString *rejected = g_string_new (NULL);

  sweep_candidates_usable (rejected);
  for (guint i = 0; i < points->len; i++) {
    const Point *p = &g_array_index (points, Point, i);
    GcvDispatchKey key;
    gchar *k;
    GString *c = g_string_new (NULL);

    point_key (p, &key);
    k = sweep_key_to_string (&key);
    for (const char *const *v = candidates; *v; v++) {
      GcvVariant variant;
      if (gcv_variant_parse (*v, &variant, NULL)
          && sweep_family_allowed (&variant, &key)
          && sweep_worth_timing (&variant, &key))
        g_string_append_printf (c, "%s'%s'", c->len ? ", " : "", *v);
    }
    printf ("%-32s %s\n", k, c->str);
    g_free (k);
    g_string_free (c, TRUE);
  }
  printf ("%u points\n", points->len);
  if (rejected->len)
    printf ("not accepted by this engine, left out:\n%s", rejected->str);
  g_string_free (rejected, TRUE);
}

static gchar *
clock_text (double seconds)
{
  guint s = (guint) MAX (seconds + 0.5, 0.0);
  return g_strdup_printf ("%u:%02u", s / 60, s % 60);
}

static gchar *
cache_table_path (const char *gpu)
{
  gchar *name = gcv_tuning_file_name (gpu);
  gchar *path = g_build_filename (g_get_user_cache_dir (), "gpuconvolve",
      name, NULL);
  g_free (name);
  return path;
}

/* The runner-up's margin over the best, "" when there is none. */
static gchar *
runner_up (const SweepPoint * pt)
{
  const SweepResult *best = sweep_point_best (pt), *second = NULL;

  for (guint i = 0; best && i < pt->results->len; i++) {
    const SweepResult *r = &g_array_index (pt->results, SweepResult, i);
    if (r != best && !r->dropped && (!second || r->ms < second->ms))
      second = r;
  }
  if (!second)
    return g_strdup ("");
  return g_strdup_printf ("; next %s +%.0f%%", second->variant,
      100.0 * (second->ms / best->ms - 1.0));
}

int
main (int argc, char **argv)
{
  GArray *points = g_array_new (FALSE, FALSE, sizeof (Point));
  GError *error = NULL;
  const char *const *candidates;
  GString *rejected = g_string_new (NULL);
  GcvEngine *engine;
  GcvTuningTable *table;
  SweepTiming timing = SWEEP_TIMING_DEFAULT;
  gchar *gpu, *arch, *output, *text;
  gint device;
  double total_weight = 0.0, done_weight = 0.0;
  guint n_points = 0, n_timed = 0, n_dropped = 0, n_duplicates = 0,
      n_pruned = 0, n_failed = 0;
  gboolean stopped = FALSE, warmed = FALSE;
  gint64 start;
  guint i = 0;                  /* the next point */

  if (!parse_options (&argc, &argv, points, &error)) {
    fprintf (stderr, "gpuconvolve-tune: %s\n", error->message);
    return 2;
  }
  candidates = sweep_candidates_usable (rejected);
  if (opt_candidates) {
    candidates = (const char *const *) g_strsplit (opt_candidates, ",", -1);
    for (const char *const *c = candidates; *c; c++) {
      GcvVariant v;
      if (!gcv_variant_parse (*c, &v, &error)) {
        fprintf (stderr, "gpuconvolve-tune: --candidates: '%s': %s\n", *c,
            error->message);
        return 2;
      }
    }
  }
  if (opt_list) {
    list_points (points, candidates);
    return 0;
  }
  timing.runs = (guint) opt_runs;
  timing.warmup = (guint) opt_warmup;

  bench_require_cuda (opt_device);
  engine = gcv_engine_new (GCV_BACKEND_CUDA, opt_device, &error);
  if (!engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  device = gcv_engine_get_device (engine);
  sweep_device_name (device, &gpu, &arch);
  output = g_strdup (opt_output ? opt_output : opt_quick ? QUICK_OUTPUT :
      NULL);
  if (!output)
    output = cache_table_path (gpu);

  text = bench_describe_device (device);
  printf ("gpuconvolve-tune %s\ndevice: %s\nengine: %s\noutput: %s\n",
      PACKAGE_VERSION, text, gcv_engine_describe (engine), output);
  g_free (text);
  printf ("timing: CUDA events on the plan's stream, device frames used in "
      "place; per candidate %u warm-up run(s) (the last timed: over %.0f "
      "times the best so far drops it and the rest of its family), then the "
      "median of %u\n", timing.warmup, timing.drop_factor, timing.runs);
  printf ("pruned: separable variants off separable keys, fft where k <= 9, "
      "direct where k >= 9, register where kw > 17 (k = sqrt(kw*kh))\n");
  printf ("candidates:");
  for (const char *const *c = candidates; *c; c++)
    printf (" '%s'", *c);
  printf ("\n");
  if (rejected->len)
    printf ("not accepted by this engine, left out:\n%s", rejected->str);
  if (opt_budget > 0.0)
    printf ("%u points, budget %.0f s\n", points->len, opt_budget);
  else
    printf ("%u points\n", points->len);
  fflush (stdout);

  for (guint j = 0; j < points->len; j++)
    total_weight += g_array_index (points, Point, j).weight;
  table = gcv_tuning_table_new (gpu, arch);
  start = g_get_monotonic_time ();

  while (i < points->len && !stopped) {
    const Point *first = &g_array_index (points, Point, i);
    SweepFrame *sf = sweep_frame_new (engine, first->format, first->width,
        first->height, (guint32) opt_seed);

    /* the points of one format and frame size share a plan */
    for (; i < points->len; i++) {
      const Point *p = &g_array_index (points, Point, i);
      double elapsed = (g_get_monotonic_time () - start) / 1e6;
      GcvFilter *filter;
      SweepPoint pt;
      const SweepResult *best;
      gchar *key, *t_elapsed, *t_left, *next;

      if (p->format != first->format || p->width != first->width
          || p->height != first->height)
        break;
      if (opt_budget > 0.0 && elapsed > opt_budget) {
        stopped = TRUE;
        break;
      }
      filter = bench_make_filter (p->shape, p->form, (guint32) opt_seed,
          &error);
      if (!filter || !sweep_frame_set_filter (sf, filter, &error)) {
        GcvDispatchKey k;
        point_key (p, &k);
        key = sweep_key_to_string (&k);
        fprintf (stderr, "%s: %s\n", key, error->message);
        g_free (key);
        g_clear_error (&error);
        gcv_filter_free (filter);
        done_weight += p->weight;
        n_failed++;
        continue;
      }
      if (!warmed) {
        /* the clocks up before the first timing */
        sweep_frame_warm_up (sf, 1.0);
        warmed = TRUE;
      }
      sweep_point_init (&pt);
      sweep_measure (sf, candidates, &timing, &pt);
      gcv_filter_free (filter);
      n_points++;
      n_timed += pt.n_timed;
      n_dropped += pt.n_dropped;
      n_duplicates += pt.n_duplicates;
      n_pruned += pt.n_pruned;
      done_weight += p->weight;

      key = sweep_key_to_string (&pt.key);
      best = sweep_point_best (&pt);
      if (!pt.key.separable != !(p->form == BENCH_FORM_SEPARABLE))
        g_string_append_printf (pt.errors, "%sthe engine keys this kernel "
            "as sep=%d", pt.errors->len ? "; " : "", pt.key.separable);
      if (best) {
        GcvTuningRow row;
        memset (&row, 0, sizeof (row));
        row.key = pt.key;
        row.ms = best->ms;
        gcv_variant_parse (best->variant, &row.variant, NULL);
        g_array_append_val (table->rows, row);
      } else {
        n_failed++;
      }
      elapsed = (g_get_monotonic_time () - start) / 1e6;
      t_elapsed = clock_text (elapsed);
      t_left = clock_text (done_weight > 0.0 ?
          elapsed * (total_weight - done_weight) / done_weight : 0.0);
      next = runner_up (&pt);
      fprintf (stderr, "[%4u/%u %s elapsed, ~%s left] %s: %s %.4f ms "
          "(%u timed, %u dropped%s)%s%s\n", i + 1, points->len, t_elapsed,
          t_left, key, best ? best->variant : "NOTHING RAN",
          best ? best->ms : 0.0, pt.n_timed, pt.n_dropped, next,
          pt.errors->len ? "; errors: " : "", pt.errors->str);
      for (guint r = 0; opt_show_all && r < pt.results->len; r++) {
        const SweepResult *res = &g_array_index (pt.results, SweepResult, r);
        fprintf (stderr, "    %-28s %.4f ms%s  %s\n", res->variant, res->ms,
            res->dropped ? " (dropped)" : "", res->description);
      }
      g_free (next);
      g_free (t_elapsed);
      g_free (t_left);
      g_free (key);
      sweep_point_clear (&pt);
    }
    sweep_frame_free (sf);
  }

  {
    double took = (g_get_monotonic_time () - start) / 1e6;
    gchar *t = clock_text (took);
    int status = 0;

    printf ("swept %u of %u points in %s (%.1f s): %u candidates timed "
        "(%u of them dropped early), %u duplicates and %u pruned or dropped "
        "with their family not timed\n",
        n_points, points->len, t, took, n_timed, n_dropped, n_duplicates,
        n_pruned);
    g_free (t);
    if (stopped)
      printf ("the budget of %.0f s ran out: %u of %u points were not "
          "measured; the table holds the %u that were\n", opt_budget,
          points->len - i, points->len, table->rows->len);
    if (n_failed) {
      printf ("%u point(s) had no variant that ran (see the errors above)\n",
          n_failed);
      status = 1;
    }
    if (table->rows->len == 0) {
      fprintf (stderr, "gpuconvolve-tune: nothing measured, no table "
          "written\n");
      return 1;
    }
    if (!gcv_tuning_table_save (table, output, &error)) {
      fprintf (stderr, "gpuconvolve-tune: cannot write %s: %s\n", output,
          error->message);
      return 1;
    }
    printf ("wrote %s: %u rows for %s (%s)\n", output, table->rows->len, gpu,
        arch);
    gcv_tuning_table_free (table);
    gcv_engine_free (engine);
    g_free (output);
    g_free (gpu);
    g_free (arch);
    g_string_free (rejected, TRUE);
    g_array_unref (points);
    return status;
  }
}
