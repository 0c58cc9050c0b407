/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Caps parsing, and the formats and memories offered on the other pad. */
#include "gstgpuconvolvecaps.h"
#include "gstgpuconvolvecuda.h"

gboolean
gst_gpu_convolve_info_from_caps (GstGpuConvolveInfo * info,
    const GstCaps * caps)
{
  const GstStructure *s;
  GstCapsFeatures *features;
  gint width, height;

  memset (info, 0, sizeof (*info));
  if (!caps || gst_caps_get_size (caps) != 1 || !gst_caps_is_fixed (caps))
    return FALSE;
  s = gst_caps_get_structure (caps, 0);
  if (!gst_structure_has_name (s, "video/x-raw")
      || !gcv_format_from_name (gst_structure_get_string (s, "format"),
          &info->format)
      || !gst_structure_get_int (s, "width", &width)
      || !gst_structure_get_int (s, "height", &height)
      || width < 1 || height < 1 || width > GCV_MAX_FRAME_SIZE
      || height > GCV_MAX_FRAME_SIZE)
    return FALSE;
  info->width = width;
  info->height = height;
  if (!gst_structure_get_fraction (s, "framerate", &info->fps_n, &info->fps_d)) {
    info->fps_n = 0;
    info->fps_d = 1;
  }
  features = gst_caps_get_features (caps, 0);
  info->cuda_memory = features && gst_caps_features_contains (features,
      GST_GPU_CONVOLVE_CUDA_FEATURE);

  if (info->format == GCV_FORMAT_GRAY32F) {
    /* one native-endian binary32 per pixel, rows packed */
    gst_video_info_set_format (&info->layout, GST_VIDEO_FORMAT_GRAY16_LE,
        2 * width, height);
  } else {
    /* GStreamer's own layout rules for its formats (GRAY8 rows are padded
     * to 4 bytes, NV12 and I420 planes follow each other) */
    GstCaps *plain = gst_caps_copy (caps);
    gboolean ok;
    gst_caps_set_features (plain, 0, NULL);
    ok = gst_video_info_from_caps (&info->layout, plain);
    gst_caps_unref (plain);
    if (!ok)
      return FALSE;
  }
  info->stride = GST_VIDEO_INFO_PLANE_STRIDE (&info->layout, 0);
  info->size = GST_VIDEO_INFO_SIZE (&info->layout);
  return TRUE;
}

/* Appends a format unless the list has it. */
static void
append_string (GValue * list, const gchar * s)
{
  GValue v = G_VALUE_INIT;

  for (guint i = 0; i < gst_value_list_get_size (list); i++) {
    const GValue *e = gst_value_list_get_value (list, i);
    if (G_VALUE_HOLDS_STRING (e) && g_strcmp0 (g_value_get_string (e), s) == 0)
      return;
  }
  g_value_init (&v, G_TYPE_STRING);
  g_value_set_string (&v, s);
  gst_value_list_append_value (list, &v);
  g_value_unset (&v);
}

/* The formats the other pad can have for `value` (a string or a list):
 * the same first, so negotiation prefers no conversion. Downstream,
 * GRAY8 and GRAY32F turn into each other and NV12 and I420 into their
 * luma; upstream, the reverse. */
static void
add_formats (GValue * out, const GValue * value, GstPadDirection direction)
{
  const gchar *f;

  if (GST_VALUE_HOLDS_LIST (value)) {
    for (guint i = 0; i < gst_value_list_get_size (value); i++)
      add_formats (out, gst_value_list_get_value (value, i), direction);
    return;
  }
  if (!G_VALUE_HOLDS_STRING (value))
    return;
  f = g_value_get_string (value);
  append_string (out, f);
  if (g_strcmp0 (f, "GRAY8") == 0 || g_strcmp0 (f, "GRAY32F") == 0) {
    append_string (out, g_strcmp0 (f, "GRAY8") == 0 ? "GRAY32F" : "GRAY8");
    if (direction == GST_PAD_SRC) {
      append_string (out, "NV12");
      append_string (out, "I420");
    }
  } else if (direction == GST_PAD_SINK && (g_strcmp0 (f, "NV12") == 0
          || g_strcmp0 (f, "I420") == 0)) {
    append_string (out, "GRAY8");
    append_string (out, "GRAY32F");
  }
}

/* Width, height and framerate pass through; formats as add_formats()
 * says; memory: CUDA (when with_cuda) and system memory whatever the other
 * side has, as the element copies between them, the memory it has first:
 * CUDA memory in stays on the GPU, system memory in comes out in system
 * memory unless the other side asks for CUDA memory. */
GstCaps *
gst_gpu_convolve_caps_transform (GstPadDirection direction, GstCaps * caps,
    GstCaps * filter, gboolean with_cuda)
{
  GstCaps *res;

  if (gst_caps_is_any (caps))
    return filter ? gst_caps_ref (filter) : gst_caps_ref (caps);
  res = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *features = gst_caps_get_features (caps, i);
    gboolean cuda_first = features && gst_caps_features_contains (features,
        GST_GPU_CONVOLVE_CUDA_FEATURE);
    const GValue *format = gst_structure_get_value (s, "format");
    if (format) {
      GValue formats = G_VALUE_INIT;
      g_value_init (&formats, GST_TYPE_LIST);
      add_formats (&formats, format, direction);
      gst_structure_set_value (s, "format",
          gst_value_list_get_size (&formats) == 1 ?
          gst_value_list_get_value (&formats, 0) : &formats);
      g_value_unset (&formats);
    }
    /* appended, not merged: merging asks GStreamer whether one structure
     * is a subset of another, and 1.22 fails an assertion there on ranges
     * its own parser accepts (width=[0,32761,3]: a step that does not reach
     * the maximum); caps that repeat a structure are still right */
    if (with_cuda && cuda_first)
      gst_caps_append_structure_full (res, gst_structure_copy (s),
          gst_caps_features_new (GST_GPU_CONVOLVE_CUDA_FEATURE, NULL));
    gst_caps_append_structure_full (res, gst_structure_copy (s), NULL);
    if (with_cuda && !cuda_first)
      gst_caps_append_structure_full (res, gst_structure_copy (s),
          gst_caps_features_new (GST_GPU_CONVOLVE_CUDA_FEATURE, NULL));
    gst_structure_free (s);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, res,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  return res;
}
