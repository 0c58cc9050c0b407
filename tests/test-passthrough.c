/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Passthrough (docs/filters.md, Identity; docs/pipeline.md): a kernel that
 * is the identity after scale and normalize passes the input buffer through
 * between equal formats and not otherwise; a buffer too short for the frame
 * is refused even then; leaving passthrough mid-stream takes the element's
 * own pool and asks upstream to choose again. */
#include "common.h"

#include <gst/base/gstbasetransform.h>
#include <string.h>

#define QUEUE_DEPTH 2

/* A kernel that is the identity after scale/normalize makes the element
 * passthrough: the output buffer is the input buffer. */
GST_START_TEST (test_identity_passthrough)
{
  static const struct
  {
    guint kw, kh;
    gdouble k[15];
    gint ax, ay;
    gdouble scale, bias;
    gboolean normalize, identity;
    RefFormat out;
  } cases[] = {
    {0, 0, {0}, -1, -1, 1, 0, FALSE, TRUE, REF_RGBA},   /* no kernel */
    {3, 3, {0, 0, 0, 0, 1, 0, 0, 0, 0}, -1, -1, 1, 0, FALSE, TRUE, REF_RGBA},
    {5, 3, {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 3, 0, 1, 0, FALSE,
        TRUE, REF_RGBA},
    {3, 1, {0, 0.5, 0}, -1, -1, 2, 0, FALSE, TRUE, REF_RGBA},
    {1, 3, {0, 3, 0}, -1, -1, 1, 0, TRUE, TRUE, REF_RGBA},
    /* not the identity */
    {3, 3, {0, 0, 0, 0, 1, 0, 0, 0, 0}, -1, -1, 1, 1, FALSE, FALSE, REF_RGBA},
    {3, 3, {0, 0, 0, 0, 1, 0, 0, 0, 0}, 0, 0, 1, 0, FALSE, FALSE, REF_RGBA},
    {3, 1, {0, 0.5, 0}, -1, -1, 1, 0, FALSE, FALSE, REF_RGBA},
    /* the identity, but converting */
    {0, 0, {0}, -1, -1, 1, 0, FALSE, FALSE, REF_GRAY32F},
  };
  GRand *r = ref_rand_new ("identity_passthrough");

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    RefFormat in = cases[c].out == REF_GRAY32F ? REF_GRAY8 : REF_RGBA;
    RefKernel *k = NULL;
    RefParams p;
    RefImage *img = gcvt_random_image (r, in, 8, 6, 0, 0);
    GstElement *e = gcvt_element_new ();
    GstHarness *h;
    GstBuffer *buf, *out;
    gchar *what = g_strdup_printf ("case %u", c);

    if (cases[c].kw) {
      k = ref_kernel_new (cases[c].kw, cases[c].kh);
      memcpy (k->k, cases[c].k, sizeof (gdouble) * cases[c].kw * cases[c].kh);
    }
    ref_params_init (&p, k);
    p.anchor_x = cases[c].ax;
    p.anchor_y = cases[c].ay;
    p.scale = cases[c].scale;
    p.bias = cases[c].bias;
    p.normalize = cases[c].normalize;
    p.border = REF_BORDER_CONSTANT;     /* makes a shifted copy visible */
    p.border_value = 7;
    gcvt_set_params (e, &p);
    h = gcvt_harness_new (e);
    gcvt_set_caps (h, in, cases[c].out, 8, 6);
    buf = gcvt_buffer_new (img, in, 0, 0, FALSE);
    out = gcvt_process (h, gst_buffer_ref (buf));
    fail_unless_equals_int (gst_base_transform_is_passthrough
        (GST_BASE_TRANSFORM (e)), cases[c].identity);
    fail_unless_equals_int (out == buf, cases[c].identity);
    gcvt_assert_frame (out, in, cases[c].out, img, &p, what);
    gst_buffer_unref (out);
    gst_buffer_unref (buf);
    gst_harness_teardown (h);
    gcvt_element_unref (e);
    ref_kernel_free (k);
    ref_image_free (img);
    g_free (what);
  }
  g_rand_free (r);
}

GST_END_TEST;


/* In passthrough (the identity) a buffer that does not hold the frame is
 * refused too, though nothing of it would be read. */
GST_START_TEST (test_passthrough_short_buffer)
{
  GstElement *e = gcvt_element_new_depth (QUEUE_DEPTH);
  GstHarness *h = gcvt_harness_new (e);

  gcvt_set_caps (h, REF_RGBA, REF_RGBA, 16, 8);
  fail_unless (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (e)));
  fail_unless_equals_int (gst_harness_push (h,
          gst_buffer_new_allocate (NULL, 16 * 4 * 8 - 1, NULL)),
      GST_FLOW_ERROR);
  gcvt_assert_message (gcvt_pop (gcvt_bus (e), GST_MESSAGE_ERROR),
      GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT, "511");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
}

GST_END_TEST;


/* From the identity (passthrough) to a filter: the element takes its own
 * pool and asks upstream to choose its pool again. */
GST_START_TEST (test_passthrough_to_filtering)
{
  GRand *r = ref_rand_new ("passthrough_to_filtering");
  RefImage *img = gcvt_random_image (r, REF_RGBA, 24, 16, 0, 0);
  RefKernel *box = ref_builtin ("box", 3, 1.0);
  GstElement *e = gcvt_element_new_depth (QUEUE_DEPTH);
  GstHarness *h;
  GstBuffer *in, *out;
  GstBufferPool *pool;
  GstEvent *ev;
  RefParams p;
  gboolean reconfigure = FALSE;

  h = gcvt_harness_new (e);
  gcvt_set_caps (h, REF_RGBA, REF_RGBA, 24, 16);
  in = gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE);
  out = gcvt_process (h, gst_buffer_ref (in));
  fail_unless (out == in, "the identity did not pass the buffer through");
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  while ((ev = gst_harness_try_pull_upstream_event (h)))
    gst_event_unref (ev);

  gst_util_set_object_arg (G_OBJECT (e), "filter", "box");
  g_object_set (e, "size", 3, NULL);
  out = gcvt_process (h, gcvt_buffer_new (img, REF_RGBA, 0, 0, FALSE));
  ref_params_init (&p, box);
  gcvt_assert_frame (out, REF_RGBA, REF_RGBA, img, &p, "after passthrough");
  pool = gst_base_transform_get_buffer_pool (GST_BASE_TRANSFORM (e));
  fail_unless (pool != NULL, "no pool after leaving passthrough");
  fail_unless (out->pool == pool, "the output is not from the element's "
      "pool");
  gst_object_unref (pool);
  gst_buffer_unref (out);
  while ((ev = gst_harness_try_pull_upstream_event (h))) {
    reconfigure |= GST_EVENT_TYPE (ev) == GST_EVENT_RECONFIGURE;
    gst_event_unref (ev);
  }
  fail_unless (reconfigure, "upstream was not asked to reconfigure");
  gst_harness_teardown (h);
  gcvt_element_unref (e);
  ref_kernel_free (box);
  ref_image_free (img);
  g_rand_free (r);
}

GST_END_TEST;

static Suite *
passthrough_suite (void)
{
  Suite *s = suite_create ("gpuconvolve-passthrough");
  TCase *tc = tcase_create ("passthrough");

  tcase_set_timeout (tc, 60);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_identity_passthrough);
  tcase_add_test (tc, test_passthrough_short_buffer);
  tcase_add_test (tc, test_passthrough_to_filtering);
  return s;
}

GCVT_MAIN (passthrough);
