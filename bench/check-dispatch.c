/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The dispatcher's picks against the best measured variant.
 *
 * Two engines on the same device: one with the tuning table under test
 * (gcv_engine_set_tuning_file()), which also measures every candidate
 * through gcv_plan_set_variant(), and one that finds no table, so that its
 * plans run the heuristic's pick. At each point both picks are read from
 * the plans' choices and their plans timed as they are; a pick that misses
 * its bound is measured again, with the best variant, before it counts. */
#include "check-dispatch.h"
#include "common.h"
#include "configs.h"
#include "sweep.h"
#include "gcv-tools.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define DEFAULT_FORMATS "GRAY32F,RGBA"
#define DEFAULT_SIZES "1280x720,2560x1440,3840x2160"
#define DEFAULT_KERNELS "4x4,6x6,10x10,14x14,19x19,23x23,27x27,35x35,51x51," \
  "2x7,12x5,3x3,1x31,31x1"
#define QUICK_SIZES "1280x720"
#define QUICK_KERNELS "4x4,19x19,2x7"

#define TABLE_BOUND 1.10
#define HEURISTIC_BOUND 1.20

/* One pick at one point. */
typedef struct {
  SweepResult r;
  gchar *source;                /* from the plan's choice */
  double ratio;                 /* to the best */
  gboolean pass, remeasured;
} Pick;

/* The worst pick of a kind over the run. */
typedef struct {
  guint n_pass;
  double ratio;
  gchar *where;
  gboolean pass;                /* it passed all the same (noise floor) */
} Worst;

static gboolean
within (double ms, double best_ms, double bound, double noise_ms)
{
  return ms <= bound * best_ms || ms - best_ms <= noise_ms;
}

/* The user cache folder as GLib finds it, from the environment as it was
 * before this program changed it. */
static gchar *
user_cache_dir (const char *xdg_cache_home)
{
  if (xdg_cache_home && *xdg_cache_home)
    return g_strdup (xdg_cache_home);
  return g_build_filename (g_get_home_dir (), ".cache", NULL);
}

static void
pick_clear (Pick * p)
{
  g_free (p->r.variant);
  g_free (p->r.description);
  g_free (p->r.source);
  g_free (p->source);
  memset (p, 0, sizeof (*p));
}

/* Times what `sf`'s plan runs now. */
static void
time_pick (SweepFrame * sf, const SweepTiming * t, Pick * p,
    GString * errors)
{
  GError *error = NULL;

  pick_clear (p);
  if (!sweep_frame_time (sf, t, 0.0, &p->r, &error)) {
    g_string_append_printf (errors, "%s%s: %s", errors->len ? "; " : "",
        p->r.description ? p->r.description : "pick", error->message);
    g_error_free (error);
    p->r.ms = NAN;
  }
  p->source = g_strdup (p->r.source ? p->r.source : "");
  if (!p->r.variant)
    p->r.variant = g_strdup (p->r.description ? p->r.description : "?");
}

static void
note_worst (Worst * w, const Pick * p, const char *key)
{
  if (p->pass)
    w->n_pass++;
  if (!w->where || p->ratio > w->ratio) {
    g_free (w->where);
    w->where = g_strdup_printf ("%s: %s", key, p->r.variant);
    w->ratio = p->ratio;
    w->pass = p->pass;
  }
}

int
bench_check_dispatch (const BenchDispatchCheck * check)
{
  const char *formats_text = check->formats ? check->formats :
      DEFAULT_FORMATS;
  const char *sizes_text = check->sizes ? check->sizes : check->quick ?
      QUICK_SIZES : DEFAULT_SIZES;
  const char *kernels_text = check->kernels ? check->kernels : check->quick ?
      QUICK_KERNELS : DEFAULT_KERNELS;
  GArray *formats = g_array_new (FALSE, FALSE, sizeof (GcvFormat));
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (BenchFrame));
  GArray *shapes = g_array_new (FALSE, FALSE, sizeof (BenchShape));
  gchar *empty_dir, *original_cache, *gpu, *arch, *table_path, *text;
  GcvEngine *table_engine, *plain_engine;
  GcvTuningTable *table;
  GError *error = NULL;
  const char *const *candidates = sweep_candidates_usable (NULL);
  /* every candidate, unpruned and each on its own: the check is also of
   * the tuner's pruning */
  SweepTiming measure = { 2, 7, 3.0, FALSE, FALSE };
  SweepTiming pick_timing = { 2, 7, 0.0, FALSE, FALSE };
  SweepTiming confirm = { 2, 15, 0.0, FALSE, FALSE };
  Worst worst_table = { 0, 0.0, NULL, TRUE };
  Worst worst_plain = { 0, 0.0, NULL, TRUE };
  guint n_compared = 0, n_errors = 0, n_no_row = 0, n_remeasured = 0;
  gint device;
  gint64 start;

  if (!sweep_parse_formats (formats_text, formats, &error)
      || !sweep_parse_sizes (sizes_text, sizes, &error)
      || !sweep_parse_kernels (kernels_text, shapes, &error)) {
    fprintf (stderr, "gpuconvolve-bench: %s\n", error->message);
    return 2;
  }
  if (!check->forms[BENCH_FORM_2D] && !check->forms[BENCH_FORM_SEPARABLE]) {
    fprintf (stderr, "gpuconvolve-bench: no kernel form to check\n");
    return 2;
  }

  bench_require_cuda (check->device);
  /* No table for the plain engine: neither a cached nor a shipped one. */
  original_cache = g_strdup (g_getenv ("XDG_CACHE_HOME"));
  empty_dir = g_dir_make_tmp ("gpuconvolve-check-XXXXXX", &error);
  if (!empty_dir)
    bench_die ("cannot make a temporary folder: %s", error->message);
  g_setenv ("XDG_CACHE_HOME", empty_dir, TRUE);
  g_setenv ("GPUCONVOLVE_TUNING_PATH", empty_dir, TRUE);
  if (strcmp (g_get_user_cache_dir (), empty_dir) != 0)
    bench_die ("the user cache folder was looked up before --check-dispatch "
        "could point it at an empty folder");

  plain_engine = gcv_engine_new (GCV_BACKEND_CUDA, check->device, &error);
  table_engine = plain_engine ?
      gcv_engine_new (GCV_BACKEND_CUDA, check->device, &error) : NULL;
  if (!table_engine)
    bench_die ("cannot make a CUDA engine: %s", error->message);
  device = gcv_engine_get_device (table_engine);
  sweep_device_name (device, &gpu, &arch);

  if (check->tuning_file) {
    table_path = g_strdup (check->tuning_file);
  } else {
    gchar *dir = user_cache_dir (original_cache);
    gchar *name = gcv_tuning_file_name (gpu);
    table_path = g_build_filename (dir, "gpuconvolve", name, NULL);
    g_free (dir);
    g_free (name);
    if (!g_file_test (table_path, G_FILE_TEST_EXISTS))
      bench_die ("no tuning table at %s: run gpuconvolve-tune first, or "
          "give --tuning-file=FILE", table_path);
  }
  table = gcv_tuning_table_load (table_path, &error);
  if (!table || !gcv_engine_set_tuning_file (table_engine, table_path,
          &error))
    bench_die ("%s", error->message);

  text = bench_describe_device (device);
  printf ("gpuconvolve-bench --check-dispatch %s\ndevice: %s\n",
      PACKAGE_VERSION, text);
  g_free (text);
  printf ("table: %s (%u rows, measured on %s, %s)\n", table_path,
      table->rows->len, table->gpu, table->arch ? table->arch : "no arch");
  if (strcmp (table->gpu, gpu) != 0)
    printf ("warning: the table was measured on '%s', this is '%s'\n",
        table->gpu, gpu);
  printf ("every candidate timed unpruned (%u warm-up runs, median of %u, "
      "dropped when the last warm-up is over %.0f times the best); each "
      "pick's plan timed as it is (median of %u), and again with the best "
      "(median of %u) when it misses its bound\n", measure.warmup,
      measure.runs, measure.drop_factor, pick_timing.runs, confirm.runs);
  printf ("bounds: table pick within %.0f%% of the best, heuristic pick "
      "(no table) within %.0f%%; a pick within %.4f ms of the best passes "
      "too (timer noise)\n\n", 100.0 * (TABLE_BOUND - 1.0),
      100.0 * (HEURISTIC_BOUND - 1.0), check->noise_ms);
  printf ("%-30s | %-24s %8s | %-24s %8s %5s | %-24s %8s %5s | %s\n",
      "point", "best", "ms", "table pick", "ms", "x", "heuristic pick", "ms",
      "x", "verdict");
  fflush (stdout);
  start = g_get_monotonic_time ();

  for (guint f = 0; f < formats->len; f++)
    for (guint z = 0; z < sizes->len; z++) {
      const BenchFrame *size = &g_array_index (sizes, BenchFrame, z);
      GcvFormat format = g_array_index (formats, GcvFormat, f);
      SweepFrame *tf = sweep_frame_new (table_engine, format, size->width,
          size->height, check->seed);
      SweepFrame *pf = sweep_frame_new (plain_engine, format, size->width,
          size->height, check->seed);
      gboolean warmed = FALSE;

      for (BenchForm form = BENCH_FORM_2D; form <= BENCH_FORM_SEPARABLE;
          form++) {
        if (!check->forms[form])
          continue;
        for (guint s = 0; s < shapes->len; s++) {
          BenchShape shape = g_array_index (shapes, BenchShape, s);
          GcvFilter *filter = bench_make_filter (shape, form, check->seed,
              &error);
          SweepPoint pt;
          const SweepResult *best;
          Pick tp = { {0} }, pp = { {0} };
          GString *errors = g_string_new (NULL);
          gchar *key, *verdict;
          double best_ms;

          if (!filter || !sweep_frame_set_filter (tf, filter, &error)
              || !sweep_frame_set_filter (pf, filter, &error)) {
            printf ("%ux%u %s: %s\n", shape.kw, shape.kh,
                bench_form_name (form), error->message);
            g_clear_error (&error);
            gcv_filter_free (filter);
            g_string_free (errors, TRUE);
            n_errors++;
            continue;
          }
          if (!warmed) {
            sweep_frame_warm_up (tf, 0.5);
            warmed = TRUE;
          }
          sweep_point_init (&pt);
          sweep_measure (tf, candidates, &measure, &pt);
          key = sweep_key_to_string (&pt.key);
          if (pt.errors->len)
            g_string_append (errors, pt.errors->str);
          best = sweep_point_best (&pt);
          if (!best) {
            printf ("%-30s | no candidate ran: %s\n", key, errors->str);
            n_errors++;
            goto next;
          }
          best_ms = best->ms;

          /* the table's pick, then the heuristic's */
          if (sweep_frame_set_variant (tf, NULL, &error)) {
            time_pick (tf, &pick_timing, &tp, errors);
          } else {
            /* the plan is not fit to run after a failed choice */
            g_string_append_printf (errors, "%stable pick: %s",
                errors->len ? "; " : "", error->message);
            g_clear_error (&error);
            tp.r.variant = g_strdup ("(failed)");
            tp.r.ms = NAN;
            tp.source = g_strdup ("table");
          }
          time_pick (pf, &pick_timing, &pp, errors);
          if (!g_str_has_prefix (tp.source, "table"))
            n_no_row++;
          if (strcmp (pp.source, "heuristic") != 0)
            bench_die ("the engine without a table picked from '%s' (%s): "
                "a table in the installed tuning folder?", pp.source,
                pp.r.description);
          tp.pass = within (tp.r.ms, best_ms, TABLE_BOUND, check->noise_ms);
          pp.pass = within (pp.r.ms, best_ms, HEURISTIC_BOUND,
              check->noise_ms);

          /* a miss is measured again, with the best variant and both
           * picks, to tell it from noise; the second measurement counts */
          if (!tp.pass || !pp.pass) {
            SweepResult again;
            gchar *best_variant = g_strdup (best->variant);
            if (sweep_frame_set_variant (tf, best_variant, &error)
                && sweep_frame_time (tf, &confirm, 0.0, &again, &error)) {
              best_ms = again.ms;
              g_free (again.variant);
              g_free (again.description);
              g_free (again.source);
              /* both picks again, against the same best */
              if (sweep_frame_set_variant (tf, NULL, NULL)) {
                time_pick (tf, &confirm, &tp, errors);
                tp.remeasured = TRUE;
              }
              time_pick (pf, &confirm, &pp, errors);
              pp.remeasured = TRUE;
              n_remeasured++;
            } else {
              g_string_append_printf (errors, "%sbest again: %s",
                  errors->len ? "; " : "", error->message);
              g_clear_error (&error);
            }
            g_free (best_variant);
            tp.pass = within (tp.r.ms, best_ms, TABLE_BOUND,
                check->noise_ms);
            pp.pass = within (pp.r.ms, best_ms, HEURISTIC_BOUND,
                check->noise_ms);
          }
          /* a pick that could not be timed is the worst there is */
          tp.ratio = isnan (tp.r.ms) ? INFINITY : tp.r.ms / best_ms;
          pp.ratio = isnan (pp.r.ms) ? INFINITY : pp.r.ms / best_ms;
          n_compared++;
          note_worst (&worst_table, &tp, key);
          note_worst (&worst_plain, &pp, key);

          verdict = g_strdup_printf ("%s%s%s%s",
              tp.pass && pp.pass ? "ok" : !tp.pass && !pp.pass ?
              "MISS table, heuristic" : !tp.pass ? "MISS table" :
              "MISS heuristic", (tp.pass && tp.ratio > TABLE_BOUND)
              || (pp.pass && pp.ratio > HEURISTIC_BOUND) ?
              " (a pass within the noise floor)" : "",
              tp.remeasured || pp.remeasured ? " (measured twice)" : "",
              g_str_has_prefix (tp.source, "table") ? "" :
              " (table has no row of this format and form: heuristic)");
          printf ("%-30s | %-24s %8.4f | %-24s %8.4f %5.2f | %-24s %8.4f "
              "%5.2f | %s%s%s\n", key, best->variant, best_ms,
              tp.r.variant, tp.r.ms, tp.ratio, pp.r.variant, pp.r.ms,
              pp.ratio, verdict, errors->len ? "; errors: " : "",
              errors->str);
          fflush (stdout);
          g_free (verdict);
        next:
          g_free (key);
          pick_clear (&tp);
          pick_clear (&pp);
          sweep_point_clear (&pt);
          g_string_free (errors, TRUE);
          gcv_filter_free (filter);
        }
      }
      sweep_frame_free (tf);
      sweep_frame_free (pf);
    }

  {
    gboolean ok = worst_table.n_pass == n_compared
        && worst_plain.n_pass == n_compared && n_errors == 0
        && n_compared > 0;
    double took = (g_get_monotonic_time () - start) / 1e6;

    printf ("\npoints checked: %u in %.0f s (%u measured twice after a "
        "miss)\n", n_compared, took, n_remeasured);
    printf ("table pick within %.0f%% of the best: %u of %u; worst %.2f at "
        "%s%s\n", 100.0 * (TABLE_BOUND - 1.0), worst_table.n_pass,
        n_compared, worst_table.ratio,
        worst_table.where ? worst_table.where : "-",
        worst_table.pass && worst_table.ratio > TABLE_BOUND ?
        " (a pass within the noise floor)" : "");
    if (n_no_row)
      printf ("  (%u point(s) had no row of their format and form in the "
          "table: the heuristic picked there)\n", n_no_row);
    printf ("heuristic pick within %.0f%% of the best: %u of %u; worst %.2f "
        "at %s%s\n", 100.0 * (HEURISTIC_BOUND - 1.0), worst_plain.n_pass,
        n_compared, worst_plain.ratio,
        worst_plain.where ? worst_plain.where : "-",
        worst_plain.pass && worst_plain.ratio > HEURISTIC_BOUND ?
        " (a pass within the noise floor)" : "");
    if (n_errors)
      printf ("%u point(s) could not be checked (errors above)\n", n_errors);
    printf ("dispatch check: %s\n", ok ? "PASS" : "FAIL");

    g_free (worst_table.where);
    g_free (worst_plain.where);
    gcv_tuning_table_free (table);
    gcv_engine_free (table_engine);
    gcv_engine_free (plain_engine);
    g_rmdir (empty_dir);
    g_free (empty_dir);
    g_free (original_cache);
    g_free (table_path);
    g_free (gpu);
    g_free (arch);
    g_array_unref (formats);
    g_array_unref (sizes);
    g_array_unref (shapes);
    return ok ? 0 : 1;
  }
}
