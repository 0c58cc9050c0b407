/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parsing the benchmark's lists and making its kernels. */
#include "configs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

gboolean
bench_parse_shapes (const char *text, GArray * shapes, GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    BenchShape s;
    char *end;
    unsigned long w, h;
    const char *item = g_strstrip (*p);

    if (!*item)
      continue;
    w = strtoul (item, &end, 10);
    if (*end == 'x' || *end == 'X')
      h = strtoul (end + 1, &end, 10);
    else
      h = w;
    if (end == item || *end || w < 1 || h < 1 || w > GCV_MAX_KERNEL_SIZE
        || h > GCV_MAX_KERNEL_SIZE) {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "bad kernel size '%s' (want K or WxH, 1..%d)", item,
          GCV_MAX_KERNEL_SIZE);
      ok = FALSE;
      break;
    }
    s.kw = (guint) w;
    s.kh = (guint) h;
    g_array_append_val (shapes, s);
  }
  g_strfreev (items);
  return ok;
}

gboolean
bench_parse_families (const char *text, GArray * families, GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  for (gchar ** p = items; *p && ok; p++) {
    const char *item = g_strstrip (*p);
    gboolean found = FALSE;
    if (!*item)
      continue;
    for (GcvFamily a = GCV_FAMILY_AUTO; a <= GCV_FAMILY_FFT; a++)
      if (strcmp (item, gcv_family_nick (a)) == 0) {
        g_array_append_val (families, a);
        found = TRUE;
      }
    if (!found) {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "unknown family '%s' (auto, direct, tiled, register, separable, "
          "fft)", item);
      ok = FALSE;
    }
  }
  g_strfreev (items);
  return ok;
}

gboolean
bench_parse_forms (const char *text, gboolean forms[2], GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  forms[0] = forms[1] = FALSE;
  for (gchar ** p = items; *p && ok; p++) {
    const char *item = g_strstrip (*p);
    if (!*item)
      continue;
    if (strcmp (item, "2d") == 0)
      forms[BENCH_FORM_2D] = TRUE;
    else if (strcmp (item, "sep") == 0 || strcmp (item, "separable") == 0)
      forms[BENCH_FORM_SEPARABLE] = TRUE;
    else {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "unknown form '%s' (2d, sep)", item);
      ok = FALSE;
    }
  }
  g_strfreev (items);
  return ok;
}

gboolean
bench_parse_peers (const char *text, guint * peers, GError ** error)
{
  gchar **items = g_strsplit (text, ",", -1);
  gboolean ok = TRUE;

  *peers = 0;
  for (gchar ** p = items; *p && ok; p++) {
    const char *item = g_strstrip (*p);
    if (!*item || strcmp (item, "none") == 0)
      continue;
    if (strcmp (item, "npp") == 0)
      *peers |= BENCH_PEER_NPP;
    else if (strcmp (item, "cufft") == 0)
      *peers |= BENCH_PEER_CUFFT;
    else {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
          "unknown peer '%s' (npp, cufft, none)", item);
      ok = FALSE;
    }
  }
  g_strfreev (items);
  return ok;
}

const char *
bench_form_name (BenchForm form)
{
  return form == BENCH_FORM_2D ? "2d" : "sep";
}

static void
gaussian (gfloat * g, guint n)
{
  double sigma = MAX (n / 6.0, 0.5), c = (n - 1) / 2.0, sum = 0.0;

  for (guint i = 0; i < n; i++) {
    g[i] = (gfloat) exp (-(i - c) * (i - c) / (2.0 * sigma * sigma));
    sum += g[i];
  }
  for (guint i = 0; i < n; i++)
    g[i] = (gfloat) (g[i] / sum);
}

GcvFilter *
bench_make_filter (BenchShape shape, BenchForm form, guint32 seed,
    GError ** error)
{
  GcvFilterDesc desc;
  GcvFilter *f;
  gfloat *row = g_new (gfloat, shape.kw), *column = g_new (gfloat, shape.kh);
  gfloat *k = NULL;

  gaussian (row, shape.kw);
  gaussian (column, shape.kh);
  gcv_filter_desc_init (&desc);
  desc.border = GCV_BORDER_REPLICATE;
  desc.kernel_width = shape.kw;
  desc.kernel_height = shape.kh;
  if (form == BENCH_FORM_SEPARABLE) {
    desc.row_kernel = row;
    desc.n_row_kernel = shape.kw;
    desc.column_kernel = column;
    desc.n_column_kernel = shape.kh;
  } else {
    GRand *rand = g_rand_new_with_seed (seed ^ (shape.kw * 7919u + shape.kh));
    gfloat peak = row[(shape.kw - 1) / 2] * column[(shape.kh - 1) / 2];
    k = g_new (gfloat, shape.kw * shape.kh);
    for (guint j = 0; j < shape.kh; j++)
      for (guint i = 0; i < shape.kw; i++)
        k[j * shape.kw + i] = column[j] * row[i]
            + (gfloat) g_rand_double_range (rand, -0.05, 0.05) * peak;
    g_rand_free (rand);
    desc.kernel = k;
    desc.n_kernel = shape.kw * shape.kh;
    desc.separable = GCV_SEPARABLE_NEVER;
  }
  f = gcv_filter_new (&desc, error);
  g_free (row);
  g_free (column);
  g_free (k);
  return f;
}

gboolean
bench_family_applies (GcvFamily family, BenchForm form)
{
  return family != GCV_FAMILY_SEPARABLE || form == BENCH_FORM_SEPARABLE;
}
