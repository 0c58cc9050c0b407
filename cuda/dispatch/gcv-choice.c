/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record of what runs, as text: the one place active-algorithm and
 * gcv_plan_describe() are written (docs/properties.md, docs/tuning.md,
 * "Seeing the choice"). */
#include "gcv-choice.h"

#include <string.h>

const gchar *
gcv_choice_source_nick (GcvChoiceSource source)
{
  static const gchar *const nicks[] = { "heuristic", "table", "requested",
    "forced"
  };
  return source < G_N_ELEMENTS (nicks) ? nicks[source] : "?";
}

const gchar *
gcv_fallback_reason (GcvFallback fallback)
{
  static const gchar *const reasons[] = { "", "kernel not rank 1",
    "register cannot run this size", "fft could not be set up",
    "tile too large for shared memory", "the separable factors' zeros and "
        "signs differ from the kernel's, which float input needs",
    "only direct and tiled run gradient magnitudes",
    "runs on CUDA only"
  };
  return fallback < G_N_ELEMENTS (reasons) ? reasons[fallback] : "?";
}

/* The parameters that run, after the family's name. */
static gchar *
cuda_parameters (const GcvChoice * c)
{
  const GcvVariant *v = &c->variant;
  gchar *name, *params;

  if (c->column_pass)
    return g_strdup ("column pass");
  if (v->family == GCV_FAMILY_TILED && c->run_kw != c->kw)
    return g_strdup_printf ("ty=%d unrolled %u wide", v->rows, c->run_kw);
  if (v->family == GCV_FAMILY_TILED)
    return g_strdup_printf ("ty=%d %s", v->rows, v->adaptive ? "adaptive" :
        "unrolled");
  if (v->family == GCV_FAMILY_FFT && v->fft_tile)
    return g_strdup_printf ("tile=%d, %d tiles", c->fft_nx, c->fft_tiles);
  if (v->family == GCV_FAMILY_FFT)
    return g_strdup_printf ("p=%d %dx%d", v->fft_prime, c->fft_nx,
        c->fft_ny);
  /* the variant's own words, its family's name left out */
  name = gcv_variant_to_string (v);
  params = g_strdup (strchr (name, ' ') ? strchr (name, ' ') + 1 : "");
  g_free (name);
  return params;
}

static gchar *
describe_cuda (const GcvChoice * c)
{
  gchar *params = cuda_parameters (c);
  gchar *source = c->source == GCV_SOURCE_TABLE ?
      g_strdup_printf ("table: %s", c->table_source ? c->table_source : "?")
      : g_strdup (gcv_choice_source_nick (c->source));
  gchar *text = g_strdup_printf ("%s %s%s(%s)%s%s%s%s%s",
      gcv_family_nick (c->variant.family), params, *params ? " " : "",
      source, c->fallback ? " (" : "", gcv_fallback_reason (c->fallback),
      c->fallback ? ")" : "", *c->detail ? ": " : "", c->detail);

  g_free (source);
  g_free (params);
  return text;
}

/* The CPU backend has two families, and says why where it runs another
 * than the one asked for. */
static gchar *
describe_cpu (const GcvChoice * c)
{
  const gchar *family = gcv_family_nick (c->variant.family);

  switch (c->fallback) {
    case GCV_FALLBACK_NONE:
      return g_strdup (family);
    case GCV_FALLBACK_FACTOR_SIGNS:
      return g_strdup_printf ("%s (GRAY32F input: the separable factors do "
          "not keep the kernel's zeros and signs)", family);
    case GCV_FALLBACK_CUDA_ONLY:
      return g_strdup_printf ("%s (%s %s)", family,
          gcv_family_nick (c->requested), gcv_fallback_reason (c->fallback));
    default:
      return g_strdup_printf ("%s (%s)", family,
          gcv_fallback_reason (c->fallback));
  }
}

gchar *
gcv_choice_describe (const GcvChoice * choice)
{
  return choice->backend == GCV_BACKEND_CPU ? describe_cpu (choice) :
      describe_cuda (choice);
}

gchar *
gcv_choice_describe_planes (const GcvChoice * luma, const GcvChoice * chroma,
    gboolean chroma_filtered)
{
  gchar *y = gcv_choice_describe (luma), *uv, *text;

  if (!chroma)
    return y;
  if (!chroma_filtered) {
    text = g_strdup_printf ("%s; U and V copied", y);
    g_free (y);
    return text;
  }
  uv = gcv_choice_describe (chroma);
  text = g_strdup_printf ("%s; U and V: %s", y, uv);
  g_free (uv);
  g_free (y);
  return text;
}
