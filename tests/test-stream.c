/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve in a stream: property changes between buffers, renegotiation,
 * EOS, state changes without leaks, the ALLOCATION query, and frames that
 * do not fit the caps (passthrough: test-passthrough.c; latency:
 * test-latency.c). */
#include "common.h"

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <gst/controller/gstdirectcontrolbinding.h>
#include <gst/controller/gstinterpolationcontrolsource.h>
#include <string.h>


static RefKernel *
random_kernel (GRand * r, guint kw, guint kh)
{
  return gcvt_random_kernel (r, kw, kh, gcvt_forced_separable ()
      || g_rand_boolean (r));
}

/* A property set between two buffers applies from the second one on; the
 * frame accepted before keeps the old settings. Timestamps pass through. */
GST_START_TEST (test_property_change_next_buffer)
{
  GRand *r = ref_rand_new ("property_change_next_buffer");
  const guint w = 16, hh = 10, n = 5;
  GstElement *e = gcvt_element_new ();
  GstHarness *h;
  RefKernel *k[5];
  RefParams p[5];
  RefImage *img[5];

  k[0] = random_kernel (r, 3, 3);
  k[1] = random_kernel (r, 5, 7);
  k[2] = NULL;                  /* identity: passthrough */
  k[3] = random_kernel (r, 11, 9);      /* larger than all before */
  k[4] = random_kernel (r, 2, 1);
  for (guint i = 0; i < n; i++) {
    ref_params_init (&p[i], k[i]);
    if (k[i])
      p[i].scale = 1.0 / ref_kernel_sum_abs (k[i]);
    img[i] = gcvt_random_image (r, REF_RGBA, w, hh, 0, 0);
  }
  p[0].border = REF_BORDER_REFLECT;
  p[0].bias = 10;
  p[1].border = REF_BORDER_CONSTANT;
  p[1].border_value = 50;
  p[1].convolution = TRUE;
  p[1].anchor_x = 0;
  p[1].anchor_y = 6;
  p[1].filter_alpha = TRUE;
  p[3].border = REF_BORDER_WRAP;
  p[4].border = REF_BORDER_REFLECT101;
  p[4].normalize = TRUE;

  gcvt_set_params (e, &p[0]);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, w, hh);
  for (guint i = 0; i < n; i++) {
    if (i > 0)
      gcvt_set_params (e, &p[i]);       /* no drain: frames may be in flight */
    fail_unless_equals_int (gst_harness_push (h, gcvt_timed_buffer (img[i],
                REF_RGBA, i)), GST_FLOW_OK);
  }
  gcvt_drain (h);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), n);
  for (guint i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_pull (h);
    gchar *what = g_strdup_printf ("buffer %u", i);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), gcvt_frame_pts (i));
    fail_unless_equals_uint64 (GST_BUFFER_DURATION (out), GCVT_FRAME_DURATION);
    gcvt_assert_frame (out, REF_RGBA, REF_RGBA, img[i], &p[i], what);
    gst_buffer_unref (out);
    g_free (what);
  }
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  for (guint i = 0; i < n; i++) {
    ref_kernel_free (k[i]);
    ref_image_free (img[i]);
  }
  g_rand_free (r);
}

GST_END_TEST;

/* A controlled property takes the value for each buffer's time. */
GST_START_TEST (test_controlled_bias)
{
  GRand *r = ref_rand_new ("controlled_bias");
  GstElement *e = gcvt_element_new ();
  GstControlSource *cs = gst_interpolation_control_source_new ();
  GstTimedValueControlSource *tv = (GstTimedValueControlSource *) cs;
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, 9, 7, -1.0, 1.0);
  RefKernel *k = random_kernel (r, 3, 3);
  RefParams p;
  GstHarness *h;

  ref_params_init (&p, k);
  gcvt_set_params (e, &p);
  g_object_set (cs, "mode", GST_INTERPOLATION_MODE_NONE, NULL);
  gst_timed_value_control_source_set (tv, 0, 0.25);
  gst_timed_value_control_source_set (tv, 2 * GCVT_FRAME_DURATION, 0.5);
  gst_object_add_control_binding (GST_OBJECT (e),
      gst_direct_control_binding_new_absolute (GST_OBJECT (e), "bias", cs));
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, 9, 7);
  for (guint i = 0; i < 4; i++) {
    GstBuffer *out = gcvt_process (h, gcvt_timed_buffer (img, REF_GRAY32F, i));
    p.bias = i < 2 ? 0.25 : 0.5;
    gcvt_assert_frame (out, REF_GRAY32F, REF_GRAY32F, img, &p,
        "controlled bias");
    gst_buffer_unref (out);
  }
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  gst_object_unref (cs);
  ref_kernel_free (k);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

/* New caps between frames: other sizes and other formats. Frames accepted
 * under the old caps still come out right, and EOS pushes what is in
 * flight before it. */
GST_START_TEST (test_renegotiation_and_eos)
{
  static const struct
  {
    RefFormat in, out;
    guint w, h;
  } steps[] = {
    {REF_RGBA, REF_RGBA, 16, 9},
    {REF_RGBA, REF_RGBA, 7, 13},        /* size */
    {REF_GRAY32F, REF_GRAY32F, 11, 5},  /* format */
    {REF_GRAY8, REF_GRAY32F, 9, 9},     /* conversion */
    {REF_GRAY8, REF_GRAY8, 9, 9},       /* output format only */
    {REF_BGRX, REF_BGRX, 1, 1},
    {REF_GRAY8, REF_GRAY8, 33, 17},
  };
  const guint per_step = 2;
  GRand *r = ref_rand_new ("renegotiation_and_eos");
  GstElement *e = gcvt_element_new ();
  RefKernel *k = random_kernel (r, 5, 3);
  RefImage *img[G_N_ELEMENTS (steps)][2];
  RefParams p;
  GstHarness *h;
  GstEvent *ev;
  gboolean eos = FALSE;
  guint pushed = 0;

  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  p.border = REF_BORDER_CONSTANT;
  p.border_value = 0.5;
  gcvt_set_params (e, &p);
  h = gcvt_harness_new (e);

  /* no drain in between: each new caps event meets frames in flight */
  for (guint s = 0; s < G_N_ELEMENTS (steps); s++) {
    gcvt_set_caps (h, steps[s].in, steps[s].out, steps[s].w, steps[s].h);
    for (guint i = 0; i < per_step; i++) {
      img[s][i] = gcvt_random_image (r, steps[s].in, steps[s].w, steps[s].h,
          -1.0, 1.0);
      fail_unless_equals_int (gst_harness_push (h, gcvt_timed_buffer (img[s][i],
                  steps[s].in, pushed++)), GST_FLOW_OK);
    }
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  /* everything was pushed before EOS (later buffers would be refused) */
  fail_unless_equals_int (gst_harness_buffers_received (h), pushed);
  while ((ev = gst_harness_try_pull_event (h))) {
    eos |= GST_EVENT_TYPE (ev) == GST_EVENT_EOS;
    gst_event_unref (ev);
  }
  fail_unless (eos, "EOS did not come out");

  for (guint s = 0; s < G_N_ELEMENTS (steps); s++)
    for (guint i = 0; i < per_step; i++) {
      GstBuffer *out = gst_harness_pull (h);
      gchar *what = g_strdup_printf ("caps step %u frame %u", s, i);
      gcvt_assert_frame (out, steps[s].in, steps[s].out, img[s][i], &p, what);
      gst_buffer_unref (out);
      g_free (what);
      ref_image_free (img[s][i]);
    }
  fail_unless (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR) == NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* --- state changes and leaks -------------------------------------------- */

static GstTracer *
get_leaks_tracer (void)
{
  GList *tracers = gst_tracing_get_active_tracers (), *l;
  GstTracer *found = NULL;

  for (l = tracers; l; l = l->next)
    if (!found && g_str_equal (G_OBJECT_TYPE_NAME (l->data),
            "GstLeaksTracer"))
      found = gst_object_ref (l->data);
  g_list_free_full (tracers, gst_object_unref);
  return found;
}

static GstElement *
cycle_pipeline (const gchar * caps_in, const gchar * caps_out,
    gint * counter)
{
  gchar *props = gcvt_launch_props ();
  gchar *line = g_strdup_printf ("videotestsrc num-buffers=4 pattern=ball ! "
      "%s ! gpuconvolve name=f %s filter=gaussian size=5 ! %s ! "
      "fakesink name=sink sync=false signal-handoffs=true", caps_in, props,
      caps_out);
  GstElement *pipeline = gcvt_pipeline_new (line);
  GstElement *sink;

  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (gcvt_count_handoff), counter);
  gst_object_unref (sink);
  g_free (line);
  g_free (props);
  return pipeline;
}

/* to PLAYING; to EOS when asked, else back to NULL while frames flow */
static void
cycle (GstElement * pipeline, gboolean to_eos, gint * counter)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  gint before = g_atomic_int_get (counter);

  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  if (to_eos) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS,
        "no EOS but %s", msg ? GST_MESSAGE_TYPE_NAME (msg) : "nothing");
    gst_message_unref (msg);
    fail_unless_equals_int (g_atomic_int_get (counter) - before, 4);
  } else {
    gst_element_get_state (pipeline, NULL, NULL, 5 * GST_SECOND);
  }
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_bus_set_flushing (bus, TRUE);     /* drop what was posted */
  gst_bus_set_flushing (bus, FALSE);
  gst_object_unref (bus);
}

/* Adds `delta` per object of a checkpoint list to its count in `alive`. */
static void
count_objects (GHashTable * alive, const GValue * list, gint delta)
{
  for (guint i = 0; i < gst_value_list_get_size (list); i++) {
    const GstStructure *s =
        gst_value_get_structure (gst_value_list_get_value (list, i));
    gchar *key = g_strdup_printf ("%s %s",
        gst_structure_get_string (s, "type-name"),
        gst_structure_get_string (s, "address"));
    gint n = GPOINTER_TO_INT (g_hash_table_lookup (alive, key));
    g_hash_table_replace (alive, key, GINT_TO_POINTER (n + delta));
  }
}

/* Repeated NULL <-> PLAYING with frames flowing, the kernel changing
 * between runs; afterwards no object made during it is alive. */
GST_START_TEST (test_state_cycles_no_leaks)
{
  const gchar *rgba = "video/x-raw,format=RGBA,width=24,height=16,"
      "framerate=30/1";
  const gchar *gray8 = "video/x-raw,format=GRAY8,width=21,height=15,"
      "framerate=30/1";
  const gchar *gray32f = "video/x-raw,format=GRAY32F";
  GstTracer *tracer = get_leaks_tracer ();
  GstElement *pipeline;
  GstStructure *checkpoint = NULL;
  const GValue *created, *removed;
  GHashTable *alive;
  GHashTableIter iter;
  gpointer key, value;
  GString *leaks = g_string_new (NULL);
  guint n_leaks = 0;
  gint counter = 0;

  fail_unless (tracer != NULL, "run with GST_TRACERS=leaks");

  /* once untracked, so everything made once per process exists */
  pipeline = cycle_pipeline (rgba, rgba, &counter);
  cycle (pipeline, TRUE, &counter);
  gst_object_unref (pipeline);

  g_signal_emit_by_name (tracer, "activity-start-tracking");
  pipeline = cycle_pipeline (rgba, rgba, &counter);
  for (guint i = 0; i < 24; i++) {
    GstElement *f = gst_bin_get_by_name (GST_BIN (pipeline), "f");
    g_object_set (f, "size", 3 + 2 * (i % 4), NULL);
    gst_object_unref (f);
    cycle (pipeline, i % 3 != 1, &counter);
  }
  gst_object_unref (pipeline);
  /* and with a format conversion */
  pipeline = cycle_pipeline (gray8, gray32f, &counter);
  for (guint i = 0; i < 6; i++)
    cycle (pipeline, i % 2 == 0, &counter);
  gst_object_unref (pipeline);

  /* created minus destroyed, per object; a streaming thread may still be
   * dropping its last reference to its task, so give stragglers a moment */
  alive = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint attempt = 0; attempt < 100; attempt++) {
    if (attempt > 0)
      g_usleep (20 * 1000);
    g_signal_emit_by_name (tracer, "activity-get-checkpoint", &checkpoint);
    fail_unless (checkpoint != NULL);
    created = gst_structure_get_value (checkpoint, "objects-created-list");
    removed = gst_structure_get_value (checkpoint, "objects-removed-list");
    if (attempt == 0)
      fail_unless (gst_value_list_get_size (created) > 100,
          "the tracer saw only %u objects made",
          gst_value_list_get_size (created));
    count_objects (alive, created, 1);
    count_objects (alive, removed, -1);
    gst_structure_free (checkpoint);
    n_leaks = 0;
    g_string_truncate (leaks, 0);
    g_hash_table_iter_init (&iter, alive);
    while (g_hash_table_iter_next (&iter, &key, &value))
      if (GPOINTER_TO_INT (value) > 0 && ++n_leaks <= 20)
        g_string_append_printf (leaks, " %s;", (gchar *) key);
    if (n_leaks == 0)
      break;
  }
  g_signal_emit_by_name (tracer, "activity-stop-tracking");
  fail_unless (n_leaks == 0, "%u objects leaked:%s", n_leaks, leaks->str);

  g_hash_table_unref (alive);
  g_string_free (leaks, TRUE);
  gst_object_unref (tracer);
}

GST_END_TEST;

/* --- queries ------------------------------------------------------------ */

/* Upstream's ALLOCATION query: while filtering, the element answers it and
 * takes GstVideoMeta (any stride); in passthrough the buffers go downstream
 * unread, so only downstream can say what it takes (here: nothing). */
GST_START_TEST (test_allocation_query)
{
  GRand *r = ref_rand_new ("allocation_query");
  RefKernel *k = random_kernel (r, 3, 3);

  for (guint pass = 0; pass < 2; pass++) {
    gboolean passthrough = pass == 1;
    GstElement *e = gcvt_element_new ();
    RefImage *img = gcvt_random_image (r, REF_RGBA, 10, 6, 0, 0);
    GstCaps *caps = gcvt_caps (REF_RGBA, 10, 6);
    GstHarness *h;
    GstQuery *q;
    RefParams p;
    guint index;

    ref_params_init (&p, passthrough ? NULL : k);
    gcvt_set_params (e, &p);
    h = gcvt_harness_new (e);
    gst_harness_set_caps (h, gst_caps_ref (caps), gst_caps_ref (caps));
    gst_buffer_unref (gcvt_process (h, gcvt_buffer_new (img, REF_RGBA, 0, 0,
                FALSE)));
    fail_unless_equals_int (gst_base_transform_is_passthrough
        (GST_BASE_TRANSFORM (e)), passthrough);

    q = gst_query_new_allocation (caps, TRUE);
    fail_unless (gst_pad_peer_query (h->srcpad, q), "ALLOCATION unanswered");
    fail_unless_equals_int (gst_query_find_allocation_meta (q,
            GST_VIDEO_META_API_TYPE, &index), !passthrough);
    gst_query_unref (q);
    gst_caps_unref (caps);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_image_free (img);
  }
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* --- frames that do not fit --------------------------------------------- */

/* Pushes `buf` and expects STREAM FORMAT on the bus and no output; then a
 * good frame still goes through. */
static void
expect_format_error (RefFormat fmt, guint w, guint hh, GstBuffer * buf,
    const gchar * what)
{
  GRand *r = ref_rand_new (what);
  GstElement *e = gcvt_element_new ();
  RefKernel *k = random_kernel (r, 3, 3);
  RefImage *img = gcvt_random_image (r, fmt, w, hh, -1.0, 1.0);
  GstHarness *h;
  GstBus *bus;
  GstBuffer *out;
  RefParams p;

  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  gcvt_set_params (e, &p);
  h = gcvt_harness_new (e);
  bus = gcvt_bus (e);
  gcvt_set_caps (h, fmt, fmt, w, hh);
  fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_ERROR);
  gcvt_drain (h);
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
  gcvt_assert_message (gcvt_pop (bus, GST_MESSAGE_ERROR), GST_STREAM_ERROR,
      GST_STREAM_ERROR_FORMAT, NULL);

  out = gcvt_process (h, gcvt_buffer_new (img, fmt, 0, 0, FALSE));
  gcvt_assert_frame (out, fmt, fmt, img, &p, what);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  ref_image_free (img);
  g_rand_free (r);
}

static GstBuffer *
sized_buffer (gsize size)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, 0x5a, size);
  return buf;
}

GST_START_TEST (test_short_buffer)
{
  expect_format_error (REF_GRAY32F, 8, 6, sized_buffer (8 * 4 * 6 - 1),
      "GRAY32F one byte short");
  expect_format_error (REF_RGBA, 7, 5, sized_buffer (7 * 4 * 2),
      "RGBA two rows of five");
  expect_format_error (REF_GRAY8, 9, 4, sized_buffer (12 * 3),
      "GRAY8 last row missing");
  expect_format_error (REF_GRAY8, 9, 4, sized_buffer (0), "empty buffer");
}

GST_END_TEST;

static GstBuffer *
meta_buffer (RefFormat fmt, guint w, guint hh, gsize size, gsize offset,
    gint stride)
{
  GstBuffer *buf = sized_buffer (size);
  gsize offsets[GST_VIDEO_MAX_PLANES] = { offset };
  gint strides[GST_VIDEO_MAX_PLANES] = { stride };

  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      gst_video_format_from_string (ref_format_info (fmt)->name), w, hh, 1,
      offsets, strides);
  return buf;
}

/* a GstVideoMeta whose stride is smaller than a row, or whose frame does
 * not fit in the buffer */
GST_START_TEST (test_short_stride)
{
  expect_format_error (REF_GRAY32F, 8, 6, meta_buffer (REF_GRAY32F, 8, 6,
          4096, 0, 8 * 4 - 4), "GRAY32F stride of 7 pixels");
  expect_format_error (REF_RGBA, 5, 5, meta_buffer (REF_RGBA, 5, 5, 4096, 0,
          5 * 4 - 1), "RGBA stride one byte short");
  expect_format_error (REF_GRAY8, 9, 3, meta_buffer (REF_GRAY8, 9, 3, 4096,
          0, -9), "GRAY8 negative stride");
  expect_format_error (REF_GRAY32F, 8, 6, meta_buffer (REF_GRAY32F, 8, 6,
          8 * 4 * 6 + 16, 20, 8 * 4), "GRAY32F offset past the end");
  expect_format_error (REF_BGRA, 4, 4, meta_buffer (REF_BGRA, 4, 4,
          4 * 4 * 4, 0, 4 * 4 + 8), "BGRA padded stride too long");
}

GST_END_TEST;

/* Settings made invalid while streaming: the previous filter stays until
 * they are valid again, with one warning on the bus for each change that
 * leaves them invalid (nothing is ignored silently). */
GST_START_TEST (test_invalid_settings_mid_stream)
{
  GRand *r = ref_rand_new ("invalid_settings_mid_stream");
  GstElement *e = gcvt_element_new ();
  RefKernel *k1 = random_kernel (r, 3, 3), *k2 = random_kernel (r, 5, 3);
  RefImage *img = gcvt_random_image (r, REF_GRAY32F, 12, 8, -1.0, 1.0);
  RefParams p1, p2;
  GstHarness *h;
  GstBus *bus;
  GstMessage *msg;
  guint warnings = 0;

  ref_params_init (&p1, k1);
  ref_params_init (&p2, k2);
  gcvt_set_params (e, &p1);
  h = gcvt_harness_new (e);
  bus = gcvt_bus (e);
  gcvt_set_caps (h, REF_GRAY32F, REF_GRAY32F, 12, 8);
  for (guint i = 0; i < 5; i++) {
    const RefParams *p = i < 4 ? &p1 : &p2;
    GstBuffer *out;
    if (i == 1)
      g_object_set (e, "kernel-width", 5, NULL);        /* 9 values left */
    if (i == 2)
      g_object_set (e, "kernel-height", 4, NULL);       /* still invalid */
    if (i == 3)
      g_object_set (e, "kernel-height", 3, NULL);       /* and again */
    if (i == 4)
      gcvt_set_floats (e, "kernel", k2->k, 15);
    out = gcvt_process (h, gcvt_buffer_new (img, REF_GRAY32F, 0, 0, FALSE));
    gcvt_assert_frame (out, REF_GRAY32F, REF_GRAY32F, img, p, "mid-stream");
    gst_buffer_unref (out);
  }
  while ((msg = gcvt_pop (bus, GST_MESSAGE_WARNING))) {
    warnings++;
    gcvt_assert_message (msg, GST_LIBRARY_ERROR, GST_LIBRARY_ERROR_SETTINGS,
        "kernel");
  }
  fail_unless_equals_int (warnings, 3);
  fail_unless (gcvt_pop (bus, GST_MESSAGE_ERROR) == NULL);
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k1);
  ref_kernel_free (k2);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
stream_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-stream");
  TCase *tc = tcase_create ("stream");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_property_change_next_buffer);
  tcase_add_test (tc, test_controlled_bias);
  tcase_add_test (tc, test_renegotiation_and_eos);
  tcase_add_test (tc, test_state_cycles_no_leaks);
  tcase_add_test (tc, test_allocation_query);
  tcase_add_test (tc, test_short_buffer);
  tcase_add_test (tc, test_short_stride);
  tcase_add_test (tc, test_invalid_settings_mid_stream);
  return s;
}

GCVT_MAIN (stream);
