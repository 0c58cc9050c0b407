/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CUDA calls made to fail on purpose (GPUCONVOLVE_CUDA_FAIL=alloc|copy|
 * launch[:N], read by the engine on every CUDA call; N calls of that kind
 * pass first). docs/errors.md: a CUDA failure while streaming is
 * GST_ELEMENT_ERROR (RESOURCE, FAILED) carrying the CUDA error string; the
 * pipeline then goes to NULL without hanging, and nothing leaks (the leaks
 * tracer fails the test for any object alive at exit).
 *
 * CUDA only: gcvt_init() skips (77) without a device. Each case runs in a
 * process of its own (gst-check forks per test), since the engine counts
 * the calls per process; with CK_FORK=no no case is registered and the
 * program exits 77 (skipped). */
#include "common.h"

#include <string.h>

typedef struct
{
  const gchar *spec;            /* GPUCONVOLVE_CUDA_FAIL */
  const gchar *cuda_string;     /* cudaGetErrorString of the injected error */
  const gchar *cuda_name;       /* cudaGetErrorName */
  gboolean mid_stream;          /* frames must come out before it fails */
} FailCase;

/* The injected errors: cudaErrorMemoryAllocation for alloc,
 * cudaErrorInvalidValue for copy, cudaErrorLaunchFailure for launch. With
 * N large enough to pass the set-up (a few allocations per slot, no copies
 * or launches) and small enough to fail within the frames pushed (every
 * frame copies twice and launches at least once; with the harness keeping
 * every output buffer, every frame allocates one), the failure comes
 * mid-stream. */
static const FailCase cases[] = {
  {"alloc", "out of memory", "cudaErrorMemoryAllocation", FALSE},
  {"alloc:2", "out of memory", "cudaErrorMemoryAllocation", FALSE},
  {"alloc:5", "out of memory", "cudaErrorMemoryAllocation", FALSE},
  {"alloc:8", "out of memory", "cudaErrorMemoryAllocation", FALSE},
  {"alloc:12", "out of memory", "cudaErrorMemoryAllocation", FALSE},
  {"alloc:40", "out of memory", "cudaErrorMemoryAllocation", TRUE},
  {"copy", "invalid argument", "cudaErrorInvalidValue", FALSE},
  {"copy:1", "invalid argument", "cudaErrorInvalidValue", FALSE},
  {"copy:9", "invalid argument", "cudaErrorInvalidValue", TRUE},
  {"launch", "unspecified launch failure", "cudaErrorLaunchFailure", FALSE},
  {"launch:1", "unspecified launch failure", "cudaErrorLaunchFailure", FALSE},
  {"launch:9", "unspecified launch failure", "cudaErrorLaunchFailure", TRUE},
};

#define MAX_FRAMES 120

#define NOT_FORKED "needs a process of its own (CK_FORK=no runs every test " \
  "in one)"

/* The first error on the bus: RESOURCE FAILED from gpuconvolve, its text
 * with the CUDA error string and name. */
static void
assert_cuda_error (GstMessage * msg, GstElement * element, const FailCase * c)
{
  GError *err = NULL;
  gchar *debug = NULL;

  fail_unless (msg != NULL, "%s: no error message", c->spec);
  fail_unless (GST_MESSAGE_SRC (msg) == GST_OBJECT (element),
      "%s: the first error came from %s", c->spec,
      GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)));
  gst_message_parse_error (msg, &err, &debug);
  g_print ("GPUCONVOLVE_CUDA_FAIL=%s: %s %d: %s\n", c->spec,
      g_quark_to_string (err->domain), err->code, err->message);
  fail_unless (err->domain == GST_RESOURCE_ERROR
      && err->code == GST_RESOURCE_ERROR_FAILED, "%s: expected RESOURCE "
      "FAILED, got %s %d: %s", c->spec, g_quark_to_string (err->domain),
      err->code, err->message);
  fail_unless (strstr (err->message, c->cuda_string)
      && strstr (err->message, c->cuda_name), "%s: \"%s\" does not carry "
      "\"%s (%s)\"", c->spec, err->message, c->cuda_string, c->cuda_name);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (msg);
}

/* Caps on the harness, where the element may refuse them (the CUDA set-up
 * fails): gst_harness_set_caps() would abort on that. */
static void
set_caps_maybe_refused (GstHarness * h, RefFormat fmt, guint w, guint hh)
{
  GstSegment segment;

  GstCaps *caps = gcvt_caps (fmt, w, hh);

  gst_harness_set_sink_caps (h, gst_caps_ref (caps));
  gst_pad_push_event (h->srcpad, gst_event_new_caps (caps));
  gst_caps_unref (caps);
  gst_segment_init (&segment, GST_FORMAT_TIME);
  gst_pad_push_event (h->srcpad, gst_event_new_segment (&segment));
}

/* Harness: frames pushed until one is refused; the outputs are kept (so
 * that every frame needs a new output buffer) until the end. */
GST_START_TEST (test_failure_injected)
{
  const FailCase *c = &cases[__i__];
  GRand *r;
  GstElement *e;
  GstHarness *h;
  RefKernel *k;
  RefImage *img;
  RefParams p;
  GstFlowReturn ret = GST_FLOW_OK;
  guint pushed = 0, out;

  fail_unless (gcvt_forked ());  /* registered only there */
  r = ref_rand_new (c->spec);
  g_setenv ("GPUCONVOLVE_CUDA_FAIL", c->spec, TRUE);
  e = gcvt_element_new ();
  g_object_set (e, "queue-depth", 2, NULL);
  k = gcvt_random_kernel (r, 5, 5, TRUE);
  ref_params_init (&p, k);
  p.scale = 1.0 / ref_kernel_sum_abs (k);
  gcvt_set_params (e, &p);
  img = gcvt_random_image (r, REF_RGBA, 64, 48, 0, 0);
  h = gcvt_harness_new (e);
  set_caps_maybe_refused (h, REF_RGBA, 64, 48);
  while (ret == GST_FLOW_OK && pushed < MAX_FRAMES) {
    ret = gst_harness_push (h, gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE));
    pushed++;
  }
  out = gst_harness_buffers_in_queue (h);
  g_print ("GPUCONVOLVE_CUDA_FAIL=%s: frame %u refused (%s) after %u came "
      "out\n", c->spec, pushed, gst_flow_get_name (ret), out);
  fail_if (ret == GST_FLOW_OK, "%s: no failure in %u frames", c->spec,
      pushed);
  if (c->mid_stream)
    fail_unless (out > 0, "%s: failed before any frame came out", c->spec);
  assert_cuda_error (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR), e, c);
  /* the frames that did come out are right */
  {
    GstBuffer *buf;
    while ((buf = gst_harness_try_pull (h))) {
      gcvt_assert_frame (buf, REF_RGBA, REF_RGBA, img, &p, c->spec);
      gst_buffer_unref (buf);
    }
  }
  /* shuts down: the test case's timeout catches a hang */
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  g_unsetenv ("GPUCONVOLVE_CUDA_FAIL");
  ref_image_free (img);
  ref_kernel_free (k);
  g_rand_free (r);
}

GST_END_TEST;

/* In a pipeline with its own streaming thread and pinned buffers from
 * upstream: the error reaches the application's bus, and NULL comes back
 * in time. */
GST_START_TEST (test_failure_in_pipeline)
{
  static const FailCase pipeline_cases[] = {
    {"launch:7", "unspecified launch failure", "cudaErrorLaunchFailure",
        TRUE},
    {"copy:7", "invalid argument", "cudaErrorInvalidValue", TRUE},
    /* the set-up's allocations: nothing is allocated per frame after it
     * (test_no_allocation_per_frame) */
    {"alloc:3", "out of memory", "cudaErrorMemoryAllocation", FALSE},
  };
  const FailCase *c = &pipeline_cases[__i__];
  gchar *props, *line;
  GstElement *pipeline, *f;
  GstMessage *msg;

  fail_unless (gcvt_forked ());  /* registered only there */
  g_setenv ("GPUCONVOLVE_CUDA_FAIL", c->spec, TRUE);
  props = gcvt_launch_props ();
  line = g_strdup_printf ("videotestsrc num-buffers=%d ! "
      "video/x-raw,format=BGRA,width=320,height=240 ! gpuconvolve name=f %s "
      "filter=gaussian size=7 sigma=2 ! fakesink sync=false", MAX_FRAMES,
      props);
  pipeline = gcvt_pipeline_new (line);
  f = gst_bin_get_by_name (GST_BIN (pipeline), "f");
  msg = gcvt_pipeline_run (pipeline, 60 * GST_SECOND, c->spec);
  fail_unless (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR,
      "%s: no error in %d frames", c->spec, MAX_FRAMES);
  assert_cuda_error (msg, f, c);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (f);
  gst_object_unref (pipeline);
  g_unsetenv ("GPUCONVOLVE_CUDA_FAIL");
  g_free (line);
  g_free (props);
}

GST_END_TEST;

/* Device, pinned and staging memory come at set-up: with allocations made
 * to fail once the set-up is done, a whole stream still runs. */
GST_START_TEST (test_no_allocation_per_frame)
{
  gchar *props, *line;
  GstElement *pipeline;

  fail_unless (gcvt_forked ());  /* registered only there */
  /* far more than the set-up takes: 2 slots of at most 6 buffers, 5 pinned
   * output buffers, and the upstream pool's */
  g_setenv ("GPUCONVOLVE_CUDA_FAIL", "alloc:60", TRUE);
  props = gcvt_launch_props ();
  line = g_strdup_printf ("videotestsrc num-buffers=%d ! "
      "video/x-raw,format=BGRA,width=320,height=240 ! gpuconvolve %s "
      "filter=gaussian size=7 sigma=2 ! fakesink sync=false", MAX_FRAMES,
      props);
  pipeline = gcvt_pipeline_new (line);
  /* an allocation after the set-up fails the stream */
  gcvt_pipeline_run_to_eos (pipeline, 60 * GST_SECOND, "alloc:60");
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipeline);
  g_unsetenv ("GPUCONVOLVE_CUDA_FAIL");
  g_free (line);
  g_free (props);
}

GST_END_TEST;

static Suite *
cuda_failure_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-cuda-failure");
  TCase *tc = tcase_create ("cuda-failure");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  GCVT_ADD_LOOP_TEST_IF (tc, test_failure_injected, 0, G_N_ELEMENTS (cases),
      gcvt_forked (), NOT_FORKED);
  GCVT_ADD_LOOP_TEST_IF (tc, test_failure_in_pipeline, 0, 3, gcvt_forked (),
      NOT_FORKED);
  GCVT_ADD_TEST_IF (tc, test_no_allocation_per_frame, gcvt_forked (), NOT_FORKED);
  return s;
}

int
main (int argc, char **argv)
{
  gcvt_init (&argc, &argv);
  gcvt_skip_unless (gcvt_on_cuda (), "CUDA failures need backend=cuda "
      "(GPUCONVOLVE_TEST_BACKEND=cuda)");
#ifndef GCVT_FAULT_INJECTION
  gcvt_skip_unless (FALSE, "CUDA failures are injected only in builds "
      "configured with -Dfault-injection=true");
#endif
  return gcvt_run (cuda_failure_suite (), "cuda_failure");
}
