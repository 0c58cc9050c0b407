/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Timing the dispatcher's candidates at one point; see sweep.h. */
#include "sweep.h"
#include "gcv-tools.h"
#include "common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sweep_candidates[] = {
  "separable fused ty=4",
  "separable two-pass",
  "tiled",
  "tiled ty=1",
  "tiled ty=2",
  "tiled ty=4",
  "tiled ty=8",
  "register p=4 block=128",
  "register p=8 block=128",
  "register p=8 block=256",
  "fft tile=256",
  "fft tile=512",
  "fft tile=1024",
  "fft tile=128",
  "direct",
  NULL
};

const char *const *
sweep_candidates_usable (GString * rejected)
{
  static GPtrArray *usable;
  static GString *why;

  if (!usable) {
    usable = g_ptr_array_new ();
    why = g_string_new (NULL);
    for (const char *const *c = sweep_candidates; *c; c++) {
      GcvVariant v;
      GError *error = NULL;
      if (gcv_variant_parse (*c, &v, &error)) {
        g_ptr_array_add (usable, (gpointer) * c);
      } else {
        g_string_append_printf (why, "'%s': %s\n", *c, error->message);
        g_error_free (error);
      }
    }
    g_ptr_array_add (usable, NULL);
  }
  if (rejected)
    g_string_append (rejected, why->str);
  return (const char *const *) usable->pdata;
}

/* docs/properties.md (`separable`): with separable=auto the separable
 * paths of a rank-1 kernel join the 2D ones and the fastest wins; other
 * kernels have the 2D paths only. The sweep measures what the dispatcher
 * may choose. */
gboolean
sweep_family_allowed (const GcvVariant * v, const GcvDispatchKey * key)
{
  return key->separable || v->family != GCV_FAMILY_SEPARABLE;
}

gboolean
sweep_worth_timing (const GcvVariant * v, const GcvDispatchKey * key)
{
  /* k*k against 81: k = sqrt(kw * kh) against 9 */
  guint area = key->kw * key->kh;

  switch (v->family) {
    case GCV_FAMILY_SEPARABLE:
      return key->separable;
    case GCV_FAMILY_FFT:
      return area > 81;
    case GCV_FAMILY_DIRECT:
      return area < 81;
    case GCV_FAMILY_REGISTER:
      return key->kw <= 17;
    default:
      return TRUE;
  }
}

/* --- points --------------------------------------------------------------- */

static void
result_clear (gpointer data)
{
  SweepResult *r = data;
  g_free (r->variant);
  g_free (r->description);
  g_free (r->source);
}

void
sweep_point_init (SweepPoint * pt)
{
  memset (pt, 0, sizeof (*pt));
  pt->results = g_array_new (FALSE, TRUE, sizeof (SweepResult));
  g_array_set_clear_func (pt->results, result_clear);
  pt->best = -1;
  pt->errors = g_string_new (NULL);
}

void
sweep_point_clear (SweepPoint * pt)
{
  if (pt->results)
    g_array_unref (pt->results);
  if (pt->errors)
    g_string_free (pt->errors, TRUE);
  memset (pt, 0, sizeof (*pt));
  pt->best = -1;
}

const SweepResult *
sweep_point_best (const SweepPoint * pt)
{
  return pt->best >= 0 ?
      &g_array_index (pt->results, SweepResult, pt->best) : NULL;
}

const SweepResult *
sweep_point_find (const SweepPoint * pt, const char *variant)
{
  for (guint i = 0; variant && i < pt->results->len; i++) {
    const SweepResult *r = &g_array_index (pt->results, SweepResult, i);
    if (g_strcmp0 (r->variant, variant) == 0)
      return r;
  }
  return NULL;
}

gchar *
sweep_key_to_string (const GcvDispatchKey * key)
{
  return g_strdup_printf ("%s %ux%u %ux%u sep=%d",
      gcv_format_name (key->format), key->width, key->height, key->kw,
      key->kh, key->separable ? 1 : 0);
}

/* --- frames --------------------------------------------------------------- */

struct _SweepFrame {
  GcvEngine *engine;
  gint device;
  GcvFormat format;
  guint width, height;
  GcvPlan *plan;
  cudaStream_t stream;
  void *d_frame;                /* the random frame, rows packed */
  gsize row;
  void *d_out;                  /* every run writes here */
  size_t out_pitch;
  GcvDispatchKey key;           /* of the filter set last */
  GcvImage src, dst;            /* of the run being timed */
  GcvTicket ticket;             /* of the run submitted last */
  GError *run_error;            /* the first failed run of a timing */
};

SweepFrame *
sweep_frame_new (GcvEngine * engine, GcvFormat format, guint width,
    guint height, guint32 seed)
{
  SweepFrame *sf = g_new0 (SweepFrame, 1);
  guint8 *host;

  sf->engine = engine;
  sf->device = gcv_engine_get_device (engine);
  sf->format = format;
  sf->width = width;
  sf->height = height;
  sf->row = bench_row_bytes (format, width);
  BENCH_CUDA (cudaSetDevice (sf->device));
  host = bench_random_frame (format, width, height, seed);
  BENCH_CUDA (cudaMalloc (&sf->d_frame, sf->row * height));
  BENCH_CUDA (cudaMemcpy (sf->d_frame, host, sf->row * height,
          cudaMemcpyHostToDevice));
  g_free (host);
  BENCH_CUDA (cudaMallocPitch (&sf->d_out, &sf->out_pitch, sf->row, height));
  return sf;
}

void
sweep_frame_free (SweepFrame * sf)
{
  if (!sf)
    return;
  gcv_plan_free (sf->plan);
  BENCH_CUDA (cudaSetDevice (sf->device));
  BENCH_CUDA (cudaFree (sf->d_frame));
  BENCH_CUDA (cudaFree (sf->d_out));
  g_clear_error (&sf->run_error);
  g_free (sf);
}

GcvPlan *
sweep_frame_get_plan (SweepFrame * sf)
{
  return sf->plan;
}

gboolean
sweep_frame_set_filter (SweepFrame * sf, const GcvFilter * filter,
    GError ** error)
{
  GcvGeometry geometry = { sf->format, sf->format, sf->width, sf->height };

  if (sf->plan) {
    if (!gcv_plan_set_filter (sf->plan, filter, GCV_FAMILY_AUTO, error))
      return FALSE;
  } else {
    sf->plan = gcv_plan_new (sf->engine, &geometry, filter,
        GCV_FAMILY_AUTO, 1, error);
    if (!sf->plan)
      return FALSE;
    sf->stream = gcv_plan_get_cuda_stream (sf->plan, 0);
    if (!sf->stream) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE,
          "the plan has no CUDA stream (engine %s)",
          gcv_engine_describe (sf->engine));
      g_clear_pointer (&sf->plan, gcv_plan_free);
      return FALSE;
    }
  }
  /* what the dispatcher keys its choice on */
  {
    GcvGeometry g = { sf->format, sf->format, sf->width, sf->height };
    gcv_dispatch_key_init (&sf->key, &g, filter);
  }
  return TRUE;
}

void
sweep_frame_key (SweepFrame * sf, GcvDispatchKey * key)
{
  *key = sf->key;
}

gboolean
sweep_frame_set_variant (SweepFrame * sf, const char *variant,
    GError ** error)
{
  return gcv_plan_set_variant (sf->plan, variant, error);
}

/* The frame into the slot's device input, where the plan reads it in place
 * (the buffers may have been remade by the last filter or variant). */
static gboolean
prepare_input (SweepFrame * sf, GError ** error)
{
  BENCH_CUDA (cudaSetDevice (sf->device));
  if (!gcv_plan_get_device_input (sf->plan, 0, &sf->src)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE,
        "the plan has no device input: %s", gcv_plan_describe (sf->plan));
    return FALSE;
  }
  /* the slot's buffers are made on its stream: fill them in its order */
  BENCH_CUDA (cudaStreamSynchronize (sf->stream));
  BENCH_CUDA (cudaMemcpy2DAsync (sf->src.data, sf->src.stride, sf->d_frame,
          sf->row, sf->row, sf->height, cudaMemcpyDeviceToDevice,
          sf->stream));
  BENCH_CUDA (cudaStreamSynchronize (sf->stream));
  sf->src.on_device = TRUE;
  sf->dst.data = sf->d_out;
  sf->dst.stride = sf->out_pitch;
  sf->dst.on_device = TRUE;
  return TRUE;
}

static void
run_submit (gpointer user)
{
  SweepFrame *sf = user;
  if (!sf->run_error)
    gcv_plan_submit (sf->plan, &sf->src, &sf->dst, &sf->ticket,
        &sf->run_error);
}

static void
run_wait (gpointer user)
{
  SweepFrame *sf = user;
  if (!sf->run_error)
    gcv_plan_wait (sf->plan, sf->ticket, &sf->run_error);
}

static gboolean
run_failed (SweepFrame * sf, GError ** error)
{
  if (!sf->run_error)
    return FALSE;
  g_propagate_error (error, sf->run_error);
  sf->run_error = NULL;
  return TRUE;
}

gboolean
sweep_frame_time (SweepFrame * sf, const SweepTiming * t, double best_ms,
    SweepResult * r, GError ** error)
{
  BenchStats probe, stats;
  guint warmup = MAX (t->warmup, 1);

  memset (r, 0, sizeof (*r));
  r->description = g_strdup (gcv_plan_describe (sf->plan));
  r->variant = gcv_variant_to_string (&gcv_plan_get_choice (sf->plan)->variant);
  r->source = g_strdup (gcv_choice_source_nick (gcv_plan_get_choice
          (sf->plan)->source));
  if (!prepare_input (sf, error))
    return FALSE;
  for (guint i = 0; i + 1 < warmup; i++) {
    run_submit (sf);
    run_wait (sf);
    if (run_failed (sf, error))
      return FALSE;
  }
  bench_time (sf->stream, run_submit, run_wait, sf, 0, 1, &probe);
  if (run_failed (sf, error))
    return FALSE;
  if (best_ms > 0.0 && t->drop_factor > 0.0
      && probe.median > t->drop_factor * best_ms) {
    r->ms = probe.median;
    r->dropped = TRUE;
    return TRUE;
  }
  bench_time (sf->stream, run_submit, run_wait, sf, 0, MAX (t->runs, 1),
      &stats);
  if (run_failed (sf, error))
    return FALSE;
  r->ms = stats.median;
  return TRUE;
}

void
sweep_frame_warm_up (SweepFrame * sf, double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * 1e6);
  GError *error = NULL;

  if (!prepare_input (sf, &error)) {
    g_error_free (error);
    return;
  }
  while (g_get_monotonic_time () < end) {
    run_submit (sf);
    run_wait (sf);
    if (run_failed (sf, &error)) {
      g_error_free (error);
      return;
    }
  }
}

/* --- a point -------------------------------------------------------------- */

static void
add_error (SweepPoint * pt, const char *variant, const char *message)
{
  g_string_append_printf (pt->errors, "%s'%s': %s",
      pt->errors->len ? "; " : "", variant, message);
}

void
sweep_measure (SweepFrame * sf, const char *const *candidates,
    const SweepTiming * t, SweepPoint * pt)
{
  const GcvDispatchKey *key = &pt->key;
  guint dropped_families = 0;   /* 1 << family */

  sweep_frame_key (sf, &pt->key);
  for (const char *const *c = candidates; *c; c++) {
    GcvVariant asked, ran;
    SweepResult r;
    GError *error = NULL;
    const SweepResult *best;
    double best_ms;
    gchar *variant;

    if (!gcv_variant_parse (*c, &asked, &error)) {
      add_error (pt, *c, error->message);
      g_error_free (error);
      continue;
    }
    if (!sweep_family_allowed (&asked, key)
        || (t->prune && !sweep_worth_timing (&asked, key))
        || (t->drop_family && (dropped_families & (1u << asked.family)))) {
      pt->n_pruned++;
      continue;
    }
    if (!sweep_frame_set_variant (sf, *c, &error)) {
      add_error (pt, *c, error->message);
      g_error_free (error);
      continue;
    }
    ran = gcv_plan_get_choice (sf->plan)->variant;
    variant = gcv_variant_to_string (&ran);
    if (sweep_point_find (pt, variant)) {
      pt->n_duplicates++;
      g_free (variant);
      continue;
    }
    g_free (variant);
    if (!sweep_family_allowed (&ran, key)
        || (t->prune && !sweep_worth_timing (&ran, key))
        || (t->drop_family && (dropped_families & (1u << ran.family)))) {
      pt->n_pruned++;
      continue;
    }
    /* the best's time, not a pointer into results: appending moves them */
    best = sweep_point_best (pt);
    best_ms = best ? best->ms : 0.0;
    if (!sweep_frame_time (sf, t, best_ms, &r, &error)) {
      add_error (pt, *c, error->message);
      g_error_free (error);
      result_clear (&r);
      continue;
    }
    pt->n_timed++;
    if (r.dropped) {
      pt->n_dropped++;
      dropped_families |= 1u << ran.family;
    }
    g_array_append_val (pt->results, r);
    if (!r.dropped && (pt->best < 0 || r.ms < best_ms))
      pt->best = pt->results->len - 1;
  }
  /* a forced direct is the cheapest to change the filter under (an fft
   * left forced would plan its transforms for the next filter) */
  sweep_frame_set_variant (sf, "direct", NULL);
}

/* --- option lists --------------------------------------------------------- */

gboolean
sweep_parse_kernels (const char *text, GArray * shapes, GError ** error)
{
  gchar **items = g_strsplit (text ? text : "", ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    const char *item = g_strstrip (*p);
    const char *dash = strchr (item, '-');

    if (!*item || strcmp (item, "none") == 0)
      continue;
    if (dash) {
      char *end1, *end2;
      unsigned long a = strtoul (item, &end1, 10);
      unsigned long b = strtoul (dash + 1, &end2, 10);
      if (end1 != dash || end2 == dash + 1 || *end2 || a < 1 || b < a
          || b > GCV_MAX_KERNEL_SIZE) {
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
            "bad kernel range '%s' (want A-B, 1 <= A <= B <= %d)", item,
            GCV_MAX_KERNEL_SIZE);
        ok = FALSE;
        break;
      }
      for (unsigned long k = a; k <= b; k++)
        if (k % 2 == 1) {
          BenchShape s = { (guint) k, (guint) k };
          g_array_append_val (shapes, s);
        }
      continue;
    }
    ok = bench_parse_shapes (item, shapes, error);
  }
  g_strfreev (items);
  return ok;
}

gboolean
sweep_parse_formats (const char *text, GArray * formats, GError ** error)
{
  gchar **items = g_strsplit (text ? text : "", ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    const char *item = g_strstrip (*p);
    GcvFormat f;
    if (!*item)
      continue;
    if (!gcv_format_from_name (item, &f)) {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "unknown format '%s' (GRAY32F, GRAY8, RGBA, BGRA, RGBx, BGRx)",
          item);
      ok = FALSE;
      break;
    }
    g_array_append_val (formats, f);
  }
  g_strfreev (items);
  if (ok && formats->len == 0) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "no format given");
    ok = FALSE;
  }
  return ok;
}

gboolean
sweep_parse_sizes (const char *text, GArray * sizes, GError ** error)
{
  gchar **items = g_strsplit (text ? text : "", ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    const char *item = g_strstrip (*p);
    BenchFrame f = { GCV_FORMAT_GRAY32F, 0, 0 };
    if (!*item)
      continue;
    if (!bench_parse_size (item, &f.width, &f.height)) {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "bad frame size '%s' (want WxH, 1..%d)", item, GCV_MAX_FRAME_SIZE);
      ok = FALSE;
      break;
    }
    g_array_append_val (sizes, f);
  }
  g_strfreev (items);
  if (ok && sizes->len == 0) {
    g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
        "no frame size given");
    ok = FALSE;
  }
  return ok;
}

void
sweep_device_name (gint device, gchar ** name, gchar ** arch)
{
  struct cudaDeviceProp prop;

  BENCH_CUDA (cudaGetDeviceProperties (&prop, device));
  if (name)
    *name = g_strdup (prop.name);
  if (arch)
    *arch = g_strdup_printf ("sm_%d%d", prop.major, prop.minor);
}
