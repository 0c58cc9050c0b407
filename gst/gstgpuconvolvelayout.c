/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a frame lies in a mapped buffer, checked: each plane's offset and
 * stride from a GstVideoMeta, CUDA memory's own layout or the caps, the
 * region from a GstVideoCropMeta, and every byte the frame spans inside
 * the mapping, with sums checked for overflow (docs/formats.md). A frame
 * that does not fit is an error naming the plane, stride and sizes
 * (docs/errors.md). */
#include "gstgpuconvolveprivate.h"
#include "gstgpuconvolvecuda.h"

#include <gst/video/video.h>
#include <string.h>

/* Where a frame's planes lie in a buffer: a GstVideoMeta's offsets and
 * strides, else those of CUDA memory's own layout, else the caps'
 * default. */
static void
buffer_layout (GstBuffer * buf, const GstGpuConvolveInfo * info,
    gboolean device, gsize offset[], gint stride[])
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  const GstVideoInfo *layout = device ? gst_gpu_convolve_cuda_layout (buf) :
      &info->layout;

  for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES (&info->layout); i++) {
    offset[i] = meta ? meta->offset[i] : GST_VIDEO_INFO_PLANE_OFFSET (layout,
        i);
    stride[i] = meta ? meta->stride[i] : GST_VIDEO_INFO_PLANE_STRIDE (layout,
        i);
  }
}

/* Plane i of a frame of `info`: its bytes per row and rows, and per pixel
 * of the frame's x (NV12's and P010's UV rows have a pair per two
 * pixels). */
static void
plane_size (const GstGpuConvolveInfo * info, guint i, gsize * row,
    guint * rows, guint * sub)
{
  guint cw, ch;

  *row = (gsize) info->width * gcv_format_pixel_size (info->format);
  *rows = info->height;
  *sub = 1;
  if (i > 0 && gcv_format_chroma_size (info->format, info->width,
          info->height, &cw, &ch)) {
    *row = info->format == GCV_FORMAT_I420 ? cw : 2 * (gsize) cw
        * gcv_format_pixel_size (info->format);
    *rows = ch;
    *sub = 2;
  }
}

static const gchar *const plane_names[] = { "", " UV plane", " V plane" };

/* The frame of `info` in a mapped buffer, from (x, y) on (a crop region):
 * every byte it spans must lie inside the mapping. The sums are checked
 * for overflow, as a meta's values are anybody's. */
static gboolean
frame_image (GstGpuConvolve * self, GstBuffer * buf, GstMapInfo * map,
    const GstGpuConvolveInfo * info, gboolean device, guint x, guint y,
    const gchar * what, GcvImage * img)
{
  const gchar *name = gcv_format_name (info->format);
  gsize offset[GST_GPU_CONVOLVE_MAX_PLANES] = { 0 };
  gint stride[GST_GPU_CONVOLVE_MAX_PLANES] = { 0 };
  guint n = GST_VIDEO_INFO_N_PLANES (&info->layout);

  memset (img, 0, sizeof (*img));
  img->on_device = device;
  buffer_layout (buf, info, device, offset, stride);
  for (guint i = 0; i < n; i++) {
    const gchar *plane = info->format == GCV_FORMAT_I420 && i == 1 ?
        " U plane" : plane_names[i];
    gsize row, px, start, rows_bytes, end;
    guint rows, sub, px_x, px_y;
    gboolean sized;

    plane_size (info, i, &row, &rows, &sub);
    /* chroma starts at the sample that covers (x, y), at x / sub and
     * y / sub rounded down as videocrop cuts it; NV12's and P010's
     * samples are UV pairs (of two bytes, or two words), so an odd x still
     * lands on a U sample */
    px = gcv_format_pixel_size (info->format);
    if (i > 0 && info->format != GCV_FORMAT_I420)
      px *= 2;
    px_x = i > 0 ? x / sub : x;
    px_y = i > 0 ? y / sub : y;
    if (stride[i] <= 0 || (gsize) stride[i] < row
        || (gsize) px_x * px > (gsize) stride[i] - row) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("%s%s stride %d cannot hold a row of %" G_GSIZE_FORMAT " bytes of "
              "%ux%u %s from x=%u", what, plane, stride[i], row, info->width,
              info->height, name, x), (NULL));
      return FALSE;
    }
    /* start = offset + y * stride + x * px; end = start + (rows - 1) *
     * stride + row */
    sized = g_size_checked_mul (&start, px_y, (gsize) stride[i])
        && g_size_checked_add (&start, start, (gsize) px_x * px)
        && g_size_checked_add (&start, start, offset[i])
        && g_size_checked_mul (&rows_bytes, rows - 1, (gsize) stride[i])
        && g_size_checked_add (&end, start, rows_bytes)
        && g_size_checked_add (&end, end, row);
    if (!sized || end > map->size) {
      gchar *need = sized ? g_strdup_printf ("%" G_GSIZE_FORMAT, end) :
          g_strdup ("more than 2^64");
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("%s buffer of %" G_GSIZE_FORMAT " bytes is smaller than a %ux%u "
              "%s frame%s at offset %" G_GSIZE_FORMAT ", stride %d, region "
              "(%u,%u): %s bytes", what, map->size, info->width, info->height,
              name, plane, offset[i], stride[i], x, y, need), (NULL));
      g_free (need);
      return FALSE;
    }
    if (i == 0) {
      img->data = map->data + start;
      img->stride = stride[i];
    } else {
      img->chroma[i - 1] = map->data + start;
      img->chroma_stride[i - 1] = stride[i];
    }
  }
  return TRUE;
}

/* The input frame: the crop region (of the negotiated size) where a
 * GstVideoCropMeta gives one. */
gboolean
gst_gpu_convolve_input_image (GstGpuConvolve * self, GstBuffer * inbuf,
    GstMapInfo * map, gboolean device, GcvImage * img)
{
  const GstGpuConvolveInfo *info = &self->in_info;
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (inbuf);
  guint x = 0, y = 0;

  if (crop) {
    if (crop->width != info->width || crop->height != info->height) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("Input crop region %ux%u at (%u,%u) is not the negotiated %ux%u",
              crop->width, crop->height, crop->x, crop->y, info->width,
              info->height), (NULL));
      return FALSE;
    }
    /* any x and y, also odd ones on 4:2:0 (frame_image() finds the
     * chroma that covers them) */
    x = crop->x;
    y = crop->y;
  }
  return frame_image (self, inbuf, map, info, device, x, y, "Input", img);
}

/* The output frame, which fills the buffer from its start. */
gboolean
gst_gpu_convolve_output_image (GstGpuConvolve * self, GstBuffer * outbuf,
    GstMapInfo * map, gboolean device, GcvImage * img)
{
  return frame_image (self, outbuf, map, &self->out_info, device, 0, 0,
      "Output", img);
}

/* Whether `inbuf` holds the negotiated frame (input_image()'s checks,
 * with the error posted when not). */
gboolean
gst_gpu_convolve_input_fits (GstGpuConvolve * self, GstBuffer * inbuf)
{
  GstMapInfo map;
  GcvImage img;
  gboolean ok;

  if (!gst_buffer_map (inbuf, &map, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not map a buffer"),
        (NULL));
    return FALSE;
  }
  ok = gst_gpu_convolve_input_image (self, inbuf, &map, FALSE, &img);
  gst_buffer_unmap (inbuf, &map);
  return ok;
}
