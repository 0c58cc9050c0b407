/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GRAY16_LE, RGB, BGR and P010_10LE (docs/formats.md) through the
 * gpuconvolve element on the backend and family under test: they and
 * their conversions negotiate and come out as the reference computes
 * them, in system memory with GStreamer's default layout; a pair the
 * engine does not convert is not negotiated; every backend offers them;
 * and on CUDA, HEVC Main10 from nvh265dec stays in CUDA memory through
 * gpuconvolve. The engine's part is test-formats.c. */
#include "common-formats.h"

#include <glib/gstdio.h>

/* The element's output of `img` (`in`) as `out`, against the reference
 * (the first plane). */
static void
check_output (GstBuffer * outbuf, const RefImage * img, const RefParams * p,
    GcvFormat in, GcvFormat out, guint w, guint h, const gchar * what)
{
  const guint ch = gcvt_fmt_channels (in);
  const gdouble unit = gcvt_fmt_max (out) / gcvt_fmt_max (in);
  RefImage *ref = ref_filter (img, p);
  GstVideoInfo info;
  GstVideoFrame frame;

  fail_unless (outbuf != NULL, "%s: no output", what);
  gcvt_fmt_video_info (&info, out, w, h);
  fail_unless (gst_video_frame_map (&frame, &info, outbuf, GST_MAP_READ));
  for (guint y = 0; y < h; y++)
    for (guint x = 0; x < w; x++)
      for (guint c = 0; c < ch; c++)
        gcvt_fmt_check_value (gcvt_fmt_get (gcvt_fmt_sample_ptr (&frame, out,
                    0, x, y, c), out), ref_pixel (ref, x, y)[c] * unit, out,
            p, gcvt_fmt_largest_input (img, p), unit, what, x, y, c);
  gst_video_frame_unmap (&frame);
  ref_image_free (ref);
}

static gchar *
caps_string (GcvFormat format, guint w, guint h)
{
  return g_strdup_printf ("video/x-raw,format=%s,width=%u,height=%u,"
      "framerate=30/1", gcv_format_name (format), w, h);
}

/* One frame of `in` through the element to `out`, against the reference
 * (the first plane; P010's chroma mid-grey). */
static void
check_element (GRand * r, GcvFormat in, GcvFormat out, guint w, guint h)
{
  RefImage *img = gcvt_fmt_random_image (r, in, w, h,
      gcvt_fmt_channels (in));
  RefImage *planes[3] = { img, NULL, NULL };
  RefParams p;
  GcvFilterDesc d;
  gfloat *taps;
  /* dense kernels, but where the separable family is forced */
  RefKernel *k = gcvt_fmt_random_params (r, in, REF_BORDER_REFLECT101,
      gcvt_forced_separable (), &p, &d, &taps);
  GstElement *e = gcvt_element_new ();
  GstHarness *h_;
  GstBuffer *outbuf;
  gchar *in_caps = caps_string (in, w, h), *out_caps = caps_string (out, w,
      h);
  gchar *what = gcvt_fmt_describe (in, out, w, h, 0, &p,
      gcvt_forced_separable ());

  gcvt_set_params (e, &p);
  h_ = gcvt_harness_new (e);
  gst_harness_set_caps_str (h_, in_caps, out_caps);
  outbuf = gcvt_process (h_, gcvt_fmt_buffer_new (in, planes));
  check_output (outbuf, img, &p, in, out, w, h, what);
  gst_buffer_unref (outbuf);
  gst_harness_teardown (h_);
  gcvt_element_unref (e);
  ref_image_free (img);
  ref_kernel_free (k);
  g_free (taps);
  g_free (in_caps);
  g_free (out_caps);
  g_free (what);
}

/* The new formats and their conversions negotiate through the element and
 * come out as the engine computes them. */
GST_START_TEST (test_element_formats)
{
  static const struct
  {
    GcvFormat in, out;
  } cases[] = {
    {GCV_FORMAT_RGB, GCV_FORMAT_RGB},
    {GCV_FORMAT_BGR, GCV_FORMAT_BGR},
    {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_GRAY16_LE, GCV_FORMAT_GRAY32F},
    {GCV_FORMAT_GRAY32F, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_P010_10LE},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_GRAY16_LE},
    {GCV_FORMAT_P010_10LE, GCV_FORMAT_GRAY32F},
  };
  GRand *r = ref_rand_new ("element_formats");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    check_element (r, cases[c].in, cases[c].out, 37, 23);
  g_rand_free (r);
}

GST_END_TEST;

/* Frame after frame of host memory with the same filter, which the CUDA
 * backend replays as a graph once a slot has run it twice
 * (docs/performance.md): each frame, several in flight, is its own
 * input's output; then with the bias changed (the same kernel and
 * buffers, so the same launches but for their arguments), then with
 * another kernel. */
GST_START_TEST (test_element_frames_repeat)
{
  static const GcvFormat formats[] = { GCV_FORMAT_GRAY16_LE, GCV_FORMAT_RGB };
  const guint w = 41, h = 19, frames = 9;
  GRand *r = ref_rand_new ("element_frames_repeat");

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    const GcvFormat fmt = formats[f];
    GstElement *e = gcvt_element_new ();
    GstHarness *h_ = gcvt_harness_new (e);
    gchar *caps = caps_string (fmt, w, h);
    RefKernel *k = NULL;
    RefParams p = { 0 };
    GcvFilterDesc d;
    gfloat *taps = NULL;

    gst_harness_set_caps_str (h_, caps, caps);
    for (guint phase = 0; phase < 3; phase++) {
      RefImage *img[9];
      if (phase == 1) {
        p.bias += gcvt_fmt_max (fmt) * 0.1;
      } else {
        ref_kernel_free (k);
        g_free (taps);
        k = gcvt_fmt_random_params (r, fmt, REF_BORDER_REFLECT101,
            gcvt_forced_separable (), &p, &d, &taps);
      }
      gcvt_set_params (e, &p);
      for (guint i = 0; i < frames; i++) {
        RefImage *planes[3] = { NULL, NULL, NULL };
        planes[0] = img[i] = gcvt_fmt_random_image (r, fmt, w, h,
            gcvt_fmt_channels (fmt));
        fail_unless_equals_int (gst_harness_push (h_,
                gcvt_fmt_buffer_new (fmt, planes)), GST_FLOW_OK);
      }
      gcvt_drain (h_);
      fail_unless_equals_int (gst_harness_buffers_in_queue (h_), frames);
      for (guint i = 0; i < frames; i++) {
        GstBuffer *out = gst_harness_pull (h_);
        gchar *what = g_strdup_printf ("%s, phase %u, frame %u",
            gcv_format_name (fmt), phase, i);
        check_output (out, img[i], &p, fmt, fmt, w, h, what);
        gst_buffer_unref (out);
        ref_image_free (img[i]);
        g_free (what);
      }
    }
    gst_harness_teardown (h_);
    gcvt_element_unref (e);
    ref_kernel_free (k);
    g_free (taps);
    g_free (caps);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* A pair the engine does not convert is not negotiated. */
GST_START_TEST (test_element_refuses_pair)
{
  GstElement *e = gcvt_element_new ();
  GstHarness *h = gcvt_harness_new (e);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, 16 * 8 * 3, NULL);

  gst_harness_set_src_caps_str (h,
      "video/x-raw,format=P010_10LE,width=16,height=8,framerate=30/1");
  gst_harness_set_sink_caps_str (h,
      "video/x-raw,format=GRAY8,width=16,height=8,framerate=30/1");
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_NOT_NEGOTIATED);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* Whether `caps` offer `format` on any structure. */
static gboolean
caps_offer (GstCaps * caps, const gchar * format)
{
  GstCaps *want = gst_caps_new_simple ("video/x-raw", "format",
      G_TYPE_STRING, format, NULL);
  gboolean any = FALSE;

  for (guint i = 0; i < gst_caps_get_size (caps) && !any; i++) {
    GstCaps *one = gst_caps_copy_nth (caps, i);
    gst_caps_set_features (one, 0, NULL);
    any = gst_caps_can_intersect (one, want);
    gst_caps_unref (one);
  }
  gst_caps_unref (want);
  return any;
}

/* Every backend offers every format on both pads (docs/formats.md): a
 * query, no device needed. */
GST_START_TEST (test_backends_offer_formats)
{
  const gchar *backends[] = { "cuda", "cpu", "auto" };
  const gchar *added[] = { "GRAY16_LE", "RGB", "BGR", "P010_10LE" };

  for (guint b = 0; b < G_N_ELEMENTS (backends); b++) {
    GstElement *e = gst_element_factory_make ("gpuconvolve", NULL);

    fail_unless (e != NULL);
    gst_util_set_object_arg (G_OBJECT (e), "backend", backends[b]);
    for (guint p = 0; p < 2; p++) {
      GstPad *pad = gst_element_get_static_pad (e, p ? "src" : "sink");
      GstCaps *caps = gst_pad_query_caps (pad, NULL);
      for (guint f = 0; f < G_N_ELEMENTS (added); f++)
        fail_unless (caps_offer (caps, added[f]), "backend=%s: the %s pad "
            "does not offer %s", backends[b], p ? "src" : "sink", added[f]);
      fail_unless (caps_offer (caps, "RGBA"), "backend=%s: no RGBA",
          backends[b]);
      gst_caps_unref (caps);
      gst_object_unref (pad);
    }
    gst_object_unref (e);
  }
}

GST_END_TEST;

/* --- nvh265dec ! gpuconvolve -------------------------------------------- */

/* P010 frames a fakesink got: each one's Y and UV rows, packed. */
typedef struct {
  GPtrArray *frames;            /* GByteArray; NULL: a frame not mapped */
  guint width, height;
} P010Frames;

static void
keep_p010 (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer data)
{
  P010Frames *got = data;
  GstCaps *caps = gst_pad_get_current_caps (pad);
  GstVideoInfo info;
  GstVideoFrame frame;
  GByteArray *bytes = NULL;

  if (caps && gst_video_info_from_caps (&info, caps)
      && gst_video_frame_map (&frame, &info, buf, GST_MAP_READ)) {
    const guint w = GST_VIDEO_INFO_WIDTH (&info),
        h = GST_VIDEO_INFO_HEIGHT (&info);
    bytes = g_byte_array_new ();
    for (guint y = 0; y < h; y++)
      g_byte_array_append (bytes, gcvt_fmt_sample_ptr (&frame,
              GCV_FORMAT_P010_10LE, 0, 0, y, 0), 2 * w);
    for (guint y = 0; y < ref_chroma_size (h); y++)
      g_byte_array_append (bytes, gcvt_fmt_sample_ptr (&frame,
              GCV_FORMAT_P010_10LE, 1, 0, y, 0), 4 * ref_chroma_size (w));
    gst_video_frame_unmap (&frame);
    got->width = w;
    got->height = h;
  }
  if (caps)
    gst_caps_unref (caps);
  g_ptr_array_add (got->frames, bytes);
}

/* Runs `line` (its sink a fakesink named sink) to EOS: the frames; with
 * `cuda_in`, gpuconvolve (named f) had CUDA memory on its sink pad. */
static GPtrArray *
run_p010 (const gchar * line, gboolean cuda_in, const gchar * what)
{
  GstElement *pipeline = gcvt_pipeline_new (line);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  P010Frames got = { g_ptr_array_new_with_free_func ((GDestroyNotify)
        g_byte_array_unref), 0, 0 };

  g_object_set (sink, "signal-handoffs", TRUE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (keep_p010), &got);
  gcvt_pipeline_run_to_eos (pipeline, gcvt_time_limit (60 * GST_SECOND),
      what);
  if (cuda_in) {
    GstElement *f = gst_bin_get_by_name (GST_BIN (pipeline), "f");
    GstPad *pad = gst_element_get_static_pad (f, "sink");
    GstCaps *caps = gst_pad_get_current_caps (pad);
    GstCapsFeatures *features = caps ? gst_caps_get_features (caps, 0) : NULL;
    fail_unless (features && gst_caps_features_contains (features,
            "memory:CUDAMemory"), "%s: gpuconvolve's input is not in CUDA "
        "memory: %" GST_PTR_FORMAT, what, caps);
    gst_caps_unref (caps);
    gst_object_unref (pad);
    gst_object_unref (f);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  for (guint i = 0; i < got.frames->len; i++)
    fail_unless (g_ptr_array_index (got.frames, i) != NULL, "%s: frame %u "
        "could not be mapped", what, i);
  return got.frames;
}

/* The HEVC encoder there is, and the raw format it takes for Main10. */
static gboolean
h265_encoder (const gchar ** name, const gchar ** format)
{
  static const gchar *const encoders[][2] = {
    {"x265enc", "I420_10LE"}, {"nvh265enc", "P010_10LE"},
  };

  for (guint i = 0; i < G_N_ELEMENTS (encoders); i++) {
    GstElementFactory *f = gst_element_factory_find (encoders[i][0]);
    if (f) {
      gst_object_unref (f);
      *name = encoders[i][0];
      *format = encoders[i][1];
      return TRUE;
    }
  }
  return FALSE;
}

/* HEVC Main10 (P010_10LE in CUDA memory out of nvh265dec) through
 * gpuconvolve on the GPU, out in CUDA memory: its input stays CUDA
 * memory, and the frames agree with the CPU engine's of the same decoded
 * frames: Y within 1 (docs/formats.md, P010_10LE), the low 6 bits zero;
 * U and V (planes=luma) copied word for word. */
GST_START_TEST (test_nvh265dec_p010)
{
  const guint n = gcvt_quick ()? 4 : 12, w = 320, h = 180;
  const gchar *enc, *enc_format;
  gchar *dir = g_dir_make_tmp ("gpuconvolve-XXXXXX", NULL);
  gchar *file = g_build_filename (dir, "main10.h265", NULL);
  gchar *props = gcvt_launch_props ();
  gchar *encode, *gpu, *cpu;
  GPtrArray *on_gpu, *on_cpu;
  GstElement *pipeline;

  fail_unless (h265_encoder (&enc, &enc_format) && dir != NULL);
  encode = g_strdup_printf ("videotestsrc num-buffers=%u pattern=zone-plate "
      "kx2=20 ky2=20 kt=1 ! video/x-raw,format=%s,width=%u,height=%u,"
      "framerate=30/1 ! %s ! h265parse ! filesink location=\"%s\"", n,
      enc_format, w, h, enc, file);
  pipeline = gcvt_pipeline_new (encode);
  gcvt_pipeline_run_to_eos (pipeline, gcvt_time_limit (60 * GST_SECOND),
      "encoding HEVC Main10");
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  gpu = g_strdup_printf ("filesrc location=\"%s\" ! h265parse ! nvh265dec "
      "! video/x-raw(memory:CUDAMemory),format=P010_10LE ! gpuconvolve "
      "name=f %s filter=gaussian size=9 ! "
      "video/x-raw(memory:CUDAMemory),format=P010_10LE ! cudadownload ! "
      "video/x-raw,format=P010_10LE ! fakesink name=sink", file, props);
  cpu = g_strdup_printf ("filesrc location=\"%s\" ! h265parse ! nvh265dec "
      "! cudadownload ! video/x-raw,format=P010_10LE ! gpuconvolve "
      "backend=cpu filter=gaussian size=9 ! fakesink name=sink", file);
  on_gpu = run_p010 (gpu, TRUE, "nvh265dec ! gpuconvolve, CUDA memory");
  on_cpu = run_p010 (cpu, FALSE, "nvh265dec ! cudadownload ! gpuconvolve "
      "backend=cpu");
  fail_unless_equals_int (on_gpu->len, n);
  fail_unless_equals_int (on_cpu->len, n);
  for (guint i = 0; i < n; i++) {
    const GByteArray *a = g_ptr_array_index (on_gpu, i),
        *b = g_ptr_array_index (on_cpu, i);
    const gsize luma = (gsize) w * h * 2;
    fail_unless_equals_int (a->len, b->len);
    for (gsize j = 0; j < luma; j += 2) {
      const guint ga = a->data[j] | a->data[j + 1] << 8,
          gb = b->data[j] | b->data[j + 1] << 8;
      fail_unless ((ga & 63) == 0 && abs ((gint) (ga >> 6)
              - (gint) (gb >> 6)) <= 1, "frame %u: Y sample %" G_GSIZE_FORMAT
          " is word %u on the GPU, %u on the CPU", i, j / 2, ga, gb);
    }
    fail_unless (memcmp (a->data + luma, b->data + luma, a->len - luma) == 0,
        "frame %u: U and V not copied word for word", i);
  }
  g_ptr_array_unref (on_gpu);
  g_ptr_array_unref (on_cpu);
  g_unlink (file);
  g_rmdir (dir);
  g_free (file);
  g_free (dir);
  g_free (props);
  g_free (encode);
  g_free (gpu);
  g_free (cpu);
}

GST_END_TEST;

/* nvh265dec, an HEVC encoder and cudadownload here, on the CUDA backend;
 * else why not. */
static gboolean
nvh265dec_here (gchar ** why)
{
  static const gchar *const needs[] = { "nvh265dec", "h265parse",
    "cudadownload"
  };
  const gchar *enc, *format;

  *why = NULL;
  if (!gcvt_on_cuda ())
    *why = g_strdup ("needs backend=cuda");
  for (guint i = 0; !*why && i < G_N_ELEMENTS (needs); i++) {
    GstElementFactory *f = gst_element_factory_find (needs[i]);
    if (f)
      gst_object_unref (f);
    else
      *why = g_strdup_printf ("no %s element here", needs[i]);
  }
  if (!*why && !h265_encoder (&enc, &format))
    *why = g_strdup ("no HEVC encoder here (x265enc, nvh265enc)");
  return *why == NULL;
}

static Suite *
formats_element_suite (void)
{
  gchar *why;
  gboolean here;
  Suite *s = suite_create ("gpuconvolve-formats-element");
  TCase *tc = tcase_create ("formats-element");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_element_formats);
  tcase_add_test (tc, test_element_frames_repeat);
  tcase_add_test (tc, test_element_refuses_pair);
  tcase_add_test (tc, test_backends_offer_formats);
  here = nvh265dec_here (&why);
  GCVT_ADD_TEST_IF (tc, test_nvh265dec_p010, here, why);
  g_free (why);
  return s;
}

GCVT_MAIN (formats_element)
