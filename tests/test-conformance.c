/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GStreamer conformance: properties in any order (docs/properties.md), metas
 * and crop (docs/pipeline.md), buffer geometry from metas checked without
 * overflow, allocation, events and flags with frames in flight, segments in
 * other formats, and failures while streaming (docs/errors.md); latency
 * and passthrough have files of their own (test-latency.c,
 * test-passthrough.c). Each case runs on the backend and family under
 * test; on CUDA the default queue-depth of 2 keeps a frame in flight, which
 * the ordering cases are about. */
#include "common.h"

#include <gst/video/video.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_DEPTH 2

/* Frames in flight at most on the backend under test. */
static guint
depth (void)
{
  return gcvt_in_flight (QUEUE_DEPTH);
}

static GstElement *
element_new (void)
{
  return gcvt_element_new_depth (QUEUE_DEPTH);
}

/* A kernel of small integers (exact in float): of rank 2 or more, but
 * rank 1 where algorithm=separable is forced, which takes no other. */
static RefKernel *
int_kernel (GRand * r, guint kw, guint kh)
{
  RefKernel *k;

  if (gcvt_forced_separable ()) {
    gdouble *row = g_new (gdouble, kw), *column = g_new (gdouble, kh);
    for (guint i = 0; i < kw; i++)
      row[i] = g_rand_int_range (r, 1, 5);
    for (guint j = 0; j < kh; j++)
      column[j] = g_rand_int_range (r, -3, 4) + (j == 0 ? 5 : 0);
    k = ref_kernel_outer (column, kh, row, kw);
    g_free (row);
    g_free (column);
    return k;
  }
  k = ref_kernel_new (kw, kh);
  for (guint i = 0; i < kw * kh; i++)
    k->k[i] = g_rand_int_range (r, -4, 5);
  k->k[0] = 7;                  /* never all zero */
  return k;
}

/* --- properties in any order ------------------------------------------- */

/* Properties set as gst-launch sets them, in the order given: none is
 * refused, and the frame is filtered with what they say together. */
static void
check_order (const gchar * const *names, const gchar * const *values,
    const RefParams * p, const gchar * what)
{
  GRand *r = ref_rand_new (what);
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, 37, 23, -1.0, 1.0);
  GstElement *e = element_new ();

  gcvt_log_capture_start ();
  for (guint i = 0; names[i]; i++)
    gst_util_set_object_arg (G_OBJECT (e), names[i], values[i]);
  fail_unless_equals_int (gcvt_log_total (), 0);
  gcvt_log_capture_stop ();
  gcvt_run_and_check (e, REF_GRAY32F, REF_GRAY32F, img, p, 0, 0, what);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

static gchar *
kernel_text (const RefKernel * k)
{
  GString *s = g_string_new ("<");
  for (guint i = 0; i < k->kw * k->kh; i++)
    g_string_append_printf (s, "%s%g", i ? "," : "", k->k[i]);
  g_string_append (s, ">");
  return g_string_free (s, FALSE);
}

GST_START_TEST (test_kernel_before_sizes)
{
  GRand *r = ref_rand_new ("kernel_before_sizes");
  RefKernel *k = int_kernel (r, 5, 5);
  gchar *text = kernel_text (k), *scale;
  RefParams p;

  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  scale = g_strdup_printf ("%.17g", p.scale);
  {
    const gchar *names[] = { "kernel", "scale", "kernel-width",
      "kernel-height", NULL
    };
    const gchar *values[] = { text, scale, "5", "5" };
    check_order (names, values, &p, "kernel before its sizes");
  }
  {
    /* and the sizes first: the same filter */
    const gchar *names[] = { "kernel-width", "kernel-height", "scale",
      "kernel", NULL
    };
    const gchar *values[] = { "5", "5", scale, text };
    check_order (names, values, &p, "sizes before the kernel");
  }
  g_free (scale);
  g_free (text);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

GST_START_TEST (test_anchor_before_size)
{
  GRand *r = ref_rand_new ("anchor_before_size");
  RefKernel *k = int_kernel (r, 5, 3);
  gchar *text = kernel_text (k);
  const gchar *names[] = { "anchor-x", "anchor-y", "kernel-width", "kernel",
    "kernel-height", "border", NULL
  };
  const gchar *values[] = { "4", "2", "5", text, "3", "reflect101" };
  RefParams p;

  ref_params_init (&p, k);
  p.anchor_x = 4;
  p.anchor_y = 2;
  p.border = REF_BORDER_REFLECT101;
  check_order (names, values, &p, "anchor before the kernel's size");
  g_free (text);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

GST_START_TEST (test_factors_before_sizes)
{
  static const gdouble row[7] = { 1, 2, 3, 4, 3, 2, 1 };
  static const gdouble column[3] = { 1, -2, 1 };
  RefKernel *k = ref_kernel_outer (column, 3, row, 7);
  const gchar *names[] = { "row-kernel", "column-kernel", "kernel-width",
    "kernel-height", NULL
  };
  const gchar *values[] = { "<1,2,3,4,3,2,1>", "<1,-2,1>", "7", "3" };
  RefParams p;

  ref_params_init (&p, k);
  check_order (names, values, &p, "row and column kernels before sizes");
  ref_kernel_free (k);
}

GST_END_TEST;

/* A sigma far below a pixel is the limit of the Gaussian: a centred delta,
 * over the two middle taps of an even size. */
GST_START_TEST (test_gaussian_tiny_sigma)
{
  GRand *r = ref_rand_new ("gaussian_tiny_sigma");
  RefImage *img = gcvt_random_image (r, REF_GRAY8, 29, 17, 0, 0);
  RefKernel *k = ref_kernel_new (4, 4);
  GstElement *e = element_new ();
  RefParams p;

  memset (k->k, 0, sizeof (gdouble) * 16);
  k->k[1 * 4 + 1] = k->k[1 * 4 + 2] = k->k[2 * 4 + 1] = k->k[2 * 4 + 2] =
      0.25;
  ref_params_init (&p, k);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
  g_object_set (e, "size", 4, "sigma", 0.01, NULL);
  gcvt_run_and_check (e, REF_GRAY8, REF_GRAY8, img, &p, 0, 0,
      "gaussian size=4 sigma=0.01");
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* --- metas and crop ----------------------------------------------------- */

/* `full` as a buffer with a GstVideoMeta, and a crop meta for the region
 * (x, y, w, h), as videocrop sends it where downstream takes crop metas. */
static GstBuffer *
cropped_buffer (const RefImage * full, RefFormat format, guint x, guint y,
    guint w, guint h)
{
  GstBuffer *buf = gcvt_buffer_new (full, format, 0, 0, TRUE);
  GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta (buf);

  crop->x = x;
  crop->y = y;
  crop->width = w;
  crop->height = h;
  return buf;
}

static RefImage *
sub_image (const RefImage * full, guint x0, guint y0, guint w, guint h)
{
  RefImage *sub = ref_image_new (w, h, full->channels);
  for (guint y = 0; y < h; y++)
    memcpy (ref_pixel (sub, 0, y), ref_pixel (full, x0, y0 + y),
        sizeof (gdouble) * w * full->channels);
  return sub;
}

/* The crop region is what is filtered, borders at its edges, and the
 * output is that region with no crop meta left on it. */
GST_START_TEST (test_crop_meta_honoured)
{
  static const RefFormat formats[] = { REF_GRAY8, REF_RGBA };
  GRand *r = ref_rand_new ("crop_meta_honoured");

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    RefImage *full = gcvt_random_image (r, formats[f], 40, 30, 0, 0);
    RefImage *sub = sub_image (full, 5, 3, 32, 26);
    RefKernel *k = int_kernel (r, 3, 3);
    GstElement *e = element_new ();
    GstHarness *h;
    GstBuffer *out;
    RefParams p;

    ref_params_init (&p, k);
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    gcvt_set_params (e, &p);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, formats[f], formats[f], 32, 26);
    out = gcvt_process (h, cropped_buffer (full, formats[f], 5, 3, 32, 26));
    gcvt_assert_frame (out, formats[f], formats[f], sub, &p, "crop region");
    fail_if (gst_buffer_get_video_crop_meta (out) != NULL,
        "the crop meta went on with an output that is already cropped");
    gst_buffer_unref (out);
    fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_kernel_free (k);
    ref_image_free (sub);
    ref_image_free (full);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* Upstream is offered crop metas only by an element that honours them. */
GST_START_TEST (test_crop_meta_offered)
{
  GstElement *e = element_new ();
  GstHarness *h;
  GstQuery *q;
  GstCaps *caps = gcvt_caps (REF_RGBA, 64, 48);

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, 64, 48);
  q = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, q));
  fail_unless (gst_query_find_allocation_meta (q,
          GST_VIDEO_CROP_META_API_TYPE, NULL));
  fail_unless (gst_query_find_allocation_meta (q, GST_VIDEO_META_API_TYPE,
          NULL));
  gst_query_unref (q);
  gst_caps_unref (caps);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* A crop region of another size than the caps: an error naming both, not
 * a filtered wrong region. */
GST_START_TEST (test_crop_meta_wrong_size)
{
  GRand *r = ref_rand_new ("crop_meta_wrong_size");
  RefImage *full = gcvt_random_image (r, REF_GRAY8, 40, 30, 0, 0);
  GstElement *e = element_new ();
  GstHarness *h;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 32, 26);
  fail_unless_equals_int (gst_harness_push (h, cropped_buffer (full,
              REF_GRAY8, 5, 3, 30, 26)), GST_FLOW_ERROR);
  gcvt_assert_message (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, "30x26");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (full);
  g_rand_free (r);
}

GST_END_TEST;

/* Metas still true of a filtered frame of the same geometry go with it. */
GST_START_TEST (test_metas_pass)
{
  static const gchar *no_tags[] = { NULL };
  GRand *r = ref_rand_new ("metas_pass");
  RefImage *img = gcvt_random_image (r, REF_RGBA, 48, 32, 0, 0);
  GstElement *e = element_new ();
  const GstMetaInfo *custom = gst_meta_get_info ("GcvtTestMeta");
  GstVideoTimeCode *tc;
  GstVideoRegionOfInterestMeta *roi;
  GstHarness *h;
  GstBuffer *in, *out;

  if (!custom)
    custom = gst_meta_register_custom ("GcvtTestMeta", (const gchar **)
        no_tags, NULL, NULL, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, 48, 32);
  in = gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE);
  gst_buffer_add_video_region_of_interest_meta (in, "face", 3, 4, 10, 12);
  tc = gst_video_time_code_new (25, 1, NULL, GST_VIDEO_TIME_CODE_FLAGS_NONE,
      1, 2, 3, 4, 0);
  gst_buffer_add_video_time_code_meta (in, tc);
  gst_video_time_code_free (tc);
  gst_buffer_add_video_affine_transformation_meta (in);
  gst_structure_set (gst_custom_meta_get_structure (gst_buffer_add_custom_meta
          (in, "GcvtTestMeta")), "n", G_TYPE_INT, 42, NULL);
  out = gcvt_process (h, in);
  roi = gst_buffer_get_video_region_of_interest_meta (out);
  fail_unless (roi != NULL, "the region of interest was dropped");
  fail_unless (roi->x == 3 && roi->y == 4 && roi->w == 10 && roi->h == 12);
  fail_unless (gst_buffer_get_video_time_code_meta (out) != NULL,
      "the time code was dropped");
  fail_unless (gst_buffer_get_video_affine_transformation_meta (out) != NULL,
      "the affine transformation was dropped");
  {
    GstCustomMeta *m = gst_buffer_get_custom_meta (out, "GcvtTestMeta");
    gint n = 0;
    fail_unless (m != NULL, "a meta without tags was dropped");
    gst_structure_get_int (gst_custom_meta_get_structure (m), "n", &n);
    fail_unless_equals_int (n, 42);
  }
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* --- buffer geometry ---------------------------------------------------- */

/* A buffer whose meta points outside it: STREAM FORMAT, no read. */
static void
expect_geometry_error (GstBuffer * buf, const gchar * what)
{
  GstElement *e = element_new ();
  GstHarness *h;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, 16, 8);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  gcvt_assert_message (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  (void) what;
}

static GstBuffer *
meta_buffer (gsize size, gsize offset, gint stride)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gsize offsets[GST_VIDEO_MAX_PLANES] = { offset };
  gint strides[GST_VIDEO_MAX_PLANES] = { stride };

  gst_buffer_memset (buf, 0, 0x5a, size);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_RGBA, 16, 8, 1, offsets, strides);
  return buf;
}

/* Offsets and strides whose sums wrap around 2^64 (once a check that
 * passed, then a read far outside the buffer). */
GST_START_TEST (test_meta_overflow)
{
  const gsize size = 16 * 4 * 8;

  expect_geometry_error (meta_buffer (size, G_MAXSIZE - 100, 64),
      "offset near 2^64");
  expect_geometry_error (meta_buffer (size, G_MAXSIZE - 64 * 7 + 1, 64),
      "offset that wraps with the rows");
  expect_geometry_error (meta_buffer (size, 0, G_MAXINT),
      "largest stride");
  {
    /* a crop region far below the frame */
    GstBuffer *buf = meta_buffer (size, 0, 64);
    GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta (buf);
    crop->x = 0;
    crop->y = G_MAXUINT - 3;
    crop->width = 16;
    crop->height = 8;
    expect_geometry_error (buf, "crop y near 2^32");
  }
  {
    GstBuffer *buf = meta_buffer (size, 0, 64);
    GstVideoCropMeta *crop = gst_buffer_add_video_crop_meta (buf);
    crop->x = G_MAXUINT - 3;
    crop->y = 0;
    crop->width = 16;
    crop->height = 8;
    expect_geometry_error (buf, "crop x near 2^32");
  }
}

GST_END_TEST;

/* GRAY32F rows at any offset and stride a GstVideoMeta gives, also ones
 * that are not float-aligned: read correctly, never as misaligned floats. */
GST_START_TEST (test_unaligned_float_rows)
{
  GRand *r = ref_rand_new ("unaligned_float_rows");
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, 45, 21, -1.0, 1.0);

  for (guint sep = 0; sep < 2; sep++) {
    RefKernel *k = sep ? ref_builtin ("gaussian", 5, 1.2) :
        int_kernel (r, 5, 3);
    GstElement *e = element_new ();
    RefParams p;

    ref_params_init (&p, k);
    p.scale = 1.0 / ref_kernel_sum_abs (k);
    gcvt_set_params (e, &p);
    gcvt_run_and_check (e, REF_GRAY32F, REF_GRAY32F, img, &p, 45 * 4 + 2, 2,
        sep ? "separable, rows 2 bytes off" : "2D, rows 2 bytes off");
    gcvt_element_unref (e);
    ref_kernel_free (k);
  }
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* --- allocation and passthrough ----------------------------------------- */

/* Downstream's allocation answer: a pool it fills of min = max = 3. */
static GstPadProbeReturn
answer_pool (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  GstQuery *q = GST_PAD_PROBE_INFO_QUERY (info);
  GstCaps *caps;
  guint size = GPOINTER_TO_UINT (user_data);

  if (GST_QUERY_TYPE (q) == GST_QUERY_ALLOCATION) {
    gst_query_parse_allocation (q, &caps, NULL);
    if (gst_query_get_n_allocation_pools (q) == 0)
      gst_query_add_allocation_pool (q, NULL, size, 3, 3);
  }
  return GST_PAD_PROBE_OK;
}

/* Our pool holds downstream's minimum plus the frames in flight, with no
 * maximum: a sink that keeps every buffer slows nothing down to a halt. */
GST_START_TEST (test_pool_for_downstream_and_flight)
{
  GRand *r = ref_rand_new ("pool_for_downstream_and_flight");
  RefImage *img = gcvt_random_image (r, REF_GRAY8, 32, 16, 0, 0);
  GstElement *e = element_new ();
  GstHarness *h;
  GstBufferPool *pool;
  GstStructure *config;
  guint min, max;
  const guint frames = 12;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  gst_pad_add_probe (GST_BASE_TRANSFORM_SRC_PAD (e),
      GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM | GST_PAD_PROBE_TYPE_PULL,
      answer_pool, GUINT_TO_POINTER (32 * 16), NULL);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 32, 16);
  /* the harness keeps every output: more than min and max above */
  for (guint i = 0; i < frames; i++)
    fail_unless_equals_int (gst_harness_push (h, gcvt_buffer_new (img,
                REF_GRAY8, 0, 0, FALSE)), GST_FLOW_OK);
  gcvt_drain (h);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), frames);
  pool = gst_base_transform_get_buffer_pool (GST_BASE_TRANSFORM (e));
  fail_unless (pool != NULL);
  config = gst_buffer_pool_get_config (pool);
  fail_unless (gst_buffer_pool_config_get_params (config, NULL, NULL, &min,
          &max));
  fail_unless (min >= 3 + depth (), "pool min %u for downstream's 3 and %u "
      "in flight", min, depth ());
  fail_unless_equals_int (max, 0);
  gst_structure_free (config);
  gst_object_unref (pool);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* --- events, flags and segments with frames in flight ------------------- */

typedef struct
{
  GMutex lock;
  GString *seen;                /* 'b' buffer, 'B' DISCONT buffer, 'T' tag */
} Seen;

static GstPadProbeReturn
record (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Seen *s = user_data;
  gchar c = 0;

  if (info->type & GST_PAD_PROBE_TYPE_BUFFER)
    c = GST_BUFFER_IS_DISCONT (GST_PAD_PROBE_INFO_BUFFER (info)) ? 'B' : 'b';
  else if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_TAG)
    c = 'T';
  if (c) {
    g_mutex_lock (&s->lock);
    g_string_append_c (s->seen, c);
    g_mutex_unlock (&s->lock);
  }
  return GST_PAD_PROBE_OK;
}

/* DISCONT stays on the frame that carried it, and a tag goes out between
 * the frames it came between, without pushing the frames in flight out
 * early (docs/pipeline.md). */
GST_START_TEST (test_flags_and_events_in_order)
{
  GRand *r = ref_rand_new ("flags_and_events_in_order");
  RefImage *img = gcvt_random_image (r, REF_GRAY8, 32, 16, 0, 0);
  GstElement *e = element_new ();
  Seen s = { {0}, g_string_new ("") };
  GstHarness *h;
  gsize out_at_tag;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  gst_pad_add_probe (GST_BASE_TRANSFORM_SRC_PAD (e),
      GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
      record, &s, NULL);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 32, 16);
  for (guint i = 0; i < 6; i++) {
    GstBuffer *b = gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE);
    if (i == 2) {
      gst_harness_push_event (h, gst_event_new_tag (gst_tag_list_new
              (GST_TAG_COMMENT, "between 1 and 2", NULL)));
      g_mutex_lock (&s.lock);
      out_at_tag = 0;
      for (gsize c = 0; c < s.seen->len; c++)
        out_at_tag += s.seen->str[c] != 'T';
      g_mutex_unlock (&s.lock);
      /* frames in flight were not pushed out for the tag */
      fail_unless_equals_int (out_at_tag, 2 - (depth () - 1));
    }
    if (i == 4)
      GST_BUFFER_FLAG_SET (b, GST_BUFFER_FLAG_DISCONT);
    fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  }
  gst_harness_push_event (h, gst_event_new_eos ());
  fail_unless_equals_string (s.seen->str, "bbTbbBb");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  g_string_free (s.seen, TRUE);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* filesrc ! capsfilter ! gpuconvolve: a BYTES segment, and no critical
 * (gst-check fails a test on any). */
GST_START_TEST (test_bytes_segment)
{
  GRand *r = ref_rand_new ("bytes_segment");
  RefImage *img = gcvt_random_image (r, REF_GRAY8, 16, 8, 0, 0);
  RefKernel *box = ref_builtin ("box", 3, 1.0);
  GstElement *e = element_new ();
  GstHarness *h;
  GstSegment segment;
  GstBuffer *out;
  RefParams p;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 3, NULL);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY8, REF_GRAY8, 16, 8);
  gst_segment_init (&segment, GST_FORMAT_BYTES);
  fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
  for (guint i = 0; i < 3; i++) {
    GstBuffer *b = gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE);
    GST_BUFFER_OFFSET (b) = i * 16 * 8;
    GST_BUFFER_PTS (b) = i == 0 ? 0 : GST_CLOCK_TIME_NONE;
    out = gcvt_process (h, b);
    ref_params_init (&p, box);
    gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, img, &p, "BYTES segment");
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (box);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* --- CUDA: failures and several elements -------------------------------- */

/* A filter change whose set-up fails mid-stream (device allocations made
 * to fail, for a halo the slot buffers cannot hold): an error, the flow
 * stops, and no frame runs on the half-changed plan. */
GST_START_TEST (test_filter_change_failure)
{
  GRand *r = ref_rand_new ("filter_change_failure");
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, 64, 48, -1, 1);
  GstElement *e = element_new ();
  GstHarness *h;
  GstBuffer *out;
  GstFlowReturn ret = GST_FLOW_OK;
  guint pushed = 0, before;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 3, NULL);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, 64, 48);
  for (guint i = 0; i < 4; i++) {
    out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY32F, 0, 0, FALSE));
    gst_buffer_unref (out);
  }
  /* every device allocation fails from here on; the pool has its buffers */
  g_setenv ("GPUCONVOLVE_CUDA_FAIL", "alloc", TRUE);
  gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
  g_object_set (e, "size", 63, "sigma", 9.0, NULL);
  before = gst_harness_buffers_received (h);
  while (ret == GST_FLOW_OK && pushed < 4) {
    ret = gst_harness_push (h, gcvt_buffer_new (img, REF_GRAY32F, 0, 0,
            FALSE));
    pushed++;
  }
  g_unsetenv ("GPUCONVOLVE_CUDA_FAIL");
  fail_unless_equals_int (ret, GST_FLOW_ERROR);
  fail_unless_equals_int (pushed, 1);
  gcvt_assert_message (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED, NULL);
  /* nothing came out after the failed change: not the frame in flight
   * (its plan is gone) and not the new one */
  gcvt_drain (h);
  fail_unless_equals_int (gst_harness_buffers_received (h), before);
  /* and it stays stopped */
  fail_unless_equals_int (gst_harness_push (h, gcvt_buffer_new (img,
              REF_GRAY32F, 0, 0, FALSE)), GST_FLOW_ERROR);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* Two pipelines in one process whose kernels need different amounts of
 * shared memory (the limit is an attribute of the kernel function, which
 * both share): many frames each, at once, without an error. */
GST_START_TEST (test_two_elements_shared_memory)
{
  const gchar *sizes[2][2] = { {"43", "43"}, {"43", "3"} };
  /* fewer frames and more time under the valgrind setup or a sanitizer */
  const guint frames = gcvt_quick ()? 20 : 300;
  const GstClockTime limit = gcvt_time_limit (120 * GST_SECOND);
  GstElement *pipelines[2];
  gchar *props = gcvt_launch_props ();

  for (guint i = 0; i < 2; i++) {
    GString *k = g_string_new ("");
    guint n = 43 * (guint) atoi (sizes[i][1]);
    gchar *line;
    /* rank 1, so that algorithm=separable takes it too */
    for (guint t = 0; t < n; t++)
      g_string_append_printf (k, "%s%u", t ? "," : "",
          (1 + (t % 43 * 7) % 13) * (1 + (t / 43 * 5) % 11));
    line = g_strdup_printf ("videotestsrc num-buffers=%u pattern=ball ! "
        "video/x-raw,format=GRAY8,width=640,height=480 ! gpuconvolve %s "
        "kernel-width=%s kernel-height=%s kernel=<%s> normalize=true ! "
        "fakesink sync=false", frames, props, sizes[i][0], sizes[i][1],
        k->str);
    g_string_free (k, TRUE);
    pipelines[i] = gcvt_pipeline_new (line);
    g_free (line);
  }
  for (guint i = 0; i < 2; i++)
    gst_element_set_state (pipelines[i], GST_STATE_PLAYING);
  for (guint i = 0; i < 2; i++) {
    GstBus *bus = gst_element_get_bus (pipelines[i]);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, limit,
        GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless (msg != NULL, "pipeline %u: no end in %" GST_TIME_FORMAT, i,
        GST_TIME_ARGS (limit));
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *err = NULL;
      gst_message_parse_error (msg, &err, NULL);
      ck_abort_msg ("pipeline %u (43x%s): %s", i, sizes[i][1], err->message);
    }
    gst_message_unref (msg);
    gst_object_unref (bus);
  }
  for (guint i = 0; i < 2; i++) {
    gst_element_set_state (pipelines[i], GST_STATE_NULL);
    gst_object_unref (pipelines[i]);
  }
  g_free (props);
}

GST_END_TEST;

static Suite *
conformance_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-conformance");
  TCase *tc = tcase_create ("conformance");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_kernel_before_sizes);
  tcase_add_test (tc, test_anchor_before_size);
  tcase_add_test (tc, test_factors_before_sizes);
  tcase_add_test (tc, test_gaussian_tiny_sigma);
  tcase_add_test (tc, test_crop_meta_honoured);
  tcase_add_test (tc, test_crop_meta_offered);
  tcase_add_test (tc, test_crop_meta_wrong_size);
  tcase_add_test (tc, test_metas_pass);
  tcase_add_test (tc, test_meta_overflow);
  tcase_add_test (tc, test_unaligned_float_rows);
  tcase_add_test (tc, test_pool_for_downstream_and_flight);
  tcase_add_test (tc, test_flags_and_events_in_order);
  tcase_add_test (tc, test_bytes_segment);
#ifdef GCVT_FAULT_INJECTION
  GCVT_ADD_TEST_IF (tc, test_filter_change_failure, gcvt_on_cuda (),
      "needs backend=cuda");
#else
  GCVT_ADD_TEST_IF (tc, test_filter_change_failure, FALSE,
      "CUDA failures are injected only with -Dfault-injection=true");
#endif
  GCVT_ADD_TEST_IF (tc, test_two_elements_shared_memory, gcvt_on_cuda (),
      "needs backend=cuda");
  return s;
}

GCVT_MAIN (conformance)
