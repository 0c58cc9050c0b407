/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-bench --choices: each configuration's plan is made, as the
 * kernel-level benchmark makes it (the same filters for the same seed),
 * and its record printed field by field, so that two builds' choices can
 * be compared line by line with diff. Making a plan runs the dispatcher
 * and sets up what it chose (an FFT's transforms, say), but no frame. */
#include "choices.h"

#include <stdio.h>

static const char *
cpu_path_nick (GcvCpuPath path)
{
  static const char *const nicks[] = { "none", "direct", "separable",
    "fixed-point", "magnitude"
  };
  return path < G_N_ELEMENTS (nicks) ? nicks[path] : "?";
}

static void
print_choice (const BenchFrame * fr, BenchShape sh, BenchForm form,
    GcvFamily family, GcvPlan * plan, const GError * error)
{
  const GcvChoice *c;
  gchar *variant;

  printf ("%-7s %5ux%-5u %3ux%-3u %-3s %-9s | ", gcv_format_name (fr->format),
      fr->width, fr->height, sh.kw, sh.kh, bench_form_name (form),
      gcv_family_nick (family));
  if (!plan) {
    printf ("error: %s\n", error->message);
    return;
  }
  c = gcv_plan_get_choice (plan);
  variant = gcv_variant_to_string (&c->variant);
  printf ("%s | variant=\"%s\" source=%s%s%s fallback=\"%s\" kw=%u "
      "run_kw=%u column_pass=%d check_finite=%d fft=%dx%d/%d cpu_path=%s "
      "threads=%u\n", gcv_plan_describe (plan), variant,
      gcv_choice_source_nick (c->source), c->table_source ? ":" : "",
      c->table_source ? c->table_source : "",
      gcv_fallback_reason (c->fallback), c->kw, c->run_kw, c->column_pass,
      c->check_finite, c->fft_nx, c->fft_ny, c->fft_tiles,
      cpu_path_nick (c->cpu_path), c->threads);
  g_free (variant);
}

int
bench_list_choices (const BenchPlan * bp, int device, guint32 seed,
    const char *tuning_file)
{
  GError *error = NULL;
  GcvEngine *engine = NULL;
  guint n = 0, failed = 0;

  if (gcv_backend_available (GCV_BACKEND_CUDA, device, NULL))
    engine = gcv_engine_new (GCV_BACKEND_CUDA, device, &error);
  else
    engine = gcv_engine_new (GCV_BACKEND_CPU, device, &error);
  if (!engine) {
    fprintf (stderr, "gpuconvolve-bench: %s\n", error->message);
    g_error_free (error);
    return 1;
  }
  if (tuning_file && !gcv_engine_set_tuning_file (engine, tuning_file,
          &error)) {
    fprintf (stderr, "gpuconvolve-bench: %s\n", error->message);
    g_error_free (error);
    gcv_engine_free (engine);
    return 1;
  }
  printf ("engine: %s\n", gcv_engine_describe (engine));
  for (guint f = 0; f < bp->frames->len; f++) {
    const BenchFrame *fr = &g_array_index (bp->frames, BenchFrame, f);
    const GcvGeometry g = { fr->format, fr->format, fr->width, fr->height };
    for (guint s = 0; s < bp->shapes->len; s++) {
      BenchShape sh = g_array_index (bp->shapes, BenchShape, s);
      for (BenchForm form = BENCH_FORM_2D; form <= BENCH_FORM_SEPARABLE;
          form++) {
        GcvFilter *filter;
        if (!bp->forms[form])
          continue;
        if (!(filter = bench_make_filter (sh, form, seed, &error))) {
          printf ("%-7s %5ux%-5u %3ux%-3u %-3s | error: %s\n",
              gcv_format_name (fr->format), fr->width, fr->height, sh.kw,
              sh.kh, bench_form_name (form), error->message);
          g_clear_error (&error);
          failed++;
          continue;
        }
        for (guint i = 0; i < bp->families->len; i++) {
          GcvFamily a = g_array_index (bp->families, GcvFamily, i);
          GcvPlan *plan;
          if (!bench_family_applies (a, form))
            continue;
          plan = gcv_plan_new (engine, &g, filter, a, 1, &error);
          print_choice (fr, sh, form, a, plan, error);
          failed += plan == NULL;
          g_clear_error (&error);
          gcv_plan_free (plan);
          n++;
        }
        gcv_filter_free (filter);
      }
    }
  }
  printf ("%u choices, %u failed\n", n, failed);
  gcv_engine_free (engine);
  return failed ? 1 : 0;
}
