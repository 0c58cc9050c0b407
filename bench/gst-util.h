/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GStreamer helpers of the programs that drive the gpuconvolve element:
 * pipelines around it, its kernel properties, and waiting for the end. */
#ifndef BENCH_GST_UTIL_H
#define BENCH_GST_UTIL_H

#include <gst/gst.h>
#include "gcv-tools.h"

G_BEGIN_DECLS

/* "video/x-raw,format=F,width=W,height=H,framerate=30/1" */
GstCaps *bench_gst_caps (GcvFormat format, guint width, guint height);

/* "appsrc name=src ! gpuconvolve name=conv ! SINK", SINK naming itself
 * "sink". NULL with `error` when the element is missing. */
GstElement *bench_gst_pipeline (const char *sink_description,
    GstElement ** src, GstElement ** conv, GstElement ** sink,
    GError ** error);

/* A float-array property (kernel, row-kernel, column-kernel). */
void bench_gst_set_floats (GObject * object, const char *property,
    const gfloat * values, guint n);

/* Host memory as a buffer; GStreamer does not free it. */
GstBuffer *bench_gst_wrap (gpointer data, gsize size);

/* Waits for EOS (TRUE) or an error or the timeout (FALSE, with `error`). */
gboolean bench_gst_wait_eos (GstElement * pipeline, GstClockTime timeout,
    GError ** error);

#define BENCH_GST_ERROR (g_quark_from_static_string ("bench-gst-error"))

G_END_DECLS

#endif /* BENCH_GST_UTIL_H */
