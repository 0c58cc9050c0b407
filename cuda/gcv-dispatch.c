/* The dispatcher's variants and its analytic heuristic. */
#include "gcv-dispatch.h"
#include "gcv-private.h"

#include <math.h>
#include <string.h>

gchar *
gcv_variant_to_string (const GcvVariant * v)
{
  switch (v->family) {
    case GCV_ALGORITHM_TILED:    /* no ty: adaptive tiling */
      return v->ty ? g_strdup_printf ("tiled ty=%d", v->ty) :
          g_strdup ("tiled");
    case GCV_ALGORITHM_REGISTER:
      return g_strdup_printf ("register p=%d block=%d", v->p ? v->p : 8,
          v->block ? v->block : 128);
    case GCV_ALGORITHM_SEPARABLE:
      return v->ty ? g_strdup_printf ("separable fused ty=%d", v->ty) :
          g_strdup ("separable two-pass");
    case GCV_ALGORITHM_FFT:      /* p: the largest prime in the sizes */
      return v->p && v->p != 7 ? g_strdup_printf ("fft p=%d", v->p) :
          g_strdup ("fft");
    default:
      return g_strdup (gcv_algorithm_nick (v->family));
  }
}

/* "family [word] [key=value ...]" as gcv_variant_to_string() writes it. */
gboolean
gcv_variant_parse (const gchar * text, GcvVariant * v, GError ** error)
{
  gchar **words = g_strsplit_set (text ? text : "", " \t", -1);
  gboolean ok = FALSE, found = FALSE;
  guint n = 0;

  memset (v, 0, sizeof (*v));
  for (gchar ** w = words; *w; w++) {
    if (!**w)
      continue;
    if (n++ == 0) {
      for (gint a = GCV_ALGORITHM_DIRECT; a <= GCV_ALGORITHM_FFT; a++)
        if (strcmp (*w, gcv_algorithm_nick (a)) == 0) {
          v->family = a;
          found = TRUE;
        }
      if (!found) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
            "unknown kernel family '%s'", *w);
        goto out;
      }
      if (v->family == GCV_ALGORITHM_SEPARABLE)
        v->ty = 4;
      continue;
    }
    if (v->family == GCV_ALGORITHM_SEPARABLE && strcmp (*w, "two-pass") == 0) {
      v->ty = 0;
      continue;
    }
    if (v->family == GCV_ALGORITHM_SEPARABLE && strcmp (*w, "fused") == 0)
      continue;
    {
      gchar *eq = strchr (*w, '=');
      gchar *end = NULL;
      gint64 val = eq ? g_ascii_strtoll (eq + 1, &end, 10) : 0;
      gint *field = NULL;
      if (eq) {
        *eq = '\0';
        if (strcmp (*w, "ty") == 0 && (v->family == GCV_ALGORITHM_TILED
                || v->family == GCV_ALGORITHM_SEPARABLE))
          field = &v->ty;
        else if (strcmp (*w, "p") == 0 && (v->family == GCV_ALGORITHM_REGISTER
                || v->family == GCV_ALGORITHM_FFT))
          field = &v->p;
        else if (strcmp (*w, "block") == 0
            && v->family == GCV_ALGORITHM_REGISTER)
          field = &v->block;
      }
      if (!field || !end || *end || val < 1 || val > 1024) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
            "bad parameter '%s%s%s' for %s", *w, eq ? "=" : "",
            eq ? eq + 1 : "", gcv_algorithm_nick (v->family));
        goto out;
      }
      *field = (gint) val;
    }
  }
  if (!found)
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "empty variant");
  ok = found;
out:
  g_strfreev (words);
  return ok;
}

/* Bytes one output sample costs in memory traffic (read + write). */
static gdouble
sample_bytes (GcvFormat f)
{
  return f == GCV_FORMAT_GRAY8 ? 2.0 : 8.0;
}

static guint
channels_of (GcvFormat f)
{
  return gcv_format_channels (f) == 4 ? 3 : 1;
}

/* Direct 2D: the larger of its arithmetic and its memory traffic. The
 * arithmetic goes at the share of the FMA rate the tiled kernels reach on
 * H100 and H200: unrolled for the kernel width, 60% for one channel and 20%
 * for the RGBA family (four float accumulators per pixel crowd the
 * registers); adaptive (no instance for that width), 17% and 10%. FFT: the
 * equivalent of 22 passes of 8 bytes per padded sample and channel (pack,
 * two 2D transforms, the product, unpack), bandwidth-bound: a 4116x4116
 * plane took 0.62 ms on an H200, a 3888x2187 RGBA frame 0.75 ms. */
gboolean
gcv_dispatch_prefers_fft (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev)
{
  gdouble px = (gdouble) key->width * key->height;
  gdouble ch = channels_of (key->format);
  gdouble share = ch > 1 ? (key->unrolled ? 0.2 : 0.1) :
      (key->unrolled ? 0.6 : 0.17);
  gdouble direct = MAX (px * ch * key->kw * key->kh / (share * dev->fma_per_s),
      px * sample_bytes (key->format) / dev->bytes_per_s);
  gdouble padded = (gdouble) (key->width + key->kw) * (key->height + key->kh);
  gdouble fft = 22.0 * padded * ch * 8.0 / dev->bytes_per_s;
  return fft < direct;
}

void
gcv_dispatch_heuristic (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev, GcvVariant * v)
{
  memset (v, 0, sizeof (*v));
  if (key->separable) {
    v->family = GCV_ALGORITHM_SEPARABLE;
    v->ty = 4;                  /* fused where an instance fits */
  } else if (gcv_dispatch_prefers_fft (key, dev)) {
    /* sizes of 2, 3 and 5 won most often in the H100 and H200 tables */
    v->family = GCV_ALGORITHM_FFT;
    v->p = 5;
  } else if (!key->unrolled && gcv_format_channels (key->format) == 4
      && key->kw * key->kh <= 16) {
    /* small RGBA-family kernels of widths with no unrolled tiled kernel
     * (2x7, 4x4): the register cache beat adaptive tiling there on H100 and
     * H200; from 6x6 on it lost */
    v->family = GCV_ALGORITHM_REGISTER;
    v->p = 8;
    v->block = 128;
  } else {
    /* the kernel unrolled for this width where there is one (two outputs
     * down, one for the wide RGBA accumulators); else the adaptive-tiling
     * rule picks the tile height at plan time */
    v->family = GCV_ALGORITHM_TILED;
    v->ty = gcv_format_channels (key->format) == 4 ? 1 : 2;
  }
}
