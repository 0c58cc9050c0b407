/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Variants as text: what the tuning tables hold and what a forced variant
 * is written as. */
#include "gcv-variant.h"

#include <string.h>

gchar *
gcv_variant_to_string (const GcvVariant * v)
{
  switch (v->family) {
    case GCV_FAMILY_TILED:
      return v->adaptive || !v->rows ? g_strdup ("tiled") :
          g_strdup_printf ("tiled ty=%d", v->rows);
    case GCV_FAMILY_REGISTER:
      return g_strdup_printf ("register p=%d block=%d",
          v->lane_outputs ? v->lane_outputs : 8, v->block ? v->block : 128);
    case GCV_FAMILY_SEPARABLE:
      return v->two_pass ? g_strdup ("separable two-pass") :
          g_strdup_printf ("separable fused ty=%d", v->rows ? v->rows : 4);
    case GCV_FAMILY_FFT:
      if (v->fft_tile)
        return g_strdup_printf ("fft tile=%d", v->fft_tile);
      return v->fft_prime && v->fft_prime != 7 ?
          g_strdup_printf ("fft p=%d", v->fft_prime) : g_strdup ("fft");
    default:
      return g_strdup (gcv_family_nick (v->family));
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
      for (gint a = GCV_FAMILY_DIRECT; a <= GCV_FAMILY_FFT; a++)
        if (strcmp (*w, gcv_family_nick (a)) == 0) {
          v->family = a;
          found = TRUE;
        }
      if (!found) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
            "unknown kernel family '%s'", *w);
        goto out;
      }
      if (v->family == GCV_FAMILY_SEPARABLE)
        v->rows = 4;
      /* plain "tiled": adaptive tiling, unless a ty= follows */
      v->adaptive = v->family == GCV_FAMILY_TILED;
      continue;
    }
    if (v->family == GCV_FAMILY_SEPARABLE && strcmp (*w, "two-pass") == 0) {
      v->rows = 0;
      v->two_pass = TRUE;
      continue;
    }
    if (v->family == GCV_FAMILY_SEPARABLE && strcmp (*w, "fused") == 0)
      continue;
    {
      gchar *eq = strchr (*w, '=');
      gchar *end = NULL;
      gint64 val = eq ? g_ascii_strtoll (eq + 1, &end, 10) : 0;
      gint *field = NULL;
      if (eq) {
        *eq = '\0';
        if (strcmp (*w, "ty") == 0 && (v->family == GCV_FAMILY_TILED
                || (v->family == GCV_FAMILY_SEPARABLE && !v->two_pass))) {
          field = &v->rows;
          v->adaptive = FALSE;
        } else if (strcmp (*w, "p") == 0
            && v->family == GCV_FAMILY_REGISTER)
          field = &v->lane_outputs;
        else if (strcmp (*w, "p") == 0 && v->family == GCV_FAMILY_FFT)
          field = &v->fft_prime;
        else if (strcmp (*w, "tile") == 0 && v->family == GCV_FAMILY_FFT)
          field = &v->fft_tile;
        else if (strcmp (*w, "block") == 0
            && v->family == GCV_FAMILY_REGISTER)
          field = &v->block;
      }
      if (!field || !end || *end || val < 1 || val > 1024) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
            "bad parameter '%s%s%s' for %s", *w, eq ? "=" : "",
            eq ? eq + 1 : "", gcv_family_nick (v->family));
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
