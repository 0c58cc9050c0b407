/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The zero-copy GPU path (docs/gpu-pipelines.md): frames in
 * memory:CUDAMemory, from nvcodec's cudaupload and nvh264dec or from a
 * GstCudaBufferPool, and output kept in CUDA memory, give the same bytes as
 * the same filter on system memory; decoded H.264 filtered on the GPU
 * agrees with the CPU backend within the bounds of docs/filters.md;
 * gpuconvolve shares one GstCudaContext with nvcodec; input memory may
 * change mid-stream with frames in flight. backend=cuda only; a case that
 * needs an nvcodec element or x264enc is not run where it is missing. */
#include "common.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/video/video.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_CAPS "video/x-raw(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY ")"
#define FRAME_DURATION (GST_SECOND / 30)

/* fewer cases and frames under the valgrind setup and compute-sanitizer
 * (whose runs set CK_TIMEOUT_MULTIPLIER) */
static gboolean
quick (void)
{
  return gcvt_quick () || g_getenv ("CK_TIMEOUT_MULTIPLIER") != NULL;
}

static GstClockTime
time_limit (void)
{
  return gcvt_time_limit (60 * GST_SECOND);
}

/* --- formats and frames ------------------------------------------------- */

typedef enum {
  F_RGBA, F_BGRA, F_RGBX, F_BGRX, F_GRAY8, F_GRAY32F, F_NV12, F_I420,
  F_N_FORMATS
} Fmt;

static const struct {
  const gchar *name;
  GstVideoFormat video;         /* UNKNOWN: GRAY32F is none in 1.22 */
} formats[F_N_FORMATS] = {
  {"RGBA", GST_VIDEO_FORMAT_RGBA}, {"BGRA", GST_VIDEO_FORMAT_BGRA},
  {"RGBx", GST_VIDEO_FORMAT_RGBx}, {"BGRx", GST_VIDEO_FORMAT_BGRx},
  {"GRAY8", GST_VIDEO_FORMAT_GRAY8}, {"GRAY32F", GST_VIDEO_FORMAT_UNKNOWN},
  {"NV12", GST_VIDEO_FORMAT_NV12}, {"I420", GST_VIDEO_FORMAT_I420},
};

static guint
n_planes (Fmt f)
{
  return f == F_NV12 ? 2 : f == F_I420 ? 3 : 1;
}

/* Bytes per row and rows of plane p of a w x h frame. */
static void
plane_size (Fmt f, guint p, guint w, guint h, gsize * row, guint * rows)
{
  *rows = p == 0 ? h : (h + 1) / 2;
  if (f == F_GRAY8 || ((f == F_NV12 || f == F_I420) && p == 0))
    *row = w;
  else if (f == F_NV12)
    *row = 2 * ((w + 1) / 2);
  else if (f == F_I420)
    *row = (w + 1) / 2;
  else
    *row = (gsize) w * 4;
}

/* GStreamer 1.22's CUDA allocator lays I420's V plane one row into the U
 * plane at odd heights (for both allocations), so I420 in CUDA memory is
 * tested at even heights. */
static guint
cuda_height (Fmt f, guint h)
{
  return f == F_I420 ? GST_ROUND_UP_2 (h) : h;
}

/* Frames are compared "packed": the planes one after another, rows
 * without padding. */
static gsize
packed_size (Fmt f, guint w, guint h)
{
  gsize n = 0, row;
  guint rows;

  for (guint p = 0; p < n_planes (f); p++) {
    plane_size (f, p, w, h, &row, &rows);
    n += row * rows;
  }
  return n;
}

static gchar *
locate (Fmt f, guint w, guint h, gsize i)
{
  gsize row;
  guint rows;

  for (guint p = 0; p < n_planes (f); p++) {
    plane_size (f, p, w, h, &row, &rows);
    if (i < row * rows)
      return g_strdup_printf ("plane %u, row %" G_GSIZE_FORMAT ", byte %"
          G_GSIZE_FORMAT, p, i / row, i % row);
    i -= row * rows;
  }
  return g_strdup ("past the frame");
}

typedef struct {
  gsize offset[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
} Layout;

/* Where the planes lie: the buffer's GstVideoMeta, else the layout of its
 * CUDA memory, else GStreamer's default. Only plane 0 of a single-plane
 * format is used: GRAY8 and GRAY32F in CUDA memory are laid out as another
 * format of the same bytes per row. */
static void
buffer_layout (GstBuffer * buf, Fmt f, guint w, guint h, Layout * l)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  GstVideoInfo info;

  memset (l, 0, sizeof (*l));
  if (meta && meta->n_planes >= n_planes (f)) {
    memcpy (l->offset, meta->offset, sizeof (l->offset));
    memcpy (l->stride, meta->stride, sizeof (l->stride));
  } else if (gst_buffer_n_memory (buf) == 1 && gst_is_cuda_memory (mem)) {
    memcpy (l->offset, GST_CUDA_MEMORY_CAST (mem)->info.offset,
        sizeof (l->offset));
    memcpy (l->stride, GST_CUDA_MEMORY_CAST (mem)->info.stride,
        sizeof (l->stride));
  } else if (f == F_GRAY32F) {
    l->stride[0] = w * 4;
  } else {
    gst_video_info_set_format (&info, formats[f].video, w, h);
    memcpy (l->offset, info.offset, sizeof (l->offset));
    memcpy (l->stride, info.stride, sizeof (l->stride));
  }
}

/* Copies a packed frame into `buf` (write) or out of it; an error text
 * where the buffer does not hold the frame (streaming threads cannot fail
 * a test). */
static gchar *
copy_frame (GstBuffer * buf, guint8 * packed, Fmt f, guint w, guint h,
    gboolean write)
{
  GstMapInfo map;
  Layout l;
  gchar *err = NULL;

  buffer_layout (buf, f, w, h, &l);
  if (!gst_buffer_map (buf, &map, write ? GST_MAP_WRITE : GST_MAP_READ))
    return g_strdup ("the buffer cannot be mapped");
  for (guint p = 0; p < n_planes (f) && !err; p++) {
    gsize row;
    guint rows;

    plane_size (f, p, w, h, &row, &rows);
    if (l.stride[p] < (gint) row || l.offset[p] > map.size
        || (map.size - l.offset[p]) / (guint) l.stride[p] < rows - 1
        || map.size - l.offset[p] - (gsize) (rows - 1) * l.stride[p] < row) {
      err = g_strdup_printf ("plane %u (offset %" G_GSIZE_FORMAT ", stride "
          "%d, %u rows of %" G_GSIZE_FORMAT " bytes) is not inside the %"
          G_GSIZE_FORMAT " bytes of the buffer", p, l.offset[p], l.stride[p],
          rows, row, map.size);
      break;
    }
    for (guint y = 0; y < rows; y++) {
      guint8 *line = map.data + l.offset[p] + (gsize) y * l.stride[p];
      if (write)
        memcpy (line, packed, row);
      else
        memcpy (packed, line, row);
      packed += row;
    }
  }
  gst_buffer_unmap (buf, &map);
  return err;
}

static GBytes *
random_frame (GRand * r, Fmt f, guint w, guint h)
{
  gsize n = packed_size (f, w, h);
  guint8 *d = g_malloc (n);

  if (f == F_GRAY32F) {
    /* floats, not bytes: random bytes would be NaN and infinities too */
    for (gsize i = 0; i < n; i += 4) {
      gfloat v = g_rand_double_range (r, -1.0, 2.0);
      memcpy (d + i, &v, 4);
    }
  } else {
    for (gsize i = 0; i < n; i++)
      d[i] = g_rand_int_range (r, 0, 256);
  }
  return g_bytes_new_take (d, n);
}

static GPtrArray *
random_frames (GRand * r, Fmt f, guint w, guint h, guint n)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);

  for (guint i = 0; i < n; i++)
    g_ptr_array_add (frames, random_frame (r, f, w, h));
  return frames;
}

static GstCaps *
raw_caps (Fmt f, guint w, guint h, gboolean cuda)
{
  GstCaps *caps = gst_caps_new_simple ("video/x-raw", "format", G_TYPE_STRING,
      formats[f].name, "width", G_TYPE_INT, w, "height", G_TYPE_INT, h,
      "framerate", GST_TYPE_FRACTION, 30, 1, NULL);

  if (cuda)
    gst_caps_set_features (caps, 0,
        gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, NULL));
  return caps;
}

/* caps for a launch line */
static gchar *
caps_text (Fmt f, gboolean cuda)
{
  return g_strdup_printf ("%s,format=%s", cuda ? CUDA_CAPS : "video/x-raw",
      formats[f].name);
}

/* --- CUDA memory made here ---------------------------------------------- */

static void
cuda_library_init (void)
{
  fail_unless (gst_cuda_load_library (), "GStreamer's CUDA library did not "
      "load libcuda");
  gst_cuda_memory_init_once ();
}

static GstCudaContext *
new_cuda_context (void)
{
  GstCudaContext *ctx;

  cuda_library_init ();
  ctx = gst_cuda_context_new (0);
  fail_unless (ctx != NULL, "no GstCudaContext for device 0");
  return ctx;
}

/* Frames of one format and size in CUDA memory of one context. */
typedef struct {
  GstCudaContext *ctx;
  GstBufferPool *pool;          /* NULL for GRAY8 and GRAY32F */
  GstCaps *caps;                /* memory:CUDAMemory */
  Fmt fmt;
  guint w, h;
#if GST_CHECK_VERSION (1, 24, 0)
  GstCudaStream *stream;        /* the memory's; NULL: the default stream */
#endif
} CudaSource;

/* GStreamer's CUDA allocator has no grey formats (1.22's aborts on them,
 * 1.24's to 1.26's fail): GRAY8 and GRAY32F are made as RGBA rows of at
 * least their bytes per row, as gpuconvolve stores them. */
static gboolean
allocator_lacks (Fmt f)
{
  return f == F_GRAY8 || f == F_GRAY32F;
}

/* `stream`: a GstCudaStream the memory is written on (1.24 and later), or
 * NULL */
static CudaSource *
cuda_source_new_on (GstCudaContext * ctx, Fmt f, guint w, guint h,
    gpointer stream)
{
  CudaSource *s = g_new0 (CudaSource, 1);
  GstStructure *config;
  GstVideoInfo info;

  cuda_library_init ();
  s->ctx = gst_object_ref (ctx);
  s->caps = raw_caps (f, w, h, TRUE);
  s->fmt = f;
  s->w = w;
  s->h = h;
#if GST_CHECK_VERSION (1, 24, 0)
  if (stream)
    s->stream = gst_cuda_stream_ref (stream);
#else
  g_assert (stream == NULL);
#endif
  if (allocator_lacks (f))
    return s;
  gst_video_info_from_caps (&info, s->caps);
  s->pool = gst_cuda_buffer_pool_new (ctx);
  config = gst_buffer_pool_get_config (s->pool);
  gst_buffer_pool_config_set_params (config, s->caps, info.size, 0, 0);
  gst_buffer_pool_config_add_option (config,
      GST_BUFFER_POOL_OPTION_VIDEO_META);
#if GST_CHECK_VERSION (1, 24, 0)
  if (s->stream)
    gst_buffer_pool_config_set_cuda_stream (config, s->stream);
#endif
  fail_unless (gst_buffer_pool_set_config (s->pool, config),
      "GstCudaBufferPool refused %" GST_PTR_FORMAT, s->caps);
  fail_unless (gst_buffer_pool_set_active (s->pool, TRUE));
  return s;
}

static CudaSource *
cuda_source_new (GstCudaContext * ctx, Fmt f, guint w, guint h)
{
  return cuda_source_new_on (ctx, f, w, h, NULL);
}

static void
cuda_source_free (CudaSource * s)
{
  if (s->pool) {
    gst_buffer_pool_set_active (s->pool, FALSE);
    gst_object_unref (s->pool);
  }
#if GST_CHECK_VERSION (1, 24, 0)
  if (s->stream)
    gst_cuda_stream_unref (s->stream);
#endif
  gst_caps_unref (s->caps);
  gst_object_unref (s->ctx);
  g_free (s);
}

static GstBuffer *
cuda_buffer (CudaSource * s, GBytes * frame)
{
  GstBuffer *buf = NULL;
  gchar *err;

  if (s->pool) {
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (s->pool, &buf,
            NULL), GST_FLOW_OK);
  } else {
    /* grey rows in memory allocated as RGBA rows of at least as many
     * bytes, described as gpuconvolve describes its own: a GRAY8
     * GstVideoMeta, and for GRAY32F (no GstVideoFormat) a GRAY16_LE one
     * of twice the width */
    const gboolean gray8 = s->fmt == F_GRAY8;
    GstAllocator *alloc = gst_allocator_find (GST_CUDA_MEMORY_TYPE_NAME);
    gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
    gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
    GstVideoInfo info;
    GstMemory *mem;

    fail_unless (alloc != NULL);
    gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, gray8 ?
        (s->w + 3) / 4 : s->w, s->h);
#if GST_CHECK_VERSION (1, 24, 0)
    mem = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (alloc), s->ctx,
        s->stream, &info);
#else
    mem = gst_cuda_allocator_alloc (GST_CUDA_ALLOCATOR (alloc), s->ctx,
        &info);
#endif
    gst_object_unref (alloc);
    fail_unless (mem != NULL, "no CUDA memory");
    stride[0] = GST_CUDA_MEMORY_CAST (mem)->info.stride[0];
    buf = gst_buffer_new ();
    gst_buffer_append_memory (buf, mem);
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        gray8 ? GST_VIDEO_FORMAT_GRAY8 : GST_VIDEO_FORMAT_GRAY16_LE,
        gray8 ? s->w : 2 * s->w, s->h, 1, offset, stride);
  }
  /* written through the host: uploaded when next mapped for the device */
  err = copy_frame (buf, (guint8 *) g_bytes_get_data (frame, NULL), s->fmt,
      s->w, s->h, TRUE);
  fail_unless (err == NULL, "filling CUDA memory: %s", err);
  return buf;
}

static GstBuffer *
system_buffer (GBytes * frame, Fmt f, guint w, guint h)
{
  GstVideoInfo info;
  GstBuffer *buf;
  gchar *err;
  gsize size;

  if (f == F_GRAY32F) {
    size = packed_size (f, w, h);     /* rows of 4 w bytes, no padding */
  } else {
    gst_video_info_set_format (&info, formats[f].video, w, h);
    size = info.size;
  }
  buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, 0xa5, size);       /* padding is garbage */
  err = copy_frame (buf, (guint8 *) g_bytes_get_data (frame, NULL), f, w, h,
      TRUE);
  fail_unless (err == NULL, "%s", err);
  return buf;
}

/* Frames [from, to) as samples for appsrc: in system memory, or in CUDA
 * memory of `cuda`. */
static void
add_samples (GPtrArray * samples, GPtrArray * frames, guint from, guint to,
    Fmt f, guint w, guint h, CudaSource * cuda)
{
  GstCaps *caps = cuda ? gst_caps_ref (cuda->caps) : raw_caps (f, w, h,
      FALSE);

  for (guint i = from; i < to; i++) {
    GBytes *frame = g_ptr_array_index (frames, i);
    GstBuffer *buf = cuda ? cuda_buffer (cuda, frame) :
        system_buffer (frame, f, w, h);

    GST_BUFFER_PTS (buf) = i * FRAME_DURATION;
    GST_BUFFER_DURATION (buf) = FRAME_DURATION;
    g_ptr_array_add (samples, gst_sample_new (buf, caps, NULL, NULL));
    gst_buffer_unref (buf);
  }
  gst_caps_unref (caps);
}

static GPtrArray *
samples_new (void)
{
  return g_ptr_array_new_with_free_func ((GDestroyNotify) gst_sample_unref);
}

/* --- pipelines ---------------------------------------------------------- */

/* A frame that came out, copied out of its buffer at once (so that no
 * upstream pool runs dry while frames are collected). */
typedef struct {
  Fmt fmt;
  guint w, h;
  GBytes *bytes;
  GstClockTime pts;
  gboolean cuda_caps;           /* memory:CUDAMemory negotiated */
  GstCudaContext *ctx;          /* of its CUDA memory; NULL: not CUDA memory */
  gboolean on_stream;           /* its CUDA memory carries a stream (1.24) */
  gboolean need_sync;           /* ... and is marked to be synchronised */
} Out;

static void
out_free (Out * o)
{
  if (o->bytes)
    g_bytes_unref (o->bytes);
  gst_clear_object (&o->ctx);
  g_free (o);
}

/* A launch line with appsrc "src", gpuconvolve "f" and appsink "sink". */
typedef struct {
  GstElement *pipeline;
  gchar *what;
  GMutex lock;
  GPtrArray *out;               /* Out */
  gchar *error;                 /* the first problem in a streaming thread */
  gchar *algorithm;             /* f's active-algorithm at the end */
} Run;

static gboolean
parse_raw_caps (GstCaps * caps, Out * o)
{
  GstStructure *s = gst_caps_get_structure (caps, 0);
  const gchar *name = gst_structure_get_string (s, "format");
  gint w = 0, h = 0;

  for (guint f = 0; f < F_N_FORMATS; f++)
    if (!g_strcmp0 (name, formats[f].name)) {
      o->fmt = f;
      gst_structure_get_int (s, "width", &w);
      gst_structure_get_int (s, "height", &h);
      o->w = w;
      o->h = h;
      o->cuda_caps = gst_caps_features_contains (gst_caps_get_features (caps,
              0), GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
      return w > 0 && h > 0;
    }
  return FALSE;
}

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user_data)
{
  Run *run = user_data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  Out *o = g_new0 (Out, 1);
  gchar *err = NULL;

  o->pts = GST_BUFFER_PTS (buf);
  if (gst_buffer_n_memory (buf) == 1 && gst_is_cuda_memory (mem)) {
    o->ctx = gst_object_ref (GST_CUDA_MEMORY_CAST (mem)->context);
#if GST_CHECK_VERSION (1, 24, 0)
    /* before the map below, which synchronises */
    o->on_stream = gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem))
        != NULL;
    o->need_sync = GST_MEMORY_FLAG_IS_SET (mem,
        GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
#endif
  }
  if (!parse_raw_caps (gst_sample_get_caps (sample), o)) {
    err = g_strdup_printf ("caps %" GST_PTR_FORMAT,
        gst_sample_get_caps (sample));
  } else if (o->cuda_caps && !o->ctx) {
    err = g_strdup ("memory:CUDAMemory caps on a buffer that is not one "
        "GstCudaMemory");
  } else {
    guint8 *packed = g_malloc (packed_size (o->fmt, o->w, o->h));
    /* a plain map of CUDA memory downloads it */
    err = copy_frame (buf, packed, o->fmt, o->w, o->h, FALSE);
    o->bytes = g_bytes_new_take (packed, packed_size (o->fmt, o->w, o->h));
  }
  gst_sample_unref (sample);

  g_mutex_lock (&run->lock);
  if (err && !run->error)
    run->error = g_strdup_printf ("output frame %u: %s", run->out->len, err);
  g_ptr_array_add (run->out, o);
  g_mutex_unlock (&run->lock);
  g_free (err);
  return GST_FLOW_OK;
}

static GstElement *
run_element (Run * run, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (run->pipeline), name);

  fail_unless (e != NULL, "%s: no element %s", run->what, name);
  return e;
}

/* `line` parsed, f given the filter, `depth` and `planes` (NULL: default)
 * and `ctx` (NULL: none of the application's). */
static Run *
run_new (const gchar * line, const RefParams * p, guint depth,
    const gchar * planes, GstCudaContext * ctx, const gchar * what)
{
  GstAppSinkCallbacks callbacks = { NULL, NULL, on_sample };
  Run *run = g_new0 (Run, 1);
  GstElement *f, *sink;

  run->pipeline = gcvt_pipeline_new (line);
  run->what = g_strdup (what);
  g_mutex_init (&run->lock);
  run->out = g_ptr_array_new_with_free_func ((GDestroyNotify) out_free);
  sink = run_element (run, "sink");
  gst_app_sink_set_callbacks (GST_APP_SINK (sink), &callbacks, run, NULL);
  gst_object_unref (sink);
  f = run_element (run, "f");
  gcvt_set_params (f, p);
  g_object_set (f, "queue-depth", depth, NULL);
  if (planes)
    gst_util_set_object_arg (G_OBJECT (f), "planes", planes);
  gst_object_unref (f);
  if (ctx) {
    /* as an application gives its context: to every element of the bin */
    GstContext *context = gst_context_new_cuda_context (ctx);
    gst_element_set_context (run->pipeline, context);
    gst_context_unref (context);
  }
  fail_if (gst_element_set_state (run->pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE, "%s: could not start", what);
  return run;
}

static void
run_push (Run * run, GPtrArray * samples, guint from, guint to)
{
  GstElement *src = run_element (run, "src");

  for (guint i = from; i < to; i++)
    fail_unless_equals_int (gst_app_src_push_sample (GST_APP_SRC (src),
            g_ptr_array_index (samples, i)), GST_FLOW_OK);
  gst_object_unref (src);
}

/* EOS in; waits for it at the sink, then checks what came out. */
static void
run_finish (Run * run, guint expected)
{
  GstElement *src = run_element (run, "src"), *f;
  GstBus *bus = gst_element_get_bus (run->pipeline);
  GstMessage *msg;

  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_object_unref (src);
  msg = gst_bus_timed_pop_filtered (bus, time_limit (),
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gst_object_unref (bus);
  fail_unless (msg != NULL, "%s: no EOS in %" GST_TIME_FORMAT, run->what,
      GST_TIME_ARGS (time_limit ()));
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *err = NULL;
    gchar *debug = NULL;
    gst_message_parse_error (msg, &err, &debug);
    ck_abort_msg ("%s: error from %s: %s (%s)", run->what,
        GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)), err->message,
        GST_STR_NULL (debug));
  }
  gst_message_unref (msg);
  fail_unless (run->error == NULL, "%s: %s", run->what, run->error);
  fail_unless_equals_int (run->out->len, expected);
  f = run_element (run, "f");
  g_object_get (f, "active-algorithm", &run->algorithm, NULL);
  gst_object_unref (f);
}

static void
run_free (Run * run)
{
  fail_unless_equals_int (gst_element_set_state (run->pipeline,
          GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (run->pipeline);
  g_ptr_array_unref (run->out);
  g_mutex_clear (&run->lock);
  g_free (run->algorithm);
  g_free (run->what);
  g_free (run->error);
  g_free (run);
}

/* All samples through `line`, to EOS. */
static Run *
run_line (const gchar * line, const RefParams * p, guint depth,
    const gchar * planes, GstCudaContext * ctx, GPtrArray * samples,
    const gchar * what)
{
  Run *run = run_new (line, p, depth, planes, ctx, what);

  run_push (run, samples, 0, samples->len);
  run_finish (run, samples->len);
  return run;
}

static gboolean
pad_takes_cuda (Run * run, const gchar * element, const gchar * pad_name)
{
  GstElement *e = run_element (run, element);
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstCaps *caps = gst_pad_get_current_caps (pad);
  gboolean cuda;

  fail_unless (caps != NULL, "%s: %s:%s has no caps", run->what, element,
      pad_name);
  cuda = gst_caps_features_contains (gst_caps_get_features (caps, 0),
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (e);
  return cuda;
}

/* The memory gpuconvolve negotiated on each side. */
static void
assert_memory (Run * run, gboolean cuda_in, gboolean cuda_out)
{
  fail_unless (pad_takes_cuda (run, "f", "sink") == cuda_in,
      "%s: gpuconvolve's input is %s", run->what, cuda_in ?
      "not CUDA memory" : "CUDA memory");
  fail_unless (pad_takes_cuda (run, "f", "src") == cuda_out,
      "%s: gpuconvolve's output is %s", run->what, cuda_out ?
      "not CUDA memory" : "CUDA memory");
}

/* Every output frame in CUDA memory of `ctx`. */
static void
assert_output_context (Run * run, GstCudaContext * ctx)
{
  for (guint i = 0; i < run->out->len; i++) {
    Out *o = g_ptr_array_index (run->out, i);
    fail_unless (o->ctx != NULL, "%s: frame %u is not in CUDA memory",
        run->what, i);
    fail_unless (o->ctx == ctx, "%s: frame %u is CUDA memory of another "
        "context (%p, not %p)", run->what, i, o->ctx, ctx);
  }
}

/* The GstCudaContext a CONTEXT query on the pad is answered with. */
static GstCudaContext *
pad_cuda_context (Run * run, const gchar * element, const gchar * pad_name)
{
  GstElement *e = run_element (run, element);
  GstPad *pad = gst_element_get_static_pad (e, pad_name);
  GstQuery *q = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstCudaContext *ctx = NULL;

  if (gst_pad_query (pad, q)) {
    GstContext *context = NULL;
    gst_query_parse_context (q, &context);
    if (context)
      gst_structure_get (gst_context_get_structure (context),
          GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &ctx, NULL);
  }
  gst_query_unref (q);
  gst_object_unref (pad);
  gst_object_unref (e);
  return ctx;
}

/* --- comparisons -------------------------------------------------------- */

static void
assert_same_geometry (Out * a, Out * b, guint i, const gchar * what)
{
  fail_unless (a->fmt == b->fmt && a->w == b->w && a->h == b->h,
      "%s: frame %u is %s %ux%u, expected %s %ux%u", what, i,
      formats[a->fmt].name, a->w, a->h, formats[b->fmt].name, b->w, b->h);
  fail_unless (a->pts == b->pts, "%s: frame %u has pts %" GST_TIME_FORMAT
      ", expected %" GST_TIME_FORMAT " (out of order?)", what, i,
      GST_TIME_ARGS (a->pts), GST_TIME_ARGS (b->pts));
}

/* Every frame of `got` byte for byte that of `expect`. */
static void
assert_same_frames (Run * got, Run * expect)
{
  fail_unless_equals_int (got->out->len, expect->out->len);
  for (guint i = 0; i < got->out->len; i++) {
    Out *a = g_ptr_array_index (got->out, i);
    Out *b = g_ptr_array_index (expect->out, i);
    gsize n, j;
    const guint8 *x = g_bytes_get_data (a->bytes, &n);
    const guint8 *y = g_bytes_get_data (b->bytes, NULL);

    assert_same_geometry (a, b, i, got->what);
    for (j = 0; j < n && x[j] == y[j]; j++);
    if (j < n) {
      gchar *where = locate (a->fmt, a->w, a->h, j);
      ck_abort_msg ("%s (%s) differs from %s (%s): frame %u, %s: %u, "
          "expected %u", got->what, got->algorithm, expect->what,
          expect->algorithm, i, where, x[j], y[j]);
      g_free (where);
    }
  }
}

/* Every sample of `got` within tol8 (8-bit) or tolf (float) of `expect`. */
static void
assert_close_frames (Run * got, Run * expect, gdouble tol8, gdouble tolf)
{
  gdouble worst = 0.0;

  fail_unless_equals_int (got->out->len, expect->out->len);
  for (guint i = 0; i < got->out->len; i++) {
    Out *a = g_ptr_array_index (got->out, i);
    Out *b = g_ptr_array_index (expect->out, i);
    const gboolean is_float = a->fmt == F_GRAY32F;
    const gsize size = is_float ? 4 : 1;
    gsize n;
    const guint8 *x = g_bytes_get_data (a->bytes, &n);
    const guint8 *y = g_bytes_get_data (b->bytes, NULL);

    assert_same_geometry (a, b, i, got->what);
    for (gsize j = 0; j < n; j += size) {
      gdouble u = x[j], v = y[j], d;
      if (is_float) {
        gfloat fu, fv;
        memcpy (&fu, x + j, 4);
        memcpy (&fv, y + j, 4);
        u = fu;
        v = fv;
      }
      d = fabs (u - v);
      if (!(d <= (is_float ? tolf : tol8))) {
        gchar *where = locate (a->fmt, a->w, a->h, j);
        ck_abort_msg ("%s (%s) against %s (%s): frame %u, %s: %.9g, expected "
            "%.9g (+-%.3g)", got->what, got->algorithm, expect->what,
            expect->algorithm, i, where, u, v, is_float ? tolf : tol8);
        g_free (where);
      }
      worst = MAX (worst, d);
    }
  }
  g_print ("%s against %s: largest difference %.3g\n", got->what,
      expect->what, worst);
}

/* --- filters ------------------------------------------------------------ */

/* A random kernel (rank 1 where algorithm=separable is forced) scaled so
 * that results stay mostly inside 0..255. */
static RefKernel *
random_params (GRand * r, RefParams * p, RefBorder border)
{
  RefKernel *k = gcvt_random_kernel (r, g_rand_int_range (r, 2, 8),
      g_rand_int_range (r, 2, 8), gcvt_forced_separable ());

  ref_params_init (p, k);
  p->scale = 1.0 / ref_kernel_sum_abs (k);
  p->bias = g_rand_int_range (r, -20, 21);
  p->border = border;
  if (border == REF_BORDER_CONSTANT)
    p->border_value = g_rand_int_range (r, 0, 256);
  return k;
}

/* gpuconvolve on system memory both sides: what the CUDA memory paths
 * must match byte for byte */
static gchar *
system_line (Fmt out)
{
  gchar *props = gcvt_launch_props (), *caps = caps_text (out, FALSE);
  gchar *line = g_strdup_printf ("appsrc name=src format=time ! "
      "gpuconvolve name=f %s ! %s ! appsink name=sink sync=false", props,
      caps);

  g_free (caps);
  g_free (props);
  return line;
}

/* --- cudaupload ! gpuconvolve ! cudadownload ---------------------------- */

static gboolean
nvcodec_carries (Fmt f)
{
  GstElementFactory *up = gst_element_factory_find ("cudaupload");
  GstElementFactory *down = gst_element_factory_find ("cudadownload");
  GstCaps *caps = raw_caps (f, 64, 64, FALSE);
  gboolean ok = up && down && gst_element_factory_can_sink_all_caps (up, caps)
      && gst_element_factory_can_src_all_caps (down, caps);

  gst_caps_unref (caps);
  gst_clear_object (&up);
  gst_clear_object (&down);
  return ok;
}

static void
upload_download_case (GRand * r, Fmt f, guint w, guint h, RefBorder border,
    guint depth, guint n_frames)
{
  /* chroma filtered with half the borders */
  const gchar *planes = n_planes (f) == 1 ? NULL : border % 2 ? "all" :
      "luma";
  gchar *what = g_strdup_printf ("%s %ux%u border=%s queue-depth=%u%s%s",
      formats[f].name, w, h, ref_border_nick (border), depth,
      planes ? " planes=" : "", planes ? planes : "");
  gchar *props = gcvt_launch_props (), *sys_caps = caps_text (f, FALSE);
  gchar *ref_line = system_line (f);
  gchar *line = g_strdup_printf ("appsrc name=src format=time ! cudaupload ! "
      CUDA_CAPS " ! gpuconvolve name=f %s ! " CUDA_CAPS " ! cudadownload ! "
      "%s ! appsink name=sink sync=false", props, sys_caps);
  gchar *gpu_what = g_strdup_printf ("%s, cudaupload ! gpuconvolve ! "
      "cudadownload", what);
  GPtrArray *frames = random_frames (r, f, w, h, n_frames);
  GPtrArray *samples = samples_new ();
  RefParams p;
  RefKernel *k = random_params (r, &p, border);
  Run *ref, *gpu;

  g_print ("%s\n", gpu_what);
  add_samples (samples, frames, 0, n_frames, f, w, h, NULL);
  ref = run_line (ref_line, &p, depth, planes, NULL, samples, what);
  gpu = run_line (line, &p, depth, planes, NULL, samples, gpu_what);
  assert_memory (ref, FALSE, FALSE);
  assert_memory (gpu, TRUE, TRUE);
  assert_same_frames (gpu, ref);
  run_free (gpu);
  run_free (ref);
  ref_kernel_free (k);
  g_ptr_array_unref (samples);
  g_ptr_array_unref (frames);
  g_free (gpu_what);
  g_free (line);
  g_free (ref_line);
  g_free (sys_caps);
  g_free (props);
  g_free (what);
}

/* cudaupload ! gpuconvolve ! cudadownload gives the bytes gpuconvolve
 * gives on system memory: every format cudaupload carries, every border,
 * odd sizes and sizes of many tiles, one frame and three in flight. */
GST_START_TEST (test_upload_download_bit_exact)
{
  static const Fmt fmts[] = { F_RGBA, F_BGRA, F_RGBX, F_BGRX, F_GRAY8,
    F_NV12, F_I420
  };
  static const guint sizes[2][2] = { {97, 61}, {640, 360} };
  static const guint depths[2] = { 1, 3 };
  GRand *r = ref_rand_new ("upload_download_bit_exact");
  const guint n_frames = quick ()? 3 : 10;

  for (guint i = 0; i < G_N_ELEMENTS (fmts); i++) {
    const Fmt f = fmts[i];

    if (!nvcodec_carries (f)) {
      g_print ("%s: cudaupload and cudadownload do not carry it here (GRAY8 "
          "in CUDA memory: test_cuda_memory_out_bit_exact)\n",
          formats[f].name);
      continue;
    }
    /* every border; sizes and depths in turn, all four pairs of them
     * (each case starts two pipelines: their number is the cost) */
    for (guint b = 0; b < REF_N_BORDERS; b++)
      upload_download_case (r, f, sizes[b % 2][0], cuda_height (f,
              sizes[b % 2][1]), b, depths[(b / 2) % 2], n_frames);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* --- CUDA memory made here, in and out ---------------------------------- */

/* Frames in CUDA memory of the application's context `ctx` into
 * gpuconvolve, out in CUDA memory (to appsink) or system memory: the bytes
 * of the system memory path; CUDA output is memory of the same context.
 * One context serves every case of a test: the driver makes contexts one
 * at a time, a fifth of a second each on a GPU host running the suites. */
static void
cuda_in_case (GRand * r, GstCudaContext * ctx, Fmt in, Fmt out, guint w,
    guint h, RefBorder border, guint depth, gboolean cuda_out,
    guint n_frames)
{
  const gchar *planes = n_planes (in) == 1 ? NULL : border % 2 ? "all" :
      "luma";
  gchar *what = g_strdup_printf ("%s -> %s %ux%u border=%s queue-depth=%u%s%s",
      formats[in].name, formats[out].name, w, h, ref_border_nick (border),
      depth, planes ? " planes=" : "", planes ? planes : "");
  gchar *gpu_what = g_strdup_printf ("%s, CUDA memory in, %s out", what,
      cuda_out ? "CUDA memory" : "system memory");
  gchar *props = gcvt_launch_props (), *out_caps = caps_text (out, cuda_out);
  gchar *ref_line = system_line (out);
  gchar *line = g_strdup_printf ("appsrc name=src format=time ! "
      "gpuconvolve name=f %s ! %s ! appsink name=sink sync=false", props,
      out_caps);
  CudaSource *cuda = cuda_source_new (ctx, in, w, h);
  GPtrArray *frames = random_frames (r, in, w, h, n_frames);
  GPtrArray *sys = samples_new (), *dev = samples_new ();
  RefParams p;
  RefKernel *k = random_params (r, &p, border);
  Run *ref, *gpu;

  g_print ("%s\n", gpu_what);
  add_samples (sys, frames, 0, n_frames, in, w, h, NULL);
  add_samples (dev, frames, 0, n_frames, in, w, h, cuda);
  ref = run_line (ref_line, &p, depth, planes, NULL, sys, what);
  gpu = run_line (line, &p, depth, planes, ctx, dev, gpu_what);
  assert_memory (gpu, TRUE, cuda_out);
  if (cuda_out)
    assert_output_context (gpu, ctx);
  assert_same_frames (gpu, ref);
  run_free (gpu);
  run_free (ref);
  g_ptr_array_unref (dev);
  g_ptr_array_unref (sys);
  cuda_source_free (cuda);
  ref_kernel_free (k);
  g_ptr_array_unref (frames);
  g_free (line);
  g_free (ref_line);
  g_free (out_caps);
  g_free (props);
  g_free (gpu_what);
  g_free (what);
}

/* CUDA memory in and out, no copy to the host between: every format (GRAY8
 * and GRAY32F too, which cudaupload does not carry and GStreamer's CUDA
 * allocator has no layout for), both sizes in turn. */
GST_START_TEST (test_cuda_memory_out_bit_exact)
{
  static const Fmt fmts[] = { F_RGBA, F_BGRA, F_RGBX, F_BGRX, F_GRAY8,
    F_NV12, F_I420, F_GRAY32F
  };
  GRand *r = ref_rand_new ("cuda_memory_out_bit_exact");
  const guint n_frames = quick ()? 3 : 8;
  GstCudaContext *ctx = new_cuda_context ();

  for (guint i = 0; i < G_N_ELEMENTS (fmts); i++) {
    const gboolean big = i % 2;
    cuda_in_case (r, ctx, fmts[i], fmts[i], big ? 640 : 97,
        cuda_height (fmts[i], big ? 360 : 61), i % REF_N_BORDERS, 3, TRUE,
        n_frames);
  }
  gst_object_unref (ctx);
  g_rand_free (r);
}

GST_END_TEST;

/* Privacy regions between CUDA-memory elements (docs/regions.md): frames
 * in CUDA memory in and out, region-mode inside and outside with the
 * n_rects regions `rects`, byte for byte what the system-memory path
 * gives (which test-regions holds to the reference), and outside the
 * filtered area the input's bytes. */
static void
regions_case (GRand * r, Fmt f, guint w, guint h, guint mode,
    guint n_frames, const gint * rects, guint n_rects)
{
  const gchar *planes = n_planes (f) == 1 ? NULL : "all";
  const gsize px = f == F_RGBA ? 4 : 1;
  GString *list = g_string_new (NULL);
  gchar *what, *gpu_what, *line, *ref_line;
  gchar *props = gcvt_launch_props (), *caps = caps_text (f, TRUE);
  gchar *sys_caps = caps_text (f, FALSE);
  GstCudaContext *ctx = new_cuda_context ();
  CudaSource *cuda = cuda_source_new (ctx, f, w, h);
  GPtrArray *frames = random_frames (r, f, w, h, n_frames);
  GPtrArray *sys = samples_new (), *dev = samples_new ();
  RefParams p;
  RefKernel *k = random_params (r, &p, REF_BORDER_REPLICATE);
  Run *ref, *gpu;

  for (guint i = 0; i < n_rects; i++)
    g_string_append_printf (list, "%s<%d,%d,%d,%d>", i ? "," : "",
        rects[4 * i], rects[4 * i + 1], rects[4 * i + 2], rects[4 * i + 3]);
  what = g_strdup_printf ("%s %ux%u region-mode=%s regions=<%s>",
      formats[f].name, w, h, mode == 1 ? "inside" : "outside", list->str);
  gpu_what = g_strdup_printf ("%s, CUDA memory in and out", what);
  line = g_strdup_printf ("appsrc name=src format=time ! gpuconvolve name=f "
      "%s region-mode=%s regions=\"<%s>\" ! %s ! appsink name=sink "
      "sync=false", props, mode == 1 ? "inside" : "outside", list->str, caps);
  ref_line = g_strdup_printf ("appsrc name=src format=time ! gpuconvolve "
      "name=f %s region-mode=%s regions=\"<%s>\" ! %s ! appsink name=sink "
      "sync=false", props, mode == 1 ? "inside" : "outside", list->str,
      sys_caps);
  g_print ("%s\n", gpu_what);
  add_samples (sys, frames, 0, n_frames, f, w, h, NULL);
  add_samples (dev, frames, 0, n_frames, f, w, h, cuda);
  ref = run_line (ref_line, &p, 3, planes, NULL, sys, what);
  gpu = run_line (line, &p, 3, planes, ctx, dev, gpu_what);
  assert_memory (gpu, TRUE, TRUE);
  assert_output_context (gpu, ctx);
  assert_same_frames (gpu, ref);
  /* the first plane, packed first: copied where not filtered */
  for (guint i = 0; i < gpu->out->len; i++) {
    const guint8 *got = g_bytes_get_data (((Out *) g_ptr_array_index
            (gpu->out, i))->bytes, NULL);
    const guint8 *in = g_bytes_get_data (g_ptr_array_index (frames, i),
        NULL);
    for (guint y = 0; y < h; y++)
      for (guint x = 0; x < w; x++) {
        const gsize at = ((gsize) y * w + x) * px;
        if (!ref_region_filtered (rects, n_rects, mode, w, h, 1, x, y))
          fail_unless (memcmp (got + at, in + at, px) == 0, "%s: frame %u "
              "(%u, %u) not the input's", gpu_what, i, x, y);
      }
  }
  run_free (gpu);
  run_free (ref);
  g_ptr_array_unref (dev);
  g_ptr_array_unref (sys);
  cuda_source_free (cuda);
  gst_object_unref (ctx);
  ref_kernel_free (k);
  g_ptr_array_unref (frames);
  g_free (line);
  g_free (ref_line);
  g_free (caps);
  g_free (sys_caps);
  g_free (props);
  g_free (gpu_what);
  g_free (what);
  g_string_free (list, TRUE);
}

/* Overlapping regions and one past the frame's edge; then small ones, which
 * the CUDA backend filters side by side (docs/regions.md): all of their
 * reaches inside the frame (read from the device frame where it lies),
 * then one of them at the edge (its reach in the halo). */
GST_START_TEST (test_regions_cuda_memory)
{
  static const Fmt fmts[] = { F_RGBA, F_GRAY8, F_NV12 };
  static const gint large[] = { 5, 3, 40, 30, 30, 20, 25, 30, 83, 40, 30,
    30
  };
  static const gint small[] = { 60, 40, 12, 10, 120, 90, 8, 14, 200, 20, 17,
    9, 0, 120, 11, 11
  };
  GRand *r = ref_rand_new ("regions_cuda_memory");
  const guint n_frames = quick ()? 2 : 4;

  for (guint i = 0; i < G_N_ELEMENTS (fmts); i++)
    for (guint mode = 1; mode <= 2; mode++) {
      regions_case (r, fmts[i], 97, 61, mode, n_frames, large, 3);
      regions_case (r, fmts[i], 257, 131, mode, n_frames, small, 3);
      regions_case (r, fmts[i], 257, 131, mode, n_frames, small, 4);
    }
  g_rand_free (r);
}

GST_END_TEST;

/* The conversions from CUDA memory: GRAY8 -> GRAY32F and NV12/I420 ->
 * GRAY8/GRAY32F (the filtered luma), and GRAY32F in, out in CUDA and in
 * system memory. GRAY32F is no GstVideoFormat, so its CUDA memory is read
 * through a plain map, as any application would. */
GST_START_TEST (test_conversions_cuda_in)
{
  static const Fmt cases[][2] = { {F_GRAY8, F_GRAY32F}, {F_NV12, F_GRAY32F},
  {F_I420, F_GRAY8}, {F_NV12, F_GRAY8}, {F_I420, F_GRAY32F},
  {F_GRAY32F, F_GRAY32F}
  };
  GRand *r = ref_rand_new ("conversions_cuda_in");
  const guint n_frames = quick ()? 3 : 8;
  GstCudaContext *ctx = new_cuda_context ();

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (guint out_cuda = 0; out_cuda < 2; out_cuda++)
      cuda_in_case (r, ctx, cases[i][0], cases[i][1], 97,
          cuda_height (cases[i][0], 61), (i + out_cuda) % REF_N_BORDERS,
          1 + 2 * out_cuda, out_cuda, n_frames);
  gst_object_unref (ctx);
  g_rand_free (r);
}

GST_END_TEST;

/* --- memory changing mid-stream ----------------------------------------- */

/* System memory, then CUDA memory from a GstCudaBufferPool on gpuconvolve's
 * own context (the one its sink pad answers a CONTEXT query with), then
 * system memory again, pushed without waiting, three frames in flight:
 * every frame as on system memory, in order. */
static void
switch_case (GRand * r, Fmt f, guint w, guint h, gboolean out_either,
    guint per_phase)
{
  const guint n = 3 * per_phase;
  gchar *what = g_strdup_printf ("%s %ux%u, system -> CUDA -> system memory "
      "in, %s out", formats[f].name, w, h, out_either ? "either memory" :
      "system memory");
  gchar *props = gcvt_launch_props ();
  gchar *ref_line = system_line (f);
  gchar *out_caps = out_either ? g_strdup_printf ("\"" CUDA_CAPS
      ",format=%s; video/x-raw,format=%s\"", formats[f].name,
      formats[f].name) : caps_text (f, FALSE);
  gchar *line = g_strdup_printf ("appsrc name=src format=time ! "
      "gpuconvolve name=f %s ! appsink name=sink sync=false caps=%s", props,
      out_caps);
  GPtrArray *frames = random_frames (r, f, w, h, n);
  GPtrArray *sys = samples_new (), *mixed = samples_new ();
  RefParams p;
  RefKernel *k = random_params (r, &p, REF_BORDER_REFLECT101);
  GstCudaContext *ctx;
  CudaSource *cuda;
  Run *ref, *run;
  GstPad *pad;
  GstElement *e;
  gint64 end;

  g_print ("%s\n", what);
  add_samples (sys, frames, 0, n, f, w, h, NULL);
  ref = run_line (ref_line, &p, 3, NULL, NULL, sys, what);

  run = run_new (line, &p, 3, NULL, NULL, what);
  add_samples (mixed, frames, 0, per_phase, f, w, h, NULL);
  run_push (run, mixed, 0, per_phase);
  /* the context once the element has its caps */
  e = run_element (run, "f");
  pad = gst_element_get_static_pad (e, "sink");
  end = g_get_monotonic_time () + time_limit () / GST_USECOND;
  while (!gst_pad_has_current_caps (pad) && g_get_monotonic_time () < end)
    g_usleep (1000);
  gst_object_unref (pad);
  gst_object_unref (e);
  ctx = pad_cuda_context (run, "f", "sink");
  if (!ctx) {
    g_print ("%s: gpuconvolve answered no CONTEXT query on system memory; "
        "CUDA memory of a context of our own instead\n", what);
    ctx = new_cuda_context ();
  }
  cuda = cuda_source_new (ctx, f, w, h);
  add_samples (mixed, frames, per_phase, 2 * per_phase, f, w, h, cuda);
  add_samples (mixed, frames, 2 * per_phase, n, f, w, h, NULL);
  run_push (run, mixed, per_phase, n);
  run_finish (run, n);
  assert_same_frames (run, ref);

  run_free (run);
  run_free (ref);
  g_ptr_array_unref (mixed);
  g_ptr_array_unref (sys);
  cuda_source_free (cuda);
  gst_object_unref (ctx);
  ref_kernel_free (k);
  g_ptr_array_unref (frames);
  g_free (line);
  g_free (out_caps);
  g_free (ref_line);
  g_free (props);
  g_free (what);
}

GST_START_TEST (test_memory_switch_mid_stream)
{
  GRand *r = ref_rand_new ("memory_switch_mid_stream");
  const guint per_phase = quick ()? 3 : 6;

  for (guint out_either = 0; out_either < 2; out_either++) {
    switch_case (r, F_RGBA, 160, 90, out_either, per_phase);
    switch_case (r, F_NV12, 97, 61, out_either, per_phase);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* --- nvh264dec ! gpuconvolve -------------------------------------------- */

/* `n` access units of H.264 (a moving zone plate) made by x264enc once, as
 * samples with their caps, decoded by each pipeline in turn. */
static GPtrArray *
h264_samples (guint n, guint w, guint h)
{
  gchar *line = g_strdup_printf ("videotestsrc num-buffers=%u "
      "pattern=zone-plate kx2=20 ky2=20 kt=1 ! video/x-raw,format=I420,"
      "width=%u,height=%u,framerate=30/1 ! x264enc speed-preset=ultrafast "
      "bframes=0 key-int-max=10 ! h264parse ! video/x-h264,"
      "stream-format=byte-stream,alignment=au ! appsink name=sink "
      "sync=false", n, w, h);
  GstElement *pipeline = gcvt_pipeline_new (line), *sink;
  GPtrArray *samples = samples_new ();
  GstSample *s;

  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              time_limit ())))
    g_ptr_array_add (samples, s);
  fail_unless (gst_app_sink_is_eos (GST_APP_SINK (sink)),
      "encoding H.264 did not end");
  fail_unless_equals_int (samples->len, n);
  gst_object_unref (sink);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  g_free (line);
  return samples;
}

/* nvh264dec's NV12 in CUDA memory into gpuconvolve under test */
static gchar *
decoder_line (Fmt out, gboolean cuda_out)
{
  gchar *props = gcvt_launch_props (), *caps = caps_text (out, cuda_out);
  gchar *line = g_strdup_printf ("appsrc name=src format=time ! h264parse ! "
      "nvh264dec name=dec ! " CUDA_CAPS ",format=NV12 ! gpuconvolve name=f "
      "%s ! %s ! appsink name=sink sync=false", props, caps);

  g_free (caps);
  g_free (props);
  return line;
}

/* Decoded H.264 (NV12 in CUDA memory) through gpuconvolve, out in CUDA
 * memory, in system memory and as GRAY32F in either: within the bounds of
 * docs/filters.md (The formula) of the same frames decoded, downloaded and
 * filtered on the CPU, and the GPU paths byte for byte the same as each
 * other. */
GST_START_TEST (test_decoder_end_to_end)
{
  const guint n = quick ()? 6 : 20, w = 640, h = 360;
  GRand *r = ref_rand_new ("decoder_end_to_end");
  GPtrArray *stream = h264_samples (n, w, h);
  RefParams p;
  RefKernel *k = random_params (r, &p, REF_BORDER_REFLECT101);
  /* docs/filters.md: max(1, 1e-5 sum|K| |scale| 255) for 8 bits; for GRAY32F
   * 1e-5 sum|K| |scale| max|in| + 1e-6 in output units (max|in| = 1) */
  const gdouble reach = ref_kernel_sum_abs (k) * fabs (p.scale);
  const gdouble tol8 = MAX (1.0, 1e-5 * reach * 255.0);
  const gdouble tolf = 1e-5 * reach + 1e-6;
  static const Fmt outs[2] = { F_NV12, F_GRAY32F };

  for (guint o = 0; o < 2; o++) {
    gchar *what = g_strdup_printf ("nvh264dec %ux%u -> %s", w, h,
        formats[outs[o]].name);
    gchar *caps = caps_text (outs[o], FALSE);
    gchar *cpu_line = g_strdup_printf ("appsrc name=src format=time ! "
        "h264parse ! nvh264dec ! " CUDA_CAPS ",format=NV12 ! cudadownload ! "
        "video/x-raw,format=NV12 ! gpuconvolve name=f backend=cpu ! %s ! "
        "appsink name=sink sync=false", caps);
    gchar *cpu_what = g_strdup_printf ("%s, cudadownload, backend=cpu", what);
    gchar *cuda_what = g_strdup_printf ("%s, CUDA memory out", what);
    gchar *sys_what = g_strdup_printf ("%s, system memory out", what);
    gchar *cuda_line = decoder_line (outs[o], TRUE);
    gchar *sys_line = decoder_line (outs[o], FALSE);
    Run *cpu, *cuda, *sys;

    g_print ("%s\n", what);
    cpu = run_line (cpu_line, &p, 3, "all", NULL, stream, cpu_what);
    cuda = run_line (cuda_line, &p, 3, "all", NULL, stream, cuda_what);
    sys = run_line (sys_line, &p, 3, "all", NULL, stream, sys_what);

    assert_memory (cpu, FALSE, FALSE);
    assert_memory (cuda, TRUE, TRUE);
    assert_memory (sys, TRUE, FALSE);
    assert_same_frames (sys, cuda);
    assert_close_frames (cuda, cpu, tol8, tolf);
    run_free (sys);
    run_free (cuda);
    run_free (cpu);
    g_free (sys_line);
    g_free (cuda_line);
    g_free (sys_what);
    g_free (cuda_what);
    g_free (cpu_what);
    g_free (cpu_line);
    g_free (caps);
    g_free (what);
  }
  ref_kernel_free (k);
  g_ptr_array_unref (stream);
  g_rand_free (r);
}

GST_END_TEST;

/* --- one context -------------------------------------------------------- */

/* With nvh264dec upstream: gpuconvolve's pads answer a CONTEXT query with
 * the decoder's GstCudaContext (its sink pad's answer is its own: nothing
 * downstream of it has one), and its CUDA output is memory of it. With
 * cudaupload and cudadownload around it, all three share one context. */
GST_START_TEST (test_one_cuda_context)
{
  const guint n = 4;
  GPtrArray *stream = h264_samples (n, 176, 144);
  GRand *r = ref_rand_new ("one_cuda_context");
  RefParams p;
  RefKernel *k = random_params (r, &p, REF_BORDER_REPLICATE);

  for (guint cuda_out = 0; cuda_out < 2; cuda_out++) {
    gchar *line = decoder_line (cuda_out ? F_NV12 : F_GRAY8, cuda_out);
    Run *run = run_line (line, &p, 2, NULL, NULL, stream, cuda_out ?
        "nvh264dec ! gpuconvolve, CUDA memory out" :
        "nvh264dec ! gpuconvolve, GRAY8 in system memory out");
    GstCudaContext *dec = pad_cuda_context (run, "dec", "src");
    GstCudaContext *src = pad_cuda_context (run, "f", "src");
    GstCudaContext *sink = pad_cuda_context (run, "f", "sink");

    fail_unless (dec != NULL, "%s: nvh264dec answered no CONTEXT query",
        run->what);
    fail_unless (sink != NULL, "%s: gpuconvolve's sink pad answered no "
        "CONTEXT query", run->what);
    fail_unless (src == dec && sink == dec, "%s: gpuconvolve's context "
        "(%p on its src pad, %p on its sink pad) is not nvh264dec's (%p)",
        run->what, src, sink, dec);
    if (cuda_out)
      assert_output_context (run, dec);
    gst_clear_object (&sink);
    gst_clear_object (&src);
    gst_clear_object (&dec);
    run_free (run);
    g_free (line);
  }

  if (nvcodec_carries (F_RGBA)) {
    GPtrArray *frames = random_frames (r, F_RGBA, 64, 48, n);
    GPtrArray *samples = samples_new ();
    gchar *props = gcvt_launch_props ();
    gchar *line = g_strdup_printf ("appsrc name=src format=time ! "
        "cudaupload name=up ! " CUDA_CAPS " ! gpuconvolve name=f %s ! "
        CUDA_CAPS " ! cudadownload name=down ! video/x-raw ! appsink "
        "name=sink sync=false", props);
    Run *run;
    GstCudaContext *up, *f, *down;

    add_samples (samples, frames, 0, n, F_RGBA, 64, 48, NULL);
    run = run_line (line, &p, 2, NULL, NULL, samples,
        "cudaupload ! gpuconvolve ! cudadownload");
    up = pad_cuda_context (run, "up", "src");
    f = pad_cuda_context (run, "f", "src");
    down = pad_cuda_context (run, "down", "src");
    fail_unless (up != NULL && up == f && f == down, "%s: contexts %p, %p, "
        "%p", run->what, up, f, down);
    gst_clear_object (&down);
    gst_clear_object (&f);
    gst_clear_object (&up);
    run_free (run);
    g_free (line);
    g_free (props);
    g_ptr_array_unref (samples);
    g_ptr_array_unref (frames);
  } else {
    g_print ("no cudaupload or cudadownload here: only nvh264dec's context "
        "checked\n");
  }
  ref_kernel_free (k);
  g_rand_free (r);
  g_ptr_array_unref (stream);
}

GST_END_TEST;

/* --- CUDA streams (GStreamer 1.24 and later) ---------------------------- */

#if GST_CHECK_VERSION (1, 24, 0)

#define SCRATCH_PITCH 65536
#define SCRATCH_ROWS 4096

/* Keeps `stream` busy for some milliseconds (memsets of 256 MB of
 * `scratch`): what is queued behind it, such as the upload of a frame
 * written through the host, made when gpuconvolve maps it for the device,
 * is still to come when a reader that does not wait for the stream reads
 * the frame. */
static void
delay_stream (GstCudaContext * ctx, GstCudaStream * stream,
    CUdeviceptr scratch)
{
  fail_unless (gst_cuda_context_push (ctx));
  for (guint i = 0; i < 64; i++)
    fail_unless (gst_cuda_result (CuMemsetD2D8Async (scratch, SCRATCH_PITCH,
                i, SCRATCH_PITCH, SCRATCH_ROWS,
                gst_cuda_stream_get_handle (stream))));
  gst_cuda_context_pop (NULL);
}

/* `in` in CUDA memory written on `stream` behind a delay, pushed before
 * that work is done, through gpuconvolve with stream sharing on or off
 * (GPUCONVOLVE_NO_STREAM_SHARING): the bytes of the system memory path;
 * CUDA output carries a stream of its own, marked to be synchronised,
 * with sharing and none without. */
static void
stream_case (GRand * r, GstCudaContext * ctx, GstCudaStream * stream,
    CUdeviceptr scratch, Fmt in, Fmt out, guint w, guint h,
    gboolean cuda_out, gboolean sharing)
{
  const guint n_frames = quick ()? 3 : 8;
  gchar *what = g_strdup_printf ("%s -> %s %ux%u, CUDA memory on a busy "
      "stream in, %s out, stream sharing %s", formats[in].name,
      formats[out].name, w, h, cuda_out ? "CUDA memory" : "system memory",
      sharing ? "on" : "off");
  gchar *props = gcvt_launch_props (), *out_caps = caps_text (out, cuda_out);
  gchar *ref_line = system_line (out);
  gchar *line = g_strdup_printf ("appsrc name=src format=time ! "
      "gpuconvolve name=f %s ! %s ! appsink name=sink sync=false", props,
      out_caps);
  CudaSource *cuda = cuda_source_new_on (ctx, in, w, h, stream);
  GPtrArray *frames = random_frames (r, in, w, h, n_frames);
  GPtrArray *sys = samples_new (), *dev = samples_new ();
  RefParams p;
  RefKernel *k = random_params (r, &p, REF_BORDER_REFLECT101);
  const gchar *planes = n_planes (in) == 1 ? NULL : "all";
  Run *ref, *gpu;

  g_print ("%s\n", what);
  if (sharing)
    g_unsetenv ("GPUCONVOLVE_NO_STREAM_SHARING");
  else
    g_setenv ("GPUCONVOLVE_NO_STREAM_SHARING", "1", TRUE);
  add_samples (sys, frames, 0, n_frames, in, w, h, NULL);
  add_samples (dev, frames, 0, n_frames, in, w, h, cuda);
  ref = run_line (ref_line, &p, 3, planes, NULL, sys, what);
  gpu = run_new (line, &p, 3, planes, ctx, what);
  for (guint i = 0; i < n_frames; i++) {
    delay_stream (ctx, stream, scratch);
    run_push (gpu, dev, i, i + 1);
  }
  run_finish (gpu, n_frames);
  g_unsetenv ("GPUCONVOLVE_NO_STREAM_SHARING");

  assert_memory (gpu, TRUE, cuda_out);
  assert_same_frames (gpu, ref);
  for (guint i = 0; cuda_out && i < gpu->out->len; i++) {
    Out *o = g_ptr_array_index (gpu->out, i);
    fail_unless (o->on_stream == sharing, "%s: output frame %u is memory %s "
        "a CUDA stream", what, i, o->on_stream ? "on" : "with no");
    fail_unless (!sharing || o->need_sync, "%s: output frame %u is not "
        "marked to be synchronised (GST_CUDA_MEMORY_TRANSFER_NEED_SYNC)",
        what, i);
  }
  run_free (gpu);
  run_free (ref);
  g_ptr_array_unref (dev);
  g_ptr_array_unref (sys);
  cuda_source_free (cuda);
  ref_kernel_free (k);
  g_ptr_array_unref (frames);
  g_free (line);
  g_free (ref_line);
  g_free (out_caps);
  g_free (props);
  g_free (what);
}

/* Frames whose upload is still queued on their memory's stream when they
 * are pushed: with stream sharing gpuconvolve's streams wait for it on the
 * GPU, without it gpuconvolve synchronises it on the CPU; a frame read
 * before the upload is done differs from the system memory path. Every
 * format, CUDA and system memory out. */
GST_START_TEST (test_stream_sharing)
{
  static const Fmt fmts[] = { F_RGBA, F_GRAY8, F_GRAY32F, F_NV12, F_I420 };
  GRand *r = ref_rand_new ("stream_sharing");
  GstCudaContext *ctx = new_cuda_context ();
  GstCudaStream *stream = gst_cuda_stream_new (ctx);
  CUdeviceptr scratch;
  gsize pitch;

  fail_unless (stream != NULL);
  fail_unless (gst_cuda_context_push (ctx));
  fail_unless (gst_cuda_result (CuMemAllocPitch (&scratch, &pitch,
              SCRATCH_PITCH, SCRATCH_ROWS, 16)) && pitch == SCRATCH_PITCH);
  gst_cuda_context_pop (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (fmts); i++)
    for (guint sharing = 0; sharing < 2; sharing++)
      stream_case (r, ctx, stream, scratch, fmts[i], fmts[i], i % 2 ? 640 :
          97, cuda_height (fmts[i], i % 2 ? 360 : 61), (i + sharing) % 2,
          sharing);
  /* the luma of NV12 as GRAY32F, CUDA memory out */
  stream_case (r, ctx, stream, scratch, F_NV12, F_GRAY32F, 640, 360, TRUE,
      TRUE);

  fail_unless (gst_cuda_context_push (ctx));
  CuMemFree (scratch);
  gst_cuda_context_pop (NULL);
  gst_cuda_stream_unref (stream);
  gst_object_unref (ctx);
  g_rand_free (r);
}

GST_END_TEST;

/* nvh264dec takes the stream of the pool gpuconvolve offers it, or marks
 * its own output to be synchronised: decoded frames filtered with stream
 * sharing and without are the same bytes, in CUDA memory out. */
GST_START_TEST (test_decoder_stream_sharing)
{
  const guint n = quick ()? 6 : 20;
  GPtrArray *stream = h264_samples (n, 640, 360);
  GRand *r = ref_rand_new ("decoder_stream_sharing");
  RefParams p;
  RefKernel *k = random_params (r, &p, REF_BORDER_REPLICATE);
  gchar *line = decoder_line (F_NV12, TRUE);
  Run *shared, *synced;

  shared = run_line (line, &p, 3, "all", NULL, stream,
      "nvh264dec ! gpuconvolve, stream sharing on");
  g_setenv ("GPUCONVOLVE_NO_STREAM_SHARING", "1", TRUE);
  synced = run_line (line, &p, 3, "all", NULL, stream,
      "nvh264dec ! gpuconvolve, stream sharing off");
  g_unsetenv ("GPUCONVOLVE_NO_STREAM_SHARING");
  assert_memory (shared, TRUE, TRUE);
  assert_same_frames (shared, synced);
  for (guint i = 0; i < shared->out->len; i++)
    fail_unless (((Out *) g_ptr_array_index (shared->out, i))->on_stream,
        "%s: output frame %u is memory with no CUDA stream", shared->what, i);
  run_free (synced);
  run_free (shared);
  g_free (line);
  ref_kernel_free (k);
  g_rand_free (r);
  g_ptr_array_unref (stream);
}

GST_END_TEST;

#endif

/* --- the suite ---------------------------------------------------------- */

/* Registered where backend=cuda is under test and every element in
 * `needs` (NULL-terminated) is available; otherwise listed as skipped. */
static void
add_test (TCase * tc, TFun tf, const gchar * name, const gchar * const *needs)
{
  gchar *reason = NULL;

  if (!gcvt_on_cuda ())
    reason = g_strdup ("needs backend=cuda");
  for (guint i = 0; !reason && needs[i]; i++) {
    GstElementFactory *f = gst_element_factory_find (needs[i]);
    if (f)
      gst_object_unref (f);
    else
      reason = g_strdup_printf ("no %s element here", needs[i]);
  }
  gcvt_add_test_if (tc, tf, name, 0, 1, reason == NULL, reason);
  g_free (reason);
}

#define ADD_TEST(tc, tf, ...) \
  add_test ((tc), (tf), #tf, (const gchar * const[]) { __VA_ARGS__ })

static Suite *
cuda_memory_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-cuda-memory");
  TCase *tc = tcase_create ("cuda-memory");

  tcase_set_timeout (tc, 500);
  suite_add_tcase (s, tc);
  ADD_TEST (tc, test_upload_download_bit_exact, "cudaupload", "cudadownload",
      NULL);
  ADD_TEST (tc, test_cuda_memory_out_bit_exact, NULL);
  ADD_TEST (tc, test_conversions_cuda_in, NULL);
  ADD_TEST (tc, test_regions_cuda_memory, NULL);
  ADD_TEST (tc, test_memory_switch_mid_stream, NULL);
  ADD_TEST (tc, test_decoder_end_to_end, "x264enc", "h264parse", "nvh264dec",
      "cudadownload", NULL);
  ADD_TEST (tc, test_one_cuda_context, "x264enc", "h264parse", "nvh264dec",
      NULL);
#if GST_CHECK_VERSION (1, 24, 0)
  ADD_TEST (tc, test_stream_sharing, NULL);
  ADD_TEST (tc, test_decoder_stream_sharing, "x264enc", "h264parse",
      "nvh264dec", NULL);
#else
  gcvt_add_test_if (tc, NULL, "test_stream_sharing", 0, 1, FALSE,
      "GStreamer 1.22's CUDA memory carries no stream");
  gcvt_add_test_if (tc, NULL, "test_decoder_stream_sharing", 0, 1, FALSE,
      "GStreamer 1.22's CUDA memory carries no stream");
#endif
  return s;
}

GCVT_MAIN (cuda_memory)
