/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The host reduction of the edge-energy analysis, the reference
 * (edge-energy-analysis.c): a Sobel derivative in x (a custom 3x3 kernel)
 * and one in y (filter=sobel-y) behind a tee, each giving GRAY32F into an
 * appsink; both float images are mapped and reduced here on one CPU
 * thread. */
#include "edge-energy-private.h"

#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <math.h>
#include <string.h>

/* A GValue array of floats, the type of gpuconvolve's kernel properties. */
static void
set_kernel (GstElement * element, const gchar * property, const gfloat * k,
    guint n)
{
  GValue array = G_VALUE_INIT;

  g_value_init (&array, GST_TYPE_ARRAY);
  for (guint i = 0; i < n; i++) {
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_FLOAT);
    g_value_set_float (&v, k[i]);
    gst_value_array_append_and_take_value (&array, &v);
  }
  g_object_set_property (G_OBJECT (element), property, &array);
  g_value_unset (&array);
}

/* The next sample of `sink`, NULL at the end of the stream, after an error
 * or at the deadline (then *failed is set). */
static GstSample *
pull (GstAppSink * sink, GstBus * bus, gint64 deadline, gboolean * failed,
    gboolean * timed_out)
{
  for (;;) {
    GstSample *sample;

    if (ee_past (deadline)) {
      *failed = *timed_out = TRUE;
      return NULL;
    }
    sample = gst_app_sink_try_pull_sample (sink, GST_SECOND / 10);
    if (sample)
      return sample;
    if (!ee_poll_bus (bus)) {
      *failed = TRUE;
      return NULL;
    }
    if (gst_app_sink_is_eos (sink))
      return NULL;
  }
}

/* A GRAY32F frame: rows are width*4 bytes apart unless a GstVideoMeta says
 * otherwise. */
typedef struct
{
  GstBuffer *buffer;
  GstMapInfo map;
  const guint8 *data;
  gint width, height;
  gsize stride;
} FloatFrame;

static gboolean
float_frame_map (FloatFrame * f, GstSample * sample)
{
  const GstStructure *s = gst_caps_get_structure (gst_sample_get_caps (sample),
      0);
  GstVideoMeta *meta;
  gsize offset = 0;

  memset (f, 0, sizeof (*f));
  if (!gst_structure_get_int (s, "width", &f->width)
      || !gst_structure_get_int (s, "height", &f->height)
      || g_strcmp0 (gst_structure_get_string (s, "format"), "GRAY32F") != 0) {
    g_printerr ("edge-energy: expected GRAY32F, got %" GST_PTR_FORMAT "\n", s);
    return FALSE;
  }
  f->buffer = gst_sample_get_buffer (sample);
  f->stride = (gsize) f->width * 4;
  meta = gst_buffer_get_video_meta (f->buffer);
  if (meta) {
    f->stride = meta->stride[0];
    offset = meta->offset[0];
  }
  if (!gst_buffer_map (f->buffer, &f->map, GST_MAP_READ))
    return FALSE;
  if (f->stride < (gsize) f->width * 4 || f->map.size < offset
      + f->stride * (f->height - 1) + (gsize) f->width * 4) {
    g_printerr ("edge-energy: a GRAY32F buffer is too small\n");
    gst_buffer_unmap (f->buffer, &f->map);
    return FALSE;
  }
  f->data = f->map.data + offset;
  return TRUE;
}

static inline gfloat
float_frame_get (const FloatFrame * f, gint x, gint y)
{
  gfloat v;
  memcpy (&v, f->data + y * f->stride + (gsize) x * 4, sizeof (v));
  return v;
}

GstElement *
ee_build_host (App * app, GPtrArray * elements, GstElement ** sinks)
{
  static const gfloat sobel_x[9] = {
    -1, 0, 1,
    -2, 0, 2,
    -1, 0, 1,
  };
  const EdgeEnergyOptions *o = app->options;
  GstElement *tee = ee_make ("tee", NULL);
  GstElement *q[2] = { ee_make ("queue", NULL), ee_make ("queue", NULL) };
  GstElement *g[2] = { ee_make ("gpuconvolve", "sobel-x"),
    ee_make ("gpuconvolve", "sobel-y")
  };
  /* GRAY32F out: each gpuconvolve converts GRAY8, or the luma plane of
   * NV12 or I420, to float (v / 255). */
  GstElement *f[2] = { ee_make_caps_filter ("video/x-raw, format=GRAY32F"),
    ee_make_caps_filter ("video/x-raw, format=GRAY32F")
  };

  GstElement *all[9];

  sinks[0] = ee_make ("appsink", "gx");
  sinks[1] = ee_make ("appsink", "gy");
  all[0] = tee;
  for (guint i = 0; i < 2; i++) {
    all[1 + 4 * i] = q[i];
    all[2 + 4 * i] = g[i];
    all[3 + 4 * i] = f[i];
    all[4 + 4 * i] = sinks[i];
  }
  if (!ee_add_all (app, all, G_N_ELEMENTS (all)))
    return NULL;
  /* d/dx as a custom kernel: sizes first, then the coefficients. */
  g_object_set (g[0], "kernel-width", 3, "kernel-height", 3, NULL);
  set_kernel (g[0], "kernel", sobel_x, G_N_ELEMENTS (sobel_x));
  /* d/dy from the built-in filter of the same size */
  gst_util_set_object_arg (G_OBJECT (g[1]), "filter", "sobel-y");
  g_object_set (g[1], "size", 3, NULL);
  for (guint i = 0; i < 2; i++) {
    gst_util_set_object_arg (G_OBJECT (g[i]), "border", "replicate");
    gst_util_set_object_arg (G_OBJECT (g[i]), "backend", o->backend);
    /* the caller pulls x and y in turn, so keep the queues short */
    g_object_set (sinks[i], "sync", FALSE, "max-buffers", 4, NULL);
    if (!gst_element_link_many (tee, q[i], g[i], f[i], sinks[i], NULL))
      return NULL;
    g_ptr_array_add (elements, g[i]);
  }
  return tee;
}

gboolean
ee_reduce_on_host (App * app, GstBus * bus, GstElement ** sinks,
    EdgeEnergyResult * result)
{
  const EdgeEnergyOptions *o = app->options;
  gboolean failed = FALSE;

  while (!failed) {
    GstSample *a = pull (GST_APP_SINK (sinks[0]), bus, o->deadline, &failed,
        &result->timed_out), *b = NULL;
    FloatFrame x, y;
    gdouble energy = 0.0;
    guint64 strong = 0;

    if (a)
      b = pull (GST_APP_SINK (sinks[1]), bus, o->deadline, &failed,
          &result->timed_out);
    if (!a || !b) {
      if (a && !failed) {
        g_printerr ("edge-energy: sobel-y ended before sobel-x\n");
        failed = TRUE;
      }
      g_clear_pointer (&a, gst_sample_unref);
      break;
    }
    if (!float_frame_map (&x, a)) {
      failed = TRUE;
    } else if (!float_frame_map (&y, b)) {
      gst_buffer_unmap (x.buffer, &x.map);
      failed = TRUE;
    } else {
      if (x.width != y.width || x.height != y.height
          || GST_BUFFER_PTS (x.buffer) != GST_BUFFER_PTS (y.buffer)) {
        g_printerr ("edge-energy: the two derivatives do not pair up\n");
        failed = TRUE;
      }
      for (gint j = 0; !failed && j < x.height; j++)
        for (gint i = 0; i < x.width; i++) {
          gdouble dx = float_frame_get (&x, i, j);
          gdouble dy = float_frame_get (&y, i, j);
          gdouble m2 = dx * dx + dy * dy;
          energy += m2;
          strong += sqrt (m2) > o->threshold;
        }
      if (!failed) {
        gdouble npix = (gdouble) x.width * x.height;
        ee_print_row (app->out, app->frames, GST_BUFFER_PTS (x.buffer),
            energy / npix, strong / npix);
        app->frames++;
        if (o->on_frame)
          o->on_frame (app->frames, o->data);
      }
      gst_buffer_unmap (x.buffer, &x.map);
      gst_buffer_unmap (y.buffer, &y.map);
    }
    gst_sample_unref (a);
    gst_sample_unref (b);
  }
  return !failed;
}
