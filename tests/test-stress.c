/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stress: caps renegotiated every 10 frames, properties changed every frame
 * from a second thread while streaming, eight pipelines at once, and 1000
 * NULL <-> PLAYING cycles. None may post an error, hang (every wait has a
 * timeout, and the test case one of its own) or leak (the leaks tracer
 * fails the test for any object alive at exit), and every accepted frame
 * must come out. GPUCONVOLVE_TEST_QUICK=1 (set by the valgrind test setup)
 * makes the counts smaller. */
#include "common.h"

#include <gst/video/video.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
assert_no_error (GstElement * e, const gchar * what)
{
  GstMessage *msg = gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR);
  if (msg) {
    GError *err = NULL;
    gst_message_parse_error (msg, &err, NULL);
    ck_abort_msg ("%s: error %s", what, err->message);
  }
}

/* --- renegotiation every 10 frames -------------------------------------- */

/* Sizes and formats change every 10 frames with frames still in flight;
 * every frame comes out, in order, filtered under the caps it came with. */
GST_START_TEST (test_renegotiate_every_10_frames)
{
  static const struct
  {
    RefFormat in, out;
    guint w, h;
  } caps[] = {
    {REF_RGBA, REF_RGBA, 32, 24},
    {REF_GRAY8, REF_GRAY8, 17, 9},
    {REF_GRAY32F, REF_GRAY32F, 40, 3},
    {REF_BGRX, REF_BGRX, 1, 1},
    {REF_GRAY8, REF_GRAY32F, 20, 20},
    {REF_GRAY32F, REF_GRAY8, 5, 33},
    {REF_RGBX, REF_RGBX, 64, 48},
    {REF_BGRA, REF_BGRA, 7, 2},
  };
  const guint per_caps = 10, rounds = gcvt_quick ()? 1 : 3;
  const guint n = rounds * G_N_ELEMENTS (caps) * per_caps;
  GRand *r = ref_rand_new ("renegotiate_every_10_frames");
  GstElement *e = gcvt_element_new ();
  RefKernel *k = gcvt_random_kernel (r, 5, 3, TRUE);
  RefImage **img = g_new0 (RefImage *, n);
  guint *which = g_new0 (guint, n);
  GstHarness *h;
  RefParams p;
  guint pushed = 0;

  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  p.border = REF_BORDER_REFLECT;
  gcvt_set_params (e, &p);
  h = gcvt_harness_new (e);
  for (guint i = 0; i < n; i++) {
    guint c = (i / per_caps) % G_N_ELEMENTS (caps);
    if (i % per_caps == 0)
      gcvt_set_caps (h, caps[c].in, caps[c].out, caps[c].w, caps[c].h);
    which[i] = c;
    img[i] = gcvt_random_image (r, caps[c].in, caps[c].w, caps[c].h, -1.0,
        1.0);
    fail_unless_equals_int (gst_harness_push (h, gcvt_timed_buffer (img[i],
                caps[c].in, i)), GST_FLOW_OK);
    pushed++;
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_received (h), pushed);
  for (guint i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_pull (h);
    gchar *what = g_strdup_printf ("frame %u", i);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out), gcvt_frame_pts (i));
    gcvt_assert_frame (out, caps[which[i]].in, caps[which[i]].out, img[i], &p,
        what);
    gst_buffer_unref (out);
    g_free (what);
    ref_image_free (img[i]);
  }
  assert_no_error (e, "renegotiation");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (k);
  g_free (img);
  g_free (which);
  g_rand_free (r);
}

GST_END_TEST;

/* --- property changes from a second thread ------------------------------ */

typedef struct
{
  GstElement *element;
  gint stop;
  gint changes;
  guint32 seed;
} Changer;

/* Changes one property after another, all the time: a new kernel (sizes
 * first), sigma, border, a built-in filter of another size, or anchors. */
static gpointer
change_properties (gpointer data)
{
  Changer *c = data;
  GRand *r = g_rand_new_with_seed (c->seed);
  GObject *o = G_OBJECT (c->element);
  static const gchar *const borders[] = { "constant", "replicate", "reflect",
    "reflect101", "wrap", "nearest", "mirror"
  };

  while (!g_atomic_int_get (&c->stop)) {
    switch (c->changes % 5) {
      case 0:{                 /* a custom kernel */
        guint kw = g_rand_int_range (r, 1, 8), kh = g_rand_int_range (r, 1, 8);
        RefKernel *k = gcvt_random_kernel (r, kw, kh,
            gcvt_forced_separable () || g_rand_boolean (r));
        g_object_set (o, "anchor-x", -1, "anchor-y", -1, NULL);
        gst_util_set_object_arg (o, "filter", "custom");
        g_object_set (o, "kernel-width", kw, "kernel-height", kh, NULL);
        gcvt_set_floats (c->element, "kernel", k->k, kw * kh);
        ref_kernel_free (k);
        break;
      }
      case 1:
        g_object_set (o, "sigma", g_rand_double_range (r, 0.3, 4.0), NULL);
        break;
      case 2:
        gst_util_set_object_arg (o, "border",
            borders[g_rand_int_range (r, 0, G_N_ELEMENTS (borders))]);
        g_object_set (o, "border-value", g_rand_double_range (r, 0, 255),
            NULL);
        break;
      case 3:                  /* a built-in filter of another size */
        g_object_set (o, "anchor-x", -1, "anchor-y", -1, NULL);
        gst_util_set_object_arg (o, "filter",
            g_rand_boolean (r) ? "gaussian" : "box");
        g_object_set (o, "size", 2 * g_rand_int_range (r, 0, 5) + 1, NULL);
        break;
      default:{                /* an anchor inside whatever K is now */
        gint ax = g_rand_int_range (r, -1, 3), ay = g_rand_int_range (r, -1,
            3);
        /* may be outside a small K: then refused, with a log warning */
        g_object_set (o, "anchor-x", ax, "anchor-y", ay, NULL);
        break;
      }
    }
    g_atomic_int_inc (&c->changes);
    g_usleep (20);
  }
  g_rand_free (r);
  return NULL;
}

GST_START_TEST (test_properties_from_thread)
{
  const guint n = gcvt_quick ()? 60 : 400;
  GRand *r = ref_rand_new ("properties_from_thread");
  GstElement *e = gcvt_element_new ();
  RefImage *rgba = gcvt_random_image (r, REF_RGBA, 24, 16, 0, 0);
  RefImage *gray = gcvt_random_image (r, REF_GRAY32F, 24, 16, -1, 1);
  Changer c = { e, 0, 0, g_rand_int (r) };
  GstHarness *h;
  GThread *thread;
  guint pushed = 0, out = 0;
  GstBuffer *buf;

  gst_util_set_object_arg (G_OBJECT (e), "filter", "gaussian");
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, 24, 16);
  thread = g_thread_new ("changer", change_properties, &c);
  for (guint i = 0; i < n; i++) {
    gboolean f32 = (i / 50) % 2 == 1;
    if (i % 50 == 0)
      gcvt_set_caps (h, f32 ? REF_GRAY32F : REF_RGBA, f32 ? REF_GRAY32F :
          REF_RGBA, 24, 16);
    /* at least one change per frame, and more while it is filtered */
    {
      gint64 until = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
      while (g_atomic_int_get (&c.changes) <= (gint) i) {
        fail_unless (g_get_monotonic_time () < until, "no property change "
            "for 10 s");
        g_usleep (20);
      }
    }
    fail_unless_equals_int (gst_harness_push (h, gcvt_timed_buffer (f32 ? gray :
                rgba, f32 ? REF_GRAY32F : REF_RGBA, i)), GST_FLOW_OK);
    pushed++;
    while ((buf = gst_harness_try_pull (h))) {
      out++;
      gst_buffer_unref (buf);
    }
  }
  g_atomic_int_set (&c.stop, 1);
  g_thread_join (thread);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  while ((buf = gst_harness_try_pull (h))) {
    out++;
    gst_buffer_unref (buf);
  }
  g_print ("%u frames in, %u out, %d property changes\n", pushed, out,
      g_atomic_int_get (&c.changes));
  fail_unless_equals_int (out, pushed);
  fail_unless (g_atomic_int_get (&c.changes) >= (gint) n);
  assert_no_error (e, "property changes");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_image_free (rgba);
  ref_image_free (gray);
  g_rand_free (r);
}

GST_END_TEST;

/* --- pipelines at once -------------------------------------------------- */

static GstPadProbeReturn
count_buffer (GstPad * pad, GstPadProbeInfo * info, gpointer counter)
{
  g_atomic_int_inc ((gint *) counter);
  return GST_PAD_PROBE_OK;
}

typedef struct
{
  GstElement *pipeline;
  gint in, out;                 /* buffers into gpuconvolve, out of the sink */
} Counted;

/* `description` must name gpuconvolve "f" and the sink "sink". */
static void
counted_init (Counted * c, const gchar * description)
{
  GstElement *f, *sink;
  GstPad *pad;

  c->in = c->out = 0;
  c->pipeline = gcvt_pipeline_new (description);
  f = gst_bin_get_by_name (GST_BIN (c->pipeline), "f");
  sink = gst_bin_get_by_name (GST_BIN (c->pipeline), "sink");
  pad = gst_element_get_static_pad (f, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &c->in,
      NULL);
  g_object_set (sink, "signal-handoffs", TRUE, NULL);
  g_signal_connect (sink, "handoff", G_CALLBACK (gcvt_count_handoff), &c->out);
  gst_object_unref (pad);
  gst_object_unref (f);
  gst_object_unref (sink);
}

/* Eight pipelines, each with its own gpuconvolve, streaming at once. */
GST_START_TEST (test_eight_pipelines)
{
  static const gchar *const caps[] = {
    "video/x-raw,format=RGBA,width=64,height=48",
    "video/x-raw,format=GRAY8,width=50,height=30",
    "video/x-raw,format=BGRx,width=33,height=17",
    "video/x-raw,format=GRAY8,width=40,height=40 ! gpuconvolve name=g "
        "filter=box size=3 ! video/x-raw,format=GRAY32F",
    "video/x-raw,format=RGBx,width=16,height=96",
    "video/x-raw,format=BGRA,width=80,height=8",
    "video/x-raw,format=GRAY8,width=31,height=31",
    "video/x-raw,format=RGBA,width=5,height=7",
  };
  static const gchar *const filters[] = {
    "filter=gaussian size=5 sigma=1.2", "filter=box size=7",
    "filter=gaussian size=3 border=wrap", "filter=box size=5",
    "kernel-width=3 kernel-height=1 kernel=\"<1,2,1>\" normalize=true",
    "filter=gaussian size=9 sigma=2 border=constant border-value=9",
    "filter=box size=1", "filter=gaussian size=11 border=reflect101",
  };
  const gint frames = gcvt_quick ()? 10 : 60;
  Counted c[8];
  gchar *props = gcvt_launch_props ();

  for (guint i = 0; i < 8; i++) {
    gchar *line = g_strdup_printf ("videotestsrc num-buffers=%d "
        "pattern=%u ! %s ! gpuconvolve name=f %s %s ! fakesink name=sink "
        "sync=false", frames, i, caps[i], props, filters[i]);
    counted_init (&c[i], line);
    g_free (line);
  }
  for (guint i = 0; i < 8; i++)
    fail_if (gst_element_set_state (c[i].pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE, "pipeline %u did not start", i);
  for (guint i = 0; i < 8; i++) {
    gchar *what = g_strdup_printf ("pipeline %u", i);
    gcvt_pipeline_run_to_eos (c[i].pipeline, 60 * GST_SECOND, what);
    fail_unless_equals_int (g_atomic_int_get (&c[i].in), frames);
    fail_unless_equals_int (g_atomic_int_get (&c[i].out), frames);
    g_free (what);
  }
  for (guint i = 0; i < 8; i++) {
    fail_unless_equals_int (gst_element_set_state (c[i].pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    gst_object_unref (c[i].pipeline);
  }
  g_free (props);
}

GST_END_TEST;

/* --- NULL <-> PLAYING --------------------------------------------------- */

static gsize
rss_bytes (void)
{
  gchar *text = NULL;
  gsize size = 0, resident = 0;

  if (g_file_get_contents ("/proc/self/statm", &text, NULL, NULL))
    sscanf (text, "%zu %zu", &size, &resident);
  g_free (text);
  return resident * (gsize) sysconf (_SC_PAGESIZE);
}

/* 1000 cycles of a small pipeline. Most run to EOS, and then every frame
 * that went in came out; every fourth is stopped while frames flow, and
 * with the kernel changing between cycles. Memory must not grow with the
 * cycles: objects by the leaks tracer at exit, bytes by RSS here. */
GST_START_TEST (test_state_cycles)
{
  const guint cycles = gcvt_quick ()? 40 : 1000;
  gchar *props = gcvt_launch_props ();
  gchar *line = g_strdup_printf ("videotestsrc num-buffers=3 pattern=ball ! "
      "video/x-raw,format=RGBA,width=24,height=16,framerate=30/1 ! "
      "gpuconvolve name=f %s filter=gaussian size=5 ! fakesink name=sink "
      "sync=false", props);
  GstElement *f;
  Counted c;
  GstBus *bus;
  gsize rss_early = 0, rss_late;
  gint64 start = g_get_monotonic_time ();

  counted_init (&c, line);
  f = gst_bin_get_by_name (GST_BIN (c.pipeline), "f");
  bus = gst_element_get_bus (c.pipeline);
  for (guint i = 0; i < cycles; i++) {
    gint in0 = g_atomic_int_get (&c.in), out0 = g_atomic_int_get (&c.out);
    gboolean to_eos = i % 4 != 3;
    gchar *what = g_strdup_printf ("cycle %u", i);

    g_object_set (f, "size", 3 + 2 * (i % 3), NULL);
    fail_if (gst_element_set_state (c.pipeline, GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE, "%s: could not start", what);
    if (to_eos) {
      gcvt_pipeline_run_to_eos (c.pipeline, 60 * GST_SECOND, what);
      fail_unless_equals_int (g_atomic_int_get (&c.in) - in0, 3);
      fail_unless_equals_int (g_atomic_int_get (&c.out) - out0, 3);
    } else {
      fail_if (gst_element_get_state (c.pipeline, NULL, NULL,
              10 * GST_SECOND) == GST_STATE_CHANGE_FAILURE, "%s", what);
    }
    fail_unless_equals_int (gst_element_set_state (c.pipeline,
            GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
    {
      GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
      fail_unless (msg == NULL, "%s: an error", what);
    }
    gst_bus_set_flushing (bus, TRUE);
    gst_bus_set_flushing (bus, FALSE);
    if (i == cycles / 10)
      rss_early = rss_bytes ();
    g_free (what);
  }
  rss_late = rss_bytes ();
  g_print ("%u cycles in %.1f s; RSS %.1f MiB after %u, %.1f MiB after "
      "%u\n", cycles, (g_get_monotonic_time () - start) / 1e6,
      rss_early / 1048576.0, cycles / 10, rss_late / 1048576.0, cycles);
  /* 4 MiB over 900 cycles: a leak of more than about 4 KiB a cycle */
  if (!gcvt_quick ())
    fail_unless (rss_late < rss_early + 4 * 1024 * 1024, "RSS grew from %"
        G_GSIZE_FORMAT " to %" G_GSIZE_FORMAT " bytes", rss_early, rss_late);
  gst_object_unref (bus);
  gst_object_unref (f);
  gst_object_unref (c.pipeline);
  g_free (line);
  g_free (props);
}

GST_END_TEST;

static Suite *
stress_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-stress");
  TCase *tc = tcase_create ("stress");

  tcase_set_timeout (tc, 240);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_renegotiate_every_10_frames);
  tcase_add_test (tc, test_properties_from_thread);
  tcase_add_test (tc, test_eight_pipelines);
  tcase_add_test (tc, test_state_cycles);
  return s;
}

GCVT_MAIN (stress);
