/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NaN and infinities in GRAY32F frames (docs/filters.md, "Non-finite
 * input"): an output sample depends only on the input samples under its
 * kernel's footprint, and inside it IEEE arithmetic decides, as in the
 * reference's naive loops (a zero tap times NaN is NaN). Each output sample
 * is compared with the double-precision reference: NaN exactly where it is
 * NaN, the same infinity where it is infinite, finite and within the
 * accuracy bound elsewhere; GRAY8 output saturates (NaN and -Inf give 0,
 * +Inf 255, docs/formats.md). Random kernels of odd, even and large sizes
 * (the widened kernels and the FFT family on CUDA), off-centre anchors,
 * rank-1 and dense, with zero taps; frames over several tiles and strips,
 * strides, every border, frames in flight. */
#include "common.h"

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

/* --- frames and kernels ----------------------------------------------------- */

static const struct
{
  guint w, h;
} frame_sizes[] = {
  {300, 200}, {131, 77}, {67, 45}, {257, 33}, {17, 129},
};

/* Finite samples in [-1, 1] with `n` samples made NaN, +Inf or -Inf, half
 * of them within `margin` pixels of an edge, where the borders read them. */
static RefImage *
nonfinite_image (GRand * r, guint w, guint h, guint n, guint margin)
{
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, w, h, -1.0, 1.0);
  static const gdouble specials[] = { NAN, INFINITY, -INFINITY };

  for (guint i = 0; i < n; i++) {
    guint x = g_rand_int_range (r, 0, w), y = g_rand_int_range (r, 0, h);
    if (i % 2) {
      guint mx = MIN (margin, w), my = MIN (margin, h);
      guint dx = g_rand_int_range (r, 0, mx), dy = g_rand_int_range (r, 0, my);
      if (g_rand_boolean (r))
        x = g_rand_boolean (r) ? dx : w - 1 - dx;
      else
        y = g_rand_boolean (r) ? dy : h - 1 - dy;
    }
    ref_pixel (img, x, y)[0] = specials[g_rand_int_range (r, 0, 3)];
  }
  return img;
}

/* Some exact zeros in `v`, but at least one value that is not zero. */
static void
random_taps (GRand * r, gdouble * v, guint n, gdouble lo)
{
  guint nonzero = 0;

  for (guint i = 0; i < n; i++) {
    v[i] = g_rand_int_range (r, 0, 4) == 0 ? 0.0 :
        (gfloat) g_rand_double_range (r, lo, 1.0);
    nonzero += v[i] != 0.0;
  }
  if (nonzero == 0)
    v[g_rand_int_range (r, 0, n)] = 1.0;
}

/* A kernel with zero taps among the others, rank 1 or dense, never the
 * identity (which is 1x1, docs/filters.md) unless it is 1x1. */
static RefKernel *
random_kernel (GRand * r, guint kw, guint kh, gboolean rank1)
{
  RefKernel *k;
  guint nonzero = 0;

  if (rank1) {
    gdouble *row = g_new (gdouble, kw), *column = g_new (gdouble, kh);
    random_taps (r, row, kw, -0.6);
    random_taps (r, column, kh, -0.6);
    k = ref_kernel_outer (column, kh, row, kw);
    g_free (row);
    g_free (column);
  } else {
    k = ref_kernel_new (kw, kh);
    random_taps (r, k->k, kw * kh, -0.5);
  }
  for (guint i = 0; i < kw * kh; i++) {
    k->k[i] = (gfloat) k->k[i];
    nonzero += k->k[i] != 0.0;
  }
  if (nonzero == 1 && kw * kh > 1) {
    /* a second tap, keeping rank 1 by filling a row or column */
    for (guint i = 0; i < kw * kh; i++)
      if (k->k[i] != 0.0) {
        guint j = i / kw, c = i % kw;
        if (kw > 1)
          k->k[j * kw + (c + 1) % kw] = 0.5 * k->k[i];
        else
          k->k[((j + 1) % kh) * kw + c] = 0.5 * k->k[i];
        break;
      }
  }
  return k;
}

/* Sizes from 1 to 17, odd and even, one in five large (31, 43 or
 * between) and often not square. */
static void
random_size (GRand * r, guint * kw, guint * kh)
{
  static const guint large[] = { 31, 43 };

  *kw = g_rand_int_range (r, 1, 18);
  *kh = g_rand_int_range (r, 1, 18);
  if (g_rand_int_range (r, 0, 5) == 0) {
    guint big = g_rand_boolean (r) ? large[g_rand_int_range (r, 0, 2)] :
        (guint) g_rand_int_range (r, 18, 44);
    if (g_rand_boolean (r))
      *kw = big;
    else
      *kh = big;
    if (g_rand_boolean (r))
      *kw = *kh = big;
  }
}

/* --- checking ------------------------------------------------------------- */

/* The input with its non-finite samples as 0: the accuracy bound's
 * max|in| counts the finite samples, the only ones a finite output reads. */
static RefImage *
finite_part (const RefImage * in)
{
  RefImage *f = ref_image_copy (in);
  gsize n = (gsize) in->width * in->height * in->channels;

  for (gsize i = 0; i < n; i++)
    if (!isfinite (f->v[i]))
      f->v[i] = 0.0;
  return f;
}

typedef enum {
  WRONG_NOT_NAN,                /* the reference is NaN, the output is not */
  WRONG_NOT_INF,                /* the reference is infinite, the output
                                 * another value */
  WRONG_NOT_FINITE,             /* a finite reference, a non-finite output */
  WRONG_VALUE,                  /* both finite, beyond the bound */
  N_WRONG
} Wrong;

static const gchar *const wrong_names[N_WRONG] = {
  "should be NaN", "should be infinite", "should be finite", "inaccurate"
};

static gchar *
describe_value (gdouble v)
{
  return g_strdup_printf ("%.9g", v);
}

/* Checks a GRAY32F or GRAY8 output of GRAY32F input `in` against the
 * reference, sample by sample. */
static void
check_nonfinite (GstBuffer * out, RefFormat out_fmt, const RefImage * in,
    const RefParams * p, const gchar * what)
{
  const RefFormatInfo *oi = ref_format_info (out_fmt);
  const guint w = in->width, h = in->height;
  RefImage *fin = finite_part (in), *ref = ref_filter (in, p);
  const gdouble tol = ref_float_tolerance (p, fin, 1.0);
  const gdouble tol_u8 = ref_u8_tolerance (p, fin, TRUE);
  GstVideoMeta *meta = gst_buffer_get_video_meta (out);
  const gsize stride = meta ? (gsize) meta->stride[0] :
      ref_default_stride (out_fmt, w);
  const gsize offset = meta ? meta->offset[0] : 0;
  guint count[N_WRONG] = { 0 }, n_nonfinite = 0, bad = 0;
  gchar *first[N_WRONG] = { NULL };
  GstMapInfo map;

  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  fail_unless (map.size >= offset + stride * (h - 1) + w * oi->pixel_bytes,
      "%s: output of %" G_GSIZE_FORMAT " bytes is too small", what, map.size);
  for (guint y = 0; y < h; y++) {
    const guint8 *row = map.data + offset + y * stride;
    for (guint x = 0; x < w; x++) {
      const gdouble e = ref_pixel (ref, x, y)[0];
      gdouble got, expect = e;
      Wrong why = N_WRONG;

      if (oi->is_float) {
        gfloat f;
        memcpy (&f, row + 4 * x, 4);
        got = f;
        if (isnan (e))
          why = isnan (got) ? N_WRONG : WRONG_NOT_NAN;
        else if (isinf (e))
          why = got == e ? N_WRONG : WRONG_NOT_INF;
        else if (!isfinite (got))
          why = WRONG_NOT_FINITE;
        else if (!(fabs (got - e) <= tol))
          why = WRONG_VALUE;
      } else {
        /* saturated exactly where the reference is not finite */
        got = row[x];
        expect = ref_to_u8 (e * 255.0);
        if (!isfinite (e))
          why = got == expect ? N_WRONG : isnan (e) ? WRONG_NOT_NAN :
              WRONG_NOT_INF;
        else if (!(fabs (got - expect) <= tol_u8))
          why = WRONG_VALUE;
      }
      n_nonfinite += !isfinite (e);
      if (why == N_WRONG)
        continue;
      bad++;
      if (count[why]++ == 0) {
        gchar *g = describe_value (got), *x_ = describe_value (e);
        first[why] = g_strdup_printf ("(%u,%u) got %s, reference %s", x, y,
            g, x_);
        g_free (g);
        g_free (x_);
      }
    }
  }
  gst_buffer_unmap (out, &map);
  /* the case has to reach the rule: non-finite outputs, finite ones too */
  fail_unless (n_nonfinite > 0 || bad > 0,
      "%s: no output sample reads a non-finite input", what);
  if (bad) {
    GString *s = g_string_new (NULL);
    gchar *desc = ref_params_describe (p);
    for (guint i = 0; i < N_WRONG; i++)
      if (count[i])
        g_string_append_printf (s, "; %u %s, first %s", count[i],
            wrong_names[i], first[i]);
    ck_abort_msg ("%s: %ux%u GRAY32F -> %s: %u of %u samples wrong "
        "(%u non-finite in the reference)%s; %s", what, w, h, oi->name, bad,
        w * h, n_nonfinite, s->str, desc);
    g_string_free (s, TRUE);
    g_free (desc);
  }
  for (guint i = 0; i < N_WRONG; i++)
    g_free (first[i]);
  ref_image_free (ref);
  ref_image_free (fin);
}

/* --- one case --------------------------------------------------------------- */

typedef struct {
  RefKernel *kernel;
  RefParams p;
  RefFormat out_fmt;
  gchar *what;
} Case;

/* A random filter for `border`; rank 1 when the family under test takes
 * nothing else. */
static void
case_init (Case * c, GRand * r, RefBorder border, RefFormat out_fmt)
{
  guint kw, kh;
  gboolean rank1 = gcvt_forced_separable () || g_rand_boolean (r);

  random_size (r, &kw, &kh);
  c->kernel = random_kernel (r, kw, kh, rank1);
  c->out_fmt = out_fmt;
  ref_params_init (&c->p, c->kernel);
  c->p.border = border;
  c->p.border_value = (gfloat) g_rand_double_range (r, -1.0, 1.0);
  c->p.scale = 1.0 / ref_kernel_sum_abs (c->kernel);
  if (g_rand_boolean (r)) {
    c->p.anchor_x = g_rand_int_range (r, 0, kw);
    c->p.anchor_y = g_rand_int_range (r, 0, kh);
  }
  c->p.convolution = g_rand_int_range (r, 0, 4) == 0;
  c->p.bias = g_rand_boolean (r) ? 0.25 : 0.0;
  if (out_fmt == REF_GRAY8) {
    /* about 0..1 after filtering, so that 8-bit output is not saturated */
    c->p.scale *= 0.5;
    c->p.bias = 0.5;
  }
  c->what = g_strdup_printf ("%s %ux%u kernel, border=%s",
      rank1 ? "rank-1" : "dense", kw, kh, ref_border_nick (border));
}

static void
case_clear (Case * c)
{
  ref_kernel_free (c->kernel);
  g_free (c->what);
}

/* One frame of `img` through a new element with the case's filter, rows
 * `stride` bytes apart from `offset` on (0, 0: packed). */
static void
run_case (const Case * c, const RefImage * img, gsize stride, gsize offset)
{
  GstElement *e = gcvt_element_new ();
  GstHarness *h;
  GstBuffer *out;
  gchar *what = g_strdup_printf ("%s, %ux%u frame, stride %" G_GSIZE_FORMAT
      " offset %" G_GSIZE_FORMAT, c->what, img->width, img->height, stride,
      offset);

  gcvt_set_params (e, &c->p);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY32F, c->out_fmt, img->width, img->height);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY32F, stride, offset,
          stride != 0));
  check_nonfinite (out, c->out_fmt, img, &c->p, what);
  gst_buffer_unref (out);
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
      "%s: error on the bus", what);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  g_free (what);
}

/* --- tests ------------------------------------------------------------------ */

/* The case found: zeros with one NaN at (3,3), filter=laplacian size=3.
 * Rows 4..6 feed output row 5: it stays 0; the 3x3 block around the NaN is
 * NaN, corners included (K's zero corners times NaN). */
GST_START_TEST (test_laplacian_one_nan)
{
  static const gdouble specials[] = { NAN, INFINITY, -INFINITY };
  RefKernel *k = ref_builtin ("laplacian", 3, 1.0);
  RefParams p;

  ref_params_init (&p, k);
  for (guint s = 0; s < G_N_ELEMENTS (specials); s++) {
    RefImage *img = ref_image_new (16, 12, 1);
    GstElement *e = gcvt_element_new ();
    GstHarness *h;
    GstBuffer *out;
    GstMapInfo map;
    gchar *what = g_strdup_printf ("laplacian 3x3, %g at (3,3)", specials[s]);

    ref_pixel (img, 3, 3)[0] = specials[s];
    gst_util_set_object_arg (G_OBJECT (e), "filter", "laplacian");
    g_object_set (e, "size", 3, NULL);
    if (gcvt_refused_as_not_separable (e, FALSE)) {
      g_free (what);
      gcvt_element_unref (e);
      ref_image_free (img);
      break;
    }
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, 16, 12);
    out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY32F, 0, 0, FALSE));
    check_nonfinite (out, REF_GRAY32F, img, &p, what);
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    fail_unless (((const gfloat *) map.data)[5 * 16 + 3] == 0.0f);
    fail_unless (isnan (((const gfloat *) map.data)[2 * 16 + 2]));
    gst_buffer_unmap (out, &map);
    gst_buffer_unref (out);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_image_free (img);
    g_free (what);
  }
  ref_kernel_free (k);
}

GST_END_TEST;

/* loop index: the border mode. Random kernels on frames of every size, a
 * third of them to GRAY8, some with padded rows. */
GST_START_TEST (test_random_kernels)
{
  const RefBorder border = (RefBorder) __i__;
  gchar *name = g_strdup_printf ("random_kernels border=%s",
      ref_border_nick (border));
  GRand *r = ref_rand_new (name);
  const guint rounds = gcvt_quick ()? 1 : 3;

  for (guint round = 0; round < rounds; round++)
    for (guint f = 0; f < G_N_ELEMENTS (frame_sizes); f++) {
      const guint w = frame_sizes[f].w, h = frame_sizes[f].h;
      Case c;
      RefImage *img;
      gsize stride = 0, offset = 0;

      case_init (&c, r, border, (round + f) % 3 == 2 ? REF_GRAY8 :
          REF_GRAY32F);
      img = nonfinite_image (r, w, h, g_rand_int_range (r, 1, 12),
          MAX (c.kernel->kw, c.kernel->kh));
      if (g_rand_boolean (r)) {
        stride = w * 4 + 4 * g_rand_int_range (r, 1, 17);
        offset = 4 * g_rand_int_range (r, 0, 9);
      }
      run_case (&c, img, stride, offset);
      ref_image_free (img);
      case_clear (&c);
    }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Many non-finite samples, rows and columns of them: most outputs read
 * one, the rest must not. */
GST_START_TEST (test_dense_nonfinite)
{
  GRand *r = ref_rand_new ("dense_nonfinite");

  for (RefBorder b = 0; b < REF_N_BORDERS; b++) {
    Case c;
    RefImage *img;
    const guint w = 131, h = 77;

    if (gcvt_quick () && b % 2)
      continue;
    case_init (&c, r, b, REF_GRAY32F);
    img = nonfinite_image (r, w, h, 40, MAX (c.kernel->kw, c.kernel->kh));
    /* a whole row and a whole column */
    for (guint x = 0; x < w; x++)
      ref_pixel (img, x, g_rand_int_range (r, 0, h))[0] = NAN;
    for (guint y = 0; y < h; y++)
      ref_pixel (img, (3 * b + 1) % w, y)[0] = INFINITY;
    run_case (&c, img, 0, 0);
    ref_image_free (img);
    case_clear (&c);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* A kernel that is rank 1 only within the tolerance (docs/filters.md,
 * "Separable kernels"): a tiny tap in a row its factors make zero, and a
 * tiny tap of the other sign than theirs. A separable path would turn the
 * infinities under those taps into NaN or the other infinity. */
GST_START_TEST (test_nearly_rank1)
{
  static const gdouble column[] = { 0.5, 1.0, 0.0, 0.75 };
  static const gdouble row[] = { 0.3, -0.6, 1.0, 0.8, 1e-6 };
  GRand *r = ref_rand_new ("nearly_rank1");
  RefKernel *k = ref_kernel_outer (column, 4, row, 5);

  k->k[2 * 5 + 1] = 1e-7;
  k->k[0 * 5 + 4] = -5e-7;
  for (guint i = 0; i < 20; i++)
    k->k[i] = (gfloat) k->k[i];
  fail_unless (ref_kernel_is_rank1 (k));
  for (RefBorder b = 0; b < REF_N_BORDERS; b++) {
    Case c = { k };
    RefImage *img = nonfinite_image (r, 67, 45, 150, 5);

    ref_params_init (&c.p, k);
    c.p.border = b;
    c.out_fmt = REF_GRAY32F;
    c.what = g_strdup_printf ("nearly rank-1 5x4 kernel, border=%s",
        ref_border_nick (b));
    run_case (&c, img, 0, 0);
    ref_image_free (img);
    g_free (c.what);
  }
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* Frames in flight: queue-depth 3, every frame with its own non-finite
 * samples and checked against its own input. */
GST_START_TEST (test_frames_in_flight)
{
  enum { N = 6, W = 300, H = 200 };
  GRand *r = ref_rand_new ("frames_in_flight");
  RefImage *img[N];
  Case c;
  GstElement *e = gcvt_element_new ();
  GstHarness *h;

  case_init (&c, r, (RefBorder) g_rand_int_range (r, 0, REF_N_BORDERS),
      REF_GRAY32F);
  gcvt_set_params (e, &c.p);
  g_object_set (e, "queue-depth", 3, NULL);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, W, H);
  for (guint i = 0; i < N; i++) {
    GstBuffer *b;
    img[i] = nonfinite_image (r, W, H, g_rand_int_range (r, 1, 10),
        MAX (c.kernel->kw, c.kernel->kh));
    b = gcvt_buffer_new (img[i], REF_GRAY32F, 0, 0, FALSE);
    GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), N);
  for (guint i = 0; i < N; i++) {
    GstBuffer *out = gst_harness_pull (h);
    gchar *what = g_strdup_printf ("%s, frame %u of %u at queue-depth 3",
        c.what, i, N);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_SECOND / 30);
    check_nonfinite (out, REF_GRAY32F, img[i], &c.p, what);
    gst_buffer_unref (out);
    ref_image_free (img[i]);
    g_free (what);
  }
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  case_clear (&c);
  g_rand_free (r);
}

GST_END_TEST;

/* GRAY32F -> GRAY8 of NaN and infinities: NaN and -Inf give 0, +Inf 255,
 * through the conversion alone (the identity), a 1x1 kernel that turns the
 * sign, and a 3x3 blur. */
GST_START_TEST (test_to_gray8)
{
  static const gdouble minus_one = -1.0;
  GRand *r = ref_rand_new ("to_gray8");
  RefKernel *flip = ref_kernel_new (1, 1);
  RefKernel *blur = ref_builtin ("box", 3, 1.0);
  const RefKernel *kernels[] = { NULL, flip, blur };
  const gchar *names[] = { "identity", "1x1 -1", "3x3 box" };

  flip->k[0] = minus_one;
  for (guint k = 0; k < G_N_ELEMENTS (kernels); k++) {
    Case c = { NULL };
    RefImage *img;

    ref_params_init (&c.p, kernels[k]);
    c.out_fmt = REF_GRAY8;
    c.p.bias = k == 1 ? 0.5 : 0.0;
    c.what = g_strdup_printf ("%s to GRAY8", names[k]);
    img = nonfinite_image (r, 67, 45, 30, 3);
    /* values over the whole 8-bit range and beyond it */
    for (guint i = 0; i < 67 * 45; i++)
      if (isfinite (img->v[i]))
        img->v[i] = (gfloat) (img->v[i] * 0.75 + 0.5);
    run_case (&c, img, 0, 0);
    ref_image_free (img);
    g_free (c.what);
  }
  ref_kernel_free (flip);
  ref_kernel_free (blur);
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
nonfinite_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-nonfinite");
  TCase *tc = tcase_create ("nonfinite");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_laplacian_one_nan);
  tcase_add_loop_test (tc, test_random_kernels, 0, REF_N_BORDERS);
  tcase_add_test (tc, test_dense_nonfinite);
  tcase_add_test (tc, test_nearly_rank1);
  tcase_add_test (tc, test_frames_in_flight);
  tcase_add_test (tc, test_to_gray8);
  return s;
}

GCVT_MAIN (nonfinite);
