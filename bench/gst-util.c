/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pipelines around the gpuconvolve element. */
#include "gst-util.h"

GstCaps *
bench_gst_caps (GcvFormat format, guint width, guint height)
{
  return gst_caps_new_simple ("video/x-raw",
      "format", G_TYPE_STRING, gcv_format_name (format),
      "width", G_TYPE_INT, (gint) width,
      "height", G_TYPE_INT, (gint) height,
      "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
}

GstElement *
bench_gst_pipeline (const char *sink_description, GstElement ** src,
    GstElement ** conv, GstElement ** sink, GError ** error)
{
  GstElement *pipeline;
  GstElementFactory *factory = gst_element_factory_find ("gpuconvolve");
  GError *err = NULL;
  gchar *description;

  if (!factory) {
    g_set_error (error, BENCH_GST_ERROR, 0, "no gpuconvolve element: set "
        "GST_PLUGIN_PATH to the folder holding libgstgpuconvolve.so");
    return NULL;
  }
  gst_object_unref (factory);
  description = g_strdup_printf ("appsrc name=src ! gpuconvolve name=conv ! "
      "%s", sink_description);
  pipeline = gst_parse_launch (description, &err);
  g_free (description);
  if (err) {
    /* a pipeline may come back with a recoverable error: not good enough */
    g_propagate_error (error, err);
    if (pipeline)
      gst_object_unref (pipeline);
    return NULL;
  }
  *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  *conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  if (!*src || !*conv || !*sink) {
    g_set_error (error, BENCH_GST_ERROR, 0, "pipeline '%s' lacks src, conv "
        "or sink", sink_description);
    g_clear_object (src);
    g_clear_object (conv);
    g_clear_object (sink);
    gst_object_unref (pipeline);
    return NULL;
  }
  return pipeline;
}

void
bench_gst_set_floats (GObject * object, const char *property,
    const gfloat * values, guint n)
{
  GValue array = G_VALUE_INIT;

  g_value_init (&array, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_FLOAT);
    g_value_set_float (&v, values[i]);
    gst_value_array_append_and_take_value (&array, &v);
  }
  g_object_set_property (object, property, &array);
  g_value_unset (&array);
}

GstBuffer *
bench_gst_wrap (gpointer data, gsize size)
{
  return gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, data, size,
      0, size, NULL, NULL);
}

gboolean
bench_gst_wait_eos (GstElement * pipeline, GstClockTime timeout,
    GError ** error)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, timeout,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean eos = FALSE;

  if (!msg) {
    g_set_error (error, BENCH_GST_ERROR, 0, "no end of stream within %"
        GST_TIME_FORMAT, GST_TIME_ARGS (timeout));
  } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *debug = NULL;
    gst_message_parse_error (msg, &err, &debug);
    g_set_error (error, BENCH_GST_ERROR, 0, "%s: %s%s%s",
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), err->message,
        debug ? " -- " : "", debug ? debug : "");
    g_error_free (err);
    g_free (debug);
  } else {
    eos = TRUE;
  }
  if (msg)
    gst_message_unref (msg);
  gst_object_unref (bus);
  return eos;
}
