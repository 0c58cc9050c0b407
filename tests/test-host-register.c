/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Upstream's system memory page-locked where it lies (host-register,
 * docs/pipeline.md): frames uploaded from a registration and frames staged
 * give the reference's pixels; a registration ends before its memory is
 * freed (the memory then reused at the same address with new pages is read
 * anew); a range reused at another size is registered anew; an
 * application's ring of 1, 3 and 16 frames wrapped anew for each buffer
 * runs with 3 frames in flight, every output compared. Whether memory is
 * registered is asked of the CUDA driver (cuPointerGetAttribute).
 * backend=cuda
 * only; nothing depends on timing, for compute-sanitizer. */
#include "common.h"

#include <dlfcn.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <string.h>
#include <sys/mman.h>

#define W 256
#define H 64
#define FRAME ((gsize) W * 4 * H)
#define DEPTH 3

/* The driver's entry points for page_locked(), from the library the
 * engine loaded (no link to it): the memory type of a pointer in the
 * primary context of device 0, which sees portable registrations. */
typedef int (*Init) (unsigned int);
typedef int (*DeviceGet) (int *, int);
typedef int (*PrimaryCtxRetain) (void **, int);
typedef int (*CtxPush) (void *);
typedef int (*CtxPop) (void **);
/* (the plural form: memory CUDA does not know is no error, which
 * compute-sanitizer would report, but a type of 0) */
typedef int (*PointerGetAttributes) (unsigned int, int *, void **,
    unsigned long long);
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_MEMORYTYPE_HOST 1

static struct {
  CtxPush push;
  CtxPop pop;
  PointerGetAttributes attributes;
  void *context;
} driver;

static void
driver_load (void)
{
  void *lib = dlopen ("libcuda.so.1", RTLD_LAZY);
  Init init;
  DeviceGet device_get;
  PrimaryCtxRetain retain;
  int dev = 0;

  fail_unless (lib != NULL, "libcuda.so.1: %s", dlerror ());
  init = (Init) dlsym (lib, "cuInit");
  device_get = (DeviceGet) dlsym (lib, "cuDeviceGet");
  retain = (PrimaryCtxRetain) dlsym (lib, "cuDevicePrimaryCtxRetain");
  driver.push = (CtxPush) dlsym (lib, "cuCtxPushCurrent_v2");
  driver.pop = (CtxPop) dlsym (lib, "cuCtxPopCurrent_v2");
  driver.attributes = (PointerGetAttributes) dlsym (lib,
      "cuPointerGetAttributes");
  fail_unless (init && device_get && retain && driver.push && driver.pop
      && driver.attributes, "the CUDA driver lacks an entry point");
  fail_unless_equals_int (init (0), 0);
  fail_unless_equals_int (device_get (&dev, 0), 0);
  fail_unless_equals_int (retain (&driver.context, dev), 0);
}

/* Whether CUDA takes `p` for page-locked host memory. */
static gboolean
page_locked (const void *p)
{
  unsigned int type = 0;
  int attribute = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  void *data = &type, *popped;
  gboolean host;

  if (!driver.context)
    driver_load ();
  if (driver.push (driver.context) != 0)
    return FALSE;
  host = driver.attributes (1, &attribute, &data,
      (unsigned long long) (guintptr) p) == 0 && type == CU_MEMORYTYPE_HOST;
  driver.pop (&popped);
  return host;
}

typedef struct {
  RefKernel *kernel;
  RefParams params;
  RefImage *in[4];
} Clip;

static void
clip_init (Clip * c, const gchar * what)
{
  GRand *rand = ref_rand_new (what);

  c->kernel = gcvt_random_kernel (rand, 5, 5, gcvt_forced_separable ());
  ref_params_init (&c->params, c->kernel);
  c->params.scale = 1.0 / ref_kernel_sum_abs (c->kernel);
  c->params.bias = 128.0;
  for (guint i = 0; i < G_N_ELEMENTS (c->in); i++)
    c->in[i] = gcvt_random_image (rand, REF_RGBA, W, H, 0.0, 255.0);
  g_rand_free (rand);
}

static void
clip_clear (Clip * c)
{
  for (guint i = 0; i < G_N_ELEMENTS (c->in); i++)
    ref_image_free (c->in[i]);
  ref_kernel_free (c->kernel);
}

/* The RGBA frame of `img` written at `to` (rows packed). */
static void
fill (guint8 * to, const RefImage * img)
{
  GstBuffer *b = gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE);

  fail_unless_equals_int (gst_buffer_extract (b, 0, to, FRAME), FRAME);
  gst_buffer_unref (b);
}

static GstHarness *
harness_new (const Clip * c, const gchar * mode)
{
  GstElement *e = gcvt_element_new_depth (DEPTH);
  GstHarness *h;

  gcvt_set_params (e, &c->params);
  gst_util_set_object_arg (G_OBJECT (e), "host-register", mode);
  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, W, H);
  gst_object_unref (e);         /* the harness holds it */
  return h;
}

/* The harness and its element gone (gcvt_element_unref(): the element's
 * bus holds messages that hold the element). */
static void
harness_free (GstHarness * h)
{
  GstElement *e = gst_object_ref (h->element);

  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

/* n shallow copies of `buf` (its memory, again and again) through the
 * element, each output checked against `in`. */
static void
push_copies (GstHarness * h, GstBuffer * buf, guint n, const Clip * c,
    const RefImage * in, const gchar * what)
{
  for (guint i = 0; i < n; i++)
    fail_unless_equals_int (gst_harness_push (h, gst_buffer_copy (buf)),
        GST_FLOW_OK);
  gcvt_drain (h);
  for (guint i = 0; i < n; i++) {
    GstBuffer *out = gst_harness_try_pull (h);
    gchar *label = g_strdup_printf ("%s, frame %u", what, i);
    fail_unless (out != NULL, "%s: no output", label);
    gcvt_assert_frame (out, REF_RGBA, REF_RGBA, in, &c->params, label);
    gst_buffer_unref (out);
    g_free (label);
  }
}

/* Memory of a buffer pool's kind: the first frame staged, the next
 * uploaded from the memory page-locked; both right. With host-register
 * none, never page-locked. */
GST_START_TEST (test_registered_and_staged)
{
  Clip c;

  clip_init (&c, "host-register pixels");
  for (guint none = 0; none < 2; none++) {
    GstHarness *h = harness_new (&c, none ? "none" : "reused");
    GstBuffer *buf = gcvt_buffer_new (c.in[0], REF_RGBA, 0, 0, FALSE);
    GstMapInfo map;

    fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
    push_copies (h, buf, 1, &c, c.in[0], "staged");
    fail_if (page_locked (map.data), "memory seen once was page-locked");
    push_copies (h, buf, 4, &c, c.in[0], none ? "none" : "registered");
    fail_unless (page_locked (map.data) == !none, "memory seen again was "
        "%s", none ? "page-locked with host-register=none" : "not "
        "page-locked");
    gst_buffer_unmap (buf, &map);
    gst_buffer_unref (buf);
    harness_free (h);
  }
  clip_clear (&c);
}

GST_END_TEST;

/* The memory of a wrapped buffer: when it is freed its registration must
 * have ended; its pages are then dropped (the address reused with new
 * pages, as an allocator does). */
typedef struct {
  guint8 *base;
  gsize size;
  gboolean freed, locked_at_free;
} Block;

/* (any thread: checked by the test after) */
static void
block_freed (gpointer data)
{
  Block *b = data;

  b->locked_at_free = page_locked (b->base);
  b->freed = madvise (b->base, b->size, MADV_DONTNEED) == 0;
}

static GstBuffer *
block_wrap (Block * b, gsize size)
{
  b->freed = FALSE;
  return gst_buffer_new_wrapped_full (0, b->base, size, 0, size, b,
      block_freed);
}

static guint8 *
map_pages (gsize size)
{
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE,
      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  fail_if (p == MAP_FAILED, "mmap failed");
  return p;
}

/* A buffer freed while registered: the registration ends before the
 * memory goes (no stale one), and the same address with new pages and
 * another frame gives that frame, staged and then registered anew. */
GST_START_TEST (test_freed_while_registered)
{
  Clip c;
  GstHarness *h;
  Block b = { map_pages (FRAME), FRAME };
  GstBuffer *buf;

  clip_init (&c, "host-register freed");
  h = harness_new (&c, "reused");
  for (guint round = 0; round < 3; round++) {
    fill (b.base, c.in[round]);
    buf = block_wrap (&b, FRAME);
    push_copies (h, buf, 3, &c, c.in[round], "round");
    fail_unless (page_locked (b.base), "round %u: not page-locked", round);
    gst_buffer_unref (buf);
    fail_unless (b.freed, "the element held a buffer, or its pages could "
        "not be dropped");
    fail_if (b.locked_at_free, "round %u: still page-locked when its memory "
        "was freed", round);
  }
  harness_free (h);
  munmap (b.base, FRAME);
  clip_clear (&c);
}

GST_END_TEST;

/* host-register=kept: a range stays registered past its buffers, until the
 * element stops; the same address with another size (its pages dropped
 * between) is not read through the old registration. */
GST_START_TEST (test_reused_with_another_size)
{
  Clip c;
  GstHarness *h;
  Block b = { map_pages (2 * FRAME), 2 * FRAME };
  GstBuffer *buf;

  clip_init (&c, "host-register size");
  h = harness_new (&c, "kept");
  fill (b.base, c.in[0]);
  buf = block_wrap (&b, FRAME);
  push_copies (h, buf, 2, &c, c.in[0], "first size");
  gst_buffer_unref (buf);
  fail_unless (b.freed, "the element held a buffer, or its pages could not "
      "be dropped");
  fail_unless (b.locked_at_free, "kept memory was not kept page-locked past "
      "its buffer");
  /* the old registration's pages are gone (block_freed()); a frame read
   * through it would be the first frame */
  fail_unless (page_locked (b.base));
  fill (b.base, c.in[1]);
  buf = block_wrap (&b, 2 * FRAME);
  push_copies (h, buf, 1, &c, c.in[1], "other size, staged");
  fail_if (page_locked (b.base), "the old size's registration was kept");
  push_copies (h, buf, 2, &c, c.in[1], "other size, registered");
  fail_unless (page_locked (b.base + FRAME + 1), "the new size was not "
      "page-locked");
  harness_free (h);
  fail_if (page_locked (b.base), "still page-locked after stop");
  gst_buffer_unref (buf);
  munmap (b.base, 2 * FRAME);
  clip_clear (&c);
}

GST_END_TEST;

/* --- an application's ring through appsrc -------------------------------- */

typedef struct {
  GMutex lock;
  GCond freed;
  gboolean in_use[16];
} Ring;

typedef struct {
  Ring *ring;
  guint i;
} RingFrame;

static void
ring_freed (gpointer data)
{
  RingFrame *f = data;

  g_mutex_lock (&f->ring->lock);
  f->ring->in_use[f->i] = FALSE;
  g_cond_broadcast (&f->ring->freed);
  g_mutex_unlock (&f->ring->lock);
}

/* Whether frame i was given back within the time limit. */
static gboolean
ring_wait (Ring * ring, guint i)
{
  gint64 until = g_get_monotonic_time ()
      + gcvt_time_limit (20 * GST_SECOND) / GST_USECOND;
  gboolean given = TRUE;

  g_mutex_lock (&ring->lock);
  while (ring->in_use[i] && (given = g_cond_wait_until (&ring->freed,
              &ring->lock, until)));
  if (given)
    ring->in_use[i] = TRUE;
  g_mutex_unlock (&ring->lock);
  return given;
}

static const guint ring_sizes[] = { 1, 3, 16 };

/* A ring of 1, 3 and 16 g_malloc'd frames, each pushed wrapped anew and
 * reused once its buffer was freed, with 3 frames in flight: no frame is
 * held back for the next, and every output is its input's. */
GST_START_TEST (test_appsrc_ring)
{
  const guint n = ring_sizes[__i__ / 2];
  const gchar *mode = __i__ % 2 ? "kept" : "reused";
  const guint total = MAX (2 * n + 2, 8);
  Clip c;
  Ring ring;
  RingFrame frames[16];
  guint8 *mem[16];
  GstElement *pipeline, *src, *conv, *sink;
  GstCaps *caps;
  gchar *desc = g_strdup_printf ("appsrc name=src format=time ! gpuconvolve "
      "name=conv backend=cuda queue-depth=%u host-register=%s ! appsink "
      "name=sink sync=false", DEPTH, mode);

  clip_init (&c, "host-register ring");
  pipeline = gst_parse_launch (desc, NULL);
  g_free (desc);
  fail_unless (pipeline != NULL);
  src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  conv = gst_bin_get_by_name (GST_BIN (pipeline), "conv");
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gcvt_set_params (conv, &c.params);
  gcvt_apply_algorithm (conv);
  caps = gcvt_caps (REF_RGBA, W, H);
  g_object_set (src, "caps", caps, NULL);
  gst_caps_unref (caps);
  g_mutex_init (&ring.lock);
  g_cond_init (&ring.freed);
  for (guint i = 0; i < n; i++) {
    ring.in_use[i] = FALSE;
    frames[i] = (RingFrame) { &ring, i };
    mem[i] = g_malloc (FRAME);
  }
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING)
      != GST_STATE_CHANGE_FAILURE);
  for (guint k = 0; k < total; k++) {
    guint i = k % n;
    GstBuffer *buf;
    fail_unless (ring_wait (&ring, i), "ring of %u, %s: frame %u was not "
        "given back (pushed %u)", n, mode, i, k);
    fill (mem[i], c.in[k % G_N_ELEMENTS (c.in)]);
    buf = gst_buffer_new_wrapped_full (0, mem[i], FRAME, 0, FRAME,
        &frames[i], ring_freed);
    GST_BUFFER_PTS (buf) = gcvt_frame_pts (k);
    GST_BUFFER_DURATION (buf) = GCVT_FRAME_DURATION;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), buf),
        GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  for (guint k = 0; k < total; k++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        gcvt_time_limit (20 * GST_SECOND));
    gchar *what = g_strdup_printf ("ring of %u, %s, frame %u", n, mode, k);
    fail_unless (s != NULL, "%s: no output", what);
    gcvt_assert_frame (gst_sample_get_buffer (s), REF_RGBA, REF_RGBA,
        c.in[k % G_N_ELEMENTS (c.in)], &c.params, what);
    gst_sample_unref (s);
    g_free (what);
  }
  /* with host-register=kept the ring was page-locked while running */
  if (__i__ % 2)
    fail_unless (page_locked (mem[0]), "ring of %u: not page-locked", n);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  for (guint i = 0; i < n; i++) {
    fail_if (page_locked (mem[i]), "page-locked after stop");
    g_free (mem[i]);
  }
  g_mutex_clear (&ring.lock);
  g_cond_clear (&ring.freed);
  gst_object_unref (src);
  gst_object_unref (conv);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  clip_clear (&c);
}

GST_END_TEST;

static Suite *
host_register_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-host-register");
  TCase *tc = tcase_create ("host-register");

  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_registered_and_staged);
  tcase_add_test (tc, test_freed_while_registered);
  tcase_add_test (tc, test_reused_with_another_size);
  tcase_add_loop_test (tc, test_appsrc_ring, 0,
      2 * G_N_ELEMENTS (ring_sizes));
  return s;
}

int
main (int argc, char **argv)
{
  gcvt_init (&argc, &argv);
  gcvt_skip_unless (gcvt_on_cuda (), "page-locking upstream's memory needs "
      "backend=cuda (GPUCONVOLVE_TEST_BACKEND=cuda)");
  return gcvt_run (host_register_suite (), "host_register");
}
