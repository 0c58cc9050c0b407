/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privacy regions (docs/regions.md): region-mode inside and outside against
 * the reference with a mask (ref_region_filtered()), regions from the
 * property, from ROI metas and from both, with overlaps, edges, empty
 * regions and regions outside the frame; the crop origin; 4:2:0 chroma;
 * GRAY16_LE, RGB and P010_10LE;
 * statistics of the filtered area; and the refusals. On the CUDA backend,
 * which filters whole frames only in this version, the refusal is what is
 * checked. */
#include "common-formats.h"

#include <math.h>
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

/* The CUDA backend refuses regions with an error that says so. */
static void
expect_refused_on_cuda (GstElement * e, RefFormat format, const RefImage * in)
{
  GstHarness *h = gcvt_harness_new (e);

  gcvt_set_caps (h, format, format, in->width, in->height);
  fail_unless_equals_int (gst_harness_push (h, gcvt_buffer_new (in, format,
              0, 0, FALSE)), GST_FLOW_ERROR);
  gcvt_assert_message (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED, "regions");
  gst_harness_teardown (h);
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
      if (gcvt_on_cuda ()) {
        expect_refused_on_cuda (e, fmt, in);
      } else {
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

/* A crop meta: the frame is the crop region, and ROI metas, in the
 * buffer's pixels, are moved by its origin. */
GST_START_TEST (test_regions_crop)
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
  gst_buffer_add_video_region_of_interest_meta (buf, "face", roi[0], roi[1],
      roi[2], roi[3]);
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

/* GRAY16_LE, RGB and P010_10LE (planes=all), CPU only: each mode with the
 * awkward regions, filtered samples against the reference, the others the
 * input's bytes exactly. P010's input words carry low bits: the copied
 * area keeps them, the filtered one stores the low bits zero. */
GST_START_TEST (test_regions_cpu_formats)
{
  const GcvFormat formats[] = { GCV_FORMAT_GRAY16_LE, GCV_FORMAT_RGB,
    GCV_FORMAT_P010_10LE
  };
  /* several strips and bands; odd, where P010's last chroma samples
   * cover one pixel column and row */
  const guint sizes[][2] = { {1031, 67}, {301, 157}, {45, 31} };
  GRand *r = ref_rand_new_seeded ("test_regions_cpu_formats", 77);

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint mode = 1; mode <= 2; mode++) {
      const GcvFormat fmt = formats[f];
      const gboolean p010 = fmt == GCV_FORMAT_P010_10LE;
      const guint w = sizes[f][0], hgt = sizes[f][1], n_planes = p010 ? 3 : 1;
      RefImage *planes[3] = { NULL, NULL, NULL }, *want[3] = { NULL, NULL,
        NULL
      };
      gint rects[4 * 10];
      const guint n = awkward_regions (r, w, hgt, rects);
      RefParams p;
      GcvFilterDesc d;
      gfloat *taps;
      RefKernel *k = gcvt_fmt_random_params (r, fmt, (RefBorder) ((f + mode)
              % REF_N_BORDERS), mode == 1, &p, &d, &taps);
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

/* The statistics measure the filtered area only. */
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
  gdouble sum = 0.0;
  guint64 count = 0;

  ref_params_init (&p, k);
  ref = ref_filter (in, &p);
  for (guint y = 0; y < hgt; y++)
    for (guint x = 0; x < w; x++)
      if (ref_region_filtered (rects, 3, 1, w, hgt, 1, x, y)) {
        count++;
        sum += *ref_pixel (ref, x, y);
      }
  ref_image_free (ref);
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
  }
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

  /* GRAY8 to GRAY32F: outside the regions there is nothing to copy */
  if (!gcvt_on_cuda ()) {
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

static Suite *
regions_suite (void)
{
  Suite *s = suite_create ("regions");
  TCase *tc = tcase_create ("general");
  const gchar *whole = "the CUDA backend filters whole frames only: "
      "test_regions_property checks its refusal";

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_regions_property);
  tcase_add_test (tc, test_regions_refused);
  GCVT_ADD_TEST_IF (tc, test_regions_roi_meta, !gcvt_on_cuda (), whole);
  GCVT_ADD_TEST_IF (tc, test_regions_crop, !gcvt_on_cuda (), whole);
  GCVT_ADD_TEST_IF (tc, test_regions_planar, !gcvt_on_cuda (), whole);
  GCVT_ADD_TEST_IF (tc, test_regions_statistics, !gcvt_on_cuda (), whole);
  GCVT_ADD_TEST_IF (tc, test_regions_cpu_formats, !gcvt_on_cuda (),
      "the CUDA backend filters whole frames only");
  return s;
}

GCVT_MAIN (regions);
