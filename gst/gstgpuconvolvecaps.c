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
 * the same first, so negotiation prefers no conversion, then those the
 * engine converts into (downstream) or from (upstream):
 * gcv_format_converts_to(). */
static void
add_formats (GValue * out, const GValue * value, GstPadDirection direction)
{
  GcvFormat f;

  if (GST_VALUE_HOLDS_LIST (value)) {
    for (guint i = 0; i < gst_value_list_get_size (value); i++)
      add_formats (out, gst_value_list_get_value (value, i), direction);
    return;
  }
  if (!G_VALUE_HOLDS_STRING (value))
    return;
  append_string (out, g_value_get_string (value));
  if (!gcv_format_from_name (g_value_get_string (value), &f))
    return;
  for (GcvFormat o = 0; o <= GCV_FORMAT_LAST; o++)
    if (direction == GST_PAD_SINK ? gcv_format_converts_to (f, o) :
        gcv_format_converts_to (o, f))
      append_string (out, gcv_format_name (o));
}

/* Whether the CUDA backend takes frames of `f` (gcv_backend_takes()). A
 * build without it keeps every format: start() then says what is
 * missing, which says more than a failed negotiation. */
static gboolean
cuda_takes (GcvFormat f)
{
  GcvNeeds needs = { 0 };
  GError *error = NULL;
  gboolean takes;

  needs.formats = GCV_FORMAT_BIT (f);
  takes = gcv_backend_takes (GCV_BACKEND_CUDA, &needs, &error)
      || g_error_matches (error, GCV_ERROR, GCV_ERROR_NO_DEVICE);
  g_clear_error (&error);
  return takes;
}

/* The formats of `formats` (a list) that the CUDA backend takes, as a
 * string or a list; FALSE where there are none. */
static gboolean
cuda_formats (GValue * out, const GValue * formats)
{
  GValue list = G_VALUE_INIT;

  g_value_init (&list, GST_TYPE_LIST);
  for (guint i = 0; i < gst_value_list_get_size (formats); i++) {
    const gchar *name = g_value_get_string (gst_value_list_get_value
        (formats, i));
    GcvFormat f;
    /* strings the engine has no name for fail negotiation either way */
    if (!gcv_format_from_name (name, &f)
        || cuda_takes (f))
      append_string (&list, name);
  }
  if (gst_value_list_get_size (&list) == 0) {
    g_value_unset (&list);
    return FALSE;
  }
  if (gst_value_list_get_size (&list) == 1) {
    g_value_init (out, G_TYPE_STRING);
    g_value_copy (gst_value_list_get_value (&list, 0), out);
    g_value_unset (&list);
  } else {
    *out = list;
  }
  return TRUE;
}

/* The strings of `value` (a format or a list of them) as a list: caps
 * from outside may hold anything in a list of formats, and what is no
 * string is no format. */
static void
format_list (GValue * list, const GValue * value)
{
  g_value_init (list, GST_TYPE_LIST);
  if (GST_VALUE_HOLDS_LIST (value)) {
    for (guint i = 0; i < gst_value_list_get_size (value); i++) {
      const GValue *v = gst_value_list_get_value (value, i);
      if (G_VALUE_HOLDS_STRING (v))
        gst_value_list_append_value (list, v);
    }
  } else if (G_VALUE_HOLDS_STRING (value)) {
    gst_value_list_append_value (list, value);
  }
}

/* What CUDA memory on the other side may hold for `value` (a format or a
 * list) on this side: the formats the CUDA backend takes among those the
 * ones it takes here become (the CUDA engine runs the pair, so both ends
 * must be its); FALSE where there are none. */
static gboolean
cuda_side_formats (GValue * out, const GValue * value,
    GstPadDirection direction)
{
  GValue here = G_VALUE_INIT, taken = G_VALUE_INIT, there = G_VALUE_INIT;
  gboolean ok = FALSE;

  format_list (&here, value);
  if (cuda_formats (&taken, &here)) {
    g_value_init (&there, GST_TYPE_LIST);
    add_formats (&there, &taken, direction);
    ok = cuda_formats (out, &there);
    g_value_unset (&there);
    g_value_unset (&taken);
  }
  g_value_unset (&here);
  return ok;
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
    /* CUDA memory holds the formats the CUDA backend takes */
    GstStructure *cuda = NULL;
    if (format) {
      GValue formats = G_VALUE_INIT, on_cuda = G_VALUE_INIT;
      g_value_init (&formats, GST_TYPE_LIST);
      add_formats (&formats, format, direction);
      if (with_cuda && cuda_side_formats (&on_cuda, format, direction)) {
        cuda = gst_structure_copy (s);
        gst_structure_take_value (cuda, "format", &on_cuda);
      }
      gst_structure_set_value (s, "format",
          gst_value_list_get_size (&formats) == 1 ?
          gst_value_list_get_value (&formats, 0) : &formats);
      g_value_unset (&formats);
    } else if (with_cuda) {
      cuda = gst_structure_copy (s);
    }
    /* appended, not merged: merging asks GStreamer whether one structure
     * is a subset of another, and 1.22 fails an assertion there on ranges
     * its own parser accepts (width=[0,32761,3]: a step that does not reach
     * the maximum); caps that repeat a structure are still right */
    if (cuda && cuda_first)
      gst_caps_append_structure_full (res, gst_structure_copy (cuda),
          gst_caps_features_new (GST_GPU_CONVOLVE_CUDA_FEATURE, NULL));
    gst_caps_append_structure_full (res, gst_structure_copy (s), NULL);
    if (cuda && !cuda_first)
      gst_caps_append_structure_full (res, gst_structure_copy (cuda),
          gst_caps_features_new (GST_GPU_CONVOLVE_CUDA_FEATURE, NULL));
    if (cuda)
      gst_structure_free (cuda);
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

/* The caps without the formats the CUDA backend does not take (none in
 * this version: cuda_takes()), for backend=cuda: so that a converter in
 * front picks one it takes. A structure left with no format is dropped. */
GstCaps *
gst_gpu_convolve_caps_cuda_only (GstCaps * caps)
{
  GstCaps *res;

  if (gst_caps_is_any (caps))
    return caps;
  res = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *features = gst_caps_get_features (caps, i);
    const GValue *format = gst_structure_get_value (s, "format");

    if (format) {
      GValue all = G_VALUE_INIT, taken = G_VALUE_INIT;
      gboolean any;
      format_list (&all, format);
      any = cuda_formats (&taken, &all);
      g_value_unset (&all);
      if (!any) {
        gst_structure_free (s);
        continue;
      }
      gst_structure_take_value (s, "format", &taken);
    }
    gst_caps_append_structure_full (res, s,
        features ? gst_caps_features_copy (features) : NULL);
  }
  gst_caps_unref (caps);
  return res;
}
