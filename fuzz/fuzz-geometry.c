/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz target: buffer geometry. A frame of a format (RGBA, BGRA, RGBx,
 * BGRx, GRAY8, GRAY32F) and size (1..64 each way) goes through the element
 * on the CPU backend in a buffer of any size, with or without a
 * GstVideoMeta whose offset[0] (up to 2^64 - 1) and stride[0] (negative,
 * zero, huge) come from the input.
 *
 * The buffer holds exactly its bytes (malloc'd, wrapped), so AddressSanitizer
 * sees any read outside it. docs/errors.md: a buffer smaller than the frame
 * or a meta pointing outside the buffer (overflow included) is
 * GST_ELEMENT_ERROR (STREAM, FORMAT) and GST_FLOW_ERROR, never a read out of
 * bounds. So every input must give either one filtered frame or that
 * error; and where the geometry is plainly inside the buffer (every row of
 * `stride` bytes, the last one included), the frame; where it plainly is
 * not (a stride shorter than a row, or the rows in use reaching past the
 * end), the error. Between those (the last row's padding missing) either.
 *
 * Input: format byte, width, height, filter byte, meta byte, then the
 * buffer size and the meta's offset and stride (each a mode byte and
 * raw bytes), then the frame's bytes (repeated). */
#define GST_FUZZ_WITH_GSTREAMER
#include "fuzz-common.h"

#include <gst/gst.h>
#include <gst/video/video.h>
#include "gstgpuconvolve.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

static const gchar *const format_names[] = {
  "RGBA", "BGRA", "RGBx", "BGRx", "GRAY8", "GRAY32F"
};

static const gchar *const filters[] = { "box", "gaussian", "sobel-x",
  "sharpen"
};

static const gchar *const borders[] = { "constant", "replicate", "reflect",
  "reflect101", "wrap"
};

/* downstream: the caps it takes, the buffers it got */
typedef struct {
  GstCaps *caps;
  guint received;
  gsize received_size;
} Sink;

static GstFlowReturn
sink_chain (GstPad * pad, GstObject * parent, GstBuffer * buf)
{
  Sink *s = gst_pad_get_element_private (pad);

  s->received++;
  s->received_size = gst_buffer_get_size (buf);
  gst_buffer_unref (buf);
  return GST_FLOW_OK;
}

static gboolean
sink_query (GstPad * pad, GstObject * parent, GstQuery * query)
{
  Sink *s = gst_pad_get_element_private (pad);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CAPS:{
      GstCaps *filter, *caps;
      gst_query_parse_caps (query, &filter);
      caps = filter ? gst_caps_intersect_full (filter, s->caps,
          GST_CAPS_INTERSECT_FIRST) : gst_caps_ref (s->caps);
      gst_query_set_caps_result (query, caps);
      gst_caps_unref (caps);
      return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS:{
      GstCaps *caps;
      gst_query_parse_accept_caps (query, &caps);
      gst_query_set_accept_caps_result (query,
          gst_caps_can_intersect (caps, s->caps));
      return TRUE;
    }
    default:
      return gst_pad_query_default (pad, parent, query);
  }
}

static gboolean
sink_event (GstPad * pad, GstObject * parent, GstEvent * event)
{
  gst_event_unref (event);
  return TRUE;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_gst_init ();
  return 0;
}

static GstCaps *
caps_of (guint format, guint w, guint h)
{
  return gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
      format_names[format], "width", G_TYPE_INT, (gint) w, "height",
      G_TYPE_INT, (gint) h, "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
}

/* GStreamer's default stride of the format: GRAY8 rows padded to 4. */
static gsize
default_stride (guint format, guint w)
{
  return format == 4 ? (w + 3) / 4 * 4 : (gsize) w * 4;
}

/* The buffer size: near a frame of the default stride (the usual mistakes
 * are a byte or a row), or anything up to twice a frame. */
static gsize
pick_size (FuzzInput * in, gsize frame)
{
  guint8 mode = fuzz_u8 (in);
  guint32 v = fuzz_u32 (in);

  switch (mode % 4) {
    case 0:
      return frame;
    case 1:                    /* a few bytes either way */
      return (gsize) MAX (0, (gssize) frame + (gint) (v % 33) - 16);
    case 2:
      return v % (2 * frame + 64);
    default:
      return v % 64;
  }
}

/* offset[0]: small, near the end of the buffer, near 2^64, or raw. */
static gsize
pick_offset (FuzzInput * in, gsize size)
{
  guint8 mode = fuzz_u8 (in);
  guint64 v = (guint64) fuzz_u32 (in) << 32 | fuzz_u32 (in);

  switch (mode % 5) {
    case 0:
      return 0;
    case 1:
      return v % 64;
    case 2:
      return size + (v % 16) - MIN (size, 8);
    case 3:
      return G_MAXSIZE - (v % 4096);     /* offset + size wraps around */
    default:
      return (gsize) v;
  }
}

/* stride[0]: the row, a little more or less, zero, negative, huge, raw. */
static gint
pick_stride (FuzzInput * in, gsize row)
{
  guint8 mode = fuzz_u8 (in);
  guint32 v = fuzz_u32 (in);

  switch (mode % 7) {
    case 0:
      return (gint) row;
    case 1:
      return (gint) row + (gint) (v % 17) - 8;
    case 2:
      return 0;
    case 3:
      return -(gint) (v % 4096) - 1;
    case 4:
      return G_MAXINT - (gint) (v % 4096);
    case 5:
      return G_MININT + (gint) (v % 4096);
    default:
      return (gint) v;
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  FuzzInput in = { data, size };
  const guint format = fuzz_u8 (&in) % G_N_ELEMENTS (format_names);
  const guint w = 1 + fuzz_u8 (&in) % 64, h = 1 + fuzz_u8 (&in) % 64;
  const guint8 filter = fuzz_u8 (&in), meta_byte = fuzz_u8 (&in);
  const gboolean with_meta = meta_byte & 1;
  const gsize px = format == 4 ? 1 : 4;
  const gsize row = w * px;
  guint out_format = format;
  gsize buf_size, offset = 0, stride;
  gint meta_stride = 0;
  gboolean inside, outside;
  guint8 *bytes = NULL;
  GstElement *e;
  GstPad *src, *sink, *e_sink, *e_src;
  GstBus *bus;
  GstBuffer *buf;
  GstSegment segment;
  GstFlowReturn ret;
  GstMessage *msg;
  GstCaps *in_caps;
  Sink s = { NULL, 0, 0 };

  /* the gray formats may be converted into each other */
  if (format >= 4 && (meta_byte & 2))
    out_format = format == 4 ? 5 : 4;
  buf_size = pick_size (&in, default_stride (format, w) * h);
  stride = default_stride (format, w);
  if (with_meta) {
    offset = pick_offset (&in, buf_size);
    meta_stride = pick_stride (&in, row);
    stride = (gsize) (gssize) meta_stride;
  }
  /* where the rows in use are, computed without overflow */
  if (with_meta && meta_stride < (gint) row) {
    inside = FALSE;
    outside = TRUE;
  } else {
    /* stride * h <= 64 * 2^31, no overflow in 64 bits */
    guint64 last = (guint64) stride * (h - 1) + row;
    guint64 whole = (guint64) stride * h;
    inside = offset <= buf_size && whole <= buf_size - offset;
    outside = offset > buf_size || last > buf_size - offset;
  }

  if (buf_size) {
    bytes = g_malloc (buf_size);
    for (gsize i = 0; i < buf_size; i++)
      bytes[i] = in.n ? in.p[i % in.n] : (guint8) i;
    buf = gst_buffer_new_wrapped_full (0, bytes, buf_size, 0, buf_size, bytes,
        g_free);
  } else {
    buf = gst_buffer_new ();
  }
  if (with_meta) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = { offset };
    gint strides[GST_VIDEO_MAX_PLANES] = { meta_stride };
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        gst_video_format_from_string (format_names[format]), w, h, 1,
        offsets, strides);
  }
  GST_BUFFER_PTS (buf) = 0;
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;

  e = g_object_new (GST_TYPE_GPU_CONVOLVE, NULL);
  gst_object_ref_sink (e);
  bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  gst_util_set_object_arg (G_OBJECT (e), "filter",
      filters[filter % G_N_ELEMENTS (filters)]);
  gst_util_set_object_arg (G_OBJECT (e), "border",
      borders[(filter >> 2) % G_N_ELEMENTS (borders)]);
  /* 3, 5 or 7: size 1 would be the identity, which the element passes
   * through without reading the buffer */
  g_object_set (e, "size", 3 + 2 * ((filter >> 5) % 3), NULL);

  s.caps = caps_of (out_format, w, h);
  src = gst_pad_new ("src", GST_PAD_SRC);
  sink = gst_pad_new ("sink", GST_PAD_SINK);
  gst_pad_set_element_private (sink, &s);
  gst_pad_set_chain_function (sink, sink_chain);
  gst_pad_set_query_function (sink, sink_query);
  gst_pad_set_event_function (sink, sink_event);
  e_sink = gst_element_get_static_pad (e, "sink");
  e_src = gst_element_get_static_pad (e, "src");
  FUZZ_ASSERT (gst_pad_link (src, e_sink) == GST_PAD_LINK_OK, "link sink");
  FUZZ_ASSERT (gst_pad_link (e_src, sink) == GST_PAD_LINK_OK, "link src");
  gst_pad_set_active (src, TRUE);
  gst_pad_set_active (sink, TRUE);
  FUZZ_ASSERT (gst_element_set_state (e, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_SUCCESS, "the element does not start");

  in_caps = caps_of (format, w, h);
  gst_pad_push_event (src, gst_event_new_stream_start ("geometry"));
  FUZZ_ASSERT (gst_pad_push_event (src, gst_event_new_caps (in_caps)),
      "caps %" GST_PTR_FORMAT " refused", in_caps);
  gst_caps_unref (in_caps);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_pad_push_event (src, gst_event_new_segment (&segment));

  ret = gst_pad_push (src, buf);
  msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  if (ret == GST_FLOW_OK) {
    FUZZ_ASSERT (msg == NULL, "an error message with GST_FLOW_OK");
    FUZZ_ASSERT (s.received == 1, "%u frames out of one", s.received);
    FUZZ_ASSERT (!outside, "%s %ux%u in %" G_GSIZE_FORMAT " bytes, offset %"
        G_GSIZE_FORMAT " stride %d: filtered, but the frame is outside the "
        "buffer", format_names[format], w, h, buf_size, offset, meta_stride);
    FUZZ_ASSERT (s.received_size >= default_stride (out_format, w) * (h - 1)
        + w * (out_format == 4 ? 1 : 4), "an output of %" G_GSIZE_FORMAT
        " bytes", s.received_size);
  } else {
    GError *err = NULL;
    gchar *debug = NULL;
    FUZZ_ASSERT (ret == GST_FLOW_ERROR, "flow %s", gst_flow_get_name (ret));
    FUZZ_ASSERT (msg != NULL, "GST_FLOW_ERROR with no error message");
    gst_message_parse_error (msg, &err, &debug);
    FUZZ_ASSERT (err->domain == GST_STREAM_ERROR
        && err->code == GST_STREAM_ERROR_FORMAT, "%s %d: %s",
        g_quark_to_string (err->domain), err->code, err->message);
    FUZZ_ASSERT (!inside, "%s %ux%u in %" G_GSIZE_FORMAT " bytes, offset %"
        G_GSIZE_FORMAT " stride %d: refused, but the frame is inside the "
        "buffer: %s", format_names[format], w, h, buf_size, offset,
        meta_stride, err->message);
    FUZZ_ASSERT (s.received == 0, "a frame out with the error");
    g_error_free (err);
    g_free (debug);
  }
  if (msg)
    gst_message_unref (msg);

  gst_element_set_state (e, GST_STATE_NULL);
  gst_pad_set_active (src, FALSE);
  gst_pad_set_active (sink, FALSE);
  gst_pad_unlink (src, e_sink);
  gst_pad_unlink (e_src, sink);
  gst_object_unref (e_sink);
  gst_object_unref (e_src);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_bus_set_flushing (bus, TRUE);
  gst_element_set_bus (e, NULL);
  gst_object_unref (bus);
  gst_object_unref (e);
  gst_caps_unref (s.caps);
  return 0;
}
