/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NV12 and I420 (docs/formats.md, NV12 and I420): the luma plane filtered and
 * the chroma planes copied (planes=luma) or filtered at their own resolution
 * (planes=all), the conversions to GRAY8 and GRAY32F, every border, kernels
 * larger than a plane, GstVideoMeta layouts, crops (at odd positions too, and
 * videocrop's own), frames in flight and a change of `planes` mid-stream.
 * Checked against the double-precision reference of tests/reference.c. */
#include "common.h"

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

/* --- planar frames and buffers ------------------------------------------ */

typedef struct
{
  GstVideoFormat format;        /* NV12 or I420 */
  guint w, h;
  RefImage *p[3];               /* Y, U, V (ref_planes_new()) */
} Frame;

static const gchar *const plane_names[3] = { "Y", "U", "V" };

static Frame *
frame_new (GstVideoFormat format, guint w, guint h)
{
  Frame *f = g_new0 (Frame, 1);
  f->format = format;
  f->w = w;
  f->h = h;
  ref_planes_new (f->p, w, h);
  return f;
}

static void
frame_free (Frame * f)
{
  if (!f)
    return;
  ref_planes_free (f->p);
  g_free (f);
}

static Frame *
random_frame (GRand * r, GstVideoFormat format, guint w, guint h)
{
  Frame *f = frame_new (format, w, h);
  for (guint c = 0; c < 3; c++)
    for (gsize i = 0; i < (gsize) f->p[c]->width * f->p[c]->height; i++)
      f->p[c]->v[i] = g_rand_int_range (r, 0, 256);
  return f;
}

/* The region (x, y, w, h) of `full`, chroma at (x/2, y/2). */
static Frame *
sub_frame (const Frame * full, guint x0, guint y0, guint w, guint h)
{
  Frame *f = g_new0 (Frame, 1);

  f->format = full->format;
  f->w = w;
  f->h = h;
  ref_planes_crop (f->p, full->p, x0, y0, w, h);
  return f;
}

static const gchar *
format_name (GstVideoFormat format)
{
  return gst_video_format_to_string (format);
}

/* Memory planes: NV12 has Y and interleaved UV, I420 Y, U and V. */
static guint
n_memory_planes (GstVideoFormat format)
{
  return format == GST_VIDEO_FORMAT_NV12 ? 2 : 3;
}

/* Bytes of one row of memory plane `c`. */
static gsize
row_bytes (const Frame * f, guint c)
{
  if (c == 0)
    return f->w;
  return f->format == GST_VIDEO_FORMAT_NV12 ? 2 * ref_chroma_size (f->w) :
      ref_chroma_size (f->w);
}

static guint
memory_rows (const Frame * f, guint c)
{
  return c == 0 ? f->h : ref_chroma_size (f->h);
}

typedef struct
{
  gsize offset[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
  gsize size;
} Layout;

/* GStreamer's own layout of the format (gst_video_info_set_format) */
static Layout
default_layout (GstVideoFormat format, guint w, guint h)
{
  GstVideoInfo info;
  Layout l = { {0}, {0}, 0 };

  fail_unless (gst_video_info_set_format (&info, format, w, h));
  for (guint c = 0; c < GST_VIDEO_INFO_N_PLANES (&info); c++) {
    l.offset[c] = GST_VIDEO_INFO_PLANE_OFFSET (&info, c);
    l.stride[c] = GST_VIDEO_INFO_PLANE_STRIDE (&info, c);
  }
  l.size = GST_VIDEO_INFO_SIZE (&info);
  return l;
}

/* Another layout: memory planes in the order given, `gap` bytes before
 * each, rows `pad[c]` bytes longer than they need. */
static Layout
custom_layout (const Frame * f, const guint * order, const guint * pad,
    guint gap)
{
  Layout l = { {0}, {0}, 0 };
  gsize pos = 0;

  for (guint n = 0; n < n_memory_planes (f->format); n++) {
    guint c = order[n];
    g_assert (c < n_memory_planes (f->format));
    pos += gap;
    l.offset[c] = pos;
    l.stride[c] = row_bytes (f, c) + pad[c];
    pos += (gsize) l.stride[c] * memory_rows (f, c);
  }
  l.size = pos + gap;
  return l;
}

/* The frame in a buffer of layout `l` (NULL: the default), with a
 * GstVideoMeta when `meta`; the padding holds garbage. */
static GstBuffer *
frame_buffer (const Frame * f, const Layout * l, gboolean meta)
{
  Layout def = default_layout (f->format, f->w, f->h);
  GstBuffer *buf;
  GstMapInfo map;

  if (!l)
    l = &def;
  buf = gst_buffer_new_allocate (NULL, l->size, NULL);
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xa5, l->size);
  for (guint y = 0; y < f->h; y++)
    for (guint x = 0; x < f->w; x++)
      map.data[l->offset[0] + (gsize) y * l->stride[0] + x] =
          (guint8) ref_pixel (f->p[0], x, y)[0];
  for (guint y = 0; y < ref_chroma_size (f->h); y++)
    for (guint x = 0; x < ref_chroma_size (f->w); x++) {
      guint8 u = (guint8) ref_pixel (f->p[1], x, y)[0];
      guint8 v = (guint8) ref_pixel (f->p[2], x, y)[0];
      if (f->format == GST_VIDEO_FORMAT_NV12) {
        guint8 *row = map.data + l->offset[1] + (gsize) y * l->stride[1];
        row[2 * x] = u;
        row[2 * x + 1] = v;
      } else {
        map.data[l->offset[1] + (gsize) y * l->stride[1] + x] = u;
        map.data[l->offset[2] + (gsize) y * l->stride[2] + x] = v;
      }
    }
  gst_buffer_unmap (buf, &map);
  if (meta)
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        f->format, f->w, f->h, n_memory_planes (f->format),
        (gsize *) l->offset, (gint *) l->stride);
  return buf;
}

/* --- output and its check ----------------------------------------------- */

typedef enum
{
  OUT_SAME,                     /* the input's format */
  OUT_GRAY8,
  OUT_GRAY32F,
  N_OUTS
} Out;

static const gchar *
out_name (Out out, GstVideoFormat in)
{
  return out == OUT_GRAY8 ? "GRAY8" : out == OUT_GRAY32F ? "GRAY32F" :
      format_name (in);
}

static GstCaps *
caps_new (const gchar * format, guint w, guint h)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING, format,
      "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, "framerate",
      GST_TYPE_FRACTION, 30, 1, NULL);
}

static void
set_caps (GstHarness * h, GstVideoFormat in, Out out, guint w, guint hh)
{
  gst_harness_set_caps (h, caps_new (format_name (in), w, hh),
      caps_new (out_name (out, in), w, hh));
}

/* Reads the output's samples (plane 0 of a GRAY output, all three of
 * NV12/I420) where a downstream element would: at the GstVideoMeta's
 * offsets and strides when there is one, else at the default layout.
 * NV12/I420 output must be of the default layout either way. */
static Frame *
read_output (GstBuffer * out, GstVideoFormat in, Out kind, guint w, guint h)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (out);
  Frame *f = frame_new (in, w, h);
  Layout l;
  GstMapInfo map;
  guint planes = kind == OUT_SAME ? n_memory_planes (in) : 1;

  if (kind == OUT_SAME) {
    l = default_layout (in, w, h);
  } else {
    GstVideoInfo info;
    /* GRAY32F is no GstVideoFormat: rows of w floats */
    memset (&l, 0, sizeof (l));
    if (kind == OUT_GRAY8) {
      fail_unless (gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8,
              w, h));
      l.stride[0] = GST_VIDEO_INFO_PLANE_STRIDE (&info, 0);
    } else {
      l.stride[0] = w * 4;
    }
  }
  if (meta) {
    fail_unless (meta->n_planes == planes, "output meta of %u planes, not %u",
        meta->n_planes, planes);
    for (guint c = 0; c < planes; c++) {
      /* NV12 and I420 go out in GStreamer's default layout */
      if (kind == OUT_SAME)
        fail_unless (meta->offset[c] == l.offset[c]
            && meta->stride[c] == l.stride[c], "output plane %u at offset %"
            G_GSIZE_FORMAT " stride %d, not the default %" G_GSIZE_FORMAT
            " and %d", c, meta->offset[c], meta->stride[c], l.offset[c],
            l.stride[c]);
      l.offset[c] = meta->offset[c];
      l.stride[c] = meta->stride[c];
    }
  }
  fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
  for (guint c = 0; c < planes; c++) {
    gsize row = kind == OUT_GRAY32F ? (gsize) w * 4 : row_bytes (f, c);
    fail_unless (l.stride[c] >= (gint) row, "output plane %u: stride %d",
        c, l.stride[c]);
    fail_unless (map.size >= l.offset[c] + (gsize) l.stride[c] *
        (memory_rows (f, c) - 1) + row, "output of %" G_GSIZE_FORMAT " bytes "
        "is too small for plane %u", map.size, c);
  }
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++) {
      const guint8 *s = map.data + l.offset[0] + (gsize) y * l.stride[0];
      if (kind == OUT_GRAY32F) {
        gfloat v;
        memcpy (&v, s + 4 * x, 4);
        *ref_pixel (f->p[0], x, y) = v;
      } else {
        *ref_pixel (f->p[0], x, y) = s[x];
      }
    }
  if (kind == OUT_SAME)
    for (guint y = 0; y < ref_chroma_size (h); y++)
      for (guint x = 0; x < ref_chroma_size (w); x++) {
        const guint8 *s1 = map.data + l.offset[1] + (gsize) y * l.stride[1];
        if (in == GST_VIDEO_FORMAT_NV12) {
          *ref_pixel (f->p[1], x, y) = s1[2 * x];
          *ref_pixel (f->p[2], x, y) = s1[2 * x + 1];
        } else {
          *ref_pixel (f->p[1], x, y) = s1[x];
          *ref_pixel (f->p[2], x, y) = map.data[l.offset[2] +
              (gsize) y * l.stride[2] + x];
        }
      }
  gst_buffer_unmap (out, &map);
  return f;
}

static gchar *
describe (const RefParams * p, gboolean all)
{
  gchar *params = ref_params_describe (p);
  gchar *s = g_strdup_printf ("%s planes=%s", params, all ? "all" : "luma");

  g_free (params);
  return s;
}

/* got against expect, sample by sample within tol */
static void
compare_plane (const RefImage * got, const RefImage * expect, gdouble tol,
    const gchar * plane, const gchar * what, const RefParams * p,
    gboolean all)
{
  guint bad = 0;
  gchar *first = NULL;

  g_assert (got->width == expect->width && got->height == expect->height);
  for (guint y = 0; y < got->height; y++)
    for (guint x = 0; x < got->width; x++) {
      gdouble g = *ref_pixel (got, x, y), e = *ref_pixel (expect, x, y);
      if (!(fabs (g - e) <= tol)) {
        if (!first)
          first = g_strdup_printf ("(%u,%u): got %.9g, expected %.9g "
              "(+-%.3g)", x, y, g, e, tol);
        bad++;
      }
    }
  if (bad) {
    gchar *desc = describe (p, all);
    ck_abort_msg ("%s: plane %s (%ux%u): %u of %u samples wrong, first at "
        "%s; %s", what, plane, got->width, got->height, bad,
        got->width * got->height, first, desc);
    g_free (desc);
  }
  g_free (first);
}

/* Checks `out`, the element's output for `in`, against the reference
 * (ref_planes_filter()): Y filtered; U and V filtered with planes=all,
 * copied exactly with planes=luma; to GRAY8 the filtered Y, to GRAY32F the
 * unrounded filtered Y / 255. */
static void
check_output (GstBuffer * out, Out kind, const Frame * in,
    const RefParams * p, gboolean all, const gchar * what)
{
  Frame *got = read_output (out, in->format, kind, in->w, in->h);
  gchar *full = g_strdup_printf ("%s: %ux%u %s -> %s", what, in->w, in->h,
      format_name (in->format), out_name (kind, in->format));
  RefImage *expect[3];

  ref_planes_filter (expect, in->p, p, all);
  if (kind == OUT_GRAY32F) {
    RefImage *y = expect[0];
    for (gsize i = 0; i < (gsize) y->width * y->height; i++)
      y->v[i] /= 255.0;
    compare_plane (got->p[0], y, ref_float_tolerance (p, in->p[0],
            1.0 / 255.0), "Y", full, p, all);
  } else {
    for (guint c = 0; c < (kind == OUT_SAME ? 3 : 1); c++) {
      RefImage *e = expect[c];
      if (c == 0 || all) {
        for (gsize i = 0; i < (gsize) e->width * e->height; i++)
          e->v[i] = ref_to_u8 (e->v[i]);
        compare_plane (got->p[c], e, ref_u8_tolerance (p, in->p[c], FALSE),
            plane_names[c], full, p, all);
      } else {
        compare_plane (got->p[c], e, 0.0, plane_names[c], full, p, all);
      }
    }
  }
  ref_planes_free (expect);
  g_free (full);
  frame_free (got);
}

/* --- the element -------------------------------------------------------- */

/* Random settings for 8-bit frames. variant 0: an odd square kernel and
 * the default anchor; 1: an even, non-square kernel with an off-centre
 * anchor in convolution mode; 2: a rank-1 kernel and a negative scale;
 * 3: anything, with a bias that saturates part of the frame. Otherwise
 * scale and bias keep every result inside 0..255, where saturation cannot
 * hide a wrong sum. Sizes go up to max_k. */
static RefKernel *
random_params (GRand * r, RefBorder border, guint variant, guint max_k,
    RefParams * p)
{
  guint kw, kh;
  gdouble pos = 0.0, neg = 0.0, s;
  RefKernel *k;

  switch (variant) {
    case 0:
      kw = kh = 2 * g_rand_int_range (r, 0, (max_k + 1) / 2) + 1;
      break;
    case 1:
      kw = 2 * g_rand_int_range (r, 1, max_k / 2 + 1);
      do
        kh = g_rand_int_range (r, 1, max_k + 1);
      while (kh == kw);
      break;
    default:
      kw = g_rand_int_range (r, 1, max_k + 1);
      kh = g_rand_int_range (r, 1, max_k + 1);
      break;
  }
  k = gcvt_random_kernel (r, kw, kh, gcvt_forced_separable () || variant == 2
      || (variant == 3 && g_rand_boolean (r)));
  ref_params_init (p, k);
  p->border = border;
  if (variant == 1 || (variant == 3 && g_rand_boolean (r))) {
    p->anchor_x = g_rand_int_range (r, 0, kw);
    p->anchor_y = g_rand_int_range (r, 0, kh);
  }
  p->convolution = variant == 1 || (variant == 3 && g_rand_boolean (r));
  for (guint i = 0; i < kw * kh; i++) {
    pos += MAX (0.0, k->k[i]);
    neg += MAX (0.0, -k->k[i]);
  }
  /* the sum over 0..255 inputs lies in [-255 neg, 255 pos] */
  s = g_rand_double_range (r, 0.6, 1.0) / (pos + neg);
  p->scale = s;
  p->bias = 255.0 * neg * s;
  if (variant == 2) {
    p->scale = -s;
    p->bias = 255.0 * pos * s;
  } else if (variant == 3) {
    p->bias += g_rand_double_range (r, -60.0, 60.0);
  }
  if (border == REF_BORDER_CONSTANT)
    p->border_value = g_rand_double_range (r, 0.0, 255.0);
  return k;
}

static void
set_planes (GstElement * e, gboolean all)
{
  gst_util_set_object_arg (G_OBJECT (e), "planes", all ? "all" : "luma");
}

static GstElement *
element_new (const RefParams * p, gboolean all)
{
  GstElement *e = gcvt_element_new ();

  gcvt_set_params (e, p);
  set_planes (e, all);
  return e;
}

/* One frame through a new element: harness, caps, buffer, check. */
static void
run_frame (const Frame * in, Out kind, const RefParams * p, gboolean all,
    const Layout * layout, const gchar * what)
{
  GstElement *e = element_new (p, all);
  GstHarness *h = gcvt_harness_new (e);
  GstBuffer *out;

  set_caps (h, in->format, kind, in->w, in->h);
  out = gcvt_process (h, frame_buffer (in, layout, layout != NULL));
  check_output (out, kind, in, p, all, what);
  gst_buffer_unref (out);
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
      "%s: error on the bus", what);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

static void
run_random (GRand * r, GstVideoFormat format, Out kind, gboolean all,
    RefBorder border, guint variant, guint max_k, guint w, guint h)
{
  RefParams p;
  RefKernel *k = random_params (r, border, variant, max_k, &p);
  Frame *in = random_frame (r, format, w, h);
  gchar *what = g_strdup_printf ("border=%s variant %u", ref_border_nick
      (border), variant);

  run_frame (in, kind, &p, all, NULL, what);
  g_free (what);
  frame_free (in);
  ref_kernel_free (k);
}

static const GstVideoFormat formats[] = {
  GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420
};

static const guint small_sizes[][2] = {
  {1, 1}, {3, 5}, {17, 9}, {33, 31}, {16, 10}
};

/* --- tests -------------------------------------------------------------- */

GST_START_TEST (test_planes_property)
{
  GstElement *e = gcvt_element_new ();
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "planes");
  gchar *s;

  fail_unless (pspec != NULL, "no property planes");
  fail_unless (G_IS_PARAM_SPEC_ENUM (pspec));
  fail_unless (pspec->flags & GST_PARAM_MUTABLE_PLAYING);
  s = gcvt_prop_string (e, "planes");
  fail_unless_equals_string (s, "luma");
  g_free (s);
  set_planes (e, TRUE);
  s = gcvt_prop_string (e, "planes");
  fail_unless_equals_string (s, "all");
  g_free (s);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* loop index: the format, times planes=luma or all. Every border and
 * variant on frames of odd and even sizes, down to 1x1. */
GST_START_TEST (test_to_itself)
{
  const GstVideoFormat format = formats[__i__ / 2];
  const gboolean all = __i__ % 2;
  gchar *name = g_strdup_printf ("to_itself %s planes=%s",
      format_name (format), all ? "all" : "luma");
  GRand *r = ref_rand_new_seeded (name, 1000 + __i__);

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (guint s = 0; s < G_N_ELEMENTS (small_sizes); s++)
      run_random (r, format, OUT_SAME, all, b, (b + s) % 4, 9,
          small_sizes[s][0], small_sizes[s][1]);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* loop index: the format, times GRAY8 or GRAY32F out. `planes` does not
 * matter to these conversions: both values are used. */
GST_START_TEST (test_to_gray)
{
  const GstVideoFormat format = formats[__i__ / 2];
  const Out kind = __i__ % 2 ? OUT_GRAY32F : OUT_GRAY8;
  gchar *name = g_strdup_printf ("to_gray %s -> %s", format_name (format),
      out_name (kind, format));
  GRand *r = ref_rand_new_seeded (name, 2000 + __i__);

  for (RefBorder b = 0; b < REF_N_BORDERS; b++)
    for (guint s = 0; s < G_N_ELEMENTS (small_sizes); s++)
      run_random (r, format, kind, (b + s) % 2, b, (b + s) % 4, 9,
          small_sizes[s][0], small_sizes[s][1]);
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* loop index: the format. Frames of several 128-pixel tiles, chroma planes
 * too, with partial tiles at the right and bottom; planes=all, every
 * border, each of the three outputs. */
GST_START_TEST (test_large_frames)
{
  static const guint sizes[][2] = { {300, 200}, {521, 263} };
  static const guint kernels[][2] = { {3, 3}, {7, 5}, {13, 13}, {1, 9} };
  const GstVideoFormat format = formats[__i__];
  gchar *name = g_strdup_printf ("large_frames %s", format_name (format));
  GRand *r = ref_rand_new_seeded (name, 3000 + __i__);
  const gboolean quick = gcvt_quick ();

  for (RefBorder b = 0; b < REF_N_BORDERS; b++) {
    const guint *size = sizes[(__i__ + b) % 2];
    const guint *ks = kernels[(__i__ + b) % G_N_ELEMENTS (kernels)];
    const Out kind = (Out) ((__i__ + b) % N_OUTS);
    RefKernel *k;
    Frame *in;
    RefParams p;
    gchar *what;

    if (quick && size != sizes[0])
      continue;
    k = gcvt_random_kernel (r, ks[0], ks[1], gcvt_forced_separable ()
        || b % 2);
    ref_params_init (&p, k);
    p.border = b;
    p.border_value = g_rand_double_range (r, 0.0, 255.0);
    /* results in 0..255 */
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    p.bias = 127.5 * (1.0 - ref_kernel_sum (k) * p.scale);
    p.anchor_x = g_rand_int_range (r, 0, k->kw);
    p.anchor_y = g_rand_int_range (r, 0, k->kh);
    p.convolution = g_rand_boolean (r);
    in = random_frame (r, format, size[0], size[1]);
    what = g_strdup_printf ("random %ux%u border=%s", k->kw, k->kh,
        ref_border_nick (b));
    run_frame (in, kind, &p, TRUE, NULL, what);
    g_free (what);
    frame_free (in);
    ref_kernel_free (k);
  }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* loop index: the border. Kernels larger than the luma plane and far
 * larger than the chroma planes (1x1 up to 3x4): the index folds over and
 * over. */
GST_START_TEST (test_kernels_larger_than_planes)
{
  static const guint sizes[][2] = { {1, 1}, {2, 3}, {5, 4}, {3, 7}, {1, 6},
  {6, 1}
  };
  const RefBorder border = (RefBorder) __i__;
  gchar *name = g_strdup_printf ("kernels_larger_than_planes %s",
      ref_border_nick (border));
  GRand *r = ref_rand_new_seeded (name, 4000 + __i__);

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
      guint kw = g_rand_int_range (r, 9, 16), kh = g_rand_int_range (r, 9, 16);
      RefKernel *k = gcvt_random_kernel (r, kw, kh, gcvt_forced_separable ()
          || g_rand_boolean (r));
      Frame *in = random_frame (r, formats[f], sizes[s][0], sizes[s][1]);
      RefParams p;

      ref_params_init (&p, k);
      p.border = border;
      p.border_value = 200.0;
      p.anchor_x = g_rand_int_range (r, 0, kw);
      p.anchor_y = g_rand_int_range (r, 0, kh);
      p.convolution = g_rand_boolean (r);
      p.scale = 1.0 / ref_kernel_sum_abs (k);
      p.bias = 127.5 * (1.0 - ref_kernel_sum (k) * p.scale);
      run_frame (in, (Out) ((s + f) % N_OUTS), &p, TRUE, NULL,
          "kernel larger than the planes");
      frame_free (in);
      ref_kernel_free (k);
    }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* Input planes where a GstVideoMeta says: padded strides (odd ones too),
 * odd offsets, planes in any order in memory. */
GST_START_TEST (test_video_meta_layouts)
{
  static const struct
  {
    GstVideoFormat format;
    guint w, h;
    Out out;
    gboolean all;
    guint order[3], pad[3], gap;
  } cases[] = {
    {GST_VIDEO_FORMAT_NV12, 17, 9, OUT_SAME, TRUE, {1, 0}, {3, 5}, 7},
    {GST_VIDEO_FORMAT_NV12, 33, 31, OUT_SAME, FALSE, {0, 1}, {95, 30}, 64},
    {GST_VIDEO_FORMAT_NV12, 21, 13, OUT_GRAY8, TRUE, {1, 0}, {11, 0}, 3},
    {GST_VIDEO_FORMAT_NV12, 8, 6, OUT_GRAY32F, FALSE, {1, 0}, {0, 1}, 1},
    {GST_VIDEO_FORMAT_I420, 17, 9, OUT_SAME, TRUE, {2, 0, 1}, {1, 2, 3}, 1},
    {GST_VIDEO_FORMAT_I420, 33, 31, OUT_SAME, FALSE, {1, 2, 0}, {0, 9, 0},
        16},
    {GST_VIDEO_FORMAT_I420, 21, 13, OUT_GRAY32F, TRUE, {2, 1, 0}, {5, 5, 5},
        0},
    {GST_VIDEO_FORMAT_I420, 3, 5, OUT_GRAY8, FALSE, {0, 2, 1}, {0, 0, 0}, 0},
    {GST_VIDEO_FORMAT_I420, 1, 1, OUT_SAME, TRUE, {2, 1, 0}, {0, 0, 0}, 0},
  };
  GRand *r = ref_rand_new_seeded ("video_meta_layouts", 5000);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    RefParams p;
    RefKernel *k = random_params (r, (RefBorder) (c % REF_N_BORDERS), c % 4,
        7, &p);
    Frame *in = random_frame (r, cases[c].format, cases[c].w, cases[c].h);
    Layout l = custom_layout (in, cases[c].order, cases[c].pad, cases[c].gap);
    gchar *what = g_strdup_printf ("layout %u: offsets %" G_GSIZE_FORMAT
        " %" G_GSIZE_FORMAT " %" G_GSIZE_FORMAT ", strides %d %d %d", c,
        l.offset[0], l.offset[1], l.offset[2], l.stride[0], l.stride[1],
        l.stride[2]);

    run_frame (in, cases[c].out, &p, cases[c].all, &l, what);
    g_free (what);
    frame_free (in);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* `full` in a buffer of layout `l`, with its GstVideoMeta and a crop meta
 * for (x, y, w, h) */
static GstBuffer *
cropped_buffer (const Frame * full, const Layout * l, guint x, guint y,
    guint w, guint h)
{
  Layout def = default_layout (full->format, full->w, full->h);
  GstBuffer *buf = frame_buffer (full, l ? l : &def, TRUE);
  GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta (buf);

  crop->x = x;
  crop->y = y;
  crop->width = w;
  crop->height = h;
  return buf;
}

/* The crop region is what is filtered (its chroma at x/2, y/2), borders at
 * its edges, and no crop meta is left on the output. */
GST_START_TEST (test_crop)
{
  static const struct
  {
    GstVideoFormat format;
    guint full_w, full_h, x, y, w, h;
    Out out;
    gboolean all, padded;
  } cases[] = {
    {GST_VIDEO_FORMAT_NV12, 40, 30, 4, 2, 32, 26, OUT_SAME, FALSE, FALSE},
    {GST_VIDEO_FORMAT_NV12, 40, 30, 4, 2, 32, 26, OUT_SAME, TRUE, FALSE},
    {GST_VIDEO_FORMAT_NV12, 41, 31, 10, 8, 31, 23, OUT_SAME, TRUE, TRUE},
    {GST_VIDEO_FORMAT_NV12, 40, 30, 0, 6, 17, 9, OUT_GRAY32F, TRUE, FALSE},
    {GST_VIDEO_FORMAT_I420, 40, 30, 6, 4, 31, 25, OUT_SAME, TRUE, FALSE},
    {GST_VIDEO_FORMAT_I420, 40, 30, 6, 4, 31, 25, OUT_SAME, FALSE, TRUE},
    {GST_VIDEO_FORMAT_I420, 37, 29, 2, 2, 35, 27, OUT_GRAY8, TRUE, TRUE},
    {GST_VIDEO_FORMAT_I420, 9, 9, 8, 8, 1, 1, OUT_SAME, TRUE, FALSE},
  };
  /* memory planes in reverse order, rows padded */
  static const guint nv12_order[3] = { 1, 0 }, i420_order[3] = { 2, 1, 0 };
  static const guint pad[3] = { 9, 3, 5 };
  GRand *r = ref_rand_new_seeded ("crop", 6000);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    RefParams p;
    RefKernel *k = random_params (r, (RefBorder) (c % REF_N_BORDERS), c % 4,
        7, &p);
    Frame *full = random_frame (r, cases[c].format, cases[c].full_w,
        cases[c].full_h);
    Frame *sub = sub_frame (full, cases[c].x, cases[c].y, cases[c].w,
        cases[c].h);
    Layout l = custom_layout (full, cases[c].format ==
        GST_VIDEO_FORMAT_NV12 ? nv12_order : i420_order, pad, 3);
    GstElement *e = element_new (&p, cases[c].all);
    GstHarness *h = gcvt_harness_new (e);
    gchar *what = g_strdup_printf ("crop %ux%u at (%u,%u) of %ux%u%s",
        cases[c].w, cases[c].h, cases[c].x, cases[c].y, cases[c].full_w,
        cases[c].full_h, cases[c].padded ? ", padded layout" : "");
    GstBuffer *out;

    set_caps (h, cases[c].format, cases[c].out, cases[c].w, cases[c].h);
    out = gcvt_process (h, cropped_buffer (full, cases[c].padded ? &l : NULL,
            cases[c].x, cases[c].y, cases[c].w, cases[c].h));
    check_output (out, cases[c].out, sub, &p, cases[c].all, what);
    fail_if (gst_buffer_get_video_crop_meta (out) != NULL,
        "%s: the crop meta went on with an output that is already cropped",
        what);
    gst_buffer_unref (out);
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
        "%s: error on the bus", what);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    g_free (what);
    frame_free (sub);
    frame_free (full);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* A crop at any x and y, odd ones included, as videocrop cuts it when it
 * copies: the luma from (x, y), the chroma from the sample that covers it
 * (x/2, y/2 rounded down: sub_frame()), for odd widths and heights too. The
 * chroma is copied (planes=luma) or filtered at its own size (planes=all).
 * _i: the format and planes. */
GST_START_TEST (test_crop_any_origin)
{
  static const guint sizes[][2] = {
    {1, 1}, {2, 3}, {5, 4}, {16, 9}, {17, 12}, {31, 7}, {6, 1}, {1, 8}
  };
  /* memory planes in reverse order, rows padded */
  static const guint nv12_order[3] = { 1, 0 }, i420_order[3] = { 2, 1, 0 };
  static const guint pad[3] = { 9, 3, 5 };
  const GstVideoFormat format = formats[__i__ / 2];
  const gboolean all = __i__ % 2;
  GRand *r = ref_rand_new_seeded ("crop_any_origin", 7000 + __i__);
  guint n = 0;

  for (guint y = 0; y < 4; y++)
    for (guint x = 0; x < 4; x++, n++) {
      const guint *size = sizes[n % G_N_ELEMENTS (sizes)];
      /* 0 to 2 columns and rows of the picture right of and below it */
      const guint full_w = x + size[0] + n % 3;
      const guint full_h = y + size[1] + (n / 3) % 3;
      /* mostly NV12 or I420 out; the conversions read the luma only */
      const Out kind = n % 8 == 5 ? OUT_GRAY8 : n % 8 == 7 ? OUT_GRAY32F :
          OUT_SAME;
      RefParams p;
      RefKernel *k = random_params (r, (RefBorder) (n % REF_N_BORDERS),
          n % 4, 5, &p);
      Frame *full = random_frame (r, format, full_w, full_h);
      Frame *sub = sub_frame (full, x, y, size[0], size[1]);
      Layout l = custom_layout (full, format == GST_VIDEO_FORMAT_NV12 ?
          nv12_order : i420_order, pad, 3);
      GstElement *e = element_new (&p, all);
      GstHarness *h = gcvt_harness_new (e);
      gchar *what = g_strdup_printf ("crop %ux%u at (%u,%u) of %ux%u%s",
          size[0], size[1], x, y, full_w, full_h, n % 2 ? ", padded layout" :
          "");
      GstBuffer *out;

      set_caps (h, format, kind, size[0], size[1]);
      out = gcvt_process (h, cropped_buffer (full, n % 2 ? &l : NULL, x, y,
              size[0], size[1]));
      check_output (out, kind, sub, &p, all, what);
      gst_buffer_unref (out);
      fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL,
          "%s: error on the bus", what);
      gst_harness_teardown (h);
      gcvt_element_unref (e);
      g_free (what);
      frame_free (sub);
      frame_free (full);
      ref_kernel_free (k);
    }
  g_rand_free (r);
}

GST_END_TEST;

/* The samples of an NV12 or I420 buffer of `caps`, read through its
 * GstVideoMeta where it has one, and cut to its GstVideoCropMeta. */
static Frame *
frame_from_buffer (GstBuffer * buf, GstCaps * caps)
{
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (buf);
  GstVideoInfo info;
  GstVideoFrame vf;
  Frame *f, *cut;

  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless (gst_video_frame_map (&vf, &info, buf, GST_MAP_READ));
  f = frame_new (GST_VIDEO_FRAME_FORMAT (&vf), GST_VIDEO_FRAME_WIDTH (&vf),
      GST_VIDEO_FRAME_HEIGHT (&vf));
  for (guint c = 0; c < 3; c++) {
    const guint8 *data = GST_VIDEO_FRAME_COMP_DATA (&vf, c);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE (&vf, c);
    gint step = GST_VIDEO_FRAME_COMP_PSTRIDE (&vf, c);
    for (guint y = 0; y < f->p[c]->height; y++)
      for (guint x = 0; x < f->p[c]->width; x++)
        *ref_pixel (f->p[c], x, y) =
            data[(gsize) y * stride + (gsize) x * step];
  }
  gst_video_frame_unmap (&vf);
  if (!crop)
    return f;
  cut = sub_frame (f, crop->x, crop->y, crop->width, crop->height);
  frame_free (f);
  return cut;
}

/* The crop meta a buffer into gpuconvolve carries */
static GstPadProbeReturn
note_crop (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstVideoCropMeta *crop =
      gst_buffer_get_video_crop_meta (GST_PAD_PROBE_INFO_BUFFER (info));
  guint *where = user_data;

  if (crop) {
    where[0] = crop->x;
    where[1] = crop->y;
  }
  return GST_PAD_PROBE_OK;
}

/* Runs a pipeline with a fakesink "sink" to its end: the last sample the
 * sink got. */
static GstSample *
run_to_sample (GstElement * pipeline)
{
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg;
  GstSample *sample = NULL;

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
  fail_unless (msg != NULL, "the pipeline did not end in 60 s");
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    ck_abort_msg ("%s: %s", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
        err->message);
  }
  gst_message_unref (msg);
  g_object_get (sink, "last-sample", &sample, NULL);
  fail_unless (sample != NULL, "no frame reached the sink");
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  return sample;
}

/* videocrop left=3 top=5 in front of gpuconvolve, the crop that works
 * without it: videocrop sends the crop meta gpuconvolve offers, and the
 * output is the filtered frame that videocrop alone cuts (a copy, to a
 * sink that takes no crop meta). _i: the format and planes. */
GST_START_TEST (test_videocrop_odd)
{
  const GstVideoFormat format = formats[__i__ / 2];
  const gboolean all = __i__ % 2;
  GRand *r = ref_rand_new_seeded ("videocrop_odd", 7100 + __i__);
  const gchar *source = "videotestsrc num-buffers=1 pattern=colors ! "
      "video/x-raw,format=%s,width=64,height=48 ! videocrop left=3 top=5 "
      "right=4 bottom=2 ! %s fakesink name=sink";
  gchar *props, *filter, *line;
  GstElement *pipeline, *f;
  GstPad *pad;
  guint seen[2] = { G_MAXUINT, G_MAXUINT };
  GstSample *sample;
  Frame *cropped;
  RefParams p;
  RefKernel *k;

  /* a rank-1 kernel, or any kernel (rank 1 too under algorithm=separable) */
  k = random_params (r, (RefBorder) (__i__ % REF_N_BORDERS), __i__ % 2 ? 3 :
      2, 7, &p);

  /* videocrop alone: its copy of the region */
  line = g_strdup_printf (source, format_name (format), "");
  pipeline = gcvt_pipeline_new (line);
  g_free (line);
  sample = run_to_sample (pipeline);
  cropped = frame_from_buffer (gst_sample_get_buffer (sample),
      gst_sample_get_caps (sample));
  gst_sample_unref (sample);
  gst_object_unref (pipeline);
  fail_unless (cropped->w == 57 && cropped->h == 41);

  /* and with gpuconvolve after it */
  props = gcvt_launch_props ();
  filter = g_strdup_printf ("gpuconvolve name=f %s !", props);
  line = g_strdup_printf (source, format_name (format), filter);
  pipeline = gcvt_pipeline_new (line);
  f = gst_bin_get_by_name (GST_BIN (pipeline), "f");
  gcvt_set_params (f, &p);
  set_planes (f, all);
  pad = gst_element_get_static_pad (f, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, note_crop, seen, NULL);
  sample = run_to_sample (pipeline);
  fail_unless (seen[0] == 3 && seen[1] == 5, "gpuconvolve got no crop meta "
      "at (3,5) from videocrop (%d,%d): it was not offered", (gint) seen[0],
      (gint) seen[1]);
  check_output (gst_sample_get_buffer (sample), OUT_SAME, cropped, &p, all,
      "videocrop left=3 top=5");

  gst_sample_unref (sample);
  frame_free (cropped);
  gst_object_unref (pad);
  gst_object_unref (f);
  gst_object_unref (pipeline);
  g_free (line);
  g_free (filter);
  g_free (props);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* The identity with the same format in and out is passthrough (the buffer
 * itself goes on), whatever `planes` says; to GRAY8 and GRAY32F it only
 * converts the luma, exactly. */
GST_START_TEST (test_identity)
{
  GRand *r = ref_rand_new_seeded ("identity", 8000);
  RefKernel *delta = ref_kernel_new (3, 3);
  RefParams p;

  delta->k[4] = 1.0;
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint all = 0; all < 2; all++) {
      Frame *in = random_frame (r, formats[f], 17, 9);
      GstElement *e;
      GstHarness *h;
      GstBuffer *buf, *out;

      /* the default kernel, then a 3x3 delta at its centre */
      for (guint kernel = 0; kernel < 2; kernel++) {
        ref_params_init (&p, kernel ? delta : NULL);
        e = gcvt_element_new ();
        if (kernel)
          gcvt_set_params (e, &p);
        set_planes (e, all);
        h = gcvt_harness_new (e);
        set_caps (h, formats[f], OUT_SAME, in->w, in->h);
        buf = frame_buffer (in, NULL, FALSE);
        out = gcvt_process (h, gst_buffer_ref (buf));
        fail_unless (out == buf, "%s planes=%s: the identity did not pass the "
            "buffer through", format_name (formats[f]), all ? "all" : "luma");
        check_output (out, OUT_SAME, in, &p, all, "identity");
        gst_buffer_unref (out);
        gst_buffer_unref (buf);
        gst_harness_teardown (h);
        gcvt_element_unref (e);
      }

      for (Out kind = OUT_GRAY8; kind <= OUT_GRAY32F; kind++) {
        Frame *got;
        e = element_new (&p, all);
        h = gcvt_harness_new (e);
        set_caps (h, formats[f], kind, in->w, in->h);
        out = gcvt_process (h, frame_buffer (in, NULL, FALSE));
        got = read_output (out, formats[f], kind, in->w, in->h);
        for (guint i = 0; i < in->w * in->h; i++) {
          gdouble expect = kind == OUT_GRAY8 ? in->p[0]->v[i] :
              (gfloat) (in->p[0]->v[i] / 255.0);
          fail_unless (fabs (got->p[0]->v[i] - expect) <= 1e-6,
              "%s -> %s: luma %g gave %.9g, expected %.9g",
              format_name (formats[f]), out_name (kind, formats[f]),
              in->p[0]->v[i], got->p[0]->v[i], expect);
        }
        frame_free (got);
        gst_buffer_unref (out);
        gst_harness_teardown (h);
        gcvt_element_unref (e);
      }
      frame_free (in);
    }
  ref_kernel_free (delta);
  g_rand_free (r);
}

GST_END_TEST;

/* 8-bit outputs are rounded to nearest (ties to even) and saturated, in
 * every plane. With a 1x1 kernel these values are exact in float, so the
 * result must be too (truncation or wrapping would show), except through
 * an FFT, whose rounding errors may tip a tie either way. */
GST_START_TEST (test_u8_rounding)
{
  static const gdouble settings[][2] = {
    {1, 0.5}, {1, 0.3}, {1, 0.7}, {1, -0.3}, {0.5, 0}, {1.5, 0.25},
    {-1, 255.5}, {1, 100.5},
  };
  const gdouble tol = g_str_equal (gcvt_algorithm (), "fft") ? 1.0 : 0.0;

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (Out kind = OUT_SAME; kind <= OUT_GRAY8; kind++)
      for (guint c = 0; c < G_N_ELEMENTS (settings); c++) {
        /* every 8-bit value in Y, and in U and V shifted against it */
        Frame *in = frame_new (formats[f], 16, 16);
        GstElement *e;
        GstHarness *h;
        GstBuffer *out;
        Frame *got;
        RefParams p;

        for (guint i = 0; i < 256; i++)
          in->p[0]->v[i] = i;
        for (guint i = 0; i < 64; i++) {
          in->p[1]->v[i] = (4 * i + 1) % 256;
          in->p[2]->v[i] = (4 * i + 3) % 256;
        }
        ref_params_init (&p, NULL);
        p.scale = settings[c][0];
        p.bias = settings[c][1];
        e = element_new (&p, TRUE);
        h = gcvt_harness_new (e);
        set_caps (h, formats[f], kind, 16, 16);
        out = gcvt_process (h, frame_buffer (in, NULL, FALSE));
        got = read_output (out, formats[f], kind, 16, 16);
        for (guint pl = 0; pl < (kind == OUT_SAME ? 3 : 1); pl++)
          for (guint i = 0; i < got->p[pl]->width * got->p[pl]->height; i++) {
            gdouble expect = ref_to_u8 (p.bias + p.scale * in->p[pl]->v[i]);
            fail_unless (fabs (got->p[pl]->v[i] - expect) <= tol,
                "%s -> %s plane %s: %g * %g + %g gave %g, expected %g",
                format_name (formats[f]), out_name (kind, formats[f]),
                plane_names[pl], p.scale, in->p[pl]->v[i], p.bias,
                got->p[pl]->v[i], expect);
          }
        frame_free (got);
        gst_buffer_unref (out);
        gst_harness_teardown (h);
        gcvt_element_unref (e);
        frame_free (in);
      }
}

GST_END_TEST;

static GstBuffer *
stamped (const Frame * f, guint i)
{
  GstBuffer *b = frame_buffer (f, NULL, FALSE);
  GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
  GST_BUFFER_DURATION (b) = GST_SECOND / 30;
  return b;
}

#define N_FRAMES 6

/* loop index: queue-depth 1 or 3. Several frames pushed before any is
 * pulled: on CUDA depth-1 of them stay in flight after each push, on the
 * CPU none; all come out at EOS in order, each right. */
GST_START_TEST (test_queue_depth)
{
  static const struct
  {
    GstVideoFormat format;
    Out out;
    gboolean all;
    guint w, h;
  } streams[] = {
    {GST_VIDEO_FORMAT_NV12, OUT_SAME, TRUE, 97, 61},
    {GST_VIDEO_FORMAT_I420, OUT_SAME, FALSE, 33, 31},
    {GST_VIDEO_FORMAT_I420, OUT_SAME, TRUE, 64, 48},
    {GST_VIDEO_FORMAT_NV12, OUT_GRAY32F, TRUE, 45, 27},
    {GST_VIDEO_FORMAT_I420, OUT_GRAY8, FALSE, 17, 9},
  };
  const guint depth = __i__ ? 3 : 1;
  const guint in_flight = gcvt_on_cuda ()? depth - 1 : 0;
  gchar *name = g_strdup_printf ("queue_depth %u", depth);
  GRand *r = ref_rand_new_seeded (name, 9000 + __i__);

  for (guint s = 0; s < G_N_ELEMENTS (streams); s++) {
    RefParams p;
    RefKernel *k = random_params (r, (RefBorder) (s % REF_N_BORDERS), s % 4,
        7, &p);
    GstElement *e = element_new (&p, streams[s].all);
    GstHarness *h;
    Frame *in[N_FRAMES];

    g_object_set (e, "queue-depth", depth, NULL);
    h = gcvt_harness_new (e);
    set_caps (h, streams[s].format, streams[s].out, streams[s].w,
        streams[s].h);
    for (guint i = 0; i < N_FRAMES; i++) {
      in[i] = random_frame (r, streams[s].format, streams[s].w, streams[s].h);
      fail_unless_equals_int (gst_harness_push (h, stamped (in[i], i)),
          GST_FLOW_OK);
      fail_unless_equals_int (gst_harness_buffers_received (h),
          i + 1 > in_flight ? i + 1 - in_flight : 0);
    }
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    fail_unless_equals_int (gst_harness_buffers_in_queue (h), N_FRAMES);
    for (guint i = 0; i < N_FRAMES; i++) {
      GstBuffer *out = gst_harness_pull (h);
      gchar *what = g_strdup_printf ("queue-depth %u frame %u", depth, i);
      fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_SECOND / 30);
      check_output (out, streams[s].out, in[i], &p, streams[s].all, what);
      gst_buffer_unref (out);
      g_free (what);
      frame_free (in[i]);
    }
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_kernel_free (k);
  }
  g_rand_free (r);
  g_free (name);
}

GST_END_TEST;

/* `planes` set between two pushes applies from the next frame on; frames
 * already accepted (in flight on CUDA) keep the value they came with. */
GST_START_TEST (test_planes_change_midstream)
{
  static const gboolean sequence[] = { FALSE, TRUE, TRUE, FALSE, TRUE, FALSE };
  GRand *r = ref_rand_new_seeded ("planes_change_midstream", 10000);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    RefParams p;
    RefKernel *k = random_params (r, (RefBorder) (2 * f), 1, 5, &p);
    GstElement *e = element_new (&p, sequence[0]);
    GstHarness *h = gcvt_harness_new (e);
    Frame *in[G_N_ELEMENTS (sequence)];

    g_object_set (e, "queue-depth", 3, NULL);
    set_caps (h, formats[f], OUT_SAME, 41, 23);
    for (guint i = 0; i < G_N_ELEMENTS (sequence); i++) {
      in[i] = random_frame (r, formats[f], 41, 23);
      set_planes (e, sequence[i]);
      fail_unless_equals_int (gst_harness_push (h, stamped (in[i], i)),
          GST_FLOW_OK);
    }
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    for (guint i = 0; i < G_N_ELEMENTS (sequence); i++) {
      GstBuffer *out = gst_harness_pull (h);
      gchar *what = g_strdup_printf ("frame %u of a stream changing planes",
          i);
      check_output (out, OUT_SAME, in[i], &p, sequence[i], what);
      gst_buffer_unref (out);
      g_free (what);
      frame_free (in[i]);
    }
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_kernel_free (k);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* Caps changing between frames, from and to the packed formats, with no
 * pull in between: frames accepted under the old caps come out as they
 * were. */
GST_START_TEST (test_caps_changes)
{
  static const struct
  {
    GstVideoFormat format;
    Out out;
    guint w, h;
  } steps[] = {
    {GST_VIDEO_FORMAT_NV12, OUT_SAME, 33, 31},
    {GST_VIDEO_FORMAT_I420, OUT_SAME, 17, 9},
    {GST_VIDEO_FORMAT_GRAY8, OUT_SAME, 20, 12},
    {GST_VIDEO_FORMAT_NV12, OUT_GRAY32F, 20, 12},
    {GST_VIDEO_FORMAT_I420, OUT_GRAY8, 35, 7},
    {GST_VIDEO_FORMAT_NV12, OUT_SAME, 3, 5},
  };
  const guint per_step = 2;
  GRand *r = ref_rand_new_seeded ("caps_changes", 11000);
  RefParams p;
  RefKernel *k = random_params (r, REF_BORDER_REFLECT, 0, 5, &p);
  GstElement *e = element_new (&p, TRUE);
  GstHarness *h = gcvt_harness_new (e);
  Frame *in[G_N_ELEMENTS (steps)][2];
  RefImage *gray[G_N_ELEMENTS (steps)][2];

  g_object_set (e, "queue-depth", 3, NULL);
  for (guint s = 0; s < G_N_ELEMENTS (steps); s++) {
    if (steps[s].format == GST_VIDEO_FORMAT_GRAY8)
      gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, steps[s].w, steps[s].h);
    else
      set_caps (h, steps[s].format, steps[s].out, steps[s].w, steps[s].h);
    for (guint i = 0; i < per_step; i++) {
      GstBuffer *b;
      in[s][i] = NULL;
      gray[s][i] = NULL;
      if (steps[s].format == GST_VIDEO_FORMAT_GRAY8) {
        gray[s][i] = gcvt_random_image (r, REF_GRAY8, steps[s].w, steps[s].h,
            0, 0);
        b = gcvt_buffer_new (gray[s][i], REF_GRAY8, 0, 0, FALSE);
      } else {
        in[s][i] = random_frame (r, steps[s].format, steps[s].w, steps[s].h);
        b = frame_buffer (in[s][i], NULL, FALSE);
      }
      fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
    }
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  for (guint s = 0; s < G_N_ELEMENTS (steps); s++)
    for (guint i = 0; i < per_step; i++) {
      GstBuffer *out = gst_harness_pull (h);
      gchar *what = g_strdup_printf ("caps step %u frame %u", s, i);
      if (gray[s][i]) {
        /* a packed frame between the planar ones: the shared reference */
        gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, gray[s][i], &p, what);
        ref_image_free (gray[s][i]);
      } else {
        check_output (out, steps[s].out, in[s][i], &p, TRUE, what);
        frame_free (in[s][i]);
      }
      gst_buffer_unref (out);
      g_free (what);
    }
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* Only the conversions docs/formats.md (Caps) lists: NV12 and I420 do not
 * become each other or a colour format. */
GST_START_TEST (test_no_other_conversions)
{
  static const struct
  {
    GstVideoFormat in;
    const gchar *out;
  } cases[] = {
    {GST_VIDEO_FORMAT_NV12, "I420"},
    {GST_VIDEO_FORMAT_I420, "NV12"},
    {GST_VIDEO_FORMAT_NV12, "RGBA"},
    {GST_VIDEO_FORMAT_I420, "BGRx"},
  };
  GRand *r = ref_rand_new_seeded ("no_other_conversions", 12000);

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    Frame *in = random_frame (r, cases[c].in, 8, 6);
    GstElement *e = gcvt_element_new ();
    GstHarness *h;

    gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
    h = gcvt_harness_new (e);
    gst_harness_set_caps (h, caps_new (format_name (cases[c].in), 8, 6),
        caps_new (cases[c].out, 8, 6));
    fail_if (gst_harness_push (h, frame_buffer (in, NULL, FALSE))
        == GST_FLOW_OK, "%s -> %s was negotiated", format_name (cases[c].in),
        cases[c].out);
    fail_unless_equals_int (gst_harness_buffers_received (h), 0);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    frame_free (in);
  }
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
planar_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-planar");
  TCase *tc = tcase_create ("planar");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_planes_property);
  tcase_add_loop_test (tc, test_to_itself, 0, 2 * G_N_ELEMENTS (formats));
  tcase_add_loop_test (tc, test_to_gray, 0, 2 * G_N_ELEMENTS (formats));
  tcase_add_loop_test (tc, test_large_frames, 0, G_N_ELEMENTS (formats));
  tcase_add_loop_test (tc, test_kernels_larger_than_planes, 0,
      REF_N_BORDERS);
  tcase_add_test (tc, test_video_meta_layouts);
  tcase_add_test (tc, test_crop);
  tcase_add_loop_test (tc, test_crop_any_origin, 0,
      2 * G_N_ELEMENTS (formats));
  GCVT_ADD_LOOP_TEST_IF (tc, test_videocrop_odd, 0,
      2 * G_N_ELEMENTS (formats), gst_registry_check_feature_version
      (gst_registry_get (), "videocrop", 1, 0, 0),
      "needs videocrop (gst-plugins-good)");
  tcase_add_test (tc, test_identity);
  tcase_add_test (tc, test_u8_rounding);
  tcase_add_loop_test (tc, test_queue_depth, 0, 2);
  tcase_add_test (tc, test_planes_change_midstream);
  tcase_add_test (tc, test_caps_changes);
  tcase_add_test (tc, test_no_other_conversions);
  return s;
}

GCVT_MAIN (planar)
