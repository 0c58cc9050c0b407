/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Frames in flight on the CUDA backend: queue depths, EOS, flush, caps
 * changes with frames on the GPU, pinned memory (their latency:
 * test-latency.c). Runs only on the CUDA backend (it skips elsewhere: on
 * the CPU one frame is in flight). */
#include "common.h"

#include <gst/video/video.h>
#include <string.h>

#define W 97
#define H 61
#define N_FRAMES 9

typedef struct {
  RefImage *in[N_FRAMES];
  RefParams params;
  RefKernel *kernel;
} Clip;

/* For 8-bit formats: fails unless fewer than 10% of the filtered samples
 * of the reference are outside 0..255, where saturation would make a
 * wrong sum look right. */
static void
assert_little_saturation (const Clip * c, RefFormat format)
{
  const RefFormatInfo *fi = ref_format_info (format);
  const guint filtered = fi->channels == 4 && !c->params.filter_alpha ? 3 :
      fi->channels;
  guint64 saturated = 0, total = 0;

  if (fi->is_float)
    return;
  for (guint i = 0; i < N_FRAMES; i++) {
    RefImage *ref = ref_filter (c->in[i], &c->params);
    for (guint y = 0; y < ref->height; y++)
      for (guint x = 0; x < ref->width; x++)
        for (guint ch = 0; ch < filtered; ch++) {
          gdouble v = ref_pixel (ref, x, y)[ch];
          saturated += v < 0.0 || v > 255.0;
          total++;
        }
    ref_image_free (ref);
  }
  g_print ("%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " reference "
      "samples outside 0..255\n", fi->name, saturated, total);
  fail_unless (saturated * 10 < total, "%s: %" G_GUINT64_FORMAT " of %"
      G_GUINT64_FORMAT " samples saturate", fi->name, saturated, total);
}

/* A random 5x3 kernel scaled by 1 / sum|K|; on 8-bit formats the bias
 * 255 * sum|negative taps| / sum|K| then maps every input in 0..255 into
 * 0..255, so the frames are checked on real values, not on saturated
 * ones. */
static void
clip_init (Clip * c, GRand * rand, RefFormat format, guint w, guint h)
{
  gdouble negative = 0.0, sum_abs;

  /* rank 1 where the separable family is forced, which needs it */
  c->kernel = gcvt_random_kernel (rand, 5, 3, gcvt_forced_separable ());
  ref_params_init (&c->params, c->kernel);
  sum_abs = ref_kernel_sum_abs (c->kernel);
  for (guint i = 0; i < c->kernel->kw * c->kernel->kh; i++)
    negative += MAX (0.0, -c->kernel->k[i]);
  c->params.scale = 1.0 / sum_abs;
  if (!ref_format_info (format)->is_float)
    c->params.bias = 255.0 * negative / sum_abs;
  for (guint i = 0; i < N_FRAMES; i++)
    c->in[i] = gcvt_random_image (rand, format, w, h, -4.0, 4.0);
  assert_little_saturation (c, format);
}

static void
clip_clear (Clip * c)
{
  for (guint i = 0; i < N_FRAMES; i++)
    ref_image_free (c->in[i]);
  ref_kernel_free (c->kernel);
}

/* The harness refs the element; the element's own ref goes with
 * harness_free(). */
static GstHarness *
harness_with_depth (guint depth, const Clip * c, RefFormat format, guint w,
    guint h)
{
  GstElement *e = gcvt_element_new ();
  GstHarness *hn;

  gcvt_set_params (e, &c->params);
  g_object_set (e, "queue-depth", depth, NULL);
  hn = gcvt_harness_new (e);
  gcvt_set_caps (hn, format, format, w, h);
  return hn;
}

static void
harness_free (GstHarness * hn)
{
  GstElement *e = hn->element;

  gst_harness_teardown (hn);
  gcvt_element_unref (e);       /* ours, from gcvt_element_new() */
}

/* Every depth gives the same bytes in the same order, each frame right. */
GST_START_TEST (test_depths_identical)
{
  GRand *rand = ref_rand_new ("depths");
  const RefFormat formats[] = { REF_GRAY32F, REF_RGBA };
  GstMapInfo m1, m2;

  for (guint f = 0; f < G_N_ELEMENTS (formats); f++) {
    Clip clip;
    GstBuffer *first[N_FRAMES];
    clip_init (&clip, rand, formats[f], W, H);
    for (guint depth = 1; depth <= 4; depth++) {
      GstHarness *hn = harness_with_depth (depth, &clip, formats[f], W, H);
      for (guint i = 0; i < N_FRAMES; i++) {
        fail_unless_equals_int (gst_harness_push (hn,
                gcvt_timed_buffer (clip.in[i], formats[f], i)), GST_FLOW_OK);
        /* a frame comes out once depth frames went in */
        fail_unless_equals_int (gst_harness_buffers_received (hn),
            i + 1 >= depth ? i + 2 - depth : 0);
      }
      fail_unless (gst_harness_push_event (hn, gst_event_new_eos ()));
      fail_unless_equals_int (gst_harness_buffers_in_queue (hn), N_FRAMES);
      for (guint i = 0; i < N_FRAMES; i++) {
        GstBuffer *out = gst_harness_pull (hn);
        gchar *what = g_strdup_printf ("%s depth %u frame %u",
            ref_format_info (formats[f])->name, depth, i);
        fail_unless_equals_uint64 (GST_BUFFER_PTS (out), i * GST_SECOND / 30);
        if (depth == 1) {
          gcvt_assert_frame (out, formats[f], formats[f], clip.in[i],
              &clip.params, what);
          first[i] = out;
        } else {
          fail_unless (gst_buffer_map (out, &m1, GST_MAP_READ));
          fail_unless (gst_buffer_map (first[i], &m2, GST_MAP_READ));
          fail_unless_equals_uint64 (m1.size, m2.size);
          fail_unless (memcmp (m1.data, m2.data, m1.size) == 0,
              "%s differs from depth 1", what);
          gst_buffer_unmap (out, &m1);
          gst_buffer_unmap (first[i], &m2);
          gst_buffer_unref (out);
        }
        g_free (what);
      }
      harness_free (hn);
    }
    for (guint i = 0; i < N_FRAMES; i++)
      gst_buffer_unref (first[i]);
    clip_clear (&clip);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* EOS pushes the frames still on the GPU, before the EOS itself. */
GST_START_TEST (test_eos_with_frames_in_flight)
{
  GRand *rand = ref_rand_new ("eos");
  Clip clip;
  GstHarness *hn;
  GstEvent *ev;

  clip_init (&clip, rand, REF_GRAY32F, W, H);
  hn = harness_with_depth (4, &clip, REF_GRAY32F, W, H);
  for (guint i = 0; i < 3; i++)
    fail_unless_equals_int (gst_harness_push (hn, gcvt_timed_buffer (clip.in[i],
                REF_GRAY32F, i)), GST_FLOW_OK);
  fail_unless_equals_int (gst_harness_buffers_received (hn), 0);
  fail_unless (gst_harness_push_event (hn, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (hn), 3);
  for (guint i = 0; i < 3; i++) {
    GstBuffer *out = gst_harness_pull (hn);
    gcvt_assert_frame (out, REF_GRAY32F, REF_GRAY32F, clip.in[i],
        &clip.params, "after EOS");
    gst_buffer_unref (out);
  }
  /* the EOS came after them */
  while ((ev = gst_harness_try_pull_event (hn))) {
    gboolean eos = GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
    if (eos)
      break;
  }
  fail_unless (ev != NULL, "no EOS downstream");
  harness_free (hn);
  clip_clear (&clip);
  g_rand_free (rand);
}

GST_END_TEST;

/* A flush drops the frames in flight; what follows is filtered right. */
GST_START_TEST (test_flush_mid_stream)
{
  GRand *rand = ref_rand_new ("flush");
  Clip clip;
  GstHarness *hn;
  GstBuffer *out;

  clip_init (&clip, rand, REF_RGBA, W, H);
  hn = harness_with_depth (3, &clip, REF_RGBA, W, H);
  for (guint i = 0; i < 2; i++)
    fail_unless_equals_int (gst_harness_push (hn, gcvt_timed_buffer (clip.in[i],
                REF_RGBA, i)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (hn, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (hn, gst_event_new_flush_stop (TRUE)));
  fail_unless_equals_int (gst_harness_buffers_in_queue (hn), 0);
  {
    GstSegment seg;
    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_harness_push_event (hn, gst_event_new_segment (&seg)));
  }
  fail_unless_equals_int (gst_harness_push (hn, gcvt_timed_buffer (clip.in[2],
              REF_RGBA, 2)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (hn, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (hn), 1);
  out = gst_harness_pull (hn);
  gcvt_assert_frame (out, REF_RGBA, REF_RGBA, clip.in[2], &clip.params,
      "after flush");
  gst_buffer_unref (out);
  harness_free (hn);
  clip_clear (&clip);
  g_rand_free (rand);
}

GST_END_TEST;

/* New caps with frames on the GPU: those come out first, as they were. */
GST_START_TEST (test_caps_change_in_flight)
{
  GRand *rand = ref_rand_new ("caps change");
  Clip big, small;
  GstHarness *hn;

  clip_init (&big, rand, REF_GRAY8, W, H);
  clip_init (&small, rand, REF_GRAY8, 33, 21);
  ref_kernel_free (small.kernel);       /* the same filter for both */
  small.kernel = ref_kernel_copy (big.kernel);
  small.params = big.params;
  small.params.kernel = small.kernel;
  hn = harness_with_depth (3, &big, REF_GRAY8, W, H);
  for (guint i = 0; i < 2; i++)
    fail_unless_equals_int (gst_harness_push (hn, gcvt_timed_buffer (big.in[i],
                REF_GRAY8, i)), GST_FLOW_OK);
  gcvt_set_caps (hn, REF_GRAY8, REF_GRAY8, 33, 21);
  fail_unless_equals_int (gst_harness_push (hn, gcvt_timed_buffer (small.in[0],
              REF_GRAY8, 2)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (hn, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (hn), 3);
  for (guint i = 0; i < 3; i++) {
    GstBuffer *out = gst_harness_pull (hn);
    if (i < 2)
      gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, big.in[i], &big.params,
          "before the caps change");
    else
      gcvt_assert_frame (out, REF_GRAY8, REF_GRAY8, small.in[0],
          &small.params, "after the caps change");
    gst_buffer_unref (out);
  }
  harness_free (hn);
  clip_clear (&big);
  clip_clear (&small);
  g_rand_free (rand);
}

GST_END_TEST;

/* Upstream is offered pinned buffers, and output buffers are pinned. */
GST_START_TEST (test_pinned_pool)
{
  GRand *rand = ref_rand_new ("pinned");
  Clip clip;
  GstHarness *hn;
  GstQuery *query;
  GstBufferPool *pool = NULL;
  GstBuffer *buf, *out;
  GstAllocator *allocator = NULL;

  clip_init (&clip, rand, REF_RGBA, W, H);
  hn = harness_with_depth (2, &clip, REF_RGBA, W, H);

  {
    GstCaps *caps = gcvt_caps (REF_RGBA, W, H);
    query = gst_query_new_allocation (caps, TRUE);
    gst_caps_unref (caps);
  }
  fail_unless (gst_pad_peer_query (hn->srcpad, query));
  fail_unless (gst_query_get_n_allocation_pools (query) > 0);
  gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  fail_unless (pool != NULL);
  fail_unless (gst_query_find_allocation_meta (query,
          GST_VIDEO_META_API_TYPE, NULL));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
      GST_FLOW_OK);
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (buf, 0),
          "GpuConvolvePinned"), "upstream pool is not pinned");
  gst_buffer_unref (buf);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_query_parse_nth_allocation_param (query, 0, &allocator, NULL);
  fail_unless (allocator != NULL);
  fail_unless_equals_string (allocator->mem_type, "GpuConvolvePinned");
  gst_object_unref (allocator);
  gst_query_unref (query);

  out = gcvt_process (hn, gcvt_timed_buffer (clip.in[0], REF_RGBA, 0));
  fail_unless (gst_memory_is_type (gst_buffer_peek_memory (out, 0),
          "GpuConvolvePinned"), "output is not pinned");
  gcvt_assert_frame (out, REF_RGBA, REF_RGBA, clip.in[0], &clip.params,
      "pinned");
  gst_buffer_unref (out);
  harness_free (hn);
  clip_clear (&clip);
  g_rand_free (rand);
}

GST_END_TEST;

static Suite *
inflight_suite (void)
{
  Suite *s = suite_create ("inflight");
  TCase *tc = tcase_create ("general");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  gcvt_skip_unless (gcvt_on_cuda (), "frames in flight need the CUDA backend");
  tcase_add_test (tc, test_depths_identical);
  tcase_add_test (tc, test_eos_with_frames_in_flight);
  tcase_add_test (tc, test_flush_mid_stream);
  tcase_add_test (tc, test_caps_change_in_flight);
  tcase_add_test (tc, test_pinned_pool);
  return s;
}

GCVT_MAIN (inflight);
