/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Samples, random frames and filters, bounds and buffers of the formats
 * only the CPU backend takes (common-formats.h). */
#include "common-formats.h"

#include <math.h>
#include <string.h>

guint
gcvt_fmt_channels (GcvFormat f)
{
  return f == GCV_FORMAT_RGB || f == GCV_FORMAT_BGR ? 3 : 1;
}

gdouble
gcvt_fmt_max (GcvFormat f)
{
  switch (f) {
    case GCV_FORMAT_GRAY16_LE:
      return 65535.0;
    case GCV_FORMAT_P010_10LE:
      return 1023.0;
    case GCV_FORMAT_GRAY32F:
      return 1.0;
    default:
      return 255.0;
  }
}

gsize
gcvt_fmt_sample_bytes (GcvFormat f)
{
  return gcv_format_pixel_size (f) / gcvt_fmt_channels (f);
}

void
gcvt_fmt_put (guint8 * p, GcvFormat f, gdouble v)
{
  guint w;

  switch (f) {
    case GCV_FORMAT_GRAY32F:{
      gfloat x = (gfloat) v;
      memcpy (p, &x, sizeof (x));
      return;
    }
    case GCV_FORMAT_GRAY16_LE:
    case GCV_FORMAT_P010_10LE:
      w = (guint) v << (f == GCV_FORMAT_P010_10LE ? 6 : 0);
      p[0] = (guint8) w;
      p[1] = (guint8) (w >> 8);
      return;
    default:
      *p = (guint8) v;
  }
}

gdouble
gcvt_fmt_get (const guint8 * p, GcvFormat f)
{
  guint w;

  switch (f) {
    case GCV_FORMAT_GRAY32F:{
      gfloat x;
      memcpy (&x, p, sizeof (x));
      return x;
    }
    case GCV_FORMAT_GRAY16_LE:
    case GCV_FORMAT_P010_10LE:
      w = p[0] | p[1] << 8;
      if (f == GCV_FORMAT_P010_10LE) {
        fail_unless ((w & 0x3f) == 0, "P010 word 0x%04x has low bits set", w);
        w >>= 6;
      }
      return w;
    default:
      return *p;
  }
}

RefImage *
gcvt_fmt_random_image (GRand * r, GcvFormat f, guint w, guint h,
    guint channels)
{
  RefImage *img = ref_image_new (w, h, channels);
  const gsize n = (gsize) w * h * channels;

  for (gsize i = 0; i < n; i++)
    img->v[i] = f == GCV_FORMAT_GRAY32F ?
        (gfloat) g_rand_double_range (r, -0.25, 1.25) :
        g_rand_int_range (r, 0, (gint32) gcvt_fmt_max (f) + 1);
  return img;
}

RefKernel *
gcvt_fmt_random_params (GRand * r, GcvFormat in, RefBorder border,
    gboolean rank1, RefParams * p, GcvFilterDesc * d, gfloat ** taps)
{
  const guint kw = g_rand_int_range (r, 1, 8), kh = g_rand_int_range (r, 1,
      8);
  RefKernel *k = gcvt_random_kernel (r, kw, kh, rank1);
  const gdouble range = gcvt_fmt_max (in);

  ref_params_init (p, k);
  p->border = border;
  p->scale = (gfloat) (1.0 / ref_kernel_sum_abs (k));
  p->anchor_x = g_rand_int_range (r, 0, kw);
  p->anchor_y = g_rand_int_range (r, 0, kh);
  p->bias = in == GCV_FORMAT_GRAY32F ? 0.25 : floor (range * 0.2);
  p->border_value = in == GCV_FORMAT_GRAY32F ? 0.75 : floor (range * 0.7);

  *taps = g_new (gfloat, kw * kh);
  for (guint i = 0; i < kw * kh; i++)
    (*taps)[i] = (gfloat) k->k[i];
  gcv_filter_desc_init (d);
  d->builtin = GCV_BUILTIN_CUSTOM;
  d->kernel = *taps;
  d->n_kernel = kw * kh;
  d->kernel_width = kw;
  d->kernel_height = kh;
  d->scale = p->scale;
  d->bias = p->bias;
  d->anchor_x = p->anchor_x;
  d->anchor_y = p->anchor_y;
  d->border = (GcvBorder) border;
  d->border_value = p->border_value;
  return k;
}

gdouble
gcvt_fmt_largest_input (const RefImage * img, const RefParams * p)
{
  gdouble m = ref_image_max_abs (img);

  if (p->border == REF_BORDER_CONSTANT)
    m = MAX (m, fabs (p->border_value));
  return m;
}

void
gcvt_fmt_check_value (gdouble got, gdouble exact, GcvFormat out,
    const RefParams * p, gdouble max_in, gdouble unit, const gchar * what,
    guint x, guint y, guint c)
{
  gdouble want, tol;

  if (out == GCV_FORMAT_GRAY32F) {
    want = exact;
    tol = ref_float_bound (p, max_in, unit);
  } else {
    want = ref_to_uint (exact, (guint) gcvt_fmt_max (out));
    tol = ref_u8_bound (p, max_in * unit);
  }
  if (!(fabs (got - want) <= tol))
    fail ("%s: (%u, %u) channel %u is %.6g, the reference %.6g (exact "
        "%.6g), off by more than %g", what, x, y, c, got, want, exact, tol);
}

gchar *
gcvt_fmt_describe (GcvFormat in, GcvFormat out, guint w, guint h, gsize pad,
    const RefParams * p, gboolean rank1)
{
  return g_strdup_printf ("%s -> %s %ux%u pad %" G_GSIZE_FORMAT ", %ux%u %s "
      "kernel, border=%s", gcv_format_name (in), gcv_format_name (out), w, h,
      pad, p->kernel->kw, p->kernel->kh, rank1 ? "rank-1" : "dense",
      ref_border_nick (p->border));
}

/* --- the element's buffers ---------------------------------------------- */

void
gcvt_fmt_video_info (GstVideoInfo * info, GcvFormat f, guint w, guint h)
{
  const gboolean is_float = f == GCV_FORMAT_GRAY32F;

  fail_unless (gst_video_info_set_format (info, is_float ?
          GST_VIDEO_FORMAT_GRAY16_LE : gst_video_format_from_string
          (gcv_format_name (f)), is_float ? 2 * w : w, h));
}

guint8 *
gcvt_fmt_sample_ptr (const GstVideoFrame * frame, GcvFormat f, guint i,
    guint x, guint y, guint c)
{
  /* P010's U and V: pairs of words in the second plane */
  const guint plane = MIN (i, 1);
  const gsize step = i > 0 ? 4 : gcv_format_pixel_size (f);
  const gsize first = i > 0 ? (i - 1) * 2 : c * gcvt_fmt_sample_bytes (f);

  return (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (frame, plane)
      + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (frame, plane) + x * step
      + first;
}

GstBuffer *
gcvt_fmt_buffer_new (GcvFormat f, RefImage * const planes[3])
{
  const guint w = planes[0]->width, h = planes[0]->height;
  const guint n = f == GCV_FORMAT_P010_10LE ? 3 : 1;
  GstVideoInfo info;
  GstVideoFrame frame;
  GstBuffer *buf;

  gcvt_fmt_video_info (&info, f, w, h);
  buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  for (guint i = 0; i < n; i++) {
    const guint pw = i ? ref_chroma_size (w) : w;
    const guint ph = i ? ref_chroma_size (h) : h;
    const RefImage *img = planes[i];
    for (guint y = 0; y < ph; y++)
      for (guint x = 0; x < pw; x++)
        for (guint c = 0; c < (img ? img->channels : 1); c++)
          gcvt_fmt_put (gcvt_fmt_sample_ptr (&frame, f, i, x, y, c), f,
              img ? ref_pixel (img, x, y)[c] : 512.0);
  }
  gst_video_frame_unmap (&frame);
  return buf;
}
