/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What gpuconvolve computes: every format and border against the plain
 * reference, kernels of every shape, strides, conversions, separable
 * kernels and built-in filters (presets: test-presets.c). */
#include "common.h"

#include <math.h>
#include <string.h>

/* Random filter settings; variants make sure each run covers odd square
 * kernels, even non-square ones with off-centre anchors and convolution,
 * normalize/scale/bias, and anything at all. */
static RefKernel *
random_params (GRand * r, RefFormat fmt, RefBorder border, guint variant,
    RefParams * p)
{
  const RefFormatInfo *fi = ref_format_info (fmt);
  guint kw, kh;
  gboolean rank1;
  RefKernel *k;

  switch (variant) {
    case 0:
      kw = kh = 2 * g_rand_int_range (r, 0, 8) + 1;
      break;
    case 1:
      kw = 2 * g_rand_int_range (r, 1, 8);
      do
        kh = g_rand_int_range (r, 1, 16);
      while (kh == kw);
      break;
    default:
      kw = g_rand_int_range (r, 1, 16);
      kh = g_rand_int_range (r, 1, 16);
      break;
  }
  /* variant 2 is rank 1, so the separable path gets random settings too */
  rank1 = gcvt_forced_separable () || variant == 2
      || (variant >= 3 && g_rand_boolean (r));
  k = gcvt_random_kernel (r, kw, kh, rank1);

  ref_params_init (p, k);
  p->border = border;
  if (variant == 1 || (variant >= 2 && g_rand_boolean (r))) {
    p->anchor_x = g_rand_int_range (r, 0, kw);
    p->anchor_y = g_rand_int_range (r, 0, kh);
  }
  p->convolution = variant == 1 || (variant >= 3 && g_rand_boolean (r));
  p->normalize = variant == 2 || (variant >= 3 && g_rand_boolean (r));
  p->scale = g_rand_double_range (r, 0.5, 1.5);
  if (!p->normalize)
    p->scale /= ref_kernel_sum_abs (k);
  if (variant >= 2) {
    p->bias = fi->is_float ? g_rand_double_range (r, -0.5, 0.5) :
        g_rand_double_range (r, -30.0, 30.0);
    if (variant >= 3 && g_rand_int_range (r, 0, 4) == 0) {
      p->scale = -p->scale;     /* negative: bias brings it back in range */
      p->bias += fi->is_float ? 0.5 : 255.0;
    }
  }
  if (border == REF_BORDER_CONSTANT)
    p->border_value = fi->is_float ? g_rand_double_range (r, 0.25, 2.0) *
        (g_rand_boolean (r) ? 1 : -1) : g_rand_double_range (r, 10.0, 250.0);
  p->filter_alpha = fi->channels == 4 && (variant == 1 || variant == 3);
  return k;
}

static void
run_random_case (GRand * r, RefFormat in_fmt, RefFormat out_fmt,
    RefBorder border, const gchar * border_name, guint variant,
    guint w, guint h)
{
  RefParams p;
  RefKernel *k = random_params (r, in_fmt, border, variant, &p);
  RefImage *img = gcvt_random_image (r, in_fmt, w, h, -1.5, 1.5);
  GstElement *e = gcvt_element_new ();
  gchar *what = g_strdup_printf ("border=%s variant %u", border_name,
      variant);

  gcvt_set_params (e, &p);
  gst_util_set_object_arg (G_OBJECT (e), "border", border_name);
  gcvt_run_and_check (e, in_fmt, out_fmt, img, &p, 0, 0, what);
  gcvt_element_unref (e);
  g_free (what);
  ref_image_free (img);
  ref_kernel_free (k);
}

/* loop index: the format */
GST_START_TEST (test_formats_borders)
{
  const RefFormat fmt = (RefFormat) __i__;
  gchar *name = g_strdup_printf ("formats_borders %s",
      ref_format_info (fmt)->name);
  GRand *r = ref_rand_new (name);

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (guint variant = 0; variant < 4; variant++) {
      guint w = g_rand_int_range (r, 1, 40), h = g_rand_int_range (r, 1, 24);
      if (variant % 2 == 0)
        w |= 1;                 /* odd widths: GRAY8 rows are padded */
      run_random_case (r, fmt, fmt, b, ref_border_nick (b), variant, w, h);
    }
  /* the gray formats also convert into each other */
  if (fmt == REF_GRAY8 || fmt == REF_GRAY32F)
    for (RefBorder b = 0; b < REF_N_BORDERS; b++)
      run_random_case (r, fmt, fmt == REF_GRAY8 ? REF_GRAY32F : REF_GRAY8, b,
          ref_border_nick (b), 3, g_rand_int_range (r, 1, 30) | 1,
          g_rand_int_range (r, 1, 20));
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Settings for a kernel of the frame tests below: the border `b` with a
 * random value, random bias and alpha handling; with `shape` also the
 * scale that keeps the output in range, correlation or convolution and a
 * random anchor. */
static void
random_settings (GRand * r, const RefFormatInfo * fi, const RefKernel * k,
    RefBorder b, gboolean shape, RefParams * p)
{
  ref_params_init (p, k);
  p->border = b;
  p->border_value = fi->is_float ? g_rand_double_range (r, -1.0, 1.0) :
      g_rand_double_range (r, 0.0, 255.0);
  p->filter_alpha = fi->channels == 4 && g_rand_boolean (r);
  p->bias = fi->is_float ? g_rand_double_range (r, -0.25, 0.25) :
      g_rand_double_range (r, -20.0, 20.0);
  if (shape) {
    p->scale = 1.0 / ref_kernel_sum_abs (k);
    p->convolution = g_rand_boolean (r);
    p->anchor_x = g_rand_int_range (r, 0, k->kw);
    p->anchor_y = g_rand_int_range (r, 0, k->kh);
  }
}

/* Frames of several 128-pixel tiles each way (300x200, 521x263: tile
 * edges, and partial tiles at the right and bottom), so that every output
 * is checked across the tiles of the GPU kernels, not only within the
 * first one. For each format and border: a rank-1 gaussian (5, 9 or 17,
 * the fused separable path) and a random 2D kernel (3x3, 7x5 or 13x13,
 * with a random anchor), rotating so that each format meets every kernel
 * and both sizes. GPUCONVOLVE_TEST_QUICK (the valgrind setup) keeps the
 * 300x200 frames only: one of the two kernels of each format and border.
 * loop index: the format */
GST_START_TEST (test_large_frames)
{
  static const guint sizes[][2] = { {300, 200}, {521, 263} };
  static const struct
  {
    guint n;
    gdouble sigma;
  } gaussians[] = { {5, 1.0}, {9, 1.7}, {17, 3.0} };
  static const guint kernels_2d[][2] = { {3, 3}, {7, 5}, {13, 13} };
  const RefFormat fmt = (RefFormat) __i__;
  const RefFormatInfo *fi = ref_format_info (fmt);
  gchar *name = g_strdup_printf ("large_frames %s", fi->name);
  GRand *r = ref_rand_new (name);
  const gboolean quick = gcvt_quick ();

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (guint rank1 = 0; rank1 < 2; rank1++) {
      const guint *size = sizes[(__i__ + b + rank1) % 2];
      const guint g = (__i__ + b) % G_N_ELEMENTS (gaussians);
      const guint *k2 =
          kernels_2d[(__i__ + 2 * b) % G_N_ELEMENTS (kernels_2d)];
      RefKernel *k;
      RefImage *img;
      GstElement *e;
      RefParams p;
      gchar *what;

      if (quick && size != sizes[0])
        continue;
      k = rank1 ? ref_builtin ("gaussian", gaussians[g].n,
          gaussians[g].sigma) : gcvt_random_kernel (r, k2[0], k2[1], FALSE);
      img = gcvt_random_image (r, fmt, size[0], size[1], -1.0, 1.0);
      e = gcvt_element_new ();
      random_settings (r, fi, k, b, !rank1, &p);
      what = rank1 ? g_strdup_printf ("%ux%u gaussian %u sigma %g border=%s",
          size[0], size[1], gaussians[g].n, gaussians[g].sigma,
          ref_border_nick (b)) : g_strdup_printf ("%ux%u random %ux%u "
          "border=%s", size[0], size[1], k->kw, k->kh, ref_border_nick (b));
      gcvt_set_params (e, &p);
      if (rank1) {
        gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
        g_object_set (e, "size", gaussians[g].n, "sigma", gaussians[g].sigma,
            NULL);
      }
      if (!gcvt_refused_as_not_separable (e, rank1))
        gcvt_run_and_check (e, fmt, fmt, img, &p, 0, 0, what);
      gcvt_element_unref (e);
      g_free (what);
      ref_image_free (img);
      ref_kernel_free (k);
    }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Kernels one tap wide (1xN, one pass down the columns on CUDA) and one
 * tap tall (Nx1): N from 2 to 63, frames several bands of outputs tall
 * (a CUDA thread takes up to 16 rows, a block 128) with odd widths, frames
 * shorter than the kernel, random anchors, every border. loop index: the
 * format */
GST_START_TEST (test_one_wide_kernels)
{
  static const guint sizes[][2] = { {37, 300}, {200, 131}, {9, 5} };
  const RefFormat fmt = (RefFormat) __i__;
  const RefFormatInfo *fi = ref_format_info (fmt);
  gchar *name = g_strdup_printf ("one_wide_kernels %s", fi->name);
  GRand *r = ref_rand_new (name);

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (guint tall = 0; tall < 2; tall++) {
      const guint *size = sizes[(b + tall) % G_N_ELEMENTS (sizes)];
      const guint n = b == 0 ? 63 : g_rand_int_range (r, 2, 40);
      RefKernel *k = gcvt_random_kernel (r, tall ? 1 : n, tall ? n : 1,
          FALSE);
      RefImage *img = gcvt_random_image (r, fmt, size[0], size[1], -1.0,
          1.0);
      GstElement *e = gcvt_element_new ();
      RefParams p;
      gchar *what = g_strdup_printf ("%ux%u kernel on %ux%u border=%s",
          k->kw, k->kh, size[0], size[1], ref_border_nick (b));

      random_settings (r, fi, k, b, TRUE, &p);
      gcvt_set_params (e, &p);
      gcvt_run_and_check (e, fmt, fmt, img, &p, 0, 0, what);
      gcvt_element_unref (e);
      g_free (what);
      ref_image_free (img);
      ref_kernel_free (k);
    }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* scipy's names: nearest is replicate, mirror is reflect101 */
GST_START_TEST (test_border_aliases)
{
  GRand *r = ref_rand_new ("border_aliases");

  run_random_case (r, REF_GRAY32F, REF_GRAY32F, REF_BORDER_REPLICATE,
      "nearest", 3, 17, 9);
  run_random_case (r, REF_RGBA, REF_RGBA, REF_BORDER_REFLECT101, "mirror", 1,
      13, 11);
  run_random_case (r, REF_GRAY32F, REF_GRAY32F, REF_BORDER_REFLECT101,
      "mirror", 0, 9, 12);
  g_rand_free (r);
}

GST_END_TEST;

/* loop index: the border. Kernels larger than the frame fold the index
 * repeatedly; frames of one pixel, one row, one column. */
GST_START_TEST (test_small_frames_big_kernels)
{
  static const guint sizes[][2] = { {1, 1}, {1, 7}, {7, 1}, {2, 3}, {5, 4} };
  static const RefFormat fmts[] = { REF_GRAY32F, REF_GRAY8, REF_BGRA };
  const RefBorder border = (RefBorder) __i__;
  gchar *name = g_strdup_printf ("small_frames_big_kernels %s",
      ref_border_nick (border));
  GRand *r = ref_rand_new (name);

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint f = 0; f < G_N_ELEMENTS (fmts); f++) {
      const RefFormatInfo *fi = ref_format_info (fmts[f]);
      guint kw = g_rand_int_range (r, 9, 16), kh = g_rand_int_range (r, 9, 16);
      RefKernel *k = gcvt_random_kernel (r, kw, kh, gcvt_forced_separable ()
          || g_rand_boolean (r));
      RefImage *img = gcvt_random_image (r, fmts[f], sizes[s][0], sizes[s][1],
          -1.0, 1.0);
      GstElement *e = gcvt_element_new ();
      RefParams p;
      gchar *what = g_strdup_printf ("%ux%u kernel on %ux%u", kw, kh,
          sizes[s][0], sizes[s][1]);

      ref_params_init (&p, k);
      p.border = border;
      p.border_value = fi->is_float ? -0.75 : 200.0;
      p.anchor_x = g_rand_int_range (r, 0, kw);
      p.anchor_y = g_rand_int_range (r, 0, kh);
      p.convolution = g_rand_boolean (r);
      p.scale = 1.0 / ref_kernel_sum_abs (k);
      p.filter_alpha = g_rand_boolean (r);
      gcvt_set_params (e, &p);
      gcvt_run_and_check (e, fmts[f], fmts[f], img, &p, 0, 0, what);
      gcvt_element_unref (e);
      g_free (what);
      ref_image_free (img);
      ref_kernel_free (k);
    }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* GRAY32F under a 3x3 kernel (the row the dispatcher runs by the register
 * family on CUDA, whose kernels make several rows and columns a thread):
 * sizes that end inside a thread's columns and rows and cross several
 * blocks, a frame narrower than a vector of 4, every border, into GRAY32F
 * and GRAY8, input rows padded and not. */
GST_START_TEST (test_gray32f_3x3)
{
  static const struct
  {
    guint w, h;
    gsize stride;
    RefFormat out;
  } cases[] = {
    {1031, 70, 0, REF_GRAY32F},
    {515, 33, 515 * 4 + 52, REF_GRAY32F},
    {130, 17, 0, REF_GRAY8},
    {3, 35, 0, REF_GRAY32F},
    {2, 1, 0, REF_GRAY32F},
  };
  GRand *r = ref_rand_new ("gray32f_3x3");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    for (RefBorder b = 0; b < REF_N_BORDERS; b++) {
      RefKernel *k = gcvt_random_kernel (r, 3, 3, FALSE);
      RefImage *img = gcvt_random_image (r, REF_GRAY32F, cases[c].w,
          cases[c].h, -1.0, 2.0);
      GstElement *e = gcvt_element_new ();
      RefParams p;
      gchar *what = g_strdup_printf ("3x3 on %ux%u, stride %" G_GSIZE_FORMAT
          ", border=%s", cases[c].w, cases[c].h, cases[c].stride,
          ref_border_nick (b));

      random_settings (r, ref_format_info (REF_GRAY32F), k, b, TRUE, &p);
      gcvt_set_params (e, &p);
      if (!gcvt_refused_as_not_separable (e, FALSE))
        gcvt_run_and_check (e, REF_GRAY32F, cases[c].out, img, &p,
            cases[c].stride, 0, what);
      gcvt_element_unref (e);
      g_free (what);
      ref_image_free (img);
      ref_kernel_free (k);
    }
  g_rand_free (r);
}

GST_END_TEST;

/* Input rows `stride` bytes apart starting at `offset`, given by a
 * GstVideoMeta on the buffer; the padding holds garbage. */
GST_START_TEST (test_padded_stride)
{
  static const struct
  {
    RefFormat in, out;
    guint w, h;
    gsize stride, offset;
  } cases[] = {
    {REF_GRAY32F, REF_GRAY32F, 13, 9, 13 * 4 + 20, 8},
    {REF_GRAY32F, REF_GRAY32F, 6, 5, 6 * 4 + 4, 0},
    {REF_GRAY32F, REF_GRAY8, 11, 7, 11 * 4 + 36, 12},
    {REF_RGBA, REF_RGBA, 7, 6, 7 * 4 + 12, 4},
    {REF_BGRX, REF_BGRX, 5, 8, 5 * 4 + 60, 64},
    {REF_GRAY8, REF_GRAY8, 9, 7, 9 + 5, 3},
    {REF_GRAY8, REF_GRAY32F, 10, 4, 10 + 7, 1},
  };
  GRand *r = ref_rand_new ("padded_stride");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    RefKernel *k = gcvt_random_kernel (r, 5, 3, gcvt_forced_separable ());
    RefImage *img = gcvt_random_image (r, cases[c].in, cases[c].w, cases[c].h,
        -1.0, 2.0);
    GstElement *e = gcvt_element_new ();
    RefParams p;
    gchar *what = g_strdup_printf ("stride %" G_GSIZE_FORMAT " offset %"
        G_GSIZE_FORMAT, cases[c].stride, cases[c].offset);

    ref_params_init (&p, k);
    p.border = (RefBorder) (c % REF_N_BORDERS);
    p.border_value = 0.5;
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    p.filter_alpha = TRUE;
    gcvt_set_params (e, &p);
    gcvt_run_and_check (e, cases[c].in, cases[c].out, img, &p,
        cases[c].stride, cases[c].offset, what);
    gcvt_element_unref (e);
    g_free (what);
    ref_image_free (img);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* GRAY8 -> GRAY32F gives v / 255 */
GST_START_TEST (test_gray8_to_gray32f)
{
  RefImage *img = ref_image_new (16, 16, 1);
  GstElement *e = gcvt_element_new ();
  RefParams p;

  for (guint i = 0; i < 256; i++)
    img->v[i] = i;
  ref_params_init (&p, NULL);
  gcvt_run_and_check (e, REF_GRAY8, REF_GRAY32F, img, &p, 0, 0,
      "identity GRAY8 -> GRAY32F");
  gcvt_element_unref (e);
  ref_image_free (img);
}

GST_END_TEST;

/* GRAY32F -> GRAY8 gives saturate(round(v * 255)), NaN gives 0. With the
 * identity there is no accumulation error and the values are 0.3 away from
 * a rounding boundary, so this is exact: truncation, another scale or
 * wrapping instead of saturation would show. Huge values and NaN get frames
 * of their own, so that no kernel family (FFT) mixes them into others. */
static void
check_to_gray8 (const gfloat * v, const guint8 * expect, guint w)
{
  RefImage *img = ref_image_new (w, 1, 1);
  GstElement *e = gcvt_element_new ();
  GstHarness *h;
  GstBuffer *out;
  GstMapInfo map;

  for (guint x = 0; x < w; x++)
    img->v[x] = v[x];
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY8, w, 1);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY32F, 0, 0, FALSE));
  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  for (guint x = 0; x < w; x++)
    fail_unless (map.data[x] == expect[x], "input %.9g gave %u, expected %u",
        v[x], map.data[x], expect[x]);
  gst_buffer_unmap (out, &map);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
}

GST_START_TEST (test_gray32f_to_gray8)
{
  static const gfloat alone[] = { 1e30f, -1e30f, NAN };
  static const guint8 alone_expect[] = { 255, 0, 0 };
  const guint w = 255 * 2 + 4;
  gfloat *v = g_new (gfloat, w);
  guint8 *expect = g_new (guint8, w);

  for (guint k = 0; k < 255; k++) {
    v[2 * k] = (k + 0.2) / 255.0;
    expect[2 * k] = k;
    v[2 * k + 1] = (k + 0.8) / 255.0;
    expect[2 * k + 1] = k + 1;
  }
  v[510] = -1.0f;               /* saturation */
  expect[510] = 0;
  v[511] = -1e-3f;
  expect[511] = 0;
  v[512] = 1.001f;
  expect[512] = 255;
  v[513] = 5.0f;
  expect[513] = 255;
  check_to_gray8 (v, expect, w);
  for (guint i = 0; i < G_N_ELEMENTS (alone); i++)
    check_to_gray8 (&alone[i], &alone_expect[i], 1);
  g_free (v);
  g_free (expect);
}

GST_END_TEST;

/* 8-bit outputs are rounded to nearest, ties to even, and saturated. These
 * values are exact in float, so the result must be too, except through an
 * FFT, whose rounding errors may tip a tie either way (within 1 then). */
GST_START_TEST (test_u8_rounding)
{
  static const gdouble settings[][2] = {
    {1, 0.5}, {1, 0.3}, {1, 0.7}, {1, -0.3}, {0.5, 0}, {1.5, 0.25},
    {-1, 255.5}, {1, 100.5},
  };
  static const RefFormat fmts[] = { REF_GRAY8, REF_RGBA };
  const gboolean inexact = g_str_equal (gcvt_algorithm (), "fft");

  for (guint f = 0; f < G_N_ELEMENTS (fmts); f++)
    for (guint c = 0; c < G_N_ELEMENTS (settings); c++) {
      const RefFormatInfo *fi = ref_format_info (fmts[f]);
      RefImage *img = ref_image_new (16, 16, fi->channels);
      GstElement *e = gcvt_element_new ();
      GstHarness *h;
      GstBuffer *out;
      GstMapInfo map;
      RefParams p;

      for (guint i = 0; i < 256 * fi->channels; i++)
        img->v[i] = (i / fi->channels + 37 * (i % fi->channels)) % 256;
      ref_params_init (&p, NULL);
      p.scale = settings[c][0];
      p.bias = settings[c][1];
      gcvt_set_params (e, &p);
      h = gcvt_harness_new (e);
      gcvt_set_caps (h, fmts[f], fmts[f], 16, 16);
      out = gcvt_process (h, gcvt_buffer_new (img, fmts[f], 0, 0, FALSE));
      fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
      for (guint i = 0; i < 256 * fi->channels; i++) {
        gboolean alpha = fi->channels == 4 && i % 4 == 3;
        guint8 expect = alpha ? img->v[i] :
            ref_to_u8 (p.bias + p.scale * img->v[i]);
        fail_unless (map.data[i] == expect || (inexact && !alpha
                && ABS ((gint) map.data[i] - (gint) expect) <= 1),
            "%s: %g * %g + %g gave %u, expected %u", fi->name, p.scale,
            img->v[i], p.bias, map.data[i], expect);
      }
      gst_buffer_unmap (out, &map);
      gst_buffer_unref (out);
      gst_harness_teardown (h);
      gcvt_element_unref (e);
      ref_image_free (img);
    }
}

GST_END_TEST;

/* Two elements: GRAY8 -> GRAY32F (forced by the caps between them) ->
 * GRAY8, each with its own kernel and a constant border in its own input
 * units. */
GST_START_TEST (test_gray_conversion_chain)
{
  GRand *r = ref_rand_new ("gray_conversion_chain");
  gchar *props = gcvt_launch_props ();
  gchar *line = g_strdup_printf ("gpuconvolve name=a %s ! "
      "video/x-raw,format=GRAY32F ! gpuconvolve name=b %s", props, props);
  GstHarness *h = gst_harness_new_parse (line);
  GstElement *a = gst_bin_get_by_name (GST_BIN (h->element), "a");
  GstElement *b = gst_bin_get_by_name (GST_BIN (h->element), "b");
  const guint w = 23, hh = 11;
  RefKernel *ka = gcvt_random_kernel (r, 3, 5, gcvt_forced_separable ());
  RefKernel *kb = gcvt_random_kernel (r, 4, 3, TRUE);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, w, hh, 0, 0), *mid;
  RefParams pa, pb;
  GstBuffer *out;

  ref_params_init (&pa, ka);
  pa.border = REF_BORDER_CONSTANT;
  pa.border_value = 100.0;      /* GRAY8 units */
  pa.normalize = TRUE;
  ref_params_init (&pb, kb);
  pb.border = REF_BORDER_CONSTANT;
  pb.border_value = 0.3;        /* GRAY32F units */
  pb.scale = 1.0 / ref_kernel_sum_abs (kb);
  pb.bias = 0.25;
  gcvt_set_params (a, &pa);
  gcvt_set_params (b, &pb);

  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, w, hh);
  out = gcvt_process (h, gcvt_buffer_new (in, REF_GRAY8, 0, 0, FALSE));

  /* what the second element gets: the first one's result / 255 */
  mid = ref_filter (in, &pa);
  for (guint i = 0; i < w * hh; i++)
    mid->v[i] = (gfloat) (mid->v[i] / 255.0);
  gcvt_assert_frame (out, REF_GRAY32F, REF_GRAY8, mid, &pb,
      "GRAY8 -> GRAY32F -> GRAY8");
  gst_buffer_unref (out);

  gst_object_unref (a);
  gst_object_unref (b);
  gst_harness_teardown (h);
  ref_image_free (in);
  ref_image_free (mid);
  ref_kernel_free (ka);
  ref_kernel_free (kb);
  g_free (line);
  g_free (props);
  g_rand_free (r);
}

GST_END_TEST;

/* The family the element should report for K: what algorithm forces, else
 * on the CPU separable for rank 1 (unless separable=never) and direct
 * otherwise. Returns NULL on CUDA: any 2D family, or for rank 1 without
 * separable=never any family (docs/properties.md, `separable`: the
 * separable paths race the 2D ones there and the fastest wins). */
static const gchar *
expected_family (gboolean rank1, gboolean never)
{
  const gchar *forced = gcvt_algorithm ();

  if (!g_str_equal (forced, "auto") && (gcvt_on_cuda ()
          || g_str_equal (forced, "direct")
          || g_str_equal (forced, "separable")))
    return forced;
  if (gcvt_on_cuda ())
    return NULL;
  return rank1 && !never ? "separable" : "direct";
}

static void
check_family (GstElement * e, gboolean rank1, gboolean never,
    const gchar * what)
{
  const gchar *expect = expected_family (rank1, never);
  gchar *active = NULL, **words;

  g_object_get (e, "active-algorithm", &active, NULL);
  fail_unless (active != NULL, "%s: no active-algorithm", what);
  words = g_strsplit (active, " ", 2);
  if (expect && gcvt_on_cuda () && !g_str_equal (gcvt_algorithm (), "auto")
      && !g_str_equal (words[0], expect)) {
    /* a forced family that cannot run this size hands over to another,
     * and the description says why after where the choice came from:
     * "<family> ... (requested) (<why>)", or "(table: ...) (<why>)" when
     * a tuning table picked the forced family */
    fail_unless (strstr (active, ") (") != NULL, "%s: expected %s "
        "or a reason why not, active-algorithm is \"%s\"", what, expect,
        active);
  } else if (expect) {
    fail_unless (g_str_equal (words[0], expect), "%s: expected %s, "
        "active-algorithm is \"%s\"", what, expect, active);
  } else if (!rank1 || never) {
    fail_if (g_str_equal (words[0], "separable"),
        "%s: %s runs separable", what, active);
  }
  g_print ("%s: active-algorithm \"%s\"\n", what, active);
  g_strfreev (words);
  g_free (active);
}

/* Runs one frame through `e` (properties set) and checks the output and the
 * family that ran. */
static void
run_and_check_family (GstElement * e, const RefParams * p, gboolean rank1,
    gboolean never, GRand * r, const gchar * what)
{
  GstHarness *h = gcvt_harness_new (e);
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, 19, 14, -1.0, 1.0);
  GstBuffer *out;

  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, 19, 14);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY32F, 0, 0, FALSE));
  gcvt_assert_frame (out, REF_GRAY32F, REF_GRAY32F, img, p, what);
  check_family (e, rank1, never, what);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  ref_image_free (img);
}

/* row-kernel + column-kernel equals their outer product as a 2D kernel */
GST_START_TEST (test_separable_pair)
{
  GRand *r = ref_rand_new ("separable_pair");

  for (guint round = 0; round < 4; round++) {
    guint kw = g_rand_int_range (r, 1, 12), kh = g_rand_int_range (r, 1, 12);
    gdouble *row = g_new (gdouble, kw), *column = g_new (gdouble, kh);
    RefKernel *k, *kf;
    RefParams p, pf;
    RefImage *img;
    GstElement *e;
    GstHarness *h;
    GstBuffer *pair_out, *full_out;
    RefFormat fmt = round % 2 ? REF_RGBA : REF_GRAY32F;

    for (guint i = 0; i < kw; i++)
      row[i] = (gfloat) g_rand_double_range (r, -0.5, 1.0);
    for (guint j = 0; j < kh; j++)
      column[j] = (gfloat) g_rand_double_range (r, -0.5, 1.0);
    k = ref_kernel_outer (column, kh, row, kw);
    kf = ref_kernel_copy (k);   /* as a float 2D kernel */
    for (guint i = 0; i < kw * kh; i++)
      kf->k[i] = (gfloat) kf->k[i];
    ref_params_init (&p, k);
    p.anchor_x = g_rand_int_range (r, 0, kw);
    p.anchor_y = g_rand_int_range (r, 0, kh);
    p.convolution = round >= 2;
    p.border = (RefBorder) g_rand_int_range (r, 0, REF_N_BORDERS);
    p.border_value = 0.5;
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    p.filter_alpha = TRUE;
    pf = p;
    pf.kernel = kf;
    img = gcvt_random_image (r, fmt, 21, 13, -1.0, 1.0);

    /* the pair */
    e = gcvt_element_new ();
    gcvt_set_params (e, &p);
    g_object_set (e, "kernel-width", kw, "kernel-height", kh, NULL);
    gcvt_set_floats (e, "kernel", NULL, 0);
    gcvt_set_floats (e, "row-kernel", row, kw);
    gcvt_set_floats (e, "column-kernel", column, kh);
    fail_unless_equals_int (gcvt_n_floats (e, "row-kernel"), kw);
    fail_unless_equals_int (gcvt_n_floats (e, "column-kernel"), kh);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, fmt, fmt, 21, 13);
    pair_out = gcvt_process (h, gcvt_buffer_new (img, fmt, 0, 0, FALSE));
    gcvt_assert_frame (pair_out, fmt, fmt, img, &p, "row-kernel x "
        "column-kernel");
    check_family (e, TRUE, FALSE, "row-kernel x column-kernel");

    /* the same as one 2D kernel, switched on the running element */
    gcvt_set_params (e, &pf);
    full_out = gcvt_process (h, gcvt_buffer_new (img, fmt, 0, 0, FALSE));
    gcvt_assert_frame (full_out, fmt, fmt, img, &pf, "outer product kernel");
    if (fmt == REF_GRAY32F) {
      /* both within the tolerance of each other too */
      GstMapInfo a, b;
      gdouble tol = 2 * ref_float_tolerance (&p, img, 1.0);
      gst_buffer_map (pair_out, &a, GST_MAP_READ);
      gst_buffer_map (full_out, &b, GST_MAP_READ);
      for (guint i = 0; i < 21 * 13; i++) {
        gfloat fa = ((gfloat *) a.data)[i], fb = ((gfloat *) b.data)[i];
        fail_unless (fabs (fa - fb) <= tol, "pair %g vs 2D %g at %u", fa, fb,
            i);
      }
      gst_buffer_unmap (pair_out, &a);
      gst_buffer_unmap (full_out, &b);
    }
    gst_buffer_unref (pair_out);
    gst_buffer_unref (full_out);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_image_free (img);
    ref_kernel_free (k);
    ref_kernel_free (kf);
    g_free (row);
    g_free (column);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* separable=auto takes the separable path for rank-1 kernels only, and
 * separable=never never does; active-algorithm says which ran. */
GST_START_TEST (test_active_algorithm)
{
  GRand *r = ref_rand_new ("active_algorithm");
  RefKernel *rank1 = gcvt_random_kernel (r, 7, 5, TRUE);
  RefKernel *full = gcvt_random_kernel (r, 5, 5, FALSE);
  RefParams p;
  GstElement *e;

  fail_unless (ref_kernel_is_rank1 (rank1));
  fail_if (ref_kernel_is_rank1 (full));

  /* rank 1, separable=auto */
  e = gcvt_element_new ();
  ref_params_init (&p, rank1);
  p.scale = 1.0 / ref_kernel_sum_abs (rank1);
  gcvt_set_params (e, &p);
  run_and_check_family (e, &p, TRUE, FALSE, r, "rank 1, separable=auto");
  gcvt_element_unref (e);

  /* not rank 1 */
  e = gcvt_element_new ();
  ref_params_init (&p, full);
  p.scale = 1.0 / ref_kernel_sum_abs (full);
  gcvt_set_params (e, &p);
  if (!gcvt_refused_as_not_separable (e, FALSE))
    run_and_check_family (e, &p, FALSE, FALSE, r, "not rank 1");
  gcvt_element_unref (e);

  /* rank 1, separable=never (contradicts a forced algorithm=separable) */
  if (!gcvt_forced_separable ()) {
    e = gcvt_element_new ();
    ref_params_init (&p, rank1);
    p.scale = 1.0 / ref_kernel_sum_abs (rank1);
    gcvt_set_params (e, &p);
    gst_util_set_object_arg (G_OBJECT (e), "separable", "never");
    run_and_check_family (e, &p, TRUE, TRUE, r, "rank 1, separable=never");
    gcvt_element_unref (e);
  }
  ref_kernel_free (rank1);
  ref_kernel_free (full);
  g_rand_free (r);
}

GST_END_TEST;

static const gchar *const builtins[] = {
  "box", "gaussian", "sharpen", "laplacian", "sobel-x", "sobel-y",
  "scharr-x", "scharr-y", "emboss", "log", "dog",
};

/* loop index: the built-in filter, at several sizes and sigmas */
GST_START_TEST (test_builtin_filters)
{
  static const guint sizes[] = { 1, 2, 3, 4, 5, 6, 7, 9 };
  const gchar *nick = builtins[__i__];
  gchar *name = g_strdup_printf ("builtin_filters %s", nick);
  GRand *r = ref_rand_new (name);

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++) {
    gdouble sigma = g_rand_double_range (r, 0.6, 2.2);
    RefKernel *k = ref_builtin (nick, sizes[s], sigma);
    RefFormat fmt = s % 3 == 2 ? REF_BGRX : REF_GRAY32F;
    RefImage *img;
    GstElement *e;
    RefParams p;
    gchar *what;

    if (!k)
      continue;                 /* too small for it (see test-properties) */
    what = g_strdup_printf ("filter=%s size=%u sigma=%.4f", nick, sizes[s],
        sigma);
    ref_params_init (&p, k);
    p.border = (RefBorder) g_rand_int_range (r, 0, REF_N_BORDERS);
    p.border_value = fmt == REF_GRAY32F ? 0.7 : 90.0;
    if (fmt == REF_BGRX)
      p.bias = 128.0;           /* derivatives are signed */
    e = gcvt_element_new ();
    gcvt_set_params (e, &p);
    gst_util_set_object_arg (G_OBJECT (e), "filter", nick);
    g_object_set (e, "size", sizes[s], "sigma", sigma, NULL);
    if (!gcvt_refused_as_not_separable (e, ref_kernel_is_rank1 (k))) {
      img = gcvt_random_image (r, fmt, 15, 11, -1.0, 1.0);
      gcvt_run_and_check (e, fmt, fmt, img, &p, 0, 0, what);
      ref_image_free (img);
    }
    gcvt_element_unref (e);
    ref_kernel_free (k);
    g_free (what);
  }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Gradient magnitudes: filter=sobel (sizes 3, 5, 7 and 11) and
 * filter=scharr against sqrt (gx^2 + gy^2) of the reference's derivative
 * kernels (RefParams.kernel_y), scale (also negative, around a bias) on the
 * magnitude, GRAY8, GRAY32F (also from GRAY8) and RGBA. With
 * algorithm=separable the start is refused (test_magnitude_not_separable).
 * loop index: the filter and size */
GST_START_TEST (test_magnitude_filters)
{
  static const struct
  {
    const gchar *nick, *x, *y;
    guint size;
  } filters[] = {
    {"sobel", "sobel-x", "sobel-y", 3},
    {"sobel", "sobel-x", "sobel-y", 5},
    {"sobel", "sobel-x", "sobel-y", 7},
    {"sobel", "sobel-x", "sobel-y", 11},
    {"scharr", "scharr-x", "scharr-y", 3},
  };
  static const struct
  {
    RefFormat in, out;
  } formats[] = {
    {REF_GRAY8, REF_GRAY8}, {REF_GRAY32F, REF_GRAY32F}, {REF_RGBA, REF_RGBA},
    {REF_GRAY8, REF_GRAY32F},
  };
  const guint fi = __i__;
  gchar *name = g_strdup_printf ("magnitude_filters %s size %u",
      filters[fi].nick, filters[fi].size);
  GRand *r = ref_rand_new (name);
  RefKernel *kx = ref_builtin (filters[fi].x, filters[fi].size, 1.0);
  RefKernel *ky = ref_builtin (filters[fi].y, filters[fi].size, 1.0);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint negative = 0; negative < 2; negative++) {
      const RefFormatInfo *info = ref_format_info (formats[f].in);
      const guint w = g_rand_int_range (r, 1, 90), h = g_rand_int_range (r, 1,
          50);
      RefImage *img = gcvt_random_image (r, formats[f].in, w, h, -1.0, 1.0);
      GstElement *e = gcvt_element_new ();
      gchar *what;
      RefParams p;

      ref_params_init (&p, kx);
      p.kernel_y = ky;
      /* the magnitude is at most sqrt 2 * sum|K| * max|in| */
      p.scale = g_rand_double_range (r, 0.4, 0.7) / ref_kernel_sum_abs (kx);
      p.bias = g_rand_double_range (r, 0.0, 0.1) * (info->is_float ? 1 : 255);
      if (negative) {
        p.scale = -p.scale;
        p.bias = info->is_float ? 1.0 : 255.0;
      }
      p.border = (RefBorder) g_rand_int_range (r, 0, REF_N_BORDERS);
      p.border_value = info->is_float ? 0.5 : 200.0;
      p.filter_alpha = info->channels == 4 && g_rand_boolean (r);
      what = g_strdup_printf ("filter=%s size=%u scale=%g bias=%g",
          filters[fi].nick, filters[fi].size, p.scale, p.bias);
      gcvt_set_params (e, &p);
      gst_util_set_object_arg (G_OBJECT (e), "filter", filters[fi].nick);
      g_object_set (e, "size", filters[fi].size, NULL);
      if (!gcvt_refused_as_not_separable (e, FALSE))
        gcvt_run_and_check (e, formats[f].in, formats[f].out, img, &p, 0, 0,
            what);
      gcvt_element_unref (e);
      ref_image_free (img);
      g_free (what);
    }
  ref_kernel_free (kx);
  ref_kernel_free (ky);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* The rule for NaN and infinities (docs/filters.md) holds for magnitudes:
 * through filter=sobel size=3, a NaN makes the nine outputs over it NaN;
 * an infinity gives +Inf where both derivatives have a non-zero tap on it
 * (the footprint's corners) and NaN where one has a zero tap (0 * Inf),
 * the centre included; the other outputs are finite, within the bound. */
GST_START_TEST (test_magnitude_nonfinite)
{
  const guint w = 16, h = 12;
  GRand *r = ref_rand_new ("magnitude_nonfinite");
  RefKernel *kx = ref_builtin ("sobel-x", 3, 1.0);
  RefKernel *ky = ref_builtin ("sobel-y", 3, 1.0);
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, w, h, -1.0, 1.0);
  RefImage *finite = ref_image_copy (img), *ref;
  GstElement *e = gcvt_element_new ();
  guint n_nan = 0, n_inf = 0;
  GstHarness *hn;
  GstBuffer *out;
  GstMapInfo map;
  RefParams p;
  gdouble tol;

  ref_pixel (img, 3, 3)[0] = NAN;
  ref_pixel (img, 10, 7)[0] = INFINITY;
  ref_pixel (finite, 3, 3)[0] = ref_pixel (finite, 10, 7)[0] = 0.0;
  ref_params_init (&p, kx);
  p.kernel_y = ky;
  p.scale = 0.25;
  ref = ref_filter (img, &p);
  /* the bound of the finite outputs, whose footprints hold neither */
  tol = ref_float_tolerance (&p, finite, 1.0);
  gcvt_set_params (e, &p);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "sobel");
  g_object_set (e, "size", 3, NULL);
  if (!gcvt_refused_as_not_separable (e, FALSE)) {
    hn = gcvt_harness_new (e);
    gcvt_set_caps (hn, REF_GRAY32F, REF_GRAY32F, w, h);
    out = gcvt_process (hn, gcvt_buffer_new (img, REF_GRAY32F, 0, 0, FALSE));
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    for (guint y = 0; y < h; y++)
      for (guint x = 0; x < w; x++) {
        const gdouble want = ref_pixel (ref, x, y)[0];
        gfloat got;
        memcpy (&got, map.data + ref_default_stride (REF_GRAY32F, w) * y
            + 4 * x, 4);
        n_nan += isnan (want);
        n_inf += isinf (want);
        fail_unless (isnan (want) ? isnan (got) : isinf (want) ? got == want
            : fabs (got - want) <= tol, "(%u,%u): got %g, expected %g", x, y,
            got, want);
      }
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
    gst_harness_teardown (hn);
    /* the reference says what the comment does */
    fail_unless_equals_int (n_nan, 9 + 5);
    fail_unless_equals_int (n_inf, 4);
  }
  gcvt_element_unref (e);
  ref_image_free (ref);
  ref_image_free (finite);
  ref_image_free (img);
  ref_kernel_free (kx);
  ref_kernel_free (ky);
  g_rand_free (r);
}

GST_END_TEST;

/* A magnitude is not rank 1: separable=always and algorithm=separable
 * refuse it at start, naming the property (LIBRARY/SETTINGS). */
GST_START_TEST (test_magnitude_not_separable)
{
  static const gchar *const nicks[] = { "sobel", "scharr" };

  for (guint i = 0; i < G_N_ELEMENTS (nicks); i++)
    for (guint always = 0; always < 2; always++) {
      GstElement *e = gcvt_element_new ();
      gst_util_set_object_arg (G_OBJECT (e), "filter", nicks[i]);
      if (always) {
        gst_util_set_object_arg (G_OBJECT (e), "algorithm", "auto");
        gst_util_set_object_arg (G_OBJECT (e), "separable", "always");
      } else {
        gst_util_set_object_arg (G_OBJECT (e), "algorithm", "separable");
      }
      gcvt_expect_start_error (e, GST_LIBRARY_ERROR,
          GST_LIBRARY_ERROR_SETTINGS, always ? "separable" : "algorithm");
      gcvt_element_unref (e);
    }
}

GST_END_TEST;

/* An image a derivative has something to say about: vertical step edges
 * every few columns, between random dark and bright levels, a slow vertical ramp and a little
 * noise; 0..255 integers, or the same / 255 for GRAY32F. One sample is 255
 * (1.0), so that max|in| is the whole range. */
static RefImage *
edges_image (GRand * r, RefFormat fmt, guint w, guint h)
{
  RefImage *img = ref_image_new (w, h, 1);
  gdouble level = g_rand_double_range (r, 40, 215);
  gdouble *column = g_new (gdouble, w);

  for (guint x = 0; x < w; x++) {
    /* dark and bright in turn, so that every step is a real edge */
    if (x % 11 == 0)
      level = (x / 11) % 2 ? g_rand_double_range (r, 165, 235) :
          g_rand_double_range (r, 20, 90);
    column[x] = level;
  }
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++) {
      gdouble v = column[x] + 10.0 * (y / (gdouble) h - 0.5)
          + g_rand_double_range (r, -3, 3);
      v = CLAMP (floor (v + 0.5), 0, 255);
      ref_pixel (img, x, y)[0] = fmt == REF_GRAY32F ? (gfloat) (v / 255.0) : v;
    }
  ref_pixel (img, g_rand_int_range (r, 0, w), g_rand_int_range (r, 0, h))[0] =
      fmt == REF_GRAY32F ? 1.0 : 255.0;
  g_free (column);
  return img;
}

/* Large derivative kernels: sobel-x at sizes 15 and 31 has taps up to about
 * 2e6 and 3e15 (sum|K| about 5.6e7 and 1.7e17), where float32 cannot hold
 * the sum of a few taps exactly. Results must stay within the bound of
 * docs/filters.md: float within 1e-5 * sum|K| * |scale| * max|in|
 * (+ 1e-6), 8-bit within max(1, 1e-5 * sum|K| * |scale| * 255).
 *
 * One frame of sobel-x `size` with scale = c / sum|K| (c = 0: scale 1),
 * on the separable path or (`never`) a 2D one; prints the bound and the
 * largest error. */
static void
check_large_derivative (GRand * r, guint size, RefFormat in, RefFormat out,
    gdouble c, gdouble bias, gboolean never, RefBorder border)
{
  const guint w = 61, h = 40;
  const gdouble range = in == REF_GRAY32F ? 1.0 : 255.0;
  RefKernel *k = ref_builtin ("sobel-x", size, 1.0);
  const gdouble sum_abs = ref_kernel_sum_abs (k);
  RefImage *img = edges_image (r, in, w, h), *ref;
  GstElement *e = gcvt_element_new ();
  GstHarness *harness;
  GstBuffer *o;
  guint strong = 0;
  RefParams p;
  gchar *what;

  ref_params_init (&p, k);
  p.bias = bias;
  p.scale = c ? c / sum_abs : 1.0;
  p.border = border;
  p.border_value = in == REF_GRAY32F ? 0.25 : 64.0;
  what = g_strdup_printf ("sobel-x size=%u (sum|K| %.17g) scale=%.6g "
      "bias=%g separable=%s", size, sum_abs, p.scale, p.bias,
      never ? "never" : "auto");
  gcvt_set_params (e, &p);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "sobel-x");
  g_object_set (e, "size", size, NULL);
  if (never)
    gst_util_set_object_arg (G_OBJECT (e), "separable", "never");

  /* the frame has edges for the kernel to find: a fifth of the samples at
   * least 2% of the input range away from the bias, at scale 1 / sum|K| */
  ref = gcvt_filter (img, &p);
  for (guint i = 0; i < w * h; i++)
    strong += fabs (ref->v[i] - p.bias) / (p.scale * sum_abs) > 0.02 * range;
  g_print ("%s: %s -> %s, %u of %u samples strong, bound %.6g\n", what,
      ref_format_info (in)->name, ref_format_info (out)->name, strong, w * h,
      out == REF_GRAY8 ? ref_u8_tolerance (&p, img, in == REF_GRAY32F) :
      ref_float_tolerance (&p, img, in == REF_GRAY8 ? 1.0 / 255.0 : 1.0));
  fail_unless (strong >= w * h / 5, "%s: only %u of %u samples show an "
      "edge", what, strong, w * h);

  harness = gcvt_harness_new (e);
  gcvt_set_caps (harness, in, out, w, h);
  o = gcvt_process (harness, gcvt_buffer_new (img, in, 0, 0, FALSE));
  /* the reference that counted the edges */
  g_print ("  largest error %.6g\n", gcvt_check_frame_ref (o, in, out, img,
          &p, ref, what));
  gst_buffer_unref (o);
  ref_image_free (ref);
  gst_harness_teardown (harness);
  gcvt_element_unref (e);
  ref_image_free (img);
  ref_kernel_free (k);
  g_free (what);
}

/* With scale 1 and bias 128 (the way such a kernel is often used) the
 * 8-bit bound is larger than 255, so only float outputs are checked with
 * it; with scale = c / sum|K| the outputs are edges around the bias and
 * the bound is tight (1 for 8-bit, about 1e-5 for float in 0..1). The 2D
 * path (separable=never) is checked as well as the separable one.
 * loop index: the size, 15 or 31 */
GST_START_TEST (test_large_derivatives)
{
  static const struct
  {
    RefFormat in, out;
    gdouble c;                  /* scale = c / sum|K|, 0: scale 1 */
    gdouble bias;
  } cases[] = {
    {REF_GRAY8, REF_GRAY8, 1.0, 128.0},
    {REF_GRAY8, REF_GRAY8, 8.0, 128.0},
    {REF_GRAY8, REF_GRAY32F, 1.0, 128.0},
    {REF_GRAY8, REF_GRAY32F, 0.0, 128.0},
    {REF_GRAY32F, REF_GRAY32F, 1.0, 0.5},
    {REF_GRAY32F, REF_GRAY32F, 0.0, 128.0},
    {REF_GRAY32F, REF_GRAY8, 4.0, 0.5},
  };
  const guint size = __i__ == 0 ? 15 : 31;
  gchar *name = g_strdup_printf ("large_derivatives size %u", size);
  GRand *r = ref_rand_new (name);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    for (guint never = 0; never < 2; never++) {
      /* separable=never contradicts algorithm=separable (test-properties) */
      if (never && gcvt_forced_separable ())
        continue;
      check_large_derivative (r, size, cases[c].in, cases[c].out, cases[c].c,
          cases[c].bias, never, (RefBorder) ((c + never) % REF_N_BORDERS));
    }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* A bias much larger than the rest of the float bound: GRAY32F in 0..1
 * with scale 1 / sum|K| and bias 128 has a bound of 1e-5 + 1e-6, while a
 * float32 sample near 128 is only held to 7.6e-6. Within the bound where
 * the bias is added once, after the taps; not where the sum starts from
 * the bias and every tap row adds a rounding at 128.
 * loop index: the size, 15 or 31 */
GST_START_TEST (test_large_derivatives_float_bias)
{
  const guint size = __i__ == 0 ? 15 : 31;
  gchar *name = g_strdup_printf ("large_derivatives_float_bias size %u",
      size);
  GRand *r = ref_rand_new (name);

  for (guint never = 0; never < 2; never++)
    if (!never || !gcvt_forced_separable ())
      check_large_derivative (r, size, REF_GRAY32F, REF_GRAY32F, 1.0, 128.0,
          never, (RefBorder) (never ? REF_BORDER_REFLECT :
              REF_BORDER_CONSTANT));
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

static Suite *
compute_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-compute");
  TCase *tc = tcase_create ("compute");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_formats_borders, 0, REF_N_FORMATS);
  tcase_add_loop_test (tc, test_large_frames, 0, REF_N_FORMATS);
  tcase_add_loop_test (tc, test_one_wide_kernels, 0, REF_N_FORMATS);
  tcase_add_test (tc, test_border_aliases);
  tcase_add_loop_test (tc, test_small_frames_big_kernels, 0, REF_N_BORDERS);
  tcase_add_test (tc, test_gray32f_3x3);
  tcase_add_test (tc, test_padded_stride);
  tcase_add_test (tc, test_gray8_to_gray32f);
  tcase_add_test (tc, test_gray32f_to_gray8);
  tcase_add_test (tc, test_u8_rounding);
  tcase_add_test (tc, test_gray_conversion_chain);
  tcase_add_test (tc, test_separable_pair);
  tcase_add_test (tc, test_active_algorithm);
  tcase_add_loop_test (tc, test_builtin_filters, 0, G_N_ELEMENTS (builtins));
  tcase_add_loop_test (tc, test_magnitude_filters, 0, 5);
  tcase_add_test (tc, test_magnitude_nonfinite);
  tcase_add_test (tc, test_magnitude_not_separable);
  tcase_add_loop_test (tc, test_large_derivatives, 0, 2);
  tcase_add_loop_test (tc, test_large_derivatives_float_bias, 0, 2);
  return s;
}

GCVT_MAIN (compute);
