/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU engine on frames wider than one of its strips of columns and
 * taller than one of its bands of rows, against the plain reference: every
 * format and border, separable and direct kernels, the fixed-point path of
 * 8-bit blurs and the float paths, kernels wider than a strip, strides,
 * filters that change between frames. Then plans whose scratch memory
 * cannot be had, in the engine and through the element, and frames that
 * take seconds cut short by a flush or a stop. */
#include "common.h"

#include "gcv.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>

/* The engine's strips hold at most this many samples of a row (pixels
 * times 1 or 4 channels); frames here are wider than two of the widest. */
#define WIDEST_STRIP 1024

static gboolean
under_valgrind (void)
{
  const gchar *preload = g_getenv ("LD_PRELOAD");
  return preload && strstr (preload, "vgpreload");
}

/* Wider than two strips of the widest, and of no round size, so that the
 * last strip is a partial one. */
static guint
wide_width (GRand * r, RefFormat fmt)
{
  return 2 * WIDEST_STRIP / ref_format_info (fmt)->channels
      + g_rand_int_range (r, 1, 100);
}

/* A rank-1 kernel of taps >= 0 (a blur): on 8-bit frames it runs in fixed
 * point. */
static RefKernel *
blur_kernel (GRand * r, guint kw, guint kh)
{
  gdouble *row = g_new (gdouble, kw), *column = g_new (gdouble, kh);
  RefKernel *k;

  for (guint i = 0; i < kw; i++)
    row[i] = (gfloat) g_rand_double_range (r, 0.05, 1.0);
  for (guint j = 0; j < kh; j++)
    column[j] = (gfloat) g_rand_double_range (r, 0.05, 1.0);
  k = ref_kernel_outer (column, kh, row, kw);
  for (guint i = 0; i < kw * kh; i++)
    k->k[i] = (gfloat) k->k[i];
  g_free (row);
  g_free (column);
  return k;
}

typedef enum {
  KERNEL_BLUR,                  /* separable, taps >= 0 */
  KERNEL_SIGNED,                /* separable, signed taps */
  KERNEL_DENSE,                 /* direct */
  KERNEL_BLUR_DIRECT,           /* a blur with separable=never */
  N_KERNELS
} KernelKind;

static const gchar *const kernel_names[] = {
  "blur", "signed separable", "dense", "blur, separable=never"
};

/* One wide frame of `in_fmt` through an element with a kernel of `kind`,
 * checked against the reference. */
static void
run_wide_case (GRand * r, RefFormat in_fmt, RefFormat out_fmt,
    RefBorder border, KernelKind kind, guint w, guint h, gsize stride,
    gsize offset)
{
  const RefFormatInfo *fi = ref_format_info (in_fmt);
  const guint kw = g_rand_int_range (r, 1, 12), kh = g_rand_int_range (r, 1,
      12);
  RefKernel *k = kind == KERNEL_BLUR || kind == KERNEL_BLUR_DIRECT ?
      blur_kernel (r, kw, kh) : gcvt_random_kernel (r, kw, kh,
      kind == KERNEL_SIGNED);
  RefImage *img = gcvt_random_image (r, in_fmt, w, h, -1.5, 1.5);
  GstElement *e = gcvt_element_new ();
  RefParams p;
  gchar *what;

  ref_params_init (&p, k);
  p.border = border;
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  if (kind != KERNEL_BLUR) {
    p.anchor_x = g_rand_int_range (r, 0, kw);
    p.anchor_y = g_rand_int_range (r, 0, kh);
    p.convolution = g_rand_boolean (r);
  }
  if (kind == KERNEL_SIGNED || kind == KERNEL_DENSE)
    p.bias = fi->is_float ? 0.25 : 60.0;
  if (border == REF_BORDER_CONSTANT)
    /* a whole 8-bit value keeps blurs on the fixed-point path */
    p.border_value = fi->is_float ? -0.75 : kind == KERNEL_BLUR ? 200.0 :
        137.25;
  p.filter_alpha = fi->channels == 4 && g_rand_boolean (r);
  gcvt_set_params (e, &p);
  if (kind == KERNEL_BLUR_DIRECT)
    gst_util_set_object_arg (G_OBJECT (e), "separable", "never");

  what = g_strdup_printf ("%s %ux%u kernel, border=%s, %ux%u frame, "
      "stride %" G_GSIZE_FORMAT, kernel_names[kind], kw, kh,
      ref_border_nick (border), w, h, stride);
  gcvt_run_and_check (e, in_fmt, out_fmt, img, &p, stride, offset, what);
  gcvt_element_unref (e);
  g_free (what);
  ref_image_free (img);
  ref_kernel_free (k);
}

/* loop index: the format */
GST_START_TEST (test_wide_formats_borders)
{
  const RefFormat fmt = (RefFormat) __i__;
  gchar *name = g_strdup_printf ("wide_formats_borders %s",
      ref_format_info (fmt)->name);
  GRand *r = ref_rand_new (name);

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (KernelKind kind = 0; kind < N_KERNELS; kind++) {
      if (gcvt_quick () && (b + kind) % 2)
        continue;
      run_wide_case (r, fmt, fmt, b, kind, wide_width (r, fmt),
          g_rand_int_range (r, 12, 40), 0, 0);
    }
  /* the gray formats also convert into each other */
  if (fmt == REF_GRAY8 || fmt == REF_GRAY32F)
    for (RefBorder b = 0; b < REF_N_BORDERS; b++)
      run_wide_case (r, fmt, fmt == REF_GRAY8 ? REF_GRAY32F : REF_GRAY8, b,
          (KernelKind) (b % N_KERNELS), wide_width (r, fmt),
          g_rand_int_range (r, 12, 40), 0, 0);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Rows `stride` bytes apart from `offset` on (a GstVideoMeta says so): the
 * float path reads such rows in place where it needs no border. */
GST_START_TEST (test_wide_strides)
{
  static const RefFormat fmts[] = { REF_GRAY32F, REF_GRAY8, REF_BGRA };
  GRand *r = ref_rand_new ("wide_strides");

  for (guint f = 0; f < G_N_ELEMENTS (fmts); f++)
    for (KernelKind kind = 0; kind < N_KERNELS; kind++) {
      const guint w = wide_width (r, fmts[f]);
      const gsize px = ref_format_info (fmts[f])->pixel_bytes;
      run_wide_case (r, fmts[f], fmts[f], (RefBorder) (kind + f) %
          REF_N_BORDERS, kind, w, 17, w * px + 4 * g_rand_int_range (r, 1,
              40), 4 * g_rand_int_range (r, 0, 16));
    }
  g_rand_free (r);
}

GST_END_TEST;

/* Kernels wider than a strip: tall kernels make the strips narrow (their
 * rows must fit the cache), and these are wider than that. */
GST_START_TEST (test_kernel_wider_than_strip)
{
  static const struct
  {
    RefFormat fmt;
    guint w, h, kw, kh;
    gboolean rank1;
  } cases[] = {
    {REF_RGBA, 300, 20, 101, 31, FALSE},
    {REF_RGBA, 300, 20, 101, 31, TRUE},
    {REF_GRAY32F, 700, 14, 301, 31, FALSE},
    {REF_GRAY8, 700, 14, 301, 31, TRUE},
  };
  GRand *r = ref_rand_new ("kernel_wider_than_strip");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    RefKernel *k = cases[c].rank1 ? blur_kernel (r, cases[c].kw, cases[c].kh)
        : gcvt_random_kernel (r, cases[c].kw, cases[c].kh, FALSE);
    RefImage *img = gcvt_random_image (r, cases[c].fmt, cases[c].w,
        cases[c].h, -1.0, 1.0);
    GstElement *e = gcvt_element_new ();
    RefParams p;
    gchar *what = g_strdup_printf ("%ux%u kernel on %ux%u %s", cases[c].kw,
        cases[c].kh, cases[c].w, cases[c].h,
        ref_format_info (cases[c].fmt)->name);

    if (gcvt_quick () && c % 2) {
      g_free (what);
      gcvt_element_unref (e);
      ref_image_free (img);
      ref_kernel_free (k);
      continue;
    }
    ref_params_init (&p, k);
    p.border = (RefBorder) (c % REF_N_BORDERS);
    p.border_value = 100.0;
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    p.anchor_x = g_rand_int_range (r, 0, cases[c].kw);
    gcvt_set_params (e, &p);
    gcvt_run_and_check (e, cases[c].fmt, cases[c].fmt, img, &p, 0, 0, what);
    gcvt_element_unref (e);
    g_free (what);
    ref_image_free (img);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* A running element whose kernel grows (the engine's scratch with it),
 * shrinks (the scratch is kept) and moves between the fixed-point, float
 * separable and direct paths, every frame checked. */
GST_START_TEST (test_filter_changes)
{
  static const struct
  {
    guint kw, kh;
    KernelKind kind;
  } steps[] = {
    {3, 3, KERNEL_BLUR}, {15, 13, KERNEL_BLUR}, {5, 5, KERNEL_SIGNED},
    {9, 11, KERNEL_DENSE}, {3, 5, KERNEL_BLUR}, {1, 1, KERNEL_DENSE},
    {7, 7, KERNEL_BLUR},
  };
  static const RefFormat fmts[] = { REF_RGBA, REF_GRAY8, REF_GRAY32F };
  GRand *r = ref_rand_new ("filter_changes");

  for (guint f = 0; f < G_N_ELEMENTS (fmts); f++) {
    const guint w = wide_width (r, fmts[f]), h = 21;
    RefImage *img = gcvt_random_image (r, fmts[f], w, h, -1.0, 1.0);
    GstElement *e = gcvt_element_new ();
    GstHarness *hn = gcvt_harness_new (e);

    gcvt_set_caps (hn, fmts[f], fmts[f], w, h);
    for (guint s = 0; s < G_N_ELEMENTS (steps); s++) {
      RefKernel *k = steps[s].kind == KERNEL_BLUR ? blur_kernel (r,
          steps[s].kw, steps[s].kh) : gcvt_random_kernel (r, steps[s].kw,
          steps[s].kh, steps[s].kind == KERNEL_SIGNED);
      RefParams p;
      GstBuffer *out;
      gchar *what = g_strdup_printf ("step %u: %s %ux%u on %s", s,
          kernel_names[steps[s].kind], steps[s].kw, steps[s].kh,
          ref_format_info (fmts[f])->name);

      ref_params_init (&p, k);
      p.border = (RefBorder) ((s + f) % REF_N_BORDERS);
      p.border_value = 50.0;
      p.scale = 1.0 / ref_kernel_sum_abs (k);
      gcvt_set_params (e, &p);
      out = gcvt_process (hn, gcvt_buffer_new (img, fmts[f], 0, 0, FALSE));
      gcvt_assert_frame (out, fmts[f], fmts[f], img, &p, what);
      gst_buffer_unref (out);
      g_free (what);
      ref_kernel_free (k);
    }
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
    gst_harness_teardown (hn);
    gcvt_element_unref (e);
    ref_image_free (img);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* --- scratch memory that cannot be had ------------------------------------ */

/* A 1023x1023 kernel with two non-zero taps, run direct: on RGBA frames
 * the direct path keeps 1023 input rows of a strip per worker, about 18 MB
 * each, while the kernel's own tables stay small. */
#define BIG 1023

static void
big_kernel_desc (GcvFilterDesc * d, gfloat * k)
{
  memset (k, 0, sizeof (gfloat) * BIG * BIG);
  k[0] = 0.5f;
  k[BIG * BIG - 1] = 0.5f;
  gcv_filter_desc_init (d);
  d->kernel = k;
  d->n_kernel = BIG * BIG;
  d->kernel_width = d->kernel_height = BIG;
  d->separable = GCV_SEPARABLE_NEVER;
}

/* Limits the address space to what it is now plus `headroom` bytes, so
 * that small allocations still succeed and large ones fail; FALSE (and no
 * limit) where such a limit does not work here (not Linux, or under a
 * tool that keeps memory of its own, such as valgrind). */
static gboolean
limit_memory (gsize headroom, struct rlimit *saved)
{
#ifdef __linux__
  gchar *status = NULL, *line;
  guint64 kb = 0;
  struct rlimit lim;
  gpointer probe;

  if (under_valgrind ())
    return FALSE;
  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return FALSE;
  line = strstr (status, "VmSize:");
  if (line)
    kb = g_ascii_strtoull (line + 7, NULL, 10);
  g_free (status);
  if (kb == 0 || getrlimit (RLIMIT_AS, saved) != 0)
    return FALSE;
  lim = *saved;
  lim.rlim_cur = kb * 1024 + headroom;
  if (saved->rlim_max != RLIM_INFINITY && lim.rlim_cur > saved->rlim_max)
    return FALSE;
  if (setrlimit (RLIMIT_AS, &lim) != 0)
    return FALSE;
  /* the limit has to bite */
  probe = g_try_malloc (64 * 1024 * 1024);
  if (probe) {
    g_free (probe);
    setrlimit (RLIMIT_AS, saved);
    return FALSE;
  }
  return TRUE;
#else
  return FALSE;
#endif
}

static void
unlimit_memory (const struct rlimit *saved)
{
  fail_unless (setrlimit (RLIMIT_AS, saved) == 0);
}

/* Room for the plan's copy of the kernel (4 MB) and everything small, not
 * for the scratch of RGBA frames. */
#define HEADROOM (12 * 1024 * 1024)

/* The engine: a plan whose scratch cannot be had is an error that says so
 * and how much, and a plan whose new filter cannot get its scratch keeps
 * filtering with the filter it had. */
/* An engine made where no thread stack can be had (8 MB each, against a
 * few MB of headroom) works with the workers it got, down to the calling
 * thread alone, and gives the pixels of an engine with all of them. */
GST_START_TEST (test_engine_without_threads)
{
  enum { W = 97, H = 61 };
  const gfloat taps[25] = { 1, 4, 6, 4, 1, 4, 16, 24, 16, 4, 6, 24, 36, 24,
    6, 4, 16, 24, 16, 4, 1, 4, 6, 4, 1
  };
  GcvFilterDesc d;
  GcvFilter *f;
  GcvEngine *full, *bare;
  GcvGeometry g = { GCV_FORMAT_RGBA, GCV_FORMAT_RGBA, W, H };
  GcvPlan *p_full, *p_bare;
  GError *err = NULL;
  struct rlimit saved;
  static guint8 src[W * H * 4], a[W * H * 4], b[W * H * 4];
  GcvImage in = { src, W * 4, FALSE }, out_a = { a, W * 4, FALSE },
      out_b = { b, W * 4, FALSE };

  gcv_filter_desc_init (&d);
  d.kernel = taps;
  d.n_kernel = 25;
  d.kernel_width = d.kernel_height = 5;
  d.normalize = TRUE;
  f = gcv_filter_new (&d, &err);
  fail_unless (f != NULL, "%s", err ? err->message : "");
  for (guint i = 0; i < W * H * 4; i++)
    src[i] = (guint8) ((i * 131) % 253);
  full = gcv_engine_new (GCV_BACKEND_CPU, -1, &err);
  fail_unless (full != NULL);
  if (!limit_memory (4 * 1024 * 1024, &saved)) {
    g_print ("engine_without_threads: an address-space limit does not "
        "work here, skipped\n");
    gcv_engine_free (full);
    gcv_filter_free (f);
    return;
  }
  bare = gcv_engine_new (GCV_BACKEND_CPU, -1, &err);
  unlimit_memory (&saved);
  fail_unless (bare != NULL, "%s", err ? err->message : "");
  g_print ("engine_without_threads: %s, against %s\n",
      gcv_engine_describe (bare), gcv_engine_describe (full));
  p_full = gcv_plan_new (full, &g, f, GCV_FAMILY_AUTO, 1, &err);
  p_bare = gcv_plan_new (bare, &g, f, GCV_FAMILY_AUTO, 1, &err);
  fail_unless (p_full && p_bare);
  fail_unless (gcv_plan_run (p_full, &in, &out_a, &err));
  fail_unless (gcv_plan_run (p_bare, &in, &out_b, &err));
  fail_unless (memcmp (a, b, sizeof (a)) == 0);
  gcv_plan_free (p_full);
  gcv_plan_free (p_bare);
  gcv_engine_free (full);
  gcv_engine_free (bare);
  gcv_filter_free (f);
}

GST_END_TEST;

GST_START_TEST (test_scratch_out_of_memory_engine)
{
  enum { W = 64, H = 16 };
  gfloat *k = g_new (gfloat, BIG * BIG);
  const gfloat small[9] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };
  GcvFilterDesc d;
  GcvFilter *big, *blur;
  GcvEngine *engine;
  GcvGeometry g = { GCV_FORMAT_RGBA, GCV_FORMAT_RGBA, W, H };
  GcvPlan *plan;
  GError *err = NULL;
  struct rlimit saved;
  guint8 src[W * H * 4], dst[W * H * 4];
  GcvImage in = { src, W * 4, FALSE }, out = { dst, W * 4, FALSE };

  big_kernel_desc (&d, k);
  big = gcv_filter_new (&d, &err);
  fail_unless (big != NULL, "%s", err ? err->message : "");
  gcv_filter_desc_init (&d);
  d.kernel = small;
  d.n_kernel = 9;
  d.normalize = TRUE;
  blur = gcv_filter_new (&d, &err);
  fail_unless (blur != NULL);
  engine = gcv_engine_new (GCV_BACKEND_CPU, -1, &err);
  fail_unless (engine != NULL);
  for (guint i = 0; i < W * H * 4; i++)
    src[i] = (guint8) ((i * 37) % 251);

  if (!limit_memory (HEADROOM, &saved)) {
    g_print ("scratch_out_of_memory_engine: an address-space limit does not "
        "work here, skipped\n");
    goto out;
  }
  plan = gcv_plan_new (engine, &g, big, GCV_FAMILY_AUTO, 1, &err);
  unlimit_memory (&saved);
  fail_unless (plan == NULL, "a plan with scratch beyond the limit");
  fail_unless (g_error_matches (err, GCV_ERROR, GCV_ERROR_DEVICE), "%s",
      err ? err->message : "no error");
  fail_unless (strstr (err->message, "could not allocate") != NULL
      && strstr (err->message, "bytes") != NULL
      && strstr (err->message, "scratch") != NULL, "message: %s",
      err->message);
  g_print ("scratch_out_of_memory_engine: %s\n", err->message);
  g_clear_error (&err);

  /* the same for a running plan, which keeps its 3x3 blur */
  plan = gcv_plan_new (engine, &g, blur, GCV_FAMILY_AUTO, 1, &err);
  fail_unless (plan != NULL);
  fail_unless (limit_memory (HEADROOM, &saved));
  fail_if (gcv_plan_set_filter (plan, big, GCV_FAMILY_AUTO, &err));
  unlimit_memory (&saved);
  fail_unless (g_error_matches (err, GCV_ERROR, GCV_ERROR_DEVICE));
  g_clear_error (&err);
  fail_unless (gcv_plan_run (plan, &in, &out, &err));
  for (guint y = 0; y < H; y++)
    for (guint x = 0; x < W; x++)
      for (guint c = 0; c < 4; c++) {
        /* the blur with the replicate border, by hand; alpha passes */
        gdouble sum = 0.0;
        guint8 got = dst[(y * W + x) * 4 + c];
        for (gint j = -1; j <= 1; j++)
          for (gint i = -1; i <= 1; i++) {
            guint sx = CLAMP ((gint) x + i, 0, W - 1),
                sy = CLAMP ((gint) y + j, 0, H - 1);
            sum += small[(j + 1) * 3 + i + 1] / 16.0
                * src[(sy * W + sx) * 4 + c];
          }
        if (c == 3)
          sum = src[(y * W + x) * 4 + c];
        fail_unless (fabs (got - sum) <= 1.0, "(%u,%u) channel %u: %u, "
            "expected %g", x, y, c, got, sum);
      }
  gcv_plan_free (plan);

out:
  gcv_engine_free (engine);
  gcv_filter_free (big);
  gcv_filter_free (blur);
  g_free (k);
}

GST_END_TEST;

/* The element: an error on the bus naming the allocation, not a crash. */
GST_START_TEST (test_scratch_out_of_memory_element)
{
  gdouble *k = g_new0 (gdouble, BIG * BIG);
  GstElement *e = gcvt_element_new ();
  GstHarness *h;
  GstMessage *msg;
  struct rlimit saved;
  GError *gerr = NULL;
  gchar *debug = NULL;
  gboolean limited;

  k[0] = k[BIG * BIG - 1] = 0.5;
  g_object_set (e, "kernel-width", BIG, "kernel-height", BIG, NULL);
  gcvt_set_floats (e, "kernel", k, BIG * BIG);
  gst_util_set_object_arg (G_OBJECT (e), "separable", "never");
  h = gcvt_harness_new (e);     /* started: the engine and filter exist */
  limited = limit_memory (HEADROOM, &saved);
  if (!limited) {
    g_print ("scratch_out_of_memory_element: an address-space limit does not "
        "work here, skipped\n");
  } else {
    gcvt_set_caps (h, REF_RGBA, REF_RGBA, 64, 16);
    unlimit_memory (&saved);
    msg = gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR);
    fail_unless (msg != NULL, "no error on the bus");
    gst_message_parse_error (msg, &gerr, &debug);
    g_print ("scratch_out_of_memory_element: %s\n", gerr->message);
    fail_unless (strstr (gerr->message, "could not allocate") != NULL,
        "message: %s", gerr->message);
    g_error_free (gerr);
    g_free (debug);
    gcvt_assert_message (msg, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        NULL);
  }
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  g_free (k);
}

GST_END_TEST;

/* --- frames cut short by a flush or a stop ------------------------------- */

/* The engine: while interrupted, frames of its plans (NV12's per plane
 * too) are refused as GCV_ERROR_INTERRUPTED and the plans stay usable;
 * once it is off they run as before. */
GST_START_TEST (test_interrupt_engine)
{
  enum { W = 64, H = 16 };
  static const GcvFormat formats[] = { GCV_FORMAT_RGBA, GCV_FORMAT_NV12 };
  const gfloat small[9] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };
  GcvFilterDesc d;
  GcvFilter *blur;
  GcvEngine *engine;
  GError *err = NULL;
  guint8 src[W * H * 4], before[W * H * 4], after[W * H * 4];

  gcv_filter_desc_init (&d);
  d.kernel = small;
  d.n_kernel = 9;
  d.normalize = TRUE;
  d.planes = GCV_PLANES_ALL;
  blur = gcv_filter_new (&d, &err);
  fail_unless (blur != NULL);
  engine = gcv_engine_new (GCV_BACKEND_CPU, -1, &err);
  fail_unless (engine != NULL);
  for (guint i = 0; i < sizeof (src); i++)
    src[i] = (guint8) ((i * 37) % 251);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    GcvGeometry g = { formats[f], formats[f], W, H };
    const gsize stride = formats[f] == GCV_FORMAT_RGBA ? W * 4 : W;
    GcvImage in = { src, stride }, out = { before, stride };
    GcvPlan *plan = gcv_plan_new (engine, &g, blur, GCV_FAMILY_AUTO, 1, &err);

    fail_unless (plan != NULL, "%s", err ? err->message : "");
    if (formats[f] == GCV_FORMAT_NV12) {
      in.chroma[0] = src + W * H;
      in.chroma_stride[0] = W;
    }
    out.chroma[0] = in.chroma[0] ? before + W * H : NULL;
    out.chroma_stride[0] = in.chroma_stride[0];
    fail_unless (gcv_plan_run (plan, &in, &out, &err));

    gcv_engine_interrupt (engine, TRUE);
    fail_if (gcv_plan_run (plan, &in, &out, &err));
    fail_unless (g_error_matches (err, GCV_ERROR, GCV_ERROR_INTERRUPTED),
        "%s", err ? err->message : "no error");
    g_clear_error (&err);
    gcv_engine_interrupt (engine, FALSE);

    out.data = after;
    out.chroma[0] = in.chroma[0] ? after + W * H : NULL;
    fail_unless (gcv_plan_run (plan, &in, &out, &err), "%s",
        err ? err->message : "");
    fail_unless (memcmp (before, after, gcv_frame_size (formats[f], W, H,
                stride)) == 0, "%s: the frame after the interrupt differs",
        gcv_format_name (formats[f]));
    gcv_plan_free (plan);
  }
  gcv_engine_free (engine);
  gcv_filter_free (blur);
}

GST_END_TEST;

/* RGBA 1080p through a box blur run direct (separable=never: every tap
 * read), about 1e11 multiply-adds a processor times `scale`: seconds on any
 * machine, where a row of a band takes milliseconds. */
#define LONG_W 1920
#define LONG_H 1080

static guint
long_kernel_size (guint scale)
{
  gdouble per_processor = under_valgrind ()? 2e9 : 1e11;
  gdouble n = sqrt (per_processor * scale * g_get_num_processors ()
      / (LONG_W * LONG_H * 4.0));

  return MIN ((guint) n | 1, GCV_MAX_KERNEL_SIZE);
}

/* How long a frame is given to get under way, and how long a flush or a
 * stop may take to end it (docs/pipeline.md asks for 100 ms; the rest is
 * slack for a loaded machine, and for valgrind). */
static gint64
wait_us (void)
{
  return under_valgrind ()? 3 * G_USEC_PER_SEC : 300 * 1000;
}

static gint64
limit_us (void)
{
  return under_valgrind ()? 30 * G_USEC_PER_SEC : G_USEC_PER_SEC;
}

typedef struct {
  GstHarness *h;
  GstBuffer *buf;
  GstFlowReturn ret;
  gint done;
  gint64 ended;                 /* g_get_monotonic_time () at the end */
} Push;

static gpointer
push_main (gpointer data)
{
  Push *p = data;

  p->ret = gst_harness_push (p->h, g_steal_pointer (&p->buf));
  p->ended = g_get_monotonic_time ();
  g_atomic_int_set (&p->done, TRUE);
  return NULL;
}

/* Pushes `img` from a thread of its own and returns once the frame is
 * under way, the thread still in it. A frame that ends within the wait
 * sizes the next from its time (a direct box costs n^2 a sample) to take
 * ten waits, so that the one returned is seldom about to end when the
 * caller flushes or stops it. `*n` is the kernel size to start from (0:
 * a first guess), and the one under way on return. */
static GThread *
start_long_frame (GstElement * e, GstHarness * h, const RefImage * img,
    Push * push, guint * size)
{
  guint n = *size ? *size : long_kernel_size (1);

  for (;;) {
    GThread *t;
    gint64 t0;
    gdouble grow;

    g_object_set (e, "size", n, NULL);
    push->h = h;
    push->buf = gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE);
    push->done = FALSE;
    t0 = g_get_monotonic_time ();
    t = g_thread_new ("push", push_main, push);
    g_usleep (wait_us ());
    if (!g_atomic_int_get (&push->done)) {
      g_print ("a %ux%u box on %ux%u RGBA, run direct, under way\n", n, n,
          LONG_W, LONG_H);
      *size = n;
      return t;
    }
    g_thread_join (t);
    fail_unless_equals_int (push->ret, GST_FLOW_OK);
    fail_unless (n < GCV_MAX_KERNEL_SIZE, "a frame with a %ux%u kernel took "
        "less than %" G_GINT64_FORMAT " ms", n, n, wait_us () / 1000);
    gst_buffer_unref (gst_harness_pull (h));
    grow = sqrt (10.0 * wait_us () / MAX (push->ended - t0, 1000));
    n = MIN ((guint) (n * MAX (grow, 2.0)) | 1, GCV_MAX_KERNEL_SIZE);
  }
}

/* An element on the CPU with a box run direct, started on LONG_W x LONG_H
 * RGBA. */
static GstHarness *
long_frame_harness (GstElement ** e)
{
  GstHarness *h;

  *e = gcvt_element_new ();
  gst_util_set_object_arg (G_OBJECT (*e), "filter", "box");
  gst_util_set_object_arg (G_OBJECT (*e), "separable", "never");
  h = gcvt_harness_new (*e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, LONG_W, LONG_H);
  return h;
}

/* A frame under way may still end on its own just before the flush or the
 * stop that was to end it (a loaded machine, valgrind), and return OK:
 * then it is tried again with a kernel twice the size, this many times at
 * most. An interrupt that does not work returns OK every time. */
#define LONG_FRAME_TRIES 3

/* The kernel size to try next, the raced frame's output dropped. */
static guint
try_again (GstHarness * h, guint n)
{
  GstBuffer *out;

  while ((out = gst_harness_try_pull (h)))
    gst_buffer_unref (out);
  return MIN (n * 2 | 1, GCV_MAX_KERNEL_SIZE);
}

/* The next frame, with a 5x5 box, against the reference. */
static void
check_next_frame (GstElement * e, GstHarness * h, const RefImage * img,
    const gchar * what)
{
  RefKernel *k = ref_builtin ("box", 5, 1.0);
  RefParams p;
  GstBuffer *out;

  ref_params_init (&p, k);
  g_object_set (e, "size", 5, NULL);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE));
  gcvt_assert_frame (out, REF_RGBA, REF_RGBA, img, &p, what);
  gst_buffer_unref (out);
  ref_kernel_free (k);
}

/* FLUSH_START ends a frame that takes seconds within the limit: the push
 * returns FLUSHING, nothing is posted, and after FLUSH_STOP the next frame
 * is right. */
GST_START_TEST (test_flush_interrupts_frame)
{
  GRand *r = ref_rand_new ("flush_interrupts_frame");
  RefImage *img = gcvt_random_image (r, REF_RGBA, LONG_W, LONG_H, 0, 0);
  GstElement *e;
  GstHarness *h = long_frame_harness (&e);
  Push push;
  GstSegment seg;
  guint n = 0;

  for (guint tries = 1;; tries++) {
    GThread *t = start_long_frame (e, h, img, &push, &n);
    gint64 t0 = g_get_monotonic_time (), took;

    fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
    g_thread_join (t);
    took = g_get_monotonic_time () - t0;
    g_print ("flush_interrupts_frame: the frame ended %.1f ms after "
        "FLUSH_START\n", took / 1e3);
    fail_unless (took < limit_us (), "the frame ended %.1f ms after "
        "FLUSH_START", took / 1e3);
    fail_unless (gst_harness_push_event (h,
            gst_event_new_flush_stop (TRUE)));
    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (h, gst_event_new_segment (&seg)));
    if (push.ret != GST_FLOW_OK || tries == LONG_FRAME_TRIES)
      break;
    g_print ("the frame ended on its own before FLUSH_START: again\n");
    n = try_again (h, n);
  }
  fail_unless_equals_int (push.ret, GST_FLOW_FLUSHING);
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
      "a flush posted an error");
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);

  check_next_frame (e, h, img, "the frame after FLUSH_STOP");
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* set_state(NULL) ends a frame that takes seconds within the limit, with
 * no error; started again, the element filters the next frame right. */
GST_START_TEST (test_stop_interrupts_frame)
{
  GRand *r = ref_rand_new ("stop_interrupts_frame");
  RefImage *img = gcvt_random_image (r, REF_RGBA, LONG_W, LONG_H, 0, 0);
  GstElement *e;
  GstHarness *h = long_frame_harness (&e);
  Push push;
  guint n = 0;

  for (guint tries = 1;; tries++) {
    GThread *t = start_long_frame (e, h, img, &push, &n);
    gint64 t0 = g_get_monotonic_time (), took;

    fail_unless_equals_int (gst_element_set_state (e, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
    took = g_get_monotonic_time () - t0;
    g_thread_join (t);
    g_print ("stop_interrupts_frame: set_state(NULL) took %.1f ms\n",
        took / 1e3);
    fail_unless (took < limit_us (), "set_state(NULL) took %.1f ms",
        took / 1e3);
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
        "a stop posted an error");

    fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PLAYING),
        GST_STATE_CHANGE_SUCCESS);
    fail_unless (gst_harness_push_event (h,
            gst_event_new_stream_start ("restarted")));
    gcvt_set_caps (h, REF_RGBA, REF_RGBA, LONG_W, LONG_H);
    if (push.ret != GST_FLOW_OK || tries == LONG_FRAME_TRIES)
      break;
    g_print ("the frame ended on its own before the stop: again\n");
    n = try_again (h, n);
  }
  fail_unless_equals_int (push.ret, GST_FLOW_FLUSHING);
  check_next_frame (e, h, img, "the frame after a restart");
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
cpu_strips_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-cpu-strips");
  TCase *tc = tcase_create ("cpu-strips");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_loop_test (tc, test_wide_formats_borders, 0, REF_N_FORMATS);
  tcase_add_test (tc, test_wide_strides);
  tcase_add_test (tc, test_kernel_wider_than_strip);
  tcase_add_test (tc, test_filter_changes);
  tcase_add_test (tc, test_engine_without_threads);
  tcase_add_test (tc, test_scratch_out_of_memory_engine);
  tcase_add_test (tc, test_scratch_out_of_memory_element);
  tcase_add_test (tc, test_interrupt_engine);
  tcase_add_test (tc, test_flush_interrupts_frame);
  tcase_add_test (tc, test_stop_interrupts_frame);
  return s;
}

int
main (int argc, char **argv)
{
  gcvt_init (&argc, &argv);
  /* strips, bands and scratch are the CPU engine's; the CUDA suite runs
   * large frames in test-compute */
  gcvt_skip_unless (!gcvt_on_cuda (),
      "the CPU engine's strips need backend=cpu");
  return gcvt_run (cpu_strips_suite (), "cpu_strips");
}
