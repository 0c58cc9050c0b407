/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions (docs/regions.md): region-mode inside and outside against
 * the reference with a mask (ref_region_filtered()), regions from the
 * property, from ROI metas and from both, with overlaps, edges, empty
 * regions and regions outside the frame; the crop origin; 4:2:0 chroma;
 * GStreamer's analytics object detections (where the analytics library
 * was found: by label, with the property, the crop origin, > 256, none);
 * GRAY16_LE, RGB and P010_10LE;
 * statistics of the filtered area; and the refusals. On the CPU backend
 * and on the CUDA backend with each family. */
#include "common-formats.h"
#include "gcv-regions.h"

#ifdef GCVT_HAVE_ANALYTICS
#include <gst/analytics/analytics.h>
#endif

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* Rectangles that overlap, cross each edge, have no area, or lie outside
 * the frame, for a frame of w x h. */
static guint
awkward_regions (GRand * r, guint w, guint h, gint * rects)
{
  const gint cases[][4] = {
    {-7, -5, (gint) w / 3, (gint) h / 3},       /* the top left corner */
    {(gint) w / 4, (gint) h / 4, (gint) w / 3, (gint) h / 4},
    {(gint) w / 3, (gint) h / 3, (gint) w / 4, (gint) h / 2},   /* overlaps */
    {(gint) w - 9, (gint) h / 2, 40, 11},       /* past the right edge */
    {(gint) w / 2, (gint) h - 3, 5, 50},        /* past the bottom */
    {(gint) w / 2, (gint) h / 2, 0, 20},        /* no area */
    {(gint) w + 5, 3, 10, 10},  /* outside */
    {3, -40, 10, 20},           /* outside, above */
  };
  guint n = 0;

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++, n++)
    memcpy (rects + 4 * n, cases[i], sizeof (cases[i]));
  /* and two at random */
  for (guint i = 0; i < 2; i++, n++) {
    rects[4 * n] = g_rand_int_range (r, -10, w);
    rects[4 * n + 1] = g_rand_int_range (r, -10, h);
    rects[4 * n + 2] = g_rand_int_range (r, 0, w / 2 + 1);
    rects[4 * n + 3] = g_rand_int_range (r, 0, h / 2 + 1);
  }
  return n;
}

static void
value_from_rects (GValue * value, const gint * rects, guint n)
{
  g_value_init (value, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    GValue region = G_VALUE_INIT, e = G_VALUE_INIT;
    gst_value_array_init (&region, 4);
    g_value_init (&e, G_TYPE_INT);
    for (guint j = 0; j < 4; j++) {
      g_value_set_int (&e, rects[4 * i + j]);
      gst_value_array_append_value (&region, &e);
    }
    gst_value_array_append_and_take_value (value, &region);
    g_value_unset (&e);
  }
}

static void
set_regions (GstElement * e, const gint * rects, guint n)
{
  GValue v = G_VALUE_INIT;

  value_from_rects (&v, rects, n);
  g_object_set_property (G_OBJECT (e), "regions", &v);
  g_value_unset (&v);
}

/* The filtered mask of a w x h plane of a frame_w x frame_h frame. */
static gboolean *
mask_new (const gint * rects, guint n, guint mode, guint w, guint h,
    guint frame_w, guint frame_h, guint sub)
{
  gboolean *m = g_new (gboolean, (gsize) w * h);

  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++)
      m[y * w + x] = ref_region_filtered (rects, n, mode, frame_w, frame_h,
          sub, x, y);
  return m;
}

/* A random filter with border `border`, as test-compute makes them. */
static RefKernel *
random_params (GRand * r, RefParams * p, RefBorder border, gboolean rank1)
{
  const guint kw = g_rand_int_range (r, 1, 10), kh = g_rand_int_range (r, 1,
      10);
  RefKernel *k = gcvt_random_kernel (r, kw, kh, rank1
      || gcvt_forced_separable ());

  ref_params_init (p, k);
  p->border = border;
  p->border_value = 77.0;
  p->scale = g_rand_double_range (r, 0.5, 1.5) / ref_kernel_sum_abs (k);
  if (g_rand_boolean (r)) {
    p->anchor_x = g_rand_int_range (r, 0, kw);
    p->anchor_y = g_rand_int_range (r, 0, kh);
  }
  return k;
}

/* Three small regions well inside a w x h frame, a few percent of it
 * (which the CUDA backend filters side by side: test_regions_small). */
static guint
small_regions (guint w, guint h, gint * rects)
{
  const gint v[12] = { (gint) w / 8, (gint) h / 4, (gint) MAX (w / 20, 3),
    (gint) MAX (h / 8, 3), (gint) w / 2, (gint) h / 8, (gint) MAX (w / 16, 4),
    (gint) MAX (h / 6, 3), (gint) (3 * w / 4), (gint) h / 2,
    (gint) MAX (w / 24, 2), (gint) MAX (h / 5, 3)
  };

  memcpy (rects, v, sizeof (v));
  return 3;
}

/* One frame: regions from the property, each mode, each format and
 * border, random kernels, padded strides, frames crossing several of the
 * CPU engine's bands and strips. */
GST_START_TEST (test_regions_property)
{
  const RefFormat formats[] = { REF_RGBA, REF_GRAY8, REF_GRAY32F, REF_BGRX };
  const guint sizes[][2] = { {37, 23}, {301, 157}, {1031, 67} };
  GRand *r = ref_rand_new_seeded ("test_regions_property", 71);
  guint n_case = 0;

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint b = 0; b < REF_N_BORDERS; b++) {
      const RefFormat fmt = formats[f];
      const guint *size = sizes[(f + b) % G_N_ELEMENTS (sizes)];
      const guint w = size[0], hgt = size[1];
      const guint mode = 1 + (f + b) % 2;
      const gsize stride = ref_default_stride (fmt, w) + 4 * (b % 2) * 3;
      RefImage *in = gcvt_random_image (r, fmt, w, hgt, -1.0, 1.0);
      gint rects[4 * 10];
      const guint n = awkward_regions (r, w, hgt, rects);
      RefParams p;
      RefKernel *k = random_params (r, &p, b, n_case++ % 2 == 0);
      GstElement *e = gcvt_element_new ();
      gchar *what = g_strdup_printf ("%s %ux%u border %s, region-mode %s",
          ref_format_info (fmt)->name, w, hgt, ref_border_nick (b),
          mode == 1 ? "inside" : "outside");

      gcvt_set_params (e, &p);
      set_regions (e, rects, n);
      g_object_set (e, "region-mode", mode, NULL);
      {
        GstHarness *h = gcvt_harness_new (e);
        gboolean *mask = mask_new (rects, n, mode, w, hgt, w, hgt, 1);
        GstBuffer *out;

        gcvt_set_caps (h, fmt, fmt, w, hgt);
        out = gcvt_process (h, gcvt_buffer_new (in, fmt, stride, 0,
                stride != ref_default_stride (fmt, w)));
        gcvt_check_frame_masked (out, fmt, fmt, in, &p, mask, what);
        gst_buffer_unref (out);
        g_free (mask);
        gst_harness_teardown (h);
      }
      gcvt_element_unref (e);
      ref_kernel_free (k);
      ref_image_free (in);
      g_free (what);
    }
  g_rand_free (r);
}

GST_END_TEST;

/* Small regions, a few percent of the frame, which the CUDA backend
 * filters side by side in one launch (docs/regions.md): rectangles of
 * several heights, at the corners and edges (their reach in the halo)
 * and inside, random kernels up to 31 wide (widths with no kernel of
 * their own among them; every other one of rank 1), anchors, each
 * format, two frames in a row. The filtered area against the reference, the rest the
 * input's bytes. */
GST_START_TEST (test_regions_small)
{
  const RefFormat formats[] = { REF_GRAY8, REF_RGBA, REF_GRAY32F, REF_BGRX };
  const guint w = 640, hgt = 360;
  const gint rects[][4] = {
    {0, 0, 30, 20}, {100, 40, 50, 40}, {300, 10, 24, 70},
    {607, 150, 33, 17}, {200, 320, 40, 40}, {420, 200, 10, 10},
    {500, 90, 7, 3}, {50, 250, 8, 6}, {560, 30, 12, 9}, {350, 280, 6, 12},
  };
  const guint sizes[][2] = { {3, 3}, {0, 0}, {19, 5}, {31, 31}, {1, 9} };
  GRand *r = ref_rand_new_seeded ("test_regions_small", 84);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    const RefFormat fmt = formats[f];
    RefImage *in = gcvt_random_image (r, fmt, w, hgt, -1.0, 1.0);
    const gsize stride = ref_default_stride (fmt, w) + 4 * 3 * (f % 2);

    for (guint k = 0; k < G_N_ELEMENTS (sizes); k++) {
      /* (0, 0): a random kernel of test-compute's sizes, and its anchor */
      const guint kw = sizes[k][0] ? sizes[k][0]
          : (guint) g_rand_int_range (r, 1, 10);
      const guint kh = sizes[k][1] ? sizes[k][1]
          : (guint) g_rand_int_range (r, 1, 10);
      RefKernel *kernel = gcvt_random_kernel (r, kw, kh, (f + k) % 2 == 1
          || gcvt_forced_separable ());
      /* all ten at 31x31: more rectangles copied than the launch that
       * filters them where they lie takes beside them (GRAY8, separable:
       * docs/regions.md) */
      const guint n = kw == 31 ? G_N_ELEMENTS (rects) : 3 + (f + k) % 5;
      const RefBorder border = (RefBorder) ((f + k) % REF_N_BORDERS);
      GstElement *e = gcvt_element_new ();
      gboolean *mask = mask_new (&rects[0][0], n, 1, w, hgt, w, hgt, 1);
      gchar *what = g_strdup_printf ("%s %ux%u, %u small regions, %ux%u, "
          "border %s", ref_format_info (fmt)->name, w, hgt, n, kw, kh,
          ref_border_nick (border));
      RefParams p;
      GstHarness *h;

      ref_params_init (&p, kernel);
      p.border = border;
      p.border_value = 77.0;
      p.scale = 1.0 / ref_kernel_sum_abs (kernel);
      if (sizes[k][0] == 0) {
        p.anchor_x = g_rand_int_range (r, 0, (gint) kw);
        p.anchor_y = g_rand_int_range (r, 0, (gint) kh);
      }
      gcvt_set_params (e, &p);
      set_regions (e, &rects[0][0], n);
      g_object_set (e, "region-mode", 1, NULL);
      h = gcvt_harness_new (e);
      gcvt_set_caps (h, fmt, fmt, w, hgt);
      /* twice: the second frame runs on what the first left */
      for (guint i = 0; i < 2; i++) {
        GstBuffer *out = gcvt_process (h, gcvt_buffer_new (in, fmt, stride,
                0, stride != ref_default_stride (fmt, w)));
        gcvt_check_frame_masked (out, fmt, fmt, in, &p, mask, what);
        gst_buffer_unref (out);
      }
      gst_harness_teardown (h);
      gcvt_element_unref (e);
      ref_kernel_free (kernel);
      g_free (mask);
      g_free (what);
    }
    ref_image_free (in);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* A GRAY8 frame with a `face` and a `plate` ROI meta through `h`: the
 * output filtered inside regions `want0` and `want1` only. */
static void
check_roi_frame (GstHarness * h, const RefImage * in, const RefParams * p,
    const gint face[4], const gint plate[4], const gint want0[4],
    const gint want1[4], const gchar * what)
{
  GstBuffer *buf = gcvt_buffer_new (in, REF_GRAY8, 0, 0, FALSE), *out;
  gint want[8];
  gboolean *mask;

  gst_buffer_add_video_region_of_interest_meta (buf, "face", face[0],
      face[1], face[2], face[3]);
  gst_buffer_add_video_region_of_interest_meta (buf, "plate", plate[0],
      plate[1], plate[2], plate[3]);
  memcpy (want, want0, 4 * sizeof (gint));
  memcpy (want + 4, want1, 4 * sizeof (gint));
  mask = mask_new (want, 2, 1, in->width, in->height, in->width, in->height,
      1);
  out = gcvt_process (h, buf);
  gcvt_check_frame_masked (out, REF_GRAY8, REF_GRAY8, in, p, mask, what);
  gst_buffer_unref (out);
  g_free (mask);
}

/* Regions that come with the buffer: only those of region-type, the
 * property's too with region-source=both, and each frame's own. */
GST_START_TEST (test_regions_roi_meta)
{
  const guint w = 160, hgt = 90;
  const gint prop[] = { 100, 50, 30, 30 };
  const gint faces[][4] = { {10, 10, 40, 30}, {60, 5, 20, 60} };
  const gint plate[] = { 120, 10, 30, 20 };
  GRand *r = ref_rand_new_seeded ("test_regions_roi_meta", 72);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, w, hgt, 0, 0);
  RefKernel *k = ref_builtin ("box", 7, 0.0);
  RefParams p;
  GstElement *e = gcvt_element_new ();
  GstHarness *h;

  ref_params_init (&p, k);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 7, "region-mode", 1, "region-source", 2,
      "region-type", "face", NULL);
  gcvt_apply_algorithm (e);
  set_regions (e, prop, 1);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, w, hgt);
  /* frame i: the property's region and face i's; the plate is not a face */
  for (guint i = 0; i < 2; i++) {
    gchar *what = g_strdup_printf ("frame %u, face and property", i);
    check_roi_frame (h, in, &p, faces[i], plate, prop, faces[i], what);
    g_free (what);
  }
  /* every meta, no property */
  g_object_set (e, "region-source", 1, "region-type", "", NULL);
  check_roi_frame (h, in, &p, faces[0], plate, faces[0], plate, "every meta");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;

/* A crop meta: the frame is the crop region, and the metas, in the
 * buffer's pixels, are moved by its origin. `add_meta` puts the one
 * region on the buffer (a ROI meta, an object detection). */
static void
check_crop (void (*add_meta) (GstBuffer * buf, const gint r[4]))
{
  const guint full_w = 96, full_h = 64, cx = 11, cy = 7, w = 64, hgt = 40;
  const gint roi[] = { 30, 20, 25, 18 };        /* in the buffer's pixels */
  const gint want[] = { roi[0] - cx, roi[1] - cy, roi[2], roi[3] };
  GRand *r = ref_rand_new_seeded ("test_regions_crop", 73);
  RefImage *full = gcvt_random_image (r, REF_GRAY8, full_w, full_h, 0, 0);
  RefImage *in = ref_image_new (w, hgt, 1);
  RefKernel *k = ref_builtin ("box", 5, 0.0);
  RefParams p;
  GstElement *e;
  GstHarness *h;
  GstBuffer *buf, *out;
  GstVideoCropMeta *crop;
  gboolean *mask;

  for (guint y = 0; y < hgt; y++)
    for (guint x = 0; x < w; x++)
      *ref_pixel (in, x, y) = *ref_pixel (full, x + cx, y + cy);
  ref_params_init (&p, k);
  e = gcvt_element_new ();
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 5, "region-mode", 1, "region-source", 1, NULL);
  gcvt_apply_algorithm (e);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, w, hgt);
  buf = gcvt_buffer_new (full, REF_GRAY8, 0, 0, TRUE);
  crop = gst_buffer_add_video_crop_meta (buf);
  crop->x = cx;
  crop->y = cy;
  crop->width = w;
  crop->height = hgt;
  add_meta (buf, roi);
  out = gcvt_process (h, buf);
  mask = mask_new (want, 1, 1, w, hgt, w, hgt, 1);
  gcvt_check_frame_masked (out, REF_GRAY8, REF_GRAY8, in, &p, mask,
      "cropped frame");
  gst_buffer_unref (out);
  g_free (mask);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  ref_image_free (full);
  g_rand_free (r);
}

static void
add_face (GstBuffer * buf, const gint r[4])
{
  gst_buffer_add_video_region_of_interest_meta (buf, "face", r[0], r[1],
      r[2], r[3]);
}

GST_START_TEST (test_regions_crop)
{
  check_crop (add_face);
}

GST_END_TEST;

/* NV12 and I420 with planes=all: a chroma sample is filtered when a pixel
 * it covers is in a region; odd sizes, where the last chroma sample covers
 * one pixel column. */
GST_START_TEST (test_regions_planar)
{
  const gchar *formats[] = { "NV12", "I420" };
  const guint w = 45, hgt = 31, cw = 23, ch = 16;
  /* the second region starts at the odd frame's last column, the fourth
   * just past it, on the pixel column that the last chroma samples cover
   * beyond the frame */
  const gint rects[] = { 5, 3, 11, 9, 44, 10, 10, 5, 20, 20, 0, 4,
    45, 0, 5, 5
  };
  GRand *r = ref_rand_new_seeded ("test_regions_planar", 74);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint mode = 1; mode <= 2; mode++) {
      RefImage *planes[3], *want[3];
      RefKernel *k = ref_builtin ("gaussian", 5, 1.2);
      RefParams p;
      GstElement *e = gcvt_element_new ();
      GstVideoInfo info;
      GstBuffer *buf, *out;
      GstVideoFrame frame;
      GstHarness *h;
      GstCaps *caps;

      ref_planes_new (planes, w, hgt);
      for (guint i = 0; i < 3; i++)
        for (gsize s = 0; s < (gsize) planes[i]->width * planes[i]->height;
            s++)
          planes[i]->v[s] = g_rand_int_range (r, 0, 256);
      ref_params_init (&p, k);
          ref_planes_filter (want, planes, &p, TRUE);
      gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
      gst_util_set_object_arg (G_OBJECT (e), "planes", "all");
      g_object_set (e, "size", 5, "sigma", 1.2, "region-mode", mode, NULL);
      gcvt_apply_algorithm (e);
      set_regions (e, rects, 4);
      h = gcvt_harness_new (e);
      caps = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
          formats[f], "width", G_TYPE_INT, w, "height", G_TYPE_INT, hgt,
          "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
      gst_harness_set_caps (h, gst_caps_ref (caps), caps);
      gst_video_info_set_format (&info, f == 0 ? GST_VIDEO_FORMAT_NV12 :
          GST_VIDEO_FORMAT_I420, w, hgt);
      buf = gst_buffer_new_allocate (NULL, info.size, NULL);
      gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
          GST_VIDEO_INFO_FORMAT (&info), w, hgt, GST_VIDEO_INFO_N_PLANES
          (&info), info.offset, info.stride);
      fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
      for (guint i = 0; i < 3; i++) {
        const guint pw = planes[i]->width, ph = planes[i]->height;
        const guint plane = f == 0 ? MIN (i, 1) : i, step = f == 0
            && i > 0 ? 2 : 1;
        guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, plane);
        const gint st = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, plane);
        for (guint y = 0; y < ph; y++)
          for (guint x = 0; x < pw; x++)
            d[y * st + x * step + (f == 0 && i == 2)] =
                (guint8) planes[i]->v[y * pw + x];
      }
      gst_video_frame_unmap (&frame);
      out = gcvt_process (h, buf);
      fail_unless (gst_video_frame_map (&frame, &info, out, GST_MAP_READ));
      for (guint i = 0; i < 3; i++) {
        const guint pw = i ? cw : w, ph = i ? ch : hgt, sub = i ? 2 : 1;
        const guint plane = f == 0 ? MIN (i, 1) : i, step = f == 0
            && i > 0 ? 2 : 1;
        const guint8 *d = GST_VIDEO_FRAME_PLANE_DATA (&frame, plane);
        const gint st = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, plane);
        const gdouble tol = ref_u8_bound (&p, 255.0);
        for (guint y = 0; y < ph; y++)
          for (guint x = 0; x < pw; x++) {
            const gboolean filtered = ref_region_filtered (rects, 4, mode, w,
                hgt, sub, x, y);
            const gdouble got = d[y * st + x * step + (f == 0 && i == 2)];
            const gdouble expect = filtered ?
                ref_to_u8 (want[i]->v[y * pw + x]) : planes[i]->v[y * pw + x];
            fail_unless (fabs (got - expect) <= (filtered ? tol : 0.0),
                "%s %s plane %u (%u,%u): got %g, expected %g (%s)",
                formats[f], mode == 1 ? "inside" : "outside", i, x, y, got,
                expect, filtered ? "filtered" : "copied");
          }
      }
      gst_video_frame_unmap (&frame);
      gst_buffer_unref (out);
      gst_harness_teardown (h);
      gcvt_element_unref (e);
      ref_planes_free (planes);
      ref_planes_free (want);
      ref_kernel_free (k);
    }
  g_rand_free (r);
}

GST_END_TEST;

/* GRAY16_LE, RGB and P010_10LE (planes=all): each mode with the
 * awkward regions and inside with small ones (side by side on the CUDA
 * backend: its narrowing after the atlas), filtered samples against the
 * reference, the others the input's bytes exactly. P010's input words carry low bits: the copied
 * area keeps them, the filtered one stores the low bits zero. */
GST_START_TEST (test_regions_formats)
{
  const GcvFormat formats[] = { GCV_FORMAT_GRAY16_LE, GCV_FORMAT_RGB,
    GCV_FORMAT_P010_10LE
  };
  /* several strips and bands; odd, where P010's last chroma samples
   * cover one pixel column and row */
  const guint sizes[][2] = { {1031, 67}, {301, 157}, {45, 31} };
  GRand *r = ref_rand_new_seeded ("test_regions_formats", 77);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint c = 0; c < 3; c++) {
      /* inside and outside with awkward regions, then inside with small
       * ones */
      const guint mode = c == 2 ? 1 : c + 1;
      const GcvFormat fmt = formats[f];
      const gboolean p010 = fmt == GCV_FORMAT_P010_10LE;
      const guint w = sizes[f][0], hgt = sizes[f][1], n_planes = p010 ? 3 : 1;
      RefImage *planes[3] = { NULL, NULL, NULL }, *want[3] = { NULL, NULL,
        NULL
      };
      gint rects[4 * 10];
      const guint n = c == 2 ? small_regions (w, hgt, rects)
          : awkward_regions (r, w, hgt, rects);
      RefParams p;
      GcvFilterDesc d;
      gfloat *taps;
      /* rank 1 where algorithm=separable is forced: it runs nothing else */
      RefKernel *k = gcvt_fmt_random_params (r, fmt, (RefBorder) ((f + mode)
              % REF_N_BORDERS), mode == 1 || gcvt_forced_separable (), &p, &d,
          &taps);
      GstElement *e = gcvt_element_new ();
      GstHarness *h;
      GstVideoInfo info;
      GstVideoFrame in_frame, out_frame;
      GstBuffer *buf, *kept, *out;
      gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=%u,"
          "height=%u,framerate=30/1", gcv_format_name (fmt), w, hgt);
      gchar *what = gcvt_fmt_describe (fmt, fmt, w, hgt, 0, &p, mode == 1);

      if (p010) {
        ref_planes_new (planes, w, hgt);
        for (guint i = 0; i < 3; i++)
          for (gsize s = 0; s < (gsize) planes[i]->width * planes[i]->height;
              s++)
            planes[i]->v[s] = g_rand_int_range (r, 0, 1024);
        ref_planes_filter (want, planes, &p, TRUE);
        gst_util_set_object_arg (G_OBJECT (e), "planes", "all");
      } else {
        planes[0] = gcvt_fmt_random_image (r, fmt, w, hgt,
            gcvt_fmt_channels (fmt));
        want[0] = ref_filter (planes[0], &p);
      }
      gcvt_set_params (e, &p);
      set_regions (e, rects, n);
      g_object_set (e, "region-mode", mode, NULL);
      buf = gcvt_fmt_buffer_new (fmt, planes);
      gcvt_fmt_video_info (&info, fmt, w, hgt);
      if (p010) {
        /* the low 6 bits of every word, which the value does not use */
        fail_unless (gst_video_frame_map (&in_frame, &info, buf,
                GST_MAP_WRITE));
        for (guint i = 0; i < 3; i++)
          for (guint y = 0; y < planes[i]->height; y++)
            for (guint x = 0; x < planes[i]->width; x++)
              *gcvt_fmt_sample_ptr (&in_frame, fmt, i, x, y, 0) |=
                  g_rand_int_range (r, 1, 64);
        gst_video_frame_unmap (&in_frame);
      }
      kept = gst_buffer_copy_deep (buf);
      h = gcvt_harness_new (e);
      gst_harness_set_caps_str (h, caps, caps);
      out = gcvt_process (h, buf);
      fail_unless (gst_video_frame_map (&in_frame, &info, kept,
              GST_MAP_READ));
      fail_unless (gst_video_frame_map (&out_frame, &info, out,
              GST_MAP_READ));
      for (guint i = 0; i < n_planes; i++) {
        const gdouble max_in = gcvt_fmt_largest_input (planes[i], &p);
        for (guint y = 0; y < planes[i]->height; y++)
          for (guint x = 0; x < planes[i]->width; x++)
            for (guint c = 0; c < planes[i]->channels; c++) {
              const guint8 *got = gcvt_fmt_sample_ptr (&out_frame, fmt, i, x,
                  y, c), *input = gcvt_fmt_sample_ptr (&in_frame, fmt, i, x,
                  y, c);
              if (ref_region_filtered (rects, n, mode, w, hgt, i ? 2 : 1, x,
                      y))
                gcvt_fmt_check_value (gcvt_fmt_get (got, fmt),
                    ref_pixel (want[i], x, y)[c], fmt, &p, max_in, 1.0,
                    what, x, y, c);
              else
                fail_unless (memcmp (got, input,
                        gcvt_fmt_sample_bytes (fmt)) == 0, "%s, region-mode "
                    "%s: plane %u (%u, %u) channel %u not copied", what,
                    mode == 1 ? "inside" : "outside", i, x, y, c);
            }
      }
      gst_video_frame_unmap (&in_frame);
      gst_video_frame_unmap (&out_frame);
      gst_buffer_unref (kept);
      gst_buffer_unref (out);
      gst_harness_teardown (h);
      gcvt_element_unref (e);
      for (guint i = 0; i < 3; i++) {
        g_clear_pointer (&planes[i], ref_image_free);
        g_clear_pointer (&want[i], ref_image_free);
      }
      ref_kernel_free (k);
      g_free (taps);
      g_free (caps);
      g_free (what);
    }
  g_rand_free (r);
}

GST_END_TEST;

/* Channel 0's `field` of a statistics structure: a double, or a uint. */
static gdouble
stat_value (const GstStructure * s, const gchar * field)
{
  const GValue *v = gst_value_array_get_value (gst_structure_get_value (s,
          field), 0);
  return G_VALUE_HOLDS_DOUBLE (v) ? g_value_get_double (v) :
      G_VALUE_HOLDS_UINT (v) ? g_value_get_uint (v) :
      (gdouble) g_value_get_uint64 (v);
}

/* The extreme `name` (min or max) of the statistics: within `tol` of the
 * reference's over the filtered area, at a place in the frame's
 * coordinates that is filtered and holds it. */
static void
check_extreme_place (const GstStructure * s, const gchar * name,
    const RefImage * ref, const gint * rects, guint n, gdouble want,
    gdouble tol)
{
  gchar *fx = g_strdup_printf ("%s-x", name), *fy = g_strdup_printf ("%s-y",
      name);
  const gdouble got = stat_value (s, name);
  const guint x = (guint) stat_value (s, fx), y = (guint) stat_value (s, fy);

  fail_unless (fabs (got - want) <= tol, "%s %g, expected %g", name, got,
      want);
  fail_unless (x < ref->width && y < ref->height
      && ref_region_filtered (rects, n, 1, ref->width, ref->height, 1, x, y),
      "%s at (%u, %u): not a filtered place of the frame", name, x, y);
  fail_unless (fabs (*ref_pixel (ref, x, y) - want) <= tol, "%s at (%u, %u),"
      " where the frame has %g, not %g", name, x, y, *ref_pixel (ref, x, y),
      want);
  g_free (fx);
  g_free (fy);
}

/* The statistics measure the filtered area only, the places of its
 * extremes in the frame's coordinates. */
GST_START_TEST (test_regions_statistics)
{
  const guint w = 120, hgt = 80;
  const gint rects[] = { 10, 10, 30, 20, 30, 20, 30, 30, 100, 70, 50, 50 };
  GRand *r = ref_rand_new_seeded ("test_regions_statistics", 75);
  RefImage *in = gcvt_random_image (r, REF_GRAY32F, w, hgt, -1.0, 1.0);
  RefKernel *k = ref_builtin ("box", 3, 0.0);
  RefParams p;
  GstElement *e;
  GstHarness *h;
  GstBuffer *out;
  RefImage *ref;
  gdouble sum = 0.0, lo = INFINITY, hi = -INFINITY;
  guint64 count = 0;

  ref_params_init (&p, k);
  ref = ref_filter (in, &p);
  for (guint y = 0; y < hgt; y++)
    for (guint x = 0; x < w; x++)
      if (ref_region_filtered (rects, 3, 1, w, hgt, 1, x, y)) {
        count++;
        sum += *ref_pixel (ref, x, y);
        lo = MIN (lo, *ref_pixel (ref, x, y));
        hi = MAX (hi, *ref_pixel (ref, x, y));
      }
  e = gcvt_element_new ();
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 3, "region-mode", 1, "statistics", TRUE, NULL);
  gcvt_apply_algorithm (e);
  set_regions (e, rects, 3);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, w, hgt);
  out = gcvt_process (h, gcvt_buffer_new (in, REF_GRAY32F, 0, 0, FALSE));
  {
    GstCustomMeta *meta = gst_buffer_get_custom_meta (out,
        "GstGpuConvolveStatisticsMeta");
    const GstStructure *s;
    const GValue *v;
    fail_unless (meta != NULL, "no statistics meta");
    s = gst_custom_meta_get_structure (meta);
    v = gst_value_array_get_value (gst_structure_get_value (s, "count"), 0);
    fail_unless_equals_uint64 (g_value_get_uint64 (v), count);
    v = gst_value_array_get_value (gst_structure_get_value (s, "sum"), 0);
    fail_unless (fabs (g_value_get_double (v) - sum) <= 1e-3, "sum %g, "
        "expected %g", g_value_get_double (v), sum);
    check_extreme_place (s, "min", ref, rects, 3, lo, 1e-5);
    check_extreme_place (s, "max", ref, rects, 3, hi, 1e-5);
  }
  ref_image_free (ref);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;

/* Bad input: a region that is not four integers, or has a negative size,
 * is refused with a warning naming the property and the old value kept;
 * the launch-line form is taken; regions with a format conversion are an
 * error that says why. */
GST_START_TEST (test_regions_refused)
{
  GstElement *e = gcvt_element_new ();
  const gchar *bad[] = { "<<1,2,3>>", "<<1,2,-3,4>>" };
  gchar *before, *after;

  const gint launch[] = { 10, 20, 200, 100, 400, 40, 64, 64 };
  GValue want = G_VALUE_INIT;
  gchar *want_text;

  /* the launch-line form */
  gst_util_set_object_arg (G_OBJECT (e), "regions",
      "<<10,20,200,100>,<400,40,64,64>>");
  value_from_rects (&want, launch, 2);
  want_text = gst_value_serialize (&want);
  before = gcvt_prop_string (e, "regions");
  fail_unless (g_str_equal (before, want_text), "regions read back as %s, "
      "not %s", before, want_text);
  g_value_unset (&want);
  g_free (want_text);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    gcvt_log_capture_start ();
    gst_util_set_object_arg (G_OBJECT (e), "regions", bad[i]);
    fail_unless (gcvt_log_count ("regions") >= 1, "regions=%s: no warning",
        bad[i]);
    gcvt_log_capture_stop ();
    after = gcvt_prop_string (e, "regions");
    fail_unless (g_str_equal (before, after), "regions=%s changed them to "
        "%s", bad[i], after);
    g_free (after);
  }
  g_free (before);
  /* a value taken clears the refusal, which would stop the start */
  gst_util_set_object_arg (G_OBJECT (e), "regions",
      "<<10,20,200,100>,<400,40,64,64>>");

  /* GRAY8 to GRAY32F: outside the regions there is nothing to copy */
  {
    GRand *r = ref_rand_new_seeded ("test_regions_refused", 76);
    RefImage *in = gcvt_random_image (r, REF_GRAY8, 32, 16, 0, 0);
    GstHarness *h;

    g_object_set (e, "region-mode", 1, NULL);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, REF_GRAY8, REF_GRAY32F, 32, 16);
    fail_unless_equals_int (gst_harness_push (h, gcvt_buffer_new (in,
                REF_GRAY8, 0, 0, FALSE)), GST_FLOW_ERROR);
    gcvt_assert_message (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
        GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED, "regions");
    gst_harness_teardown (h);
    ref_image_free (in);
    g_rand_free (r);
  }
  gcvt_element_unref (e);
}

GST_END_TEST;

/* The error or warning `msg` (unreffed), whose text must have each of
 * the `words` (NULL-terminated) in it. */
static void
assert_message_has (GstMessage * msg, GstMessageType type, const gchar * what,
    ...)
{
  GError *err = NULL;
  const gchar *word;
  va_list args;

  fail_unless (msg != NULL, "%s: no %s message", what,
      gst_message_type_get_name (type));
  if (type == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, NULL);
  else
    gst_message_parse_warning (msg, &err, NULL);
  va_start (args, what);
  while ((word = va_arg (args, const gchar *)))
    fail_unless (strstr (err->message, word) != NULL, "%s: \"%s\" does not "
        "say %s", what, err->message, word);
  va_end (args);
  g_error_free (err);
  gst_message_unref (msg);
}

/* The warnings on `e`'s bus, popped. */
static guint
count_warnings (GstElement * e)
{
  GstMessage *msg;
  guint n = 0;

  while ((msg = gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING))) {
    n++;
    gst_message_unref (msg);
  }
  return n;
}

/* `buf` (taken), a GRAY8 frame of `in`, through `h`: filtered exactly
 * where `want` (n_want rectangles, region mode `mode`; 0: the whole
 * frame) says. */
static void
check_buffer (GstHarness * h, GstBuffer * buf, const RefImage * in,
    const RefParams * p, const gint * want, guint n_want, guint mode,
    const gchar * what)
{
  gboolean *mask = mode ? mask_new (want, n_want, mode, in->width,
      in->height, in->width, in->height, 1) : NULL;
  GstBuffer *out = gcvt_process (h, buf);

  gcvt_check_frame_masked (out, REF_GRAY8, REF_GRAY8, in, p, mask, what);
  gst_buffer_unref (out);
  g_free (mask);
}

/* One GRAY8 frame through `h`, with a `face` ROI meta for each of the
 * n_metas rectangles: filtered exactly where `want` (n_want rectangles,
 * region mode `mode`; 0: the whole frame) says. */
static void
check_frame (GstHarness * h, const RefImage * in, const RefParams * p,
    const gint * metas, guint n_metas, const gint * want, guint n_want,
    guint mode, const gchar * what)
{
  GstBuffer *buf = gcvt_buffer_new (in, REF_GRAY8, 0, 0, FALSE);

  for (guint i = 0; i < n_metas; i++)
    add_face (buf, metas + 4 * i);
  check_buffer (h, buf, in, p, want, n_want, mode, what);
}

/* A GRAY8 element with a 5x5 box filter, for the cases below. */
static GstElement *
box_element (RefParams * p, RefKernel ** k)
{
  GstElement *e = gcvt_element_new ();

  *k = ref_builtin ("box", 5, 0.0);
  ref_params_init (p, *k);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 5, NULL);
  gcvt_apply_algorithm (e);
  return e;
}

/* A regions value refused before start stops the element from starting,
 * the error naming the region by index and text (a negative width, three
 * values, 257 regions); while it runs, the mask in force stays and a
 * warning names the refused value. */
GST_START_TEST (test_regions_refused_at_start)
{
  const gchar *bad[][3] = {
    {"<<100,20,64,64>,<10,10,-5,8>>", "region 2", "10, 10, -5, 8"},
    {"<<100,20,64,64>,<1,2,3>>", "region 2", "1, 2, 3"},
    {NULL, "region 257", "257 regions"},
  };
  GString *many = g_string_new ("<");
  GRand *r = ref_rand_new_seeded ("test_regions_refused_at_start", 78);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, 48, 32, 0, 0);
  const gint kept[] = { 4, 4, 10, 10 };
  RefParams p;
  RefKernel *k;
  GstElement *e, *pipeline;
  GstHarness *h;
  GstMessage *msg;

  for (guint i = 0; i < 257; i++)
    g_string_append_printf (many, "%s<%u,0,1,1>", i ? "," : "", i);
  g_string_append (many, ">");
  bad[2][0] = many->str;
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    e = gcvt_element_new ();
    g_object_set (e, "region-mode", 1, NULL);
    gcvt_log_capture_start ();
    gst_util_set_object_arg (G_OBJECT (e), "regions", bad[i][0]);
    gcvt_log_capture_stop ();
    gcvt_bus (e);
    fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
        GST_STATE_CHANGE_FAILURE);
    assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
        GST_MESSAGE_ERROR, bad[i][1], "regions", bad[i][1], bad[i][2], NULL);
    gst_element_set_state (e, GST_STATE_NULL);
    /* a value taken afterwards clears it */
    set_regions (e, kept, 1);
    fail_unless_equals_int (gst_element_set_state (e, GST_STATE_PAUSED),
        GST_STATE_CHANGE_SUCCESS);
    gst_element_set_state (e, GST_STATE_NULL);
    gcvt_element_unref (e);
  }

  /* on a launch line: the pipeline does not start */
  gcvt_log_capture_start ();
  pipeline = gcvt_pipeline_new ("videotestsrc num-buffers=2 ! "
      "video/x-raw,format=GRAY8,width=64,height=48 ! gpuconvolve "
      "region-mode=inside regions=\"<<100,20,64,64>,<10,10,-5,8>>\" ! "
      "fakesink");
  gcvt_log_capture_stop ();
  msg = gcvt_pipeline_run (pipeline, 10 * GST_SECOND, "launch line");
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR, "the pipeline "
      "ran with a refused regions value");
  assert_message_has (msg, GST_MESSAGE_ERROR, "launch line", "region 2",
      "10, 10, -5, 8", NULL);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);

  /* while running: the previous mask stays, a warning names the value */
  {
    e = box_element (&p, &k);
    g_object_set (e, "region-mode", 1, NULL);
    set_regions (e, kept, 1);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 48, 32);
    check_frame (h, in, &p, NULL, 0, kept, 1, 1, "before");
    gcvt_log_capture_start ();
    gst_util_set_object_arg (G_OBJECT (e), "regions", bad[0][0]);
    gcvt_log_capture_stop ();
    assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
        GST_MESSAGE_WARNING, "while running", "regions", "10, 10, -5, 8",
        "region 2", NULL);
    check_frame (h, in, &p, NULL, 0, kept, 1, 1, "after the refusal");
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_kernel_free (k);
  }
  ref_image_free (in);
  g_rand_free (r);
  g_string_free (many, TRUE);
}

GST_END_TEST;

/* region-fail: regions asked for but none in the frame (a fixed mask
 * after the caps shrink; regions off the frame in outside mode) or too
 * many for outside. closed filters the whole frame, open what the regions
 * allow, each with one warning per change; error stops. */
GST_START_TEST (test_regions_fail)
{
  const gint mask[] = { 40, 30, 20, 10 };
  GRand *r = ref_rand_new_seeded ("test_regions_fail", 79);
  RefImage *big = gcvt_random_image (r, REF_GRAY8, 64, 48, 0, 0);
  RefImage *small = gcvt_random_image (r, REF_GRAY8, 32, 24, 0, 0);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;

  g_object_set (e, "region-mode", 1, NULL);
  set_regions (e, mask, 1);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 64, 48);
  check_frame (h, big, &p, NULL, 0, mask, 1, 1, "the mask in the frame");
  fail_unless_equals_int (count_warnings (e), 0);
  /* 1280x720 to 640x360, in small: the mask is past the frame */
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 32, 24);
  check_frame (h, small, &p, NULL, 0, NULL, 0, 0, "closed");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "closed", "none of the 1 region", "32x24",
      "region-fail=closed", NULL);
  check_frame (h, small, &p, NULL, 0, NULL, 0, 0, "closed, again");
  fail_unless_equals_int (count_warnings (e), 0);
  gst_util_set_object_arg (G_OBJECT (e), "region-fail", "open");
  check_frame (h, small, &p, NULL, 0, NULL, 0, 1, "open: copied");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "open", "region-fail=open", NULL);
  /* outside: nothing to leave unfiltered, the whole frame filtered */
  g_object_set (e, "region-mode", 2, NULL);
  check_frame (h, small, &p, NULL, 0, NULL, 0, 0, "outside, open");
  gst_util_set_object_arg (G_OBJECT (e), "region-fail", "closed");
  check_frame (h, small, &p, NULL, 0, NULL, 0, 0, "outside, closed");
  fail_unless_equals_int (count_warnings (e), 2);
  /* no region asked: copied (inside), as before, without a word */
  g_object_set (e, "region-mode", 1, NULL);
  set_regions (e, NULL, 0);
  check_frame (h, small, &p, NULL, 0, NULL, 0, 1, "no region");
  fail_unless_equals_int (count_warnings (e), 0);
  /* error */
  set_regions (e, mask, 1);
  gst_util_set_object_arg (G_OBJECT (e), "region-fail", "error");
  fail_unless_equals_int (gst_harness_push (h, gcvt_buffer_new (small,
              REF_GRAY8, 0, 0, FALSE)), GST_FLOW_ERROR);
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_MESSAGE_ERROR, "error", "none of the 1 region",
      "region-fail=error", NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (big);
  ref_image_free (small);
  g_rand_free (r);
}

GST_END_TEST;

/* 257 regions of 2x2 on a grid of 4, for an 80x60 frame. */
static void
grid_regions (gint * rects, guint n)
{
  for (guint i = 0; i < n; i++) {
    const gint v[4] = { (i % 20) * 4, (i / 20) * 4, 2, 2 };
    memcpy (rects + 4 * i, v, sizeof (v));
  }
}

/* More than 256 regions on a frame. Inside: the last property region at
 * x = -2^31 does not take the face meta's pixels with it (the bounding box
 * in 64 bits, clipped), and a region past the 256th grows the last one
 * (more filtered, with a warning). Outside: never less filtered than
 * asked: closed filters the whole frame, open the regions past the 256th. */
GST_START_TEST (test_regions_overflow)
{
  const gint face[] = { 50, 40, 16, 12 };
  gint rects[4 * 258], want[4 * 257];
  GRand *r = ref_rand_new_seeded ("test_regions_overflow", 80);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, 80, 60, 0, 0);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;

  grid_regions (rects, 257);
  /* (a) 255 regions, one at x = -2^31 and a face */
  rects[4 * 255] = G_MININT;
  rects[4 * 255 + 2] = 100;
  g_object_set (e, "region-mode", 1, "region-source", 2, NULL);
  set_regions (e, rects, 256);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 80, 60);
  memcpy (want, rects, 255 * 4 * sizeof (gint));
  memcpy (want + 4 * 255, face, sizeof (face));
  check_frame (h, in, &p, face, 1, want, 256, 1, "x = -2^31 and a face");
  fail_unless_equals_int (count_warnings (e), 0);
  /* 256 in the frame and a face: the last grows to take the face */
  grid_regions (rects, 256);
  set_regions (e, rects, 256);
  memcpy (want, rects, 256 * 4 * sizeof (gint));
  want[4 * 255 + 0] = MIN (rects[4 * 255], face[0]);
  want[4 * 255 + 1] = MIN (rects[4 * 255 + 1], face[1]);
  want[4 * 255 + 2] = face[0] + face[2] - want[4 * 255];
  want[4 * 255 + 3] = face[1] + face[3] - want[4 * 255 + 1];
  check_frame (h, in, &p, face, 1, want, 256, 1, "grown");
  check_frame (h, in, &p, face, 1, want, 256, 1, "grown, again");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "grown", "257 regions", "more than asked", NULL);
  fail_unless_equals_int (count_warnings (e), 0);

  /* (b) outside, 257 metas */
  grid_regions (rects, 257);
  g_object_set (e, "region-mode", 2, "region-source", 1, NULL);
  check_frame (h, in, &p, rects, 257, NULL, 0, 0, "outside, closed");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "outside", "257 regions", "region-fail=closed",
      NULL);
  gst_util_set_object_arg (G_OBJECT (e), "region-fail", "open");
  check_frame (h, in, &p, rects, 257, rects, 256, 2, "outside, open");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;

static GPtrArray *debug_lines;

static void
debug_hook (GstDebugCategory * category, GstDebugLevel level,
    const gchar * file, const gchar * function, gint line, GObject * object,
    GstDebugMessage * message, gpointer user_data)
{
  if (level == GST_LEVEL_DEBUG
      && g_str_equal (gst_debug_category_get_name (category), "gpuconvolve"))
    g_ptr_array_add (debug_lines, g_strdup (gst_debug_message_get (message)));
}

static guint
debug_count (const gchar * word)
{
  guint n = 0;

  for (guint i = 0; i < debug_lines->len; i++)
    n += strstr (g_ptr_array_index (debug_lines, i), word) != NULL;
  return n;
}

/* Each decision the element makes about a region is in its DEBUG log:
 * clipped, dropped, merged; clipping and dropping change nothing that was
 * asked of the frame's pixels, so they post nothing. */
GST_START_TEST (test_regions_decisions_logged)
{
  const gint rects[] = { -5, 4, 20, 10, 70, 70, 5, 5, 10, 10, 0, 8 };
  gint many[4 * 257], want[4 * 256];
  GRand *r = ref_rand_new_seeded ("test_regions_decisions_logged", 81);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, 80, 60, 0, 0);
  GstDebugCategory *cat = _gst_debug_get_category ("gpuconvolve");
  const GstDebugLevel was = gst_debug_category_get_threshold (cat);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;

  debug_lines = g_ptr_array_new_with_free_func (g_free);
  gst_debug_add_log_function (debug_hook, NULL, NULL);
  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_category_set_threshold (cat, GST_LEVEL_DEBUG);
  g_object_set (e, "region-mode", 1, NULL);
  set_regions (e, rects, 3);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 80, 60);
  check_frame (h, in, &p, NULL, 0, rects, 3, 1, "clipped and dropped");
  fail_unless (debug_count ("region 1 <-5, 4, 20, 10> clipped") == 1);
  fail_unless (debug_count ("region 2 <70, 70, 5, 5> has no pixel") == 1);
  fail_unless (debug_count ("region 3 <10, 10, 0, 8> has no pixel") == 1);
  fail_unless_equals_int (count_warnings (e), 0);
  grid_regions (many, 257);
  set_regions (e, NULL, 0);
  g_object_set (e, "region-source", 1, NULL);
  memcpy (want, many, sizeof (want));
  want[4 * 255 + 2] = many[4 * 256] + 2 - many[4 * 255];
  check_frame (h, in, &p, many, 257, want, 256, 1, "merged");
  fail_unless (debug_count ("region 257 is past the 256 a frame takes: "
          "merged") == 1);
  fail_unless_equals_int (count_warnings (e), 1);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  gst_debug_category_set_threshold (cat, was);
  gst_debug_add_log_function (gst_debug_log_default, NULL, NULL);
  gst_debug_remove_log_function (debug_hook);
  g_clear_pointer (&debug_lines, g_ptr_array_unref);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;

/* Cuts a 1920x1080 plane for a 31x31 kernel and checks it: each sample
 * filtered or copied once, the holes of a merged cut inside the filtered
 * area, and what is filtered, less the holes, the samples of `want`
 * (want_x: by column, else by row). Returns what the filtered rectangles
 * cost: the rows filtered in all, and the samples with the halo. */
static void
check_cut (GcvRegionMode mode, const GcvRect * r, guint n,
    const gboolean * want, gboolean want_x, guint64 * rows, guint64 * halo,
    const gchar * what)
{
  const guint w = 1920, h = 1080, k = 31;
  const GcvRegionPlane plane = { w, h, w, h, 0 };
  GcvFrameOptions o;
  GcvRegionSplit split;
  guint8 *cover = g_new (guint8, w);
  guint64 area = 0;

  gcv_frame_options_init (&o);
  o.region_mode = mode;
  o.regions = r;
  o.n_regions = n;
  gcv_region_split_init (&split);
  split.kernel_width = split.kernel_height = k;
  gcv_region_split_run (&split, &o, &plane);
  *rows = *halo = 0;
  for (guint i = 0; i < split.filtered->len; i++) {
    const GcvRect *f = &g_array_index (split.filtered, GcvRect, i);
    *rows += f->height;
    *halo += (guint64) (f->width + k - 1) * (f->height + k - 1);
  }
  for (guint y = 0; y < h; y++) {
    guint n_holes;
    const GcvRegionSpan *holes = gcv_region_split_holes (&split, y, 0, w,
        &n_holes);

    memset (cover, 0, w);
    for (guint i = 0; i < split.filtered->len + split.copied->len; i++) {
      const gboolean f = i < split.filtered->len;
      const GcvRect *c = f ? &g_array_index (split.filtered, GcvRect, i) :
          &g_array_index (split.copied, GcvRect, i - split.filtered->len);
      if ((gint) y >= c->y && (gint) y < c->y + c->height)
        for (gint x = c->x; x < c->x + c->width; x++)
          cover[x] += f ? 1 : 16;
    }
    for (guint i = 0; i < n_holes; i++)
      for (guint x = holes[i].x0; x < holes[i].x1; x++) {
        /* not fail_unless(): each pass of it is a message to the parent */
        if (cover[x] != 1)
          ck_abort_msg ("%s: hole (%u, %u) not in the filtered area", what,
              x, y);
        cover[x] = 16;
      }
    for (guint x = 0; x < w; x++) {
      if (cover[x] != 1 && cover[x] != 16)
        ck_abort_msg ("%s: (%u, %u) covered %u times", what, x, y,
            cover[x] % 16 + cover[x] / 16);
      if ((cover[x] == 1) != want[want_x ? x : y])
        ck_abort_msg ("%s: (%u, %u) %s", what, x, y, cover[x] == 1 ?
            "filtered" : "copied");
      area += cover[x] == 1;
    }
  }
  fail_unless_equals_uint64 (gcv_region_split_area (&split), area);
  gcv_region_split_clear (&split);
  g_free (cover);
}

/* 256 one-pixel columns or rows of a 1080p plane with a 31x31 kernel, each
 * mode: the cut filters what was asked, and costs no more than 1.5 times
 * the whole plane (256 rectangles, each re-reading the halo and paying a
 * row's overhead, cost 7 to 8 whole frames). */
GST_START_TEST (test_regions_cut_thin)
{
  const guint w = 1920, h = 1080, k = 31;
  const guint64 whole = (guint64) (w + k - 1) * (h + k - 1);
  GcvRect r[256];
  gboolean *want = g_new (gboolean, w);

  for (guint rows_case = 0; rows_case < 2; rows_case++)
    for (guint mode = GCV_REGIONS_INSIDE; mode <= GCV_REGIONS_OUTSIDE;
        mode++) {
      gchar *what = g_strdup_printf ("256 one-pixel %s, %s",
          rows_case ? "rows" : "columns", mode == 1 ? "inside" : "outside");
      guint64 rows, halo;

      for (guint i = 0; i < w; i++)
        want[i] = mode == GCV_REGIONS_OUTSIDE;
      for (guint i = 0; i < 256; i++) {
        const guint at = rows_case ? i * 4 + 1 : i * 7 + 3;
        r[i] = rows_case ? (GcvRect) { 0, (gint) at, (gint) w, 1 } :
            (GcvRect) { (gint) at, 0, 1, (gint) h };
        want[at] = mode == GCV_REGIONS_INSIDE;
      }
      check_cut (mode, r, 256, want, !rows_case, &rows, &halo, what);
      fail_unless (rows <= h * 3 / 2, "%s: %" G_GUINT64_FORMAT " rows "
          "filtered, the plane has %u", what, rows, h);
      fail_unless (halo <= whole * 3 / 2, "%s: %" G_GUINT64_FORMAT
          " samples read with the halo, the plane %" G_GUINT64_FORMAT,
          what, halo, whole);
      g_free (what);
    }
  /* two faces stay two rectangles */
  {
    const GcvRect faces[] = { {100, 100, 200, 200}, {900, 500, 150, 180} };
    GcvFrameOptions o;
    GcvRegionSplit split;
    const GcvRegionPlane plane = { w, h, w, h, 0 };

    gcv_frame_options_init (&o);
    o.region_mode = GCV_REGIONS_INSIDE;
    o.regions = faces;
    o.n_regions = 2;
    gcv_region_split_init (&split);
    split.kernel_width = split.kernel_height = k;
    gcv_region_split_run (&split, &o, &plane);
    fail_unless (!split.merged && split.filtered->len == 2);
    gcv_region_split_clear (&split);
  }
  g_free (want);
}

GST_END_TEST;

/* Thin columns and rows through the element (a merged cut): the filtered
 * area against the reference, the rest the input's bytes, and the
 * statistics of the filtered area only. */
GST_START_TEST (test_regions_thin_frame)
{
  const guint w = 160, hgt = 90;
  gint rects[4 * 60];
  GRand *r = ref_rand_new_seeded ("test_regions_thin_frame", 82);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, w, hgt, 0, 0);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;

  for (guint i = 0; i < 40; i++) {
    const gint v[4] = { (gint) i * 4 + 1, 0, 1 + i % 2, (gint) hgt };
    memcpy (rects + 4 * i, v, sizeof (v));
  }
  for (guint i = 40; i < 60; i++) {
    const gint v[4] = { 0, (gint) (i - 40) * 4 + 2, (gint) w, 1 };
    memcpy (rects + 4 * i, v, sizeof (v));
  }
  set_regions (e, rects, 60);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, w, hgt);
  for (guint mode = 1; mode <= 2; mode++) {
    g_object_set (e, "region-mode", mode, NULL);
    check_frame (h, in, &p, NULL, 0, rects, 60, mode, mode == 1 ?
        "thin, inside" : "thin, outside");
  }
  fail_unless_equals_int (count_warnings (e), 0);
  /* the statistics: the filtered samples only, the values stored there
   * (each within the rounding's 0.5) */
  g_object_set (e, "statistics", TRUE, NULL);
  {
    GstBuffer *out = gcvt_process (h, gcvt_buffer_new (in, REF_GRAY8, 0, 0,
            FALSE));
    GstCustomMeta *meta = gst_buffer_get_custom_meta (out,
        "GstGpuConvolveStatisticsMeta");
    const GstStructure *st;
    GstMapInfo map;
    guint64 count = 0;
    gdouble sum = 0.0, got;

    fail_unless (meta != NULL, "no statistics meta");
    st = gst_custom_meta_get_structure (meta);
    fail_unless (gst_buffer_map (out, &map, GST_MAP_READ));
    for (guint y = 0; y < hgt; y++)
      for (guint x = 0; x < w; x++)
        if (ref_region_filtered (rects, 60, 2, w, hgt, 1, x, y)) {
          count++;
          sum += map.data[y * ref_default_stride (REF_GRAY8, w) + x];
        }
    gst_buffer_unmap (out, &map);
    fail_unless_equals_uint64 (g_value_get_uint64 (gst_value_array_get_value
            (gst_structure_get_value (st, "count"), 0)), count);
    got = g_value_get_double (gst_value_array_get_value
        (gst_structure_get_value (st, "sum"), 0));
    fail_unless (fabs (got - sum) <= 0.5 * count, "sum %g, the stored "
        "values' %g", got, sum);
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;

#ifdef GCVT_HAVE_ANALYTICS
/* An object detection labelled `label` at `r` on `buf`, in its analytics
 * relation meta, as a detector's tensor decoder attaches them. */
static void
add_detection_labelled (GstBuffer * buf, const gchar * label,
    const gint r[4])
{
  GstAnalyticsRelationMeta *m = gst_buffer_get_analytics_relation_meta (buf);
  GstAnalyticsODMtd od;

  if (!m)
    m = gst_buffer_add_analytics_relation_meta (buf);
  fail_unless (gst_analytics_relation_meta_add_od_mtd (m,
          g_quark_from_string (label), r[0], r[1], r[2], r[3], 0.8f, &od));
}

static void
add_person (GstBuffer * buf, const gint r[4])
{
  add_detection_labelled (buf, "person", r);
}

/* A GRAY8 frame of `in` with the n detections `dets`, each labelled
 * labels[i], and the n_roi ROI metas `rois` labelled roi_labels[i]. */
static GstBuffer *
detections_buffer (const RefImage * in, const gint * dets,
    const gchar ** labels, guint n, const gint * rois,
    const gchar ** roi_labels, guint n_roi)
{
  GstBuffer *buf = gcvt_buffer_new (in, REF_GRAY8, 0, 0, FALSE);

  for (guint i = 0; i < n; i++)
    add_detection_labelled (buf, labels[i], dets + 4 * i);
  for (guint i = 0; i < n_roi; i++)
    gst_buffer_add_video_region_of_interest_meta (buf, roi_labels[i],
        rois[4 * i], rois[4 * i + 1], rois[4 * i + 2], rois[4 * i + 3]);
  return buf;
}

/* Object detections as regions: only those whose label region-type lists
 * (a list, blanks around a label ignored), ROI metas of those labels
 * with them; every one when region-type is empty; the property's with
 * region-source=both; a frame with no detection of those labels, or no
 * analytics meta, copied without a word; detections that all miss the
 * frame fail closed. */
GST_START_TEST (test_regions_analytics)
{
  const gint dets[] = { 10, 10, 30, 20, 50, 10, 20, 20, 100, 40, 40, 30 };
  const gchar *labels[] = { "person", "dog", "car" };
  const gint rois[] = { 60, 60, 20, 20, 5, 60, 20, 20 };
  const gchar *roi_labels[] = { "car", "face" };
  const gint prop[] = { 130, 5, 20, 20 };
  const gint off[] = { 200, 100, 10, 10 };
  gint want[4 * 6];
  GRand *r = ref_rand_new_seeded ("test_regions_analytics", 83);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, 160, 90, 0, 0);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;

  g_object_set (e, "region-mode", 1, "region-source", 1, "region-type",
      " person, car ", NULL);
  set_regions (e, prop, 1);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 160, 90);
  /* person and car detections, the car ROI meta; not the dog, the face */
  memcpy (want, dets, 4 * sizeof (gint));
  memcpy (want + 4, dets + 8, 4 * sizeof (gint));
  memcpy (want + 8, rois, 4 * sizeof (gint));
  check_buffer (h, detections_buffer (in, dets, labels, 3, rois,
          roi_labels, 2), in, &p, want, 3, 1, "person and car");
  /* every label */
  g_object_set (e, "region-type", "", NULL);
  memcpy (want, dets, sizeof (dets));
  memcpy (want + 12, rois, sizeof (rois));
  check_buffer (h, detections_buffer (in, dets, labels, 3, rois,
          roi_labels, 2), in, &p, want, 5, 1, "every label");
  /* the property's and the dog's */
  g_object_set (e, "region-source", 2, "region-type", "dog", NULL);
  memcpy (want, prop, sizeof (prop));
  memcpy (want + 4, dets + 4, 4 * sizeof (gint));
  check_buffer (h, detections_buffer (in, dets, labels, 3, rois,
          roi_labels, 2), in, &p, want, 2, 1, "both, dog");
  /* none of the labels, no analytics meta: nothing asked, copied */
  g_object_set (e, "region-source", 1, "region-type", "cat", NULL);
  check_buffer (h, detections_buffer (in, dets, labels, 3, NULL, NULL, 0),
      in, &p, NULL, 0, 1, "no cat");
  check_buffer (h, gcvt_buffer_new (in, REF_GRAY8, 0, 0, FALSE), in, &p,
      NULL, 0, 1, "no meta");
  fail_unless_equals_int (count_warnings (e), 0);
  /* a detection that misses the frame: the whole frame, a warning */
  g_object_set (e, "region-type", "person", NULL);
  check_buffer (h, detections_buffer (in, off, labels, 1, NULL, NULL, 0),
      in, &p, NULL, 0, 0, "off the frame");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "off the frame", "none of the 1 region",
      "region-fail=closed", NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;

/* A detection in a cropped buffer's pixels, moved by the crop origin. */
GST_START_TEST (test_regions_analytics_crop)
{
  check_crop (add_person);
}

GST_END_TEST;

/* More than 256 detections: inside, the last region grows to take the
 * 257th (a warning says so); outside, 200 ROI metas and 57 detections
 * are 257 regions of one frame: closed filters the whole frame. */
GST_START_TEST (test_regions_analytics_overflow)
{
  gint rects[4 * 257], want[4 * 256];
  const gchar *labels[257];
  GRand *r = ref_rand_new_seeded ("test_regions_analytics_overflow", 84);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, 80, 60, 0, 0);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;

  for (guint i = 0; i < 257; i++)
    labels[i] = "person";
  grid_regions (rects, 257);
  g_object_set (e, "region-mode", 1, "region-source", 1, NULL);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 80, 60);
  memcpy (want, rects, sizeof (want));
  want[4 * 255 + 2] = rects[4 * 256] + 2 - rects[4 * 255];
  check_buffer (h, detections_buffer (in, rects, labels, 257, NULL, NULL,
          0), in, &p, want, 256, 1, "257 detections, inside");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "grown", "257 regions", "more than asked", NULL);
  g_object_set (e, "region-mode", 2, NULL);
  check_buffer (h, detections_buffer (in, rects + 4 * 200, labels, 57,
          rects, labels, 200), in, &p, NULL, 0, 0, "257 metas, outside");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "outside", "257 regions", "region-fail=closed",
      NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;
/* named for the skip's line only: it is not built */
#define test_regions_analytics_unread NULL
#else
/* named for the skip's line only: they are not built */
#define test_regions_analytics NULL
#define test_regions_analytics_crop NULL
#define test_regions_analytics_overflow NULL

static gboolean
relation_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  return TRUE;
}

/* A meta of the API GStreamer 1.24's analytics relation meta has, as a
 * build against 1.22 sees one at run time with 1.24 or later. */
static const GstMetaInfo *
relation_meta_info (void)
{
  static const gchar *tags[] = { NULL };
  static const GstMetaInfo *info;

  if (!info)
    info = gst_meta_register (gst_meta_api_type_register
        ("GstAnalyticsRelationMetaAPI", tags), "GcvtRelationMeta",
        sizeof (GstMeta), relation_meta_init, NULL, NULL);
  return info;
}

/* A build without the analytics library cannot read the detections of an
 * analytics meta: a frame that has one fails as region-fail says (closed:
 * the whole frame; open: the other regions only; error: stop), each
 * with its message; a frame without one is filtered as asked. */
GST_START_TEST (test_regions_analytics_unread)
{
  const gint face[] = { 20, 10, 16, 12 };
  GRand *r = ref_rand_new_seeded ("test_regions_analytics_unread", 85);
  RefImage *in = gcvt_random_image (r, REF_GRAY8, 64, 48, 0, 0);
  RefParams p;
  RefKernel *k;
  GstElement *e = box_element (&p, &k);
  GstHarness *h;
  GstBuffer *buf;

  g_object_set (e, "region-mode", 1, "region-source", 1, NULL);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 64, 48);
  check_frame (h, in, &p, face, 1, face, 1, 1, "no analytics meta");
  fail_unless_equals_int (count_warnings (e), 0);
  buf = gcvt_buffer_new (in, REF_GRAY8, 0, 0, FALSE);
  add_face (buf, face);
  gst_buffer_add_meta (buf, relation_meta_info (), NULL);
  check_buffer (h, gst_buffer_ref (buf), in, &p, NULL, 0, 0, "closed");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "closed", "analytics meta",
      "gstreamer-analytics-1.0", "region-fail=closed", NULL);
  gst_util_set_object_arg (G_OBJECT (e), "region-fail", "open");
  check_buffer (h, gst_buffer_ref (buf), in, &p, face, 1, 1, "open");
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_WARNING),
      GST_MESSAGE_WARNING, "open", "analytics meta", "region-fail=open",
      NULL);
  gst_util_set_object_arg (G_OBJECT (e), "region-fail", "error");
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  assert_message_has (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_MESSAGE_ERROR, "error", "analytics meta", "region-fail=error",
      NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (in);
  g_rand_free (r);
}

GST_END_TEST;
#endif

static Suite *
regions_suite (void)
{
  Suite *s = suite_create ("regions");
  TCase *tc = tcase_create ("general");
  const gchar *analytics = "built without GStreamer's analytics library "
      "(gstreamer-analytics-1.0, GStreamer 1.24 and later)";

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_regions_property);
  tcase_add_test (tc, test_regions_small);
  tcase_add_test (tc, test_regions_refused);
  tcase_add_test (tc, test_regions_roi_meta);
  tcase_add_test (tc, test_regions_crop);
  tcase_add_test (tc, test_regions_planar);
  tcase_add_test (tc, test_regions_statistics);
  tcase_add_test (tc, test_regions_formats);
  tcase_add_test (tc, test_regions_refused_at_start);
  tcase_add_test (tc, test_regions_fail);
  tcase_add_test (tc, test_regions_overflow);
  tcase_add_test (tc, test_regions_decisions_logged);
  GCVT_ADD_TEST_IF (tc, test_regions_cut_thin, !gcvt_on_cuda (),
      "the engine's cut, the same on every backend: the cpu suite checks it");
  tcase_add_test (tc, test_regions_thin_frame);
#ifdef GCVT_HAVE_ANALYTICS
  analytics = NULL;
#endif
  GCVT_ADD_TEST_IF (tc, test_regions_analytics, analytics == NULL, analytics);
  GCVT_ADD_TEST_IF (tc, test_regions_analytics_crop, analytics == NULL,
      analytics);
  GCVT_ADD_TEST_IF (tc, test_regions_analytics_overflow, analytics == NULL,
      analytics);
  GCVT_ADD_TEST_IF (tc, test_regions_analytics_unread, analytics != NULL,
      "built with GStreamer's analytics library: its metas are read");
  return s;
}

GCVT_MAIN (regions);
