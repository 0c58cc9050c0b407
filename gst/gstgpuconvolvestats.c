/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics as GStreamer carries them (docs/statistics.md).
 *
 * The meta is a custom meta (gst_meta_register_custom()) holding a
 * GstStructure, which GStreamer 1.22 and later both have, so applications
 * read it the same way on each. Its tags say that it is about the pixels:
 * elements that change them (size, orientation, colours) drop it, elements
 * that pass frames on keep it. */
#include "gstgpuconvolvestats.h"

#include <gst/video/video.h>


static const gchar *const meta_tags[] = {
  GST_META_TAG_VIDEO_STR, "size", "orientation", "colorspace", NULL
};

const gchar *const *
gst_gpu_convolve_stats_channel_names (GcvFormat format)
{
  static const gchar *const rgba[] = { "R", "G", "B", "A", NULL };
  static const gchar *const bgra[] = { "B", "G", "R", "A", NULL };
  static const gchar *const yuv[] = { "Y", "U", "V", NULL };
  static const gchar *const gray[] = { "gray", NULL };

  switch (format) {
    case GCV_FORMAT_RGBA:
    case GCV_FORMAT_RGBX:
    case GCV_FORMAT_RGB:
      return rgba;
    case GCV_FORMAT_BGRA:
    case GCV_FORMAT_BGRX:
    case GCV_FORMAT_BGR:
      return bgra;
    case GCV_FORMAT_NV12:
    case GCV_FORMAT_I420:
    case GCV_FORMAT_P010_10LE:
      return yuv;
    default:
      return gray;
  }
}

/* Copies only: any transform of the pixels makes the numbers stale. */
static gboolean
transform (GstBuffer * transbuf, GstCustomMeta * meta, GstBuffer * buffer,
    GQuark type, gpointer data, gpointer user_data)
{
  if (!GST_META_TRANSFORM_IS_COPY (type))
    return FALSE;
  gst_gpu_convolve_stats_attach (transbuf,
      gst_structure_copy (gst_custom_meta_get_structure (meta)));
  return TRUE;
}

void
gst_gpu_convolve_stats_register (void)
{
  static gsize registered;

  if (g_once_init_enter (&registered)) {
    gst_meta_register_custom (GST_GPU_CONVOLVE_STATS_META,
        (const gchar **) meta_tags, transform, NULL, NULL);
    g_once_init_leave (&registered, 1);
  }
}

/* An array field of one value per channel, from `get`. */
typedef void (*ChannelValue) (const GcvChannelStats * c, GValue * v);

static void
set_array (GstStructure * s, const gchar * field, GType type,
    const GcvFrameStats * stats, ChannelValue get)
{
  GValue array = G_VALUE_INIT;

  gst_value_array_init (&array, stats->n_channels);
  for (guint i = 0; i < stats->n_channels; i++) {
    GValue v = G_VALUE_INIT;

    g_value_init (&v, type);
    get (&stats->channel[i], &v);
    gst_value_array_append_and_take_value (&array, &v);
  }
  gst_structure_take_value (s, field, &array);
}

#define CHANNEL_GETTER(name, setter, member)                                \
  static void name (const GcvChannelStats * c, GValue * v)                  \
  {                                                                         \
    setter (v, c->member);                                                  \
  }
CHANNEL_GETTER (get_count, g_value_set_uint64, count)
CHANNEL_GETTER (get_sum, g_value_set_double, sum)
CHANNEL_GETTER (get_sum_squares, g_value_set_double, sum_squares)
CHANNEL_GETTER (get_min, g_value_set_double, min)
CHANNEL_GETTER (get_max, g_value_set_double, max)
CHANNEL_GETTER (get_min_x, g_value_set_uint, min_x)
CHANNEL_GETTER (get_min_y, g_value_set_uint, min_y)
CHANNEL_GETTER (get_max_x, g_value_set_uint, max_x)
CHANNEL_GETTER (get_max_y, g_value_set_uint, max_y)
CHANNEL_GETTER (get_above, g_value_set_uint64, above)
#undef CHANNEL_GETTER

static void
fill (GstStructure * s, const GcvFrameStats * stats, gdouble threshold,
    const gchar * const *channels)
{
  GValue names = G_VALUE_INIT;

  gst_value_array_init (&names, stats->n_channels);
  for (guint i = 0; i < stats->n_channels && channels[i]; i++) {
    GValue v = G_VALUE_INIT;

    g_value_init (&v, G_TYPE_STRING);
    g_value_set_static_string (&v, channels[i]);
    gst_value_array_append_and_take_value (&names, &v);
  }
  gst_structure_take_value (s, "channels", &names);
  set_array (s, "count", G_TYPE_UINT64, stats, get_count);
  set_array (s, "sum", G_TYPE_DOUBLE, stats, get_sum);
  set_array (s, "sum-squares", G_TYPE_DOUBLE, stats, get_sum_squares);
  set_array (s, "min", G_TYPE_DOUBLE, stats, get_min);
  set_array (s, "min-x", G_TYPE_UINT, stats, get_min_x);
  set_array (s, "min-y", G_TYPE_UINT, stats, get_min_y);
  set_array (s, "max", G_TYPE_DOUBLE, stats, get_max);
  set_array (s, "max-x", G_TYPE_UINT, stats, get_max_x);
  set_array (s, "max-y", G_TYPE_UINT, stats, get_max_y);
  set_array (s, "above", G_TYPE_UINT64, stats, get_above);
  gst_structure_set (s, "threshold", G_TYPE_DOUBLE, threshold, NULL);
}

GstStructure *
gst_gpu_convolve_stats_structure (const GcvFrameStats * stats,
    gdouble threshold, const gchar * const *channels)
{
  GstStructure *s = gst_structure_new_empty (GST_GPU_CONVOLVE_STATS_NAME);

  fill (s, stats, threshold, channels);
  return s;
}

static gboolean
copy_field (GQuark field, const GValue * value, gpointer dest)
{
  gst_structure_id_set_value (dest, field, value);
  return TRUE;
}

void
gst_gpu_convolve_stats_attach (GstBuffer * buf, GstStructure * s)
{
  GstCustomMeta *meta = gst_buffer_get_custom_meta (buf,
      GST_GPU_CONVOLVE_STATS_META);

  if (meta)
    gst_buffer_remove_meta (buf, (GstMeta *) meta);
  meta = gst_buffer_add_custom_meta (buf, GST_GPU_CONVOLVE_STATS_META);
  if (meta)
    gst_structure_foreach (s, copy_field, gst_custom_meta_get_structure (meta));
  gst_structure_free (s);
}

gboolean
gst_gpu_convolve_stats_is_meta (GstMeta * meta)
{
  return gst_meta_info_is_custom (meta->info)
      && gst_custom_meta_has_name ((GstCustomMeta *) meta,
      GST_GPU_CONVOLVE_STATS_META);
}

GstMessage *
gst_gpu_convolve_stats_message (GstElement * element,
    const GstSegment * segment, GstBuffer * buf, const GstStructure * s)
{
  GstClockTime ts = GST_BUFFER_PTS (buf);
  GstStructure *m = gst_structure_copy (s);

  /* the frame's times, as level and videoanalyse give them */
  gst_structure_set (m,
      "timestamp", G_TYPE_UINT64, ts,
      "stream-time", G_TYPE_UINT64,
      gst_segment_to_stream_time (segment, GST_FORMAT_TIME, ts),
      "running-time", G_TYPE_UINT64,
      gst_segment_to_running_time (segment, GST_FORMAT_TIME, ts),
      "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf), NULL);
  return gst_message_new_element (GST_OBJECT (element), m);
}
