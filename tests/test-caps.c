/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The caps gpuconvolve offers on the other pad (gstgpuconvolvecaps.c): the
 * conversions in each direction, each format once, and which memory comes
 * first. Direct calls, so the CUDA-memory rules are checked on machines
 * with no GPU too. GLib's test framework, in TAP. */
#include <gst/gst.h>
#include "gstgpuconvolvecaps.h"
#include "gstgpuconvolvecuda.h"

/* The formats of structure i, in order, joined by spaces. */
static gchar *
formats_of (GstCaps * caps, guint i)
{
  const GValue *v = gst_structure_get_value (gst_caps_get_structure (caps, i),
      "format");
  GString *s = g_string_new (NULL);

  if (G_VALUE_HOLDS_STRING (v))
    g_string_append (s, g_value_get_string (v));
  else
    for (guint k = 0; k < gst_value_list_get_size (v); k++)
      g_string_append_printf (s, "%s%s", k ? " " : "",
          g_value_get_string (gst_value_list_get_value (v, k)));
  return g_string_free (s, FALSE);
}

static gboolean
is_cuda (GstCaps * caps, guint i)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, i);
  return f && gst_caps_features_contains (f, GST_GPU_CONVOLVE_CUDA_FEATURE);
}

static GstCaps *
transform (GstPadDirection direction, const gchar * text, gboolean with_cuda)
{
  GstCaps *in = gst_caps_from_string (text);
  GstCaps *out = gst_gpu_convolve_caps_transform (direction, in, NULL,
      with_cuda);
  gst_caps_unref (in);
  return out;
}

/* Downstream of a format: itself first, then its conversions. */
static void
test_conversions_downstream (void)
{
  static const struct
  {
    const gchar *in, *out;
  } cases[] = {
    {"NV12", "NV12 GRAY8 GRAY32F"},
    {"I420", "I420 GRAY8 GRAY32F"},
    {"GRAY8", "GRAY8 GRAY32F"},
    {"GRAY32F", "GRAY32F GRAY8 GRAY16_LE"},
    {"RGBA", "RGBA"},
    {"GRAY16_LE", "GRAY16_LE GRAY32F"},
    {"P010_10LE", "P010_10LE GRAY32F GRAY16_LE"},
    {"RGB", "RGB"},
    {"BGR", "BGR"},
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *text = g_strdup_printf ("video/x-raw,format=%s,width=16,height=8",
        cases[c].in);
    GstCaps *out = transform (GST_PAD_SINK, text, FALSE);
    gchar *got = formats_of (out, 0);
    g_assert_cmpuint (gst_caps_get_size (out), ==, 1);
    g_assert_cmpstr (got, ==, cases[c].out);
    g_free (got);
    g_free (text);
    gst_caps_unref (out);
  }
}

/* Upstream of a format: what can become it. */
static void
test_conversions_upstream (void)
{
  static const struct
  {
    const gchar *out, *in;
  } cases[] = {
    {"GRAY8", "GRAY8 GRAY32F NV12 I420"},
    {"GRAY32F", "GRAY32F GRAY8 NV12 I420 GRAY16_LE P010_10LE"},
    {"GRAY16_LE", "GRAY16_LE GRAY32F P010_10LE"},
    {"P010_10LE", "P010_10LE"},
    {"NV12", "NV12"},
    {"I420", "I420"},
    {"BGRx", "BGRx"},
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *text = g_strdup_printf ("video/x-raw,format=%s,width=16,height=8",
        cases[c].out);
    GstCaps *in = transform (GST_PAD_SRC, text, FALSE);
    gchar *got = formats_of (in, 0);
    g_assert_cmpstr (got, ==, cases[c].in);
    g_free (got);
    g_free (text);
    gst_caps_unref (in);
  }
}

/* A list of formats comes out with each once. */
static void
test_formats_once (void)
{
  GstCaps *out = transform (GST_PAD_SINK,
      "video/x-raw,format={GRAY8,GRAY32F,NV12,I420}", FALSE);
  gchar *got = formats_of (out, 0);

  g_assert_cmpstr (got, ==, "GRAY8 GRAY32F GRAY16_LE NV12 I420");
  g_free (got);
  gst_caps_unref (out);
}

/* CUDA memory holds every format, the 16-bit ones, RGB and BGR
 * included (docs/formats.md), and their conversions: P010_10LE's luma in
 * GRAY16_LE or GRAY32F stays on the GPU. */
static void
test_cuda_formats (void)
{
  static const struct
  {
    GstPadDirection dir;
    const gchar *format, *cuda;
  } cases[] = {
    {GST_PAD_SINK, "RGB", "RGB"},
    {GST_PAD_SINK, "BGR", "BGR"},
    {GST_PAD_SINK, "GRAY16_LE", "GRAY16_LE GRAY32F"},
    {GST_PAD_SINK, "P010_10LE", "P010_10LE GRAY32F GRAY16_LE"},
    {GST_PAD_SINK, "GRAY8", "GRAY8 GRAY32F"},
    {GST_PAD_SRC, "GRAY32F", "GRAY32F GRAY8 NV12 I420 GRAY16_LE P010_10LE"},
  };

  for (guint c = 0; c < G_N_ELEMENTS (cases); c++) {
    gchar *text = g_strdup_printf ("video/x-raw,format=%s,width=16,height=8",
        cases[c].format);
    GstCaps *caps = transform (cases[c].dir, text, TRUE);
    gchar *got;

    g_assert_cmpuint (gst_caps_get_size (caps), ==, 2);
    g_assert_false (is_cuda (caps, 0));
    g_assert_true (is_cuda (caps, 1));
    got = formats_of (caps, 1);
    g_assert_cmpstr (got, ==, cases[c].cuda);
    g_free (got);
    g_free (text);
    gst_caps_unref (caps);
  }
}

/* The memory the other side has comes first; CUDA memory only where it
 * can be had; width, height and framerate pass. */
static void
test_memory_order (void)
{
  static const gchar *const sys =
      "video/x-raw,format=NV12,width=64,height=48,framerate=30/1";
  static const gchar *const cuda =
      "video/x-raw(memory:CUDAMemory),format=NV12,width=64,height=48,"
      "framerate=30/1";
  GstPadDirection dirs[] = { GST_PAD_SINK, GST_PAD_SRC };

  for (guint d = 0; d < G_N_ELEMENTS (dirs); d++) {
    GstCaps *a = transform (dirs[d], sys, TRUE);
    GstCaps *b = transform (dirs[d], cuda, TRUE);
    GstCaps *c = transform (dirs[d], cuda, FALSE);
    GstStructure *s = gst_caps_get_structure (b, 0);
    gint w = 0, h = 0, n = 0, dd = 0;

    g_assert_cmpuint (gst_caps_get_size (a), ==, 2);
    g_assert_false (is_cuda (a, 0));
    g_assert_true (is_cuda (a, 1));
    g_assert_cmpuint (gst_caps_get_size (b), ==, 2);
    g_assert_true (is_cuda (b, 0));
    g_assert_false (is_cuda (b, 1));
    /* without CUDA: system memory only, whatever came in */
    g_assert_cmpuint (gst_caps_get_size (c), ==, 1);
    g_assert_false (is_cuda (c, 0));
    g_assert_true (gst_structure_get_int (s, "width", &w) && w == 64);
    g_assert_true (gst_structure_get_int (s, "height", &h) && h == 48);
    g_assert_true (gst_structure_get_fraction (s, "framerate", &n, &dd)
        && n == 30 && dd == 1);
    gst_caps_unref (a);
    gst_caps_unref (b);
    gst_caps_unref (c);
  }
}

/* NV12 and I420 caps: the 4:2:0 layout of GStreamer, and the flag of
 * CUDA memory. */
static void
test_info (void)
{
  GstCaps *caps = gst_caps_from_string
      ("video/x-raw(memory:CUDAMemory),format=I420,width=5,height=3");
  GstGpuConvolveInfo info;

  g_assert_true (gst_gpu_convolve_info_from_caps (&info, caps));
  g_assert_true (info.cuda_memory);
  g_assert_cmpuint (GST_VIDEO_INFO_N_PLANES (&info.layout), ==, 3);
  /* Y rows padded to 4 bytes and its plane to an even height (GStreamer's
   * rule), U and V 3x2 each in rows of 4 bytes */
  g_assert_cmpuint (info.stride, ==, 8);
  g_assert_cmpuint (info.size, ==, 8 * 4 + 2 * 4 * 2);
  gst_caps_unref (caps);

  caps = gst_caps_from_string ("video/x-raw,format=GRAY32F,width=5,height=3");
  g_assert_true (gst_gpu_convolve_info_from_caps (&info, caps));
  g_assert_false (info.cuda_memory);
  g_assert_cmpuint (info.stride, ==, 20);
  g_assert_cmpuint (info.size, ==, 60);
  gst_caps_unref (caps);
}

/* A list of formats holding values that are no strings (caps from outside
 * may hold anything): those are no format, in both memories and both
 * directions; a list of nothing else gives no CUDA-memory structure. */
static void
test_formats_not_strings (void)
{
  GstPadDirection dirs[] = { GST_PAD_SINK, GST_PAD_SRC };

  for (guint d = 0; d < G_N_ELEMENTS (dirs); d++) {
    GstCaps *mixed = transform (dirs[d],
        "video/x-raw(memory:CUDAMemory),format={ 211, NV12, 2.5 },"
        "width=16,height=8", TRUE);
    GstCaps *none = transform (dirs[d],
        "video/x-raw(memory:CUDAMemory),format={ 211, 2147647 },"
        "width=16,height=8", TRUE);
    gchar *got = formats_of (mixed, 0);

    g_assert_true (is_cuda (mixed, 0));
    g_assert_true (g_str_has_prefix (got, "NV12"));
    for (guint i = 0; i < gst_caps_get_size (none); i++)
      g_assert_false (is_cuda (none, i));
    g_free (got);
    gst_caps_unref (mixed);
    gst_caps_unref (none);
  }
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/caps/conversions-downstream", test_conversions_downstream);
  g_test_add_func ("/caps/conversions-upstream", test_conversions_upstream);
  g_test_add_func ("/caps/formats-once", test_formats_once);
  g_test_add_func ("/caps/memory-order", test_memory_order);
  g_test_add_func ("/caps/cuda-formats", test_cuda_formats);
  g_test_add_func ("/caps/info", test_info);
  g_test_add_func ("/caps/formats-not-strings", test_formats_not_strings);
  return g_test_run ();
}
