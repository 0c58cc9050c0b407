/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-cpu-bench: the engine's CPU backend on host frames, against
 * OpenCV's filters in the same process (where the peer is built) and a
 * parallel copy of the frame, every engine output checked against a
 * double-precision reference. See bench/README.md. */
#include "gcv-tools.h"
#include "cpu-opencv-peer.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef enum {
  FORM_GAUSSIAN,                /* the built-in gaussian: separable */
  FORM_DENSE,                   /* random taps, not rank 1: direct 2D */
} Form;

typedef struct {
  const gchar *name;
  GcvFormat format;
  guint width, height;
  Form form;
  guint size;
  gdouble sigma;
} Case;

/* The rows the CPU engine is measured by, OpenCV's calls as peers. */
static const Case cases[] = {
  {"rgba-gauss5", GCV_FORMAT_RGBA, 1920, 1080, FORM_GAUSSIAN, 5, 1.1},
  {"rgba-gauss9", GCV_FORMAT_RGBA, 1920, 1080, FORM_GAUSSIAN, 9, 1.7},
  {"gray8-gauss5", GCV_FORMAT_GRAY8, 1920, 1080, FORM_GAUSSIAN, 5, 1.1},
  {"gray8-gauss9", GCV_FORMAT_GRAY8, 4096, 4096, FORM_GAUSSIAN, 9, 1.7},
  {"gray32f-gauss9", GCV_FORMAT_GRAY32F, 4096, 4096, FORM_GAUSSIAN, 9, 1.7},
  {"gray32f-dense5", GCV_FORMAT_GRAY32F, 4096, 4096, FORM_DENSE, 5, 0},
  {"gray32f-dense9", GCV_FORMAT_GRAY32F, 4096, 4096, FORM_DENSE, 9, 0},
};

static gint opt_runs = 25;
static gint opt_warmup = 3;
static gchar *opt_cases = NULL;
static gchar *opt_csv = NULL;
static gboolean opt_quick = FALSE;
static gboolean opt_list = FALSE;
static gint opt_seed = 1;
static gboolean opt_engine_only = FALSE;
static gint opt_repeat = 1;

static const GOptionEntry entries[] = {
  {"cases", 0, 0, G_OPTION_ARG_STRING, &opt_cases,
      "Cases to run, by name (default all; --list names them)", "LIST"},
  {"runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs,
      "Timed runs of each implementation, interleaved; the median is "
        "reported (default 25)", "N"},
  {"warmup", 0, 0, G_OPTION_ARG_INT, &opt_warmup,
      "Untimed runs before (default 3)", "N"},
  {"repeat", 'r', 0, G_OPTION_ARG_INT, &opt_repeat,
      "Run the cases this many times over and end with a summary of the "
        "medians (default 1)", "N"},
  {"csv", 0, 0, G_OPTION_ARG_FILENAME, &opt_csv,
      "Also write the rows to FILE", "FILE"},
  {"quick", 0, 0, G_OPTION_ARG_NONE, &opt_quick,
      "Frames of a quarter the width and height, 5 runs", NULL},
  {"list", 0, 0, G_OPTION_ARG_NONE, &opt_list,
      "Print the cases and exit", NULL},
  {"engine-only", 0, 0, G_OPTION_ARG_NONE, &opt_engine_only,
      "Time the engine alone (for a profiler)", NULL},
  {"seed", 0, 0, G_OPTION_ARG_INT, &opt_seed,
      "Random frames and kernels (default 1)", "N"},
  {NULL}
};

static const gchar *const peer_names[CPU_PEER_N_OPS] = {
  "GaussianBlur", "sepFilter2D", "filter2D"
};

static gdouble
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int
compare_doubles (const void *a, const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return x < y ? -1 : x > y;
}

typedef struct {
  gdouble median, min, max;
} Stats;

static Stats
stats_of (gdouble * ms, guint n)
{
  Stats s;
  qsort (ms, n, sizeof (gdouble), compare_doubles);
  s.min = ms[0];
  s.max = ms[n - 1];
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  return s;
}

static gsize
row_bytes (GcvFormat format, guint width)
{
  return (gsize) width * gcv_format_pixel_size (format);
}

/* --- the copy floor: the frame read and written once, by as many threads
 * as the engine has ---------------------------------------------------- */

typedef struct {
  const guint8 *src;
  guint8 *dst;
  gsize row, rows_per_task;
  guint height;
} Copy;

static void
copy_task (gpointer data, guint task, guint worker)
{
  Copy *c = data;
  gsize y0 = task * c->rows_per_task, y1 = MIN (c->height,
      y0 + c->rows_per_task);
  memcpy (c->dst + y0 * c->row, c->src + y0 * c->row, (y1 - y0) * c->row);
}

/* --- the check: sampled outputs against a double-precision reference ---- */

/* The largest error at the frame's corners, along its edges and at random
 * pixels, against the bound of docs/filters.md; FALSE when one is over it. */
static gboolean
check_output (const Case * c, const GcvFilter * filter, const guint8 * src,
    const guint8 * dst, GRand * rand, gdouble * worst, gdouble * bound)
{
  GcvFilterTaps taps, *f = &taps;
  const guint channels = c->format == GCV_FORMAT_GRAY32F
      || c->format == GCV_FORMAT_GRAY8 ? 1 : 3;
  const guint px = gcv_format_pixel_size (c->format);
  /* the reference reads the source in place, border replicate */
  const RefView view = { src, row_bytes (c->format, c->width), c->width,
    c->height, px, c->format == GCV_FORMAT_GRAY32F
  };
  RefParams p;
  RefKernel *k;
  gdouble max_in = 0.0;
  gboolean ok = TRUE;

  gcv_filter_get_taps (filter, &taps);
  k = ref_params_init_taps (&p, f->taps, f->kw, f->kh, f->ax, f->ay,
      f->bias);
  if (c->format == GCV_FORMAT_GRAY32F) {
    for (gsize i = 0; i < (gsize) c->width * c->height; i++)
      max_in = MAX (max_in, fabs (((const gfloat *) src)[i]));
    *bound = ref_float_bound (&p, max_in, 1.0);
  } else {
    *bound = ref_u8_bound (&p, 255.0);
  }
  *worst = 0.0;
  for (guint s = 0; s < 4000; s++) {
    guint x, y;
    switch (s % 4) {
      case 0:                  /* left or right edge */
        x = g_rand_int_range (rand, 0, 8);
        if (g_rand_boolean (rand))
          x = c->width - 1 - MIN (x, c->width - 1);
        y = g_rand_int_range (rand, 0, c->height);
        break;
      case 1:                  /* top or bottom edge */
        x = g_rand_int_range (rand, 0, c->width);
        y = g_rand_int_range (rand, 0, 8);
        if (g_rand_boolean (rand))
          y = c->height - 1 - MIN (y, c->height - 1);
        break;
      default:
        x = g_rand_int_range (rand, 0, c->width);
        y = g_rand_int_range (rand, 0, c->height);
        break;
    }
    x = MIN (x, c->width - 1);
    y = MIN (y, c->height - 1);
    for (guint ch = 0; ch < channels; ch++) {
      gdouble ref = ref_filter_view_at (&view, &p, x, y, ch), got, err;
      const guint8 *q = dst + ((gsize) y * c->width + x) * px;
      if (c->format == GCV_FORMAT_GRAY32F) {
        got = *(const gfloat *) q;
      } else {
        got = q[ch];
        ref = CLAMP (ref, 0.0, 255.0);
      }
      err = fabs (got - ref);
      *worst = MAX (*worst, err);
      ok = ok && err <= *bound;
    }
  }
  ref_kernel_free (k);
  return ok;
}

/* Largest difference between two outputs over the whole frame; the fourth
 * byte of 4-byte pixels is left out (OpenCV filters it, the engine passes
 * it through). */
static gdouble
max_difference (const Case * c, const guint8 * a, const guint8 * b)
{
  gsize n = (gsize) c->width * c->height;
  gdouble m = 0.0;

  if (c->format == GCV_FORMAT_GRAY32F) {
    for (gsize i = 0; i < n; i++)
      m = MAX (m, fabs (((const gfloat *) a)[i] - ((const gfloat *) b)[i]));
  } else {
    guint px = gcv_format_pixel_size (c->format);
    for (gsize i = 0; i < n * px; i++)
      if (px == 1 || i % 4 != 3)
        m = MAX (m, ABS ((gint) a[i] - (gint) b[i]));
  }
  return m;
}

/* --- one case ----------------------------------------------------------- */

typedef struct {
  const gchar *name;
  gboolean ran;
  Stats stats;
  gdouble *ms;
  gchar *note;
} Impl;

enum { IMPL_ENGINE, IMPL_COPY, IMPL_PEERS };
#define N_IMPLS (IMPL_PEERS + CPU_PEER_N_OPS)

static GcvFilter *
make_filter (const Case * c, GRand * rand, GError ** error)
{
  GcvFilterDesc d;
  gfloat *k = NULL;
  GcvFilter *f;

  gcv_filter_desc_init (&d);
  d.border = GCV_BORDER_REPLICATE;
  if (c->form == FORM_GAUSSIAN) {
    d.builtin = GCV_BUILTIN_GAUSSIAN;
    d.size = c->size;
    d.sigma = c->sigma;
  } else {
    /* positive taps summing to about 1, so 8-bit output stays in range */
    k = g_new (gfloat, c->size * c->size);
    for (guint i = 0; i < c->size * c->size; i++)
      k[i] = (gfloat) g_rand_double_range (rand, 0.2, 1.8) / (c->size *
          c->size);
    d.kernel = k;
    d.n_kernel = c->size * c->size;
    d.kernel_width = d.kernel_height = c->size;
    d.separable = GCV_SEPARABLE_NEVER;
  }
  f = gcv_filter_new (&d, error);
  g_free (k);
  return f;
}

static guint8 *
random_frame (const Case * c, GRand * rand)
{
  gsize n = (gsize) c->width * c->height;
  guint8 *p = g_malloc (n * gcv_format_pixel_size (c->format));

  if (c->format == GCV_FORMAT_GRAY32F)
    for (gsize i = 0; i < n; i++)
      ((gfloat *) p)[i] = (gfloat) g_rand_double (rand);
  else
    for (gsize i = 0; i < n * gcv_format_pixel_size (c->format); i++)
      p[i] = (guint8) g_rand_int_range (rand, 0, 256);
  return p;
}

static gchar *
describe_kernel (const Case * c)
{
  if (c->form == FORM_GAUSSIAN)
    return g_strdup_printf ("gaussian %ux%u s%.1f", c->size, c->size,
        c->sigma);
  return g_strdup_printf ("dense %ux%u", c->size, c->size);
}

/* What one pass over a case measured, for the summary. */
typedef struct {
  gdouble engine, copy, peer;   /* medians, ms; peer: the fastest, 0: none */
} Result;

static gboolean
run_case (const Case * c, GcvEngine * engine, GcvCpuPool * pool, FILE * csv,
    guint repeat, Result * result)
{
  GRand *rand = g_rand_new_with_seed (opt_seed);
  GError *err = NULL;
  GcvFilter *f = make_filter (c, rand, &err);
  GcvGeometry g = { c->format, c->format, c->width, c->height };
  GcvPlan *plan;
  const gsize row = row_bytes (c->format, c->width);
  const gsize bytes = row * c->height;
  guint8 *src, *out[N_IMPLS];
  GcvImage in_img, out_img;
  Impl impl[N_IMPLS];
  Copy copy;
  gdouble worst, bound, best_peer = 0.0;
  gboolean ok;
  gchar *kernel = describe_kernel (c);

  if (!f)
    g_error ("%s: %s", c->name, err->message);
  plan = gcv_plan_new (engine, &g, f, GCV_FAMILY_AUTO, 1, &err);
  if (!plan)
    g_error ("%s: %s", c->name, err->message);
  src = random_frame (c, rand);
  memset (impl, 0, sizeof (impl));
  for (guint i = 0; i < N_IMPLS; i++) {
    out[i] = g_malloc0 (bytes);
    impl[i].ms = g_new (gdouble, opt_runs);
  }
  impl[IMPL_ENGINE].name = "engine";
  impl[IMPL_ENGINE].ran = TRUE;
  impl[IMPL_COPY].name = "copy";
  impl[IMPL_COPY].ran = !opt_engine_only;
  for (guint p = 0; p < CPU_PEER_N_OPS && !opt_engine_only; p++) {
    Impl *im = &impl[IMPL_PEERS + p];
    im->name = peer_names[p];
    /* GaussianBlur and sepFilter2D for separable rows, filter2D for dense */
    im->ran = (p == CPU_PEER_FILTER_2D) == (c->form == FORM_DENSE);
    if (im->ran && !cpu_peer_run (p, c->format, c->width, c->height, src,
            row, out[IMPL_PEERS + p], row, f, c->size, c->sigma, &err)) {
      im->ran = FALSE;
      im->note = g_strdup (err->message);
      g_clear_error (&err);
    }
  }
  in_img = (GcvImage) { src, row, FALSE };
  out_img = (GcvImage) { out[IMPL_ENGINE], row, FALSE };
  copy = (Copy) { src, out[IMPL_COPY], row, 0, c->height };
  copy.rows_per_task = (c->height + 4 * gcv_cpu_pool_get_n_workers (pool) - 1)
      / (4 * gcv_cpu_pool_get_n_workers (pool));

  /* warm-up, then the implementations in turn, so that the machine's
   * moods fall on all of them alike */
  for (gint r = -opt_warmup; r < opt_runs; r++)
    for (guint i = 0; i < N_IMPLS; i++) {
      gdouble t0;
      if (!impl[i].ran)
        continue;
      t0 = now_ms ();
      if (i == IMPL_ENGINE) {
        if (!gcv_plan_run (plan, &in_img, &out_img, &err))
          g_error ("%s: %s", c->name, err->message);
      } else if (i == IMPL_COPY) {
        gcv_cpu_pool_run (pool, (c->height + copy.rows_per_task - 1)
            / copy.rows_per_task, copy_task, &copy);
      } else {
        cpu_peer_run (i - IMPL_PEERS, c->format, c->width, c->height, src,
            row, out[i], row, f, c->size, c->sigma, NULL);
      }
      if (r >= 0)
        impl[i].ms[r] = now_ms () - t0;
    }
  for (guint i = 0; i < N_IMPLS; i++)
    if (impl[i].ran) {
      impl[i].stats = stats_of (impl[i].ms, opt_runs);
      if (i >= IMPL_PEERS && (best_peer == 0.0
              || impl[i].stats.median < best_peer))
        best_peer = impl[i].stats.median;
    }

  ok = check_output (c, f, src, out[IMPL_ENGINE], rand, &worst, &bound);

  g_print ("%-15s %-7s %5ux%-5u %-19s", c->name,
      gcv_format_name (c->format), c->width, c->height, kernel);
  for (guint i = 0; i < N_IMPLS; i++)
    if (impl[i].ran)
      g_print (" %8.2f", impl[i].stats.median);
    else
      g_print (" %8s", "-");
  if (best_peer > 0.0)
    g_print (" %6.2f", impl[IMPL_ENGINE].stats.median / best_peer);
  else
    g_print (" %6s", "-");
  g_print ("  %s (%.3g <= %.3g)\n", ok ? "ok" : "FAIL", worst, bound);
  for (guint i = IMPL_PEERS; i < N_IMPLS; i++) {
    if (impl[i].ran)
      g_print ("%17s%s: min %.2f max %.2f ms, max |engine - %s| %.3g\n", "",
          impl[i].name, impl[i].stats.min, impl[i].stats.max, impl[i].name,
          max_difference (c, out[IMPL_ENGINE], out[i]));
    else if (impl[i].note)
      g_print ("%17s%s: %s\n", "", impl[i].name, impl[i].note);
  }
  g_print ("%17sengine (%s): min %.2f max %.2f ms\n", "",
      gcv_plan_describe (plan), impl[IMPL_ENGINE].stats.min,
      impl[IMPL_ENGINE].stats.max);

  for (guint i = 0; csv && i < N_IMPLS; i++)
    if (impl[i].ran)
      fprintf (csv, "%u,%s,%s,%u,%u,%s,%s,%d,%.4f,%.4f,%.4f,%.4f,%s\n",
          repeat, c->name, gcv_format_name (c->format), c->width, c->height,
          kernel, impl[i].name, opt_runs, impl[i].stats.median, impl[i].stats.min,
          impl[i].stats.max, best_peer > 0.0 ? impl[i].stats.median /
          best_peer : 0.0, i == IMPL_ENGINE ? (ok ? "ok" : "FAIL") : "");

  result->engine = impl[IMPL_ENGINE].stats.median;
  result->copy = impl[IMPL_COPY].ran ? impl[IMPL_COPY].stats.median : 0.0;
  result->peer = best_peer;
  for (guint i = 0; i < N_IMPLS; i++) {
    g_free (out[i]);
    g_free (impl[i].ms);
    g_free (impl[i].note);
  }
  g_free (src);
  g_free (kernel);
  gcv_plan_free (plan);
  gcv_filter_free (f);
  g_rand_free (rand);
  return ok;
}

static gboolean
wanted (const Case * c)
{
  gchar **names;
  gboolean found = FALSE;

  if (!opt_cases)
    return TRUE;
  names = g_strsplit (opt_cases, ",", -1);
  for (guint i = 0; names[i]; i++)
    found = found || g_str_equal (g_strstrip (names[i]), c->name);
  g_strfreev (names);
  return found;
}

static gdouble
median_of (gdouble * v, guint n)
{
  return stats_of (v, n).median;
}

/* Per case, over the passes: the median of each pass's medians, and the
 * ratio's median and range. A pass that fell on a busy moment of the
 * machine moves the medians little. */
static void
print_summary (const Result * results)
{
  gdouble *engine = g_new (gdouble, opt_repeat), *peer =
      g_new (gdouble, opt_repeat), *copy = g_new (gdouble, opt_repeat),
      *ratio = g_new (gdouble, opt_repeat);

  g_print ("-- summary: medians over %d passes of %d runs each\n",
      opt_repeat, opt_runs);
  g_print ("%-15s %8s %8s %8s %6s  %s\n", "case", "engine", "OpenCV", "copy",
      "ratio", "ratio range");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    const Result *r = &results[i * opt_repeat];
    if (!wanted (&cases[i]))
      continue;
    for (gint p = 0; p < opt_repeat; p++) {
      engine[p] = r[p].engine;
      peer[p] = r[p].peer;
      copy[p] = r[p].copy;
      ratio[p] = r[p].peer > 0.0 ? r[p].engine / r[p].peer : 0.0;
    }
    g_print ("%-15s %8.2f", cases[i].name, median_of (engine, opt_repeat));
    if (r[0].peer > 0.0) {
      gdouble med = median_of (ratio, opt_repeat);
      g_print (" %8.2f %8.2f %6.2f  %.2f-%.2f\n", median_of (peer,
              opt_repeat), median_of (copy, opt_repeat), med, ratio[0],
          ratio[opt_repeat - 1]);
    } else {
      g_print (" %8s %8.2f\n", "-", median_of (copy, opt_repeat));
    }
  }
  g_free (engine);
  g_free (peer);
  g_free (copy);
  g_free (ratio);
}

/* "AMD EPYC 7B13" from /proc/cpuinfo, where there is one. */
static gchar *
cpu_model (void)
{
  gchar *text = NULL, *model = NULL;

  if (g_file_get_contents ("/proc/cpuinfo", &text, NULL, NULL)) {
    gchar **lines = g_strsplit (text, "\n", -1);
    for (guint i = 0; lines[i] && !model; i++)
      if (g_str_has_prefix (lines[i], "model name")) {
        gchar *colon = strchr (lines[i], ':');
        if (colon)
          model = g_strdup (g_strstrip (colon + 1));
      }
    g_strfreev (lines);
    g_free (text);
  }
  return model ? model : g_strdup ("unknown CPU");
}

int
main (int argc, char **argv)
{
  GOptionContext *ctx = g_option_context_new ("- the CPU engine against "
      "OpenCV on host frames");
  GError *err = NULL;
  GcvEngine *engine;
  GcvCpuPool *pool;
  FILE *csv = NULL;
  gchar *model, *peer;
  gboolean ok = TRUE;
  guint cores = g_get_num_processors ();
  Result *results;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (opt_list) {
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
      gchar *k = describe_kernel (&cases[i]);
      g_print ("%-15s %-7s %ux%u %s\n", cases[i].name,
          gcv_format_name (cases[i].format), cases[i].width,
          cases[i].height, k);
      g_free (k);
    }
    return 0;
  }
  if (opt_quick)
    opt_runs = MIN (opt_runs, 5);
  if (opt_runs < 1 || opt_warmup < 0 || opt_repeat < 1) {
    g_printerr ("--runs and --repeat must be at least 1, --warmup at least "
        "0\n");
    return 2;
  }

  engine = gcv_engine_new (GCV_BACKEND_CPU, -1, &err);
  if (!engine)
    g_error ("%s", err->message);
  pool = gcv_cpu_pool_new (cores);
  cpu_peer_set_threads (cores);
  if (opt_csv && !(csv = fopen (opt_csv, "w")))
    g_error ("cannot write %s", opt_csv);
  if (csv)
    fprintf (csv, "repeat,case,format,width,height,kernel,impl,runs,ms_median,"
        "ms_min,ms_max,ratio_to_best_peer,check\n");

  model = cpu_model ();
  peer = cpu_peer_describe ();
  g_print ("gpuconvolve-cpu-bench: %s, %u cores; engine %s; %s\n", model,
      cores, gcv_engine_describe (engine), peer);
  g_print ("median ms of %d interleaved runs after %d warm-up; border "
      "replicate; ratio = engine / fastest OpenCV call\n", opt_runs,
      opt_warmup);
  g_print ("%-15s %-7s %-11s %-19s %8s %8s %8s %8s %8s %6s  %s\n", "case",
      "format", "frame", "kernel", "engine", "copy", "Gaussian", "sepFilt",
      "filter2D", "ratio", "check (max err <= bound)");
  results = g_new0 (Result, G_N_ELEMENTS (cases) * opt_repeat);
  for (gint rep = 0; rep < opt_repeat; rep++) {
    if (opt_repeat > 1)
      g_print ("-- pass %d of %d\n", rep + 1, opt_repeat);
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
      Case c = cases[i];
      if (!wanted (&c))
        continue;
      if (opt_quick) {
        c.width /= 4;
        c.height /= 4;
      }
      ok = run_case (&c, engine, pool, csv, rep + 1,
          &results[i * opt_repeat + rep]) && ok;
    }
  }
  if (opt_repeat > 1)
    print_summary (results);
  g_free (results);

  if (csv)
    fclose (csv);
  g_free (model);
  g_free (peer);
  gcv_cpu_pool_free (pool);
  gcv_engine_free (engine);
  return ok ? 0 : 1;
}
