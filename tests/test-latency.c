/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Latency (docs/pipeline.md, queue-depth): the LATENCY query answers
 * upstream's latency plus queue-depth - 1 frames where frames stay in
 * flight (CUDA), none on the CPU, at a fixed framerate and at a variable
 * one (the latest buffer's duration). */
#include "common.h"

#define QUEUE_DEPTH 2

/* The LATENCY query is answered with upstream's latency plus queue-depth - 1
 * frames where frames stay in flight (CUDA); the CPU adds none. */
GST_START_TEST (test_latency_query)
{
  static const guint depths[] = { 1, 2, 3 };

  for (guint d = 0; d < G_N_ELEMENTS (depths); d++) {
    GstElement *e = gcvt_element_new ();
    GstHarness *h;
    GstQuery *q = gst_query_new_latency ();
    GstClockTime min, max, upstream = 10 * GST_MSECOND, extra;
    gboolean live;

    g_object_set (e, "queue-depth", depths[d], NULL);
    h = gcvt_harness_new (e);
    gst_harness_set_upstream_latency (h, upstream);
    gst_harness_set_caps (h, gcvt_caps (REF_GRAY8, 8, 8),
        gcvt_caps (REF_GRAY8, 8, 8));       /* 30 fps */
    fail_unless (gst_pad_peer_query (h->sinkpad, q), "LATENCY unanswered");
    gst_query_parse_latency (q, &live, &min, &max);
    extra = gcvt_on_cuda ()? (depths[d] - 1) * GST_SECOND / 30 : 0;
    fail_unless (live);
    fail_unless_equals_uint64 (min, upstream + extra);
    gst_query_unref (q);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
  }
}

GST_END_TEST;

/* queue-depth N adds N-1 frame durations of latency. */
GST_START_TEST (test_latency_depth)
{
  GstElement *e = gcvt_element_new_depth (3);
  GstHarness *hn;
  GstQuery *q;
  GstClockTime min, max;
  gboolean live;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  hn = gcvt_harness_new (e);
  gcvt_set_caps (hn, REF_GRAY8, REF_GRAY8, 97, 61);
  gst_harness_set_src_caps_str (hn, "video/x-raw, format=GRAY8, width=97, "
      "height=61, framerate=30/1");
  gst_harness_set_upstream_latency (hn, 0);
  q = gst_query_new_latency ();
  fail_unless (gst_pad_peer_query (hn->sinkpad, q));
  gst_query_parse_latency (q, &live, &min, &max);
  fail_unless_equals_uint64 (min, gst_util_uint64_scale_int (2 * GST_SECOND,
          1, 30));
  gst_query_unref (q);
  gst_harness_teardown (hn);
  gcvt_element_unref (e);
}

GST_END_TEST;

/* At a variable framerate (0/1) the latency counts frames in flight in the
 * duration of the latest buffer. */
GST_START_TEST (test_latency_variable_framerate)
{
  GRand *r = ref_rand_new ("latency_variable_framerate");
  RefImage *img = gcvt_random_image (r, REF_GRAY8, 16, 8, 0, 0);
  GstElement *e = gcvt_element_new_depth (QUEUE_DEPTH);
  GstHarness *h;
  GstCaps *caps;
  GstBuffer *b;
  GstQuery *q;
  GstClockTime before, after;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  h = gcvt_harness_new (e);
  caps = gcvt_caps (REF_GRAY8, 16, 8);
  gst_caps_set_simple (caps, "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
  gst_harness_set_caps (h, gst_caps_ref (caps), caps);
  q = gst_query_new_latency ();
  fail_unless (gst_pad_peer_query (h->sinkpad, q));
  gst_query_parse_latency (q, NULL, &before, NULL);
  gst_query_unref (q);
  b = gcvt_buffer_new (img, REF_GRAY8, 0, 0, FALSE);
  GST_BUFFER_PTS (b) = 0;
  GST_BUFFER_DURATION (b) = 40 * GST_MSECOND;
  fail_unless_equals_int (gst_harness_push (h, b), GST_FLOW_OK);
  q = gst_query_new_latency ();
  fail_unless (gst_pad_peer_query (h->sinkpad, q));
  gst_query_parse_latency (q, NULL, &after, NULL);
  gst_query_unref (q);
  fail_unless_equals_uint64 (after - before,
      (gcvt_in_flight (QUEUE_DEPTH) - 1) * 40 * GST_MSECOND);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
latency_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-latency");
  TCase *tc = tcase_create ("latency");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_latency_query);
  GCVT_ADD_TEST_IF (tc, test_latency_depth, gcvt_on_cuda (),
      "frames in flight need the CUDA backend");
  tcase_add_test (tc, test_latency_variable_framerate);
  return s;
}

GCVT_MAIN (latency);
