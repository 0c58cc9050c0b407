/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared helpers of the gpuconvolve tests: the backend under test, elements
 * and harnesses, frames in and out, and captured warnings. */
#ifndef GCVT_COMMON_H
#define GCVT_COMMON_H

#include <gst/gst.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include <sys/resource.h>

#include "reference.h"

G_BEGIN_DECLS

/* --- the backend and kernel family under test --------------------------- */

/* Reads GPUCONVOLVE_TEST_BACKEND (cpu, cuda) and GPUCONVOLVE_TEST_ALGORITHM
 * (auto, direct, tiled, register, separable, fft); exits 77 (skip) when
 * CUDA is asked for and no device is usable; then gst_check_init() with
 * GST_TRACERS=leaks unless GST_TRACERS says otherwise. */
void gcvt_init (int *argc, char ***argv);
/* A program none of whose tests can run here: prints "SKIP: <reason>" and
 * exits 77 (skipped, to meson) unless `runnable`. */
void gcvt_skip_unless (gboolean runnable, const gchar * reason);
/* Runs the suite; 0 when every test passed, 1 when one failed, 77
 * (skipped, to meson) when no test of the program could run here. */
int gcvt_run (Suite * suite, const gchar * name);

/* gst-check has no per-test skip: a test that cannot run here (no CUDA
 * device, no process of its own) is not registered at all, and says so:
 * "SKIP: <test>: <reason>" when the suite is made, and again in a list at
 * the end of gcvt_run(). Tests that GST_CHECKS leaves out are neither run
 * nor listed. */
void gcvt_tcase_add_test (TCase * tc, TFun tf, const char *name, int signal,
    int allowed_exit_value, int start, int end);
/* every tcase_add_test() and tcase_add_loop_test() is counted */
#undef _tcase_add_test
#define _tcase_add_test gcvt_tcase_add_test
#define GCVT_ADD_TEST_IF(tc, tf, runnable, reason)                       \
  gcvt_add_test_if ((tc), (tf), "" # tf "", 0, 1, (runnable), (reason))
#define GCVT_ADD_LOOP_TEST_IF(tc, tf, s, e, runnable, reason)            \
  gcvt_add_test_if ((tc), (tf), "" # tf "", (s), (e), (runnable), (reason))
void gcvt_add_test_if (TCase * tc, TFun tf, const gchar * name, gint start,
    gint end, gboolean runnable, const gchar * reason);

#define GCVT_MAIN(name)                                 \
  int main (int argc, char **argv)                      \
  {                                                     \
    gcvt_init (&argc, &argv);                           \
    return gcvt_run (name ## _suite (), #name);         \
  }

const gchar *gcvt_backend (void);
const gchar *gcvt_algorithm (void);
gboolean gcvt_on_cuda (void);
/* algorithm=separable is forced: only rank-1 kernels can run */
gboolean gcvt_forced_separable (void);

/* GPUCONVOLVE_TEST_QUICK is set (the valgrind setup, sanitizers): fewer
 * frames and smaller loops. */
gboolean gcvt_quick (void);
/* Each test runs in a process of its own (CK_FORK is not "no"). */
gboolean gcvt_forked (void);
/* `base` times CK_TIMEOUT_MULTIPLIER (at least 1), for waits that slower
 * runs (valgrind, instrumented kernels) need longer. */
GstClockTime gcvt_time_limit (GstClockTime base);

/* A gpuconvolve element with the backend and algorithm under test. */
GstElement *gcvt_element_new (void);
/* The same with `queue_depth` frames in flight at most. */
GstElement *gcvt_element_new_depth (guint queue_depth);
/* Frames in flight at most with `queue_depth`: the depth on CUDA, one on
 * the CPU. */
guint gcvt_in_flight (guint queue_depth);
/* Sets the algorithm under test again (a preset resets it). */
void gcvt_apply_algorithm (GstElement * element);
/* "backend=... algorithm=..." for launch lines */
gchar *gcvt_launch_props (void);
/* When algorithm=separable is forced and K is not rank 1: checks that the
 * element refuses to start (LIBRARY SETTINGS naming "algorithm") and
 * returns TRUE, the caller then skips the rest. */
gboolean gcvt_refused_as_not_separable (GstElement * element, gboolean rank1);

/* --- element and harness ------------------------------------------------ */

/* Drops the element's bus (whose messages hold references to the element)
 * and then the element. */
void gcvt_element_unref (GstElement * element);
/* Gives the element a bus, then wraps it in a harness (which starts it). */
GstHarness *gcvt_harness_new (GstElement * element);
GstBus *gcvt_bus (GstElement * element);
GstCaps *gcvt_caps (RefFormat format, guint width, guint height);
void gcvt_set_caps (GstHarness * h, RefFormat in, RefFormat out, guint width,
    guint height);
/* The pipeline of a launch line; fails the test when it does not parse. */
GstElement *gcvt_pipeline_new (const gchar * line);
/* Sets `pipeline` PLAYING and returns the first EOS or error message on its
 * bus; fails the test when none comes within `timeout`. */
GstMessage *gcvt_pipeline_run (GstElement * pipeline, GstClockTime timeout,
    const gchar * what);
/* The same, up to EOS: an error fails the test, naming its source. */
void gcvt_pipeline_run_to_eos (GstElement * pipeline, GstClockTime timeout,
    const gchar * what);
/* Frame n of a stream at 30 frames/s (gcvt_caps()): its timestamp, and
 * the image as a buffer (gcvt_buffer_new()) with that timestamp and the
 * frame's duration. */
#define GCVT_FRAME_DURATION (GST_SECOND / 30)
GstClockTime gcvt_frame_pts (guint n);
GstBuffer *gcvt_timed_buffer (const RefImage * img, RefFormat format,
    guint n);
/* "handoff" of fakesink: counts the buffers into the gint `counter`. */
void gcvt_count_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad,
    gpointer counter);
/* push, drain, pull exactly one buffer */
GstBuffer *gcvt_process (GstHarness * h, GstBuffer * in);
void gcvt_drain (GstHarness * h);

/* --- properties --------------------------------------------------------- */

/* An uninitialised `array` becomes a GstValueArray of G_TYPE_FLOAT. */
void gcvt_floats_value (GValue * array, const gdouble * v, guint n);
void gcvt_set_floats (GstElement * element, const gchar * property,
    const gdouble * v, guint n);
guint gcvt_n_floats (GstElement * element, const gchar * property);
/* The serialized value, for "kept its value" checks. */
gchar *gcvt_prop_string (GstElement * element, const gchar * property);
/* All filter properties from p, K as a custom kernel. */
void gcvt_set_params (GstElement * element, const RefParams * p);
/* Random coefficients (float-exact); rank 1 when asked. */
RefKernel *gcvt_random_kernel (GRand * rand, guint kw, guint kh,
    gboolean rank1);

/* --- frames ------------------------------------------------------------- */

/* Threads a test may run at once for its own work: GPUCONVOLVE_TEST_THREADS
 * (a runner of several test programs at once divides the processors among
 * them), else every processor; one under valgrind. */
guint gcvt_threads (void);
/* ref_filter(), its rows shared among up to gcvt_threads() threads where
 * the frame is large enough for that to pay. */
RefImage *gcvt_filter (const RefImage * in, const RefParams * p);

/* Random samples: 0..255 integers, or floats in [lo, hi] for GRAY32F. */
RefImage *gcvt_random_image (GRand * rand, RefFormat format, guint width,
    guint height, gdouble lo, gdouble hi);
/* The image as a buffer; stride 0 = default. With `meta` it carries a
 * GstVideoMeta giving offset and stride. Padding bytes are garbage. */
GstBuffer *gcvt_buffer_new (const RefImage * img, RefFormat format,
    gsize stride, gsize offset, gboolean meta);
/* Checks `out` against ref_filter(in, p) within the docs/filters.md
 * bounds: 8-bit within ref_u8_tolerance (1 unless sum|scale K| is large),
 * float within ref_float_tolerance, passthrough alpha exact. */
void gcvt_assert_frame (GstBuffer * out, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    const gchar * what);
/* The same, returning the largest error among the filtered samples. */
gdouble gcvt_check_frame (GstBuffer * out, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    const gchar * what);
/* The same where only the samples with filtered[y * width + x] are
 * filtered (NULL: all), the others the input exactly. */
gdouble gcvt_check_frame_masked (GstBuffer * out, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    const gboolean * filtered, const gchar * what);
/* The same against `ref`, ref_filter (in, p) computed already (by
 * gcvt_filter()), for a caller that needs the reference itself too. */
gdouble gcvt_check_frame_ref (GstBuffer * out, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    const RefImage * ref, const gchar * what);
/* One frame through an element whose properties are set: harness, caps,
 * buffer, check, teardown. */
void gcvt_run_and_check (GstElement * element, RefFormat in_format,
    RefFormat out_format, const RefImage * in, const RefParams * p,
    gsize stride, gsize offset, const gchar * what);

/* --- messages and logs -------------------------------------------------- */

/* Whether `text` has `word` with no [a-z0-9-] on either side. */
gboolean gcvt_names (const gchar * text, const gchar * word);
/* The first message of `type` on the bus, or NULL; non-blocking. */
GstMessage *gcvt_pop (GstBus * bus, GstMessageType type);
/* Error or warning message with this domain and code whose text names
 * `word` (NULL: any). Unrefs the message. */
void gcvt_assert_message (GstMessage * msg, GQuark domain, gint code,
    const gchar * word);
/* READY->PAUSED must fail with this error. */
void gcvt_expect_start_error (GstElement * element, GQuark domain, gint code,
    const gchar * word);

/* --- memory -------------------------------------------------------------- */

/* Limits the address space (RLIMIT_AS) to what it is now plus `headroom`
 * bytes, so that small allocations still succeed and large ones fail; FALSE
 * (and no limit) where such a limit does not work here (not Linux, or under
 * a tool that keeps memory of its own, such as valgrind). */
gboolean gcvt_limit_memory (gsize headroom, struct rlimit *saved);
void gcvt_unlimit_memory (const struct rlimit *saved);

/* Collects GST_WARNINGs of the "gpuconvolve" debug category. */
void gcvt_log_capture_start (void);
/* Captured warnings naming `property`. */
guint gcvt_log_count (const gchar * property);
guint gcvt_log_total (void);
void gcvt_log_capture_stop (void);

G_END_DECLS

#endif /* GCVT_COMMON_H */
