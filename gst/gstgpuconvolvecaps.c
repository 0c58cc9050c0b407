/* Caps parsing and the GRAY8 <-> GRAY32F conversion offered on the other pad. */
#include "gstgpuconvolvecaps.h"

#include <gst/video/video.h>

gboolean
gst_gpu_convolve_info_from_caps (GstGpuConvolveInfo * info,
    const GstCaps * caps)
{
  const GstStructure *s;
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

  if (info->format == GCV_FORMAT_GRAY32F) {
    /* one native-endian binary32 per pixel, rows packed */
    info->stride = (gsize) width *4;
  } else {
    /* GStreamer's own layout rules for its formats (GRAY8 rows are padded to
     * 4 bytes). */
    GstVideoInfo vinfo;
    if (!gst_video_info_from_caps (&vinfo, caps))
      return FALSE;
    info->stride = GST_VIDEO_INFO_PLANE_STRIDE (&vinfo, 0);
  }
  info->size = info->stride * (gsize) height;
  return TRUE;
}

/* The formats the other pad can have for `value` (a string or a list). */
static void
add_formats (GValue * out, const GValue * value)
{
  if (GST_VALUE_HOLDS_LIST (value)) {
    for (guint i = 0; i < gst_value_list_get_size (value); i++)
      add_formats (out, gst_value_list_get_value (value, i));
    return;
  }
  if (!G_VALUE_HOLDS_STRING (value))
    return;
  /* the same format first, so negotiation prefers no conversion */
  gst_value_list_append_value (out, value);
  {
    const gchar *f = g_value_get_string (value), *other = NULL;
    if (g_strcmp0 (f, "GRAY8") == 0)
      other = "GRAY32F";
    else if (g_strcmp0 (f, "GRAY32F") == 0)
      other = "GRAY8";
    if (other) {
      GValue v = G_VALUE_INIT;
      g_value_init (&v, G_TYPE_STRING);
      g_value_set_static_string (&v, other);
      gst_value_list_append_value (out, &v);
      g_value_unset (&v);
    }
  }
}

/* Width, height and framerate pass through; GRAY8 and GRAY32F may turn into
 * each other. The same in both directions. */
GstCaps *
gst_gpu_convolve_caps_transform (GstCaps * caps, GstCaps * filter)
{
  GstCaps *res;

  if (gst_caps_is_any (caps))
    return filter ? gst_caps_ref (filter) : gst_caps_ref (caps);
  res = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *features;
    const GValue *format = gst_structure_get_value (s, "format");
    if (format) {
      GValue formats = G_VALUE_INIT;
      g_value_init (&formats, GST_TYPE_LIST);
      add_formats (&formats, format);
      gst_structure_set_value (s, "format",
          gst_value_list_get_size (&formats) == 1 ?
          gst_value_list_get_value (&formats, 0) : &formats);
      g_value_unset (&formats);
    }
    features = gst_caps_get_features (caps, i);
    gst_caps_append_structure_full (res, s,
        features ? gst_caps_features_copy (features) : NULL);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, res,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  return res;
}
