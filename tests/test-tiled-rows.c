/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tiled's unrolled kernels at every row count a tuning table may name, on
 * CUDA (docs/architecture.md, "Build time and size"): each pixel type has
 * three of 1, 2, 4 and 8 rows a thread, and a table naming the fourth runs
 * the nearest it has. For GRAY8, GRAY32F, RGBA and RGBx, with a table of
 * one row that names "tiled ty=R", the element reports the rows that ran,
 * and every sample is compared with the double-precision reference: a
 * kernel of an instance's width and one widened by zero taps (GRAY32F's
 * guarded instance), random borders and anchors, frames over several
 * tiles each way. */
#include "common.h"

#include <glib/gstdio.h>
#include <string.h>

#define FRAME_W 300
#define FRAME_H 70

static const struct
{
  RefFormat format;
  const gchar *name;
  const gchar *table;           /* the rows it reads: GRAY32F's for one
                                 * channel, RGBA's for four (tuning.md) */
  guint missing;                /* the rows it has no instance for */
} types[] = {
  {REF_GRAY8, "GRAY8", "GRAY32F", 1},
  {REF_GRAY32F, "GRAY32F", "GRAY32F", 1},
  {REF_RGBA, "RGBA", "RGBA", 8},
  {REF_RGBX, "RGBx", "RGBA", 8},
};

static const guint kernel_sizes[][2] = { {5, 5}, {19, 7} };

/* The rows that run for `asked`: the dispatcher's nearest, the fewer first
 * (1 -> 2, 8 -> 4). */
static guint
rows_run (guint asked, guint missing)
{
  if (asked != missing)
    return asked;
  return asked == 1 ? 2 : asked / 2;
}

static gchar *
write_table (const gchar * dir, const gchar * format, guint kw, guint kh,
    guint rows)
{
  gchar *path = g_build_filename (dir, "rows.tbl", NULL);
  gchar *text = g_strdup_printf ("# gpuconvolve tuning table\n"
      "gpu: any\narch: any\n%s %u %u 0 %ux%u 0.1 tiled ty=%u\n", format, kw,
      kh, FRAME_W, FRAME_H, rows);
  GError *err = NULL;

  fail_unless (g_file_set_contents (path, text, -1, &err), "%s",
      err ? err->message : "?");
  g_free (text);
  return path;
}

/* loop index: the pixel type */
GST_START_TEST (test_rows)
{
  const guint t = __i__;
  gchar *dir = g_dir_make_tmp ("gpuconvolve-rows-XXXXXX", NULL);
  gchar *seed = g_strdup_printf ("tiled-rows %s", types[t].name);
  GRand *r = ref_rand_new (seed);

  fail_unless (dir != NULL);
  for (guint k = 0; k < G_N_ELEMENTS (kernel_sizes); k++)
    for (guint rows = 1; rows <= 8; rows *= 2) {
      const guint kw = kernel_sizes[k][0], kh = kernel_sizes[k][1];
      gchar *table = write_table (dir, types[t].table, kw, kh, rows);
      RefKernel *kernel = gcvt_random_kernel (r, kw, kh, FALSE);
      RefImage *img = gcvt_random_image (r, types[t].format, FRAME_W,
          FRAME_H, -1.0, 1.0);
      GstElement *e = gcvt_element_new ();
      gchar *what = g_strdup_printf ("%s %ux%u, table ty=%u",
          types[t].name, kw, kh, rows);
      gchar *want = g_strdup_printf ("ty=%u unrolled",
          rows_run (rows, types[t].missing));
      gchar *active = NULL;
      GstHarness *h;
      GstBuffer *out;
      RefParams p;

      ref_params_init (&p, kernel);
      p.border = (RefBorder) g_rand_int_range (r, REF_BORDER_CONSTANT,
          REF_BORDER_WRAP + 1);
      p.border_value = types[t].format == REF_GRAY32F ? -0.5 : 100.0;
      p.anchor_x = g_rand_int_range (r, 0, kw);
      p.anchor_y = g_rand_int_range (r, 0, kh);
      p.scale = 1.0 / ref_kernel_sum_abs (kernel);
      p.filter_alpha = g_rand_boolean (r);
      gcvt_set_params (e, &p);
      g_object_set (e, "tuning-file", table, NULL);
      gst_util_set_object_arg (G_OBJECT (e), "algorithm", "auto");
      h = gcvt_harness_new (e);
      gcvt_set_caps (h, types[t].format, types[t].format, FRAME_W, FRAME_H);
      out = gcvt_process (h, gcvt_buffer_new (img, types[t].format, 0, 0,
              FALSE));
      gcvt_assert_frame (out, types[t].format, types[t].format, img, &p,
          what);
      gst_buffer_unref (out);
      fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
          "%s: error on the bus", what);
      g_object_get (e, "active-algorithm", &active, NULL);
      gst_harness_teardown (h);
      fail_unless (active && strstr (active, want), "%s: active-algorithm "
          "\"%s\", not %s", what, active ? active : "(none)", want);
      g_print ("%s: %s\n", what, active);
      g_free (active);
      g_free (want);
      g_free (what);
      gcvt_element_unref (e);
      ref_image_free (img);
      ref_kernel_free (kernel);
      g_unlink (table);
      g_free (table);
    }
  g_rand_free (r);
  g_free (seed);
  g_rmdir (dir);
  g_free (dir);
}

GST_END_TEST;

static Suite *
tiled_rows_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-tiled-rows");
  TCase *tc = tcase_create ("rows");

  /* the table settles rows for CUDA's tiled family (each element asks
   * for algorithm=auto, whatever family the run names) */
  gcvt_skip_unless (gcvt_on_cuda (), "tiled's rows are CUDA's");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_rows, 0, G_N_ELEMENTS (types));
  return s;
}

GCVT_MAIN (tiled_rows)
