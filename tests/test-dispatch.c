/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The dispatcher without a GPU: variant strings, tuning tables (parsing,
 * errors, saving and loading, nearest-neighbour lookup, where they are
 * found, file names), the analytic heuristic against cases computed here
 * from its documented formula, and the record of what runs (GcvChoice:
 * column pass, the width that runs, the FFT set-up's outcome, the GRAY32F
 * guard, the CPU backend's path) with its text. */
#include "gcv-tools.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* --- variants ------------------------------------------------------------- */

static void
test_variant_round_trip (void)
{
  /* written as gcv_variant_to_string() writes them */
  static const char *const canonical[] = {
    "direct", "tiled", "tiled ty=1", "tiled ty=2", "tiled ty=4",
    "register p=4 block=128", "register p=8 block=128",
    "register p=8 block=256", "separable fused ty=4",
    "separable fused ty=8", "separable two-pass", "fft", "fft p=5",
    "fft p=3", "fft tile=512",
  };
  static const struct {
    const char *text, *written;
    GcvFamily family;
  } loose[] = {
    {"  tiled   ty=2 ", "tiled ty=2", GCV_FAMILY_TILED},
    {"separable", "separable fused ty=4", GCV_FAMILY_SEPARABLE},
    {"separable ty=8", "separable fused ty=8", GCV_FAMILY_SEPARABLE},
    {"register", "register p=8 block=128", GCV_FAMILY_REGISTER},
    {"register block=256 p=4", "register p=4 block=256",
        GCV_FAMILY_REGISTER},
    {"fft p=7", "fft", GCV_FAMILY_FFT},
    {"fft p=5 tile=256", "fft tile=256", GCV_FAMILY_FFT},
  };

  for (guint i = 0; i < G_N_ELEMENTS (canonical); i++) {
    GcvVariant v;
    GError *error = NULL;
    gchar *s;
    g_assert_true (gcv_variant_parse (canonical[i], &v, &error));
    g_assert_no_error (error);
    s = gcv_variant_to_string (&v);
    g_assert_cmpstr (s, ==, canonical[i]);
    g_free (s);
  }
  for (guint i = 0; i < G_N_ELEMENTS (loose); i++) {
    GcvVariant v;
    gchar *s;
    g_assert_true (gcv_variant_parse (loose[i].text, &v, NULL));
    g_assert_cmpint (v.family, ==, loose[i].family);
    s = gcv_variant_to_string (&v);
    g_assert_cmpstr (s, ==, loose[i].written);
    g_free (s);
  }
}

static void
test_variant_bad (void)
{
  static const char *const bad[] = {
    "", "   ", "auto", "winograd", "Tiled", "tiled ty=0", "tiled ty=x",
    "tiled ty=", "tiled ty", "tiled ty=2000", "tiled ty=-2", "tiled p=4",
    "register ty=2", "direct ty=1", "separable p=4", "fft ty=2",
    "register block=128x", "tiled unrolled", "fft tile=0", "fft tile=2048",
    "tiled tile=128",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++) {
    GcvVariant v;
    GError *error = NULL;
    if (gcv_variant_parse (bad[i], &v, &error))
      g_error ("'%s' was accepted", bad[i]);
    g_assert_error (error, GCV_ERROR, GCV_ERROR_SETTINGS);
    g_error_free (error);
  }
}

/* --- parsing -------------------------------------------------------------- */

static const char valid_table[] =
    "# gpuconvolve tuning table\n"
    "gpu: NVIDIA H100 80GB HBM3\n"
    "arch: sm_90\n"
    "\n"
    "# format  kw  kh  sep  size       ms        variant\n"
    "GRAY32F     9   9  0    4096x4096  0.1234    tiled ty=2\n"
    "RGBA        3  15  0    1920x1080  0.0456    register p=4 block=128\n"
    "GRAY32F    31  31  1    1280x720   0.0300    separable fused ty=8\n"
    "RGBA       63  63  0    3840x2160  1.5000    fft\n"
    "GRAY32F   127 127  1    3840x2160  2        separable two-pass   \n"
    "\tBGRx 1 1023 0 32767x1 0 direct\r\n";

static void
check_row (const GcvTuningTable * t, guint i, GcvFormat format, guint kw,
    guint kh, gboolean sep, guint width, guint height, double ms,
    const char *variant)
{
  const GcvTuningRow *r;
  gchar *v;

  g_assert_cmpuint (i, <, t->rows->len);
  r = &g_array_index (t->rows, GcvTuningRow, i);
  g_assert_cmpint (r->key.format, ==, format);
  g_assert_cmpuint (r->key.kw, ==, kw);
  g_assert_cmpuint (r->key.kh, ==, kh);
  g_assert_cmpint (!!r->key.separable, ==, !!sep);
  g_assert_cmpuint (r->key.width, ==, width);
  g_assert_cmpuint (r->key.height, ==, height);
  g_assert_cmpfloat_with_epsilon (r->ms, ms, 1e-9);
  v = gcv_variant_to_string (&r->variant);
  g_assert_cmpstr (v, ==, variant);
  g_free (v);
}

static void
test_parse_valid (void)
{
  GError *error = NULL;
  GcvTuningTable *t = gcv_tuning_table_parse (valid_table,
      strlen (valid_table), "valid", &error);

  g_assert_no_error (error);
  g_assert_nonnull (t);
  g_assert_cmpstr (t->gpu, ==, "NVIDIA H100 80GB HBM3");
  g_assert_cmpstr (t->arch, ==, "sm_90");
  g_assert_cmpuint (t->rows->len, ==, 6);
  check_row (t, 0, GCV_FORMAT_GRAY32F, 9, 9, FALSE, 4096, 4096, 0.1234,
      "tiled ty=2");
  check_row (t, 1, GCV_FORMAT_RGBA, 3, 15, FALSE, 1920, 1080, 0.0456,
      "register p=4 block=128");
  check_row (t, 2, GCV_FORMAT_GRAY32F, 31, 31, TRUE, 1280, 720, 0.03,
      "separable fused ty=8");
  check_row (t, 3, GCV_FORMAT_RGBA, 63, 63, FALSE, 3840, 2160, 1.5, "fft");
  check_row (t, 4, GCV_FORMAT_GRAY32F, 127, 127, TRUE, 3840, 2160, 2.0,
      "separable two-pass");
  check_row (t, 5, GCV_FORMAT_BGRX, 1, 1023, FALSE, 32767, 1, 0.0,
      "direct");
  gcv_tuning_table_free (t);

  /* no arch line is fine; the gpu line may come after rows */
  {
    const char *text = "RGBA 5 5 1 640x480 0.5 separable\ngpu: X\n";
    t = gcv_tuning_table_parse (text, strlen (text), "late-gpu", &error);
    g_assert_no_error (error);
    g_assert_cmpstr (t->gpu, ==, "X");
    g_assert_null (t->arch);
    check_row (t, 0, GCV_FORMAT_RGBA, 5, 5, TRUE, 640, 480, 0.5,
        "separable fused ty=4");
    gcv_tuning_table_free (t);
  }
}

/* Garbage: the parse fails with a GCV_ERROR whose message has `expect` in
 * it (the "where:line:" prefix included where a line is at fault). */
typedef struct {
  const char *name;
  const char *text;
  gsize len;                    /* 0: strlen */
  const char *expect;
} Garbage;

#define HEAD "gpu: Test GPU\n# a comment\n"
/* text with NUL bytes in it, and its length */
#define WITH_LEN(text) text, sizeof (text) - 1

static const Garbage garbage[] = {
  {"not-utf8", HEAD "GRAY32F 3 3 0 640x480 0.1 tiled \xff\xfe\n", 0,
      "bad: not a tuning table (not UTF-8 text)"},
  {"nul-byte", WITH_LEN ("gpu: Test GPU\0GRAY32F 3 3 0 640x480 0.1 tiled\n"),
      "not UTF-8"},
  {"binary", WITH_LEN ("\x7f" "ELF\x02\x01\x01\x00\x00\x00"),
      "not UTF-8"},
  {"no-gpu-line", "# no gpu\nGRAY32F 3 3 0 640x480 0.1 tiled\n", 0,
      "no 'gpu:' line"},
  {"no-rows", "gpu: Test GPU\narch: sm_90\n", 0, "no rows"},
  {"empty", "", 0, "no 'gpu:' line"},
  {"format", HEAD "GRAY16 3 3 0 640x480 0.1 tiled\n", 0,
      "bad:3: unknown format 'GRAY16'"},
  {"format-case", HEAD "gray32f 3 3 0 640x480 0.1 tiled\n", 0,
      "bad:3: unknown format"},
  {"kw-zero", HEAD "GRAY32F 0 3 0 640x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"kw-large", HEAD "GRAY32F 1024 3 0 640x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"kh-large", HEAD "GRAY32F 3 5000 0 640x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"kw-negative", HEAD "GRAY32F -3 3 0 640x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"kw-fraction", HEAD "GRAY32F 3.5 3 0 640x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"sep-2", HEAD "GRAY32F 3 3 2 640x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"width-zero", HEAD "GRAY32F 3 3 0 0x480 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"height-large", HEAD "GRAY32F 3 3 0 640x32768 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"size-no-x", HEAD "GRAY32F 3 3 0 640 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"size-no-height", HEAD "GRAY32F 3 3 0 640x 0.1 tiled\n", 0,
      "bad:3: bad size fields"},
  {"ms-word", HEAD "GRAY32F 3 3 0 640x480 fast tiled\n", 0,
      "bad:3: bad time 'fast'"},
  {"ms-negative", HEAD "GRAY32F 3 3 0 640x480 -0.1 tiled\n", 0,
      "bad:3: bad time"},
  {"ms-nan", HEAD "GRAY32F 3 3 0 640x480 nan tiled\n", 0,
      "bad:3: bad time"},
  {"ms-inf", HEAD "GRAY32F 3 3 0 640x480 inf tiled\n", 0,
      "bad:3: bad time"},
  {"ms-unit", HEAD "GRAY32F 3 3 0 640x480 0.1ms tiled\n", 0,
      "bad:3: bad time"},
  {"family", HEAD "GRAY32F 3 3 0 640x480 0.1 winograd\n", 0,
      "bad:3: unknown kernel family 'winograd'"},
  {"family-auto", HEAD "GRAY32F 3 3 0 640x480 0.1 auto\n", 0,
      "bad:3: unknown kernel family"},
  {"parameter-zero", HEAD "GRAY32F 3 3 0 640x480 0.1 tiled ty=0\n", 0,
      "bad:3: bad parameter 'ty=0'"},
  {"parameter-word", HEAD "GRAY32F 3 3 0 640x480 0.1 register p=x "
        "block=128\n", 0, "bad:3: bad parameter 'p=x'"},
  {"parameter-other-family", HEAD "GRAY32F 3 3 0 640x480 0.1 tiled p=4\n",
      0, "bad:3: bad parameter 'p=4'"},
  {"missing-variant", HEAD "GRAY32F 3 3 0 640x480 0.1\n", 0,
      "bad:3: expected"},
  {"missing-fields", HEAD "GRAY32F 3 3 640x480 tiled\n", 0,
      "bad:3: expected"},
  {"later-line", HEAD "GRAY32F 3 3 0 640x480 0.1 tiled\n\n"
        "GRAY32F 5 5 0 640x480 0.1 tiled ty=9999\n", 0, "bad:5: bad "
        "parameter"},
};

static void
test_parse_garbage (gconstpointer data)
{
  const Garbage *g = data;
  gsize len = g->len ? g->len : strlen (g->text);
  GError *error = NULL;
  GcvTuningTable *t = gcv_tuning_table_parse (g->text, len, "bad", &error);

  g_assert_null (t);
  g_assert_error (error, GCV_ERROR, GCV_ERROR_SETTINGS);
  if (!strstr (error->message, g->expect))
    g_error ("%s: '%s' does not say '%s'", g->name, error->message,
        g->expect);
  /* every message names where the table came from */
  g_assert_true (g_str_has_prefix (error->message, "bad:"));
  g_error_free (error);
}

static void
test_parse_long_line (void)
{
  GString *s = g_string_new ("gpu: Test GPU\n# ");
  GError *error = NULL;
  GcvTuningTable *t;

  for (guint i = 0; i < 600; i++)
    g_string_append_c (s, 'x');
  g_string_append (s, "\nGRAY32F 3 3 0 640x480 0.1 tiled\n");
  t = gcv_tuning_table_parse (s->str, s->len, "long", &error);
  g_assert_null (t);
  g_assert_error (error, GCV_ERROR, GCV_ERROR_SETTINGS);
  g_assert_nonnull (strstr (error->message, "long:2: line too long"));
  g_error_free (error);
  g_string_free (s, TRUE);
}

/* --- saving and loading --------------------------------------------------- */

static void
add_row (GcvTuningTable * t, GcvFormat format, guint kw, guint kh,
    gboolean sep, guint width, guint height, double ms, const char *variant)
{
  GcvTuningRow row;

  memset (&row, 0, sizeof (row));
  row.key.format = format;
  row.key.kw = kw;
  row.key.kh = kh;
  row.key.separable = sep;
  row.key.width = width;
  row.key.height = height;
  row.ms = ms;
  g_assert_true (gcv_variant_parse (variant, &row.variant, NULL));
  g_array_append_val (t->rows, row);
}

static void
assert_tables_equal (const GcvTuningTable * a, const GcvTuningTable * b)
{
  g_assert_cmpstr (a->gpu, ==, b->gpu);
  g_assert_cmpstr (a->arch, ==, b->arch);
  g_assert_cmpuint (a->rows->len, ==, b->rows->len);
  for (guint i = 0; i < a->rows->len; i++) {
    const GcvTuningRow *x = &g_array_index (a->rows, GcvTuningRow, i);
    const GcvTuningRow *y = &g_array_index (b->rows, GcvTuningRow, i);
    g_assert_cmpint (x->key.format, ==, y->key.format);
    g_assert_cmpuint (x->key.kw, ==, y->key.kw);
    g_assert_cmpuint (x->key.kh, ==, y->key.kh);
    g_assert_cmpint (!!x->key.separable, ==, !!y->key.separable);
    g_assert_cmpuint (x->key.width, ==, y->key.width);
    g_assert_cmpuint (x->key.height, ==, y->key.height);
    /* written with 4 decimals */
    g_assert_cmpfloat_with_epsilon (x->ms, y->ms, 0.5e-4);
    g_assert_cmpint (x->variant.family, ==, y->variant.family);
    g_assert_cmpint (x->variant.rows, ==, y->variant.rows);
    g_assert_cmpint (!!x->variant.adaptive, ==, !!y->variant.adaptive);
    g_assert_cmpint (!!x->variant.two_pass, ==, !!y->variant.two_pass);
    g_assert_cmpint (x->variant.lane_outputs, ==, y->variant.lane_outputs);
    g_assert_cmpint (x->variant.block, ==, y->variant.block);
    g_assert_cmpint (x->variant.fft_prime, ==, y->variant.fft_prime);
  }
}

static void
test_round_trip (void)
{
  GcvTuningTable *t = gcv_tuning_table_new ("NVIDIA Test GPU", "sm_90");
  GcvTuningTable *back, *reparsed;
  GError *error = NULL;
  gchar *dir, *path, *text;

  add_row (t, GCV_FORMAT_GRAY32F, 1, 1, FALSE, 1280, 720, 0.0123, "direct");
  add_row (t, GCV_FORMAT_GRAY32F, 9, 9, FALSE, 4096, 4096, 0.25,
      "tiled ty=4");
  add_row (t, GCV_FORMAT_GRAY32F, 17, 17, FALSE, 1920, 1080, 0.1,
      "tiled");
  add_row (t, GCV_FORMAT_RGBA, 3, 15, FALSE, 1920, 1080, 0.0456,
      "register p=4 block=256");
  add_row (t, GCV_FORMAT_RGBA, 31, 31, TRUE, 3840, 2160, 0.75,
      "separable fused ty=8");
  add_row (t, GCV_FORMAT_RGBA, 127, 127, TRUE, 4096, 4096, 12.3456,
      "separable two-pass");
  add_row (t, GCV_FORMAT_GRAY32F, 63, 63, FALSE, 3840, 2160, 1.5, "fft");

  dir = g_dir_make_tmp ("gcv-test-XXXXXX", &error);
  g_assert_no_error (error);
  /* folders on the way are made */
  path = g_build_filename (dir, "sub", "table.tbl", NULL);
  g_assert_true (gcv_tuning_table_save (t, path, &error));
  g_assert_no_error (error);
  back = gcv_tuning_table_load (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (back);
  assert_tables_equal (t, back);

  /* the text form parses to the same table, and is written the same
   * again */
  text = gcv_tuning_table_to_string (t);
  reparsed = gcv_tuning_table_parse (text, strlen (text), "text", &error);
  g_assert_no_error (error);
  assert_tables_equal (t, reparsed);
  {
    gchar *again = gcv_tuning_table_to_string (reparsed);
    g_assert_cmpstr (again, ==, text);
    g_free (again);
  }

  /* a file that is not there */
  {
    gchar *missing = g_build_filename (dir, "missing.tbl", NULL);
    g_assert_null (gcv_tuning_table_load (missing, &error));
    g_assert_error (error, GCV_ERROR, GCV_ERROR_SETTINGS);
    g_clear_error (&error);
    g_free (missing);
  }

  g_remove (path);
  {
    gchar *sub = g_build_filename (dir, "sub", NULL);
    g_rmdir (sub);
    g_free (sub);
  }
  g_rmdir (dir);
  g_free (text);
  g_free (path);
  g_free (dir);
  gcv_tuning_table_free (t);
  gcv_tuning_table_free (back);
  gcv_tuning_table_free (reparsed);
}

/* --- lookup --------------------------------------------------------------- */

static const GcvTuningRow *
lookup (const GcvTuningTable * t, GcvFormat format, guint kw, guint kh,
    gboolean sep, guint width, guint height)
{
  GcvDispatchKey key = { format, kw, kh, sep, width, height };
  return gcv_tuning_table_lookup (t, &key);
}

static guint
row_index (const GcvTuningTable * t, const GcvTuningRow * r)
{
  g_assert_nonnull (r);
  return (guint) (r - &g_array_index (t->rows, GcvTuningRow, 0));
}

static void
test_lookup (void)
{
  GcvTuningTable *t = gcv_tuning_table_new ("Test GPU", "sm_90");

  /* 0 */ add_row (t, GCV_FORMAT_GRAY32F, 3, 3, FALSE, 1920, 1080, 0.01,
      "tiled ty=2");
  /* 1 */ add_row (t, GCV_FORMAT_GRAY32F, 15, 15, FALSE, 1920, 1080, 0.1,
      "register p=8 block=128");
  /* 2 */ add_row (t, GCV_FORMAT_GRAY32F, 15, 15, FALSE, 4096, 4096, 0.8,
      "tiled ty=4");
  /* 3 */ add_row (t, GCV_FORMAT_GRAY32F, 3, 15, FALSE, 1920, 1080, 0.05,
      "tiled ty=1");
  /* 4 */ add_row (t, GCV_FORMAT_GRAY32F, 5, 5, TRUE, 1920, 1080, 0.02,
      "separable fused ty=4");
  /* 5 */ add_row (t, GCV_FORMAT_RGBA, 9, 9, FALSE, 1280, 720, 0.05,
      "tiled ty=1");
  /* 6 */ add_row (t, GCV_FORMAT_GRAY32F, 63, 63, FALSE, 1920, 1080, 1.0,
      "fft");

  /* exact keys */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 15, 15,
              FALSE, 4096, 4096)), ==, 2);
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 3, 15,
              FALSE, 1920, 1080)), ==, 3);
  /* 4x4: log(4/3) is nearer than log(15/4) */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 4, 4,
              FALSE, 1920, 1080)), ==, 0);
  /* 13x13 on 3840x2160: the kernel term ties, the 4096x4096 row is nearer
   * in pixels (2x) than the 1920x1080 one (4x) */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 13, 13,
              FALSE, 3840, 2160)), ==, 2);
  /* 15x15 on 1280x720: the kernel size counts more than the frame size */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 15, 15,
              FALSE, 1280, 720)), ==, 1);
  /* 3x13: the non-square row */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 3, 13,
              FALSE, 1920, 1080)), ==, 3);
  /* 51x51: the largest kernel row */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 51, 51,
              FALSE, 2560, 1440)), ==, 6);
  /* separable keys only find separable rows, whatever their size */
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_GRAY32F, 127, 127,
              TRUE, 640, 480)), ==, 4);
  g_assert_cmpuint (row_index (t, lookup (t, GCV_FORMAT_RGBA, 3, 3, FALSE,
              3840, 2160)), ==, 5);
  /* no row of that format and separable flag */
  g_assert_null (lookup (t, GCV_FORMAT_RGBA, 9, 9, TRUE, 1280, 720));
  g_assert_null (lookup (t, GCV_FORMAT_GRAY8, 3, 3, FALSE, 1920, 1080));
  {
    GcvDispatchKey key = { GCV_FORMAT_GRAY32F, 3, 3, FALSE, 1920, 1080 };
    g_assert_null (gcv_tuning_table_lookup (NULL, &key));
  }
  gcv_tuning_table_free (t);
}

/* --- file names and where tables are found -------------------------------- */

static void
test_file_name (void)
{
  static const struct {
    const char *gpu, *name;
  } cases[] = {
    {"NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3.tbl"},
    {"NVIDIA H200", "nvidia-h200.tbl"},
    {"NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090.tbl"},
    {"  NVIDIA  A100-SXM4-40GB  ", "nvidia-a100-sxm4-40gb.tbl"},
    {"NVIDIA H100 (MIG 1g.10gb)", "nvidia-h100-mig-1g-10gb.tbl"},
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++) {
    gchar *name = gcv_tuning_file_name (cases[i].gpu);
    g_assert_cmpstr (name, ==, cases[i].name);
    g_free (name);
  }
}

static gchar *
write_file (const char *dir, const char *name, const char *text)
{
  gchar *path = g_build_filename (dir, name, NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static const char *
found_gpu (GcvTuningTable * t)
{
  static gchar *gpu;
  g_free (gpu);
  gpu = t ? g_strdup (t->gpu) : NULL;
  gcv_tuning_table_free (t);
  return gpu;
}

static void
test_find (void)
{
  /* G_TEST_OPTION_ISOLATE_DIRS: the cache folder is this test's own */
  const char *gpu = "Test GPU 1234";
  gchar *name = gcv_tuning_file_name (gpu);
  gchar *cache = g_build_filename (g_get_user_cache_dir (), "gpuconvolve",
      NULL);
  gchar *base = g_path_get_dirname (g_get_user_cache_dir ());
  gchar *shipped = g_build_filename (base, "shipped", NULL);
  gchar *nowhere = g_build_filename (base, "nowhere", NULL);
  gchar *path_env = g_strjoin (G_SEARCHPATH_SEPARATOR_S, nowhere, shipped,
      NULL);
  gchar *cached, *shipped_file, *own;
  const gchar *source = NULL;
  GError *error = NULL;

  g_setenv ("GPUCONVOLVE_TUNING_PATH", path_env, TRUE);
  g_assert_null (gcv_tuning_find (NULL, gpu, &source, &error));
  g_assert_no_error (error);

  shipped_file = write_file (shipped, name, "gpu: shipped\n"
      "GRAY32F 3 3 0 640x480 0.1 tiled\n");
  g_assert_cmpstr (found_gpu (gcv_tuning_find (NULL, gpu, &source,
              &error)), ==, "shipped");
  g_assert_no_error (error);
  g_assert_cmpstr (source, ==, "shipped");

  /* the user cache comes first */
  cached = write_file (cache, name, "gpu: cached\n"
      "GRAY32F 3 3 0 640x480 0.1 tiled\n");
  g_assert_cmpstr (found_gpu (gcv_tuning_find (NULL, gpu, &source,
              &error)), ==, "cached");
  g_assert_cmpstr (source, ==, "cache");

  /* a broken cached table is passed over */
  g_assert_true (g_file_set_contents (cached, "garbage\n", -1, NULL));
  g_assert_cmpstr (found_gpu (gcv_tuning_find (NULL, gpu, &source,
              &error)), ==, "shipped");
  g_assert_no_error (error);
  g_assert_cmpstr (source, ==, "shipped");

  /* a table of another GPU's name is not looked at */
  g_assert_null (gcv_tuning_find (NULL, "Other GPU", &source, &error));
  g_assert_no_error (error);

  /* a tuning file comes before all, and must be usable */
  own = write_file (base, "own.tbl", "gpu: own\n"
      "GRAY32F 3 3 0 640x480 0.1 tiled\n");
  g_assert_cmpstr (found_gpu (gcv_tuning_find (own, gpu, &source,
              &error)), ==, "own");
  g_assert_cmpstr (source, ==, "tuning-file");
  g_assert_true (g_file_set_contents (own, "gpu: own\nGRAY32F 3 3\n", -1,
          NULL));
  g_assert_null (gcv_tuning_find (own, gpu, &source, &error));
  g_assert_error (error, GCV_ERROR, GCV_ERROR_SETTINGS);
  g_assert_nonnull (strstr (error->message, ":2:"));
  g_clear_error (&error);
  g_remove (own);
  g_assert_null (gcv_tuning_find (own, gpu, &source, &error));
  g_assert_error (error, GCV_ERROR, GCV_ERROR_SETTINGS);
  g_clear_error (&error);

  g_unsetenv ("GPUCONVOLVE_TUNING_PATH");
  found_gpu (NULL);
  g_remove (cached);
  g_remove (shipped_file);
  g_free (cached);
  g_free (shipped_file);
  g_free (own);
  g_free (path_env);
  g_free (nowhere);
  g_free (shipped);
  g_free (base);
  g_free (cache);
  g_free (name);
}

/* --- the heuristic -------------------------------------------------------- */

/* An H100-like device with round numbers: 30 TFMA/s, 3 TB/s. */
static void
device (GcvDeviceInfo * dev)
{
  memset (dev, 0, sizeof (*dev));
  dev->name = (gchar *) "Test GPU";
  dev->major = 9;
  dev->minor = 0;
  dev->sm_count = 132;
  dev->smem_per_sm = 228 * 1024;
  dev->smem_per_block = 227 * 1024;
  dev->fma_per_s = 30e12;
  dev->bytes_per_s = 3e12;
}

/* The crossover as gcv_dispatch_prefers_fft() documents it: direct 2D
 * costs the larger of its arithmetic, kw*kh FMAs per output sample and
 * filtered channel at a share of the FMA rate (GRAY_FMA_SHARE for one
 * channel, RGBA_FMA_SHARE for the RGBA family), and its traffic, one sample
 * read and one written (4 bytes each, 1 for GRAY8). FFT costs its best
 * tile: T x T planes (T a power of two from 128 to 1024, at least twice
 * the kernel), one per tile and channel, the tiles (T - kw + 1) apart
 * across and (T - kh + 1) down over the frame, each point some bytes of
 * traffic at the memory bandwidth (tile_bytes()), plus FFT_FRAME_SECONDS.
 * RGBA-family frames filter 3 channels. The constants follow its comment. */
#define GRAY_FMA_SHARE 0.6         /* kernel unrolled for the width */
#define RGBA_FMA_SHARE 0.4
#define GRAY_FMA_SHARE_ADAPTIVE 0.17    /* no such kernel: adaptive tiling */
#define RGBA_FMA_SHARE_ADAPTIVE 0.15
#define FFT_FRAME_SECONDS 25e-6

static double
tile_bytes (int t)
{
  switch (t) {
    case 128:
      return 77.0;
    case 256:
      return 83.0;
    case 512:
      return 88.0;
    default:
      return 80.0;
  }
}

/* the best tile's time, and that tile in *best */
static double
fft_seconds (double channels, guint kw, guint kh, guint width, guint height,
    const GcvDeviceInfo * dev, int *best)
{
  double least = 1e30;

  for (int t = 128; t <= 1024; t *= 2) {
    double tiles, s;
    if (t < 2 * (int) kw || t < 2 * (int) kh)
      continue;
    tiles = ceil ((double) width / (t - kw + 1)) *
        ceil ((double) height / (t - kh + 1));
    s = tiles * t * t * channels * tile_bytes (t) / dev->bytes_per_s
        + FFT_FRAME_SECONDS;
    if (s < least) {
      least = s;
      *best = t;
    }
  }
  return least;
}

static gboolean
fft_expected (GcvFormat format, guint kw, guint kh, guint width,
    guint height, gboolean unrolled, const GcvDeviceInfo * dev)
{
  gboolean gray = format == GCV_FORMAT_GRAY8 || format == GCV_FORMAT_GRAY32F;
  double channels = gray ? 1.0 : 3.0;
  double sample_bytes = format == GCV_FORMAT_GRAY8 ? 2.0 : 8.0;
  double pixels = (double) width * height;
  double share = gray ? (unrolled ? GRAY_FMA_SHARE : GRAY_FMA_SHARE_ADAPTIVE)
      : (unrolled ? RGBA_FMA_SHARE : RGBA_FMA_SHARE_ADAPTIVE);
  double arithmetic = pixels * channels * kw * kh / (share * dev->fma_per_s);
  double traffic = pixels * sample_bytes / dev->bytes_per_s;
  double direct = arithmetic > traffic ? arithmetic : traffic;
  int tile;

  return fft_seconds (channels, kw, kh, width, height, dev, &tile) < direct;
}

static GcvFamily
heuristic_unrolled (GcvFormat format, guint kw, guint kh, gboolean sep,
    guint width, guint height, gboolean unrolled)
{
  GcvDispatchKey key = { format, kw, kh, sep, width, height, unrolled };
  GcvDeviceInfo dev;
  GcvVariant v;
  gchar *s;

  device (&dev);
  gcv_dispatch_heuristic (&key, &dev, &v);
  /* whatever it picks can be written and read back */
  s = gcv_variant_to_string (&v);
  g_assert_true (g_str_has_prefix (s, gcv_family_nick (v.family)));
  {
    GcvVariant back;
    g_assert_true (gcv_variant_parse (s, &back, NULL));
    g_assert_cmpint (back.family, ==, v.family);
  }
  g_free (s);
  return v.family;
}

/* Keys where no unrolled tiled kernel exists */
static GcvFamily
heuristic (GcvFormat format, guint kw, guint kh, gboolean sep, guint width,
    guint height)
{
  return heuristic_unrolled (format, kw, kh, sep, width, height, FALSE);
}

/* Cases far from the crossover, worked out with the constants above. */
static void
test_heuristic_cases (void)
{
  GcvDeviceInfo dev;

  device (&dev);
  /* rank 1: the separable path, however large the kernel */
  g_assert_cmpint (heuristic (GCV_FORMAT_GRAY32F, 5, 5, TRUE, 1920, 1080),
      ==, GCV_FAMILY_SEPARABLE);
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 127, 127, TRUE, 4096, 4096),
      ==, GCV_FAMILY_SEPARABLE);
  g_assert_cmpint (heuristic (GCV_FORMAT_GRAY32F, 1, 31, TRUE, 1280, 720),
      ==, GCV_FAMILY_SEPARABLE);
  /* the RGBA family: fused at 3x3, tiled at 4x4 (no fused kernel), two
   * passes or fused from 5 taps each way */
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 3, 3, TRUE, 3840, 2160),
      ==, GCV_FAMILY_SEPARABLE);
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 4, 4, TRUE, 2560, 1440),
      ==, GCV_FAMILY_TILED);
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 5, 5, TRUE, 3840, 2160),
      ==, GCV_FAMILY_SEPARABLE);
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 12, 5, TRUE, 3840, 2160),
      ==, GCV_FAMILY_SEPARABLE);

  /* GRAY32F 3x3 at 1920x1080, adaptive: direct is bound by its traffic,
   * 2073600 * 8 / 3e12 = 5.5 us (arithmetic 2073600 * 9 / 5.1e12 = 3.7 us);
   * FFT at least its 25 us per frame: tiled */
  g_assert_false (fft_expected (GCV_FORMAT_GRAY32F, 3, 3, 1920, 1080, FALSE,
          &dev));
  g_assert_cmpint (heuristic (GCV_FORMAT_GRAY32F, 3, 3, FALSE, 1920, 1080),
      ==, GCV_FAMILY_TILED);
  g_assert_cmpint (heuristic_unrolled (GCV_FORMAT_RGBA, 5, 5, FALSE, 3840,
          2160, TRUE), ==, GCV_FAMILY_TILED);
  /* tiled's rows: four for the RGBA family (one for a kernel one row
   * tall), two for one channel */
  {
    GcvDispatchKey rgba = { GCV_FORMAT_RGBA, 7, 7, FALSE, 3840, 2160, TRUE };
    GcvDispatchKey flat = { GCV_FORMAT_RGBA, 31, 1, FALSE, 3840, 2160, TRUE };
    GcvDispatchKey gray = { GCV_FORMAT_GRAY32F, 7, 7, FALSE, 3840, 2160, TRUE };
    GcvVariant v;

    gcv_dispatch_heuristic (&rgba, &dev, &v);
    g_assert_cmpint (v.family, ==, GCV_FAMILY_TILED);
    g_assert_cmpint (v.rows, ==, 4);
    gcv_dispatch_heuristic (&flat, &dev, &v);
    g_assert_cmpint (v.family, ==, GCV_FAMILY_TILED);
    g_assert_cmpint (v.rows, ==, 1);
    gcv_dispatch_heuristic (&gray, &dev, &v);
    g_assert_cmpint (v.family, ==, GCV_FAMILY_TILED);
    g_assert_cmpint (v.rows, ==, 2);
  }
  /* RGBA-family widths with no unrolled kernel: adaptive tiling (the
   * register cache lost there once RGBA filtered three channels) */
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 2, 7, FALSE, 3840, 2160),
      ==, GCV_FAMILY_TILED);
  g_assert_cmpint (heuristic (GCV_FORMAT_BGRX, 4, 4, FALSE, 1280, 720),
      ==, GCV_FAMILY_TILED);
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 10, 10, FALSE, 3840, 2160),
      ==, GCV_FAMILY_TILED);
  g_assert_cmpint (heuristic (GCV_FORMAT_GRAY32F, 4, 4, FALSE, 1280, 720),
      ==, GCV_FAMILY_TILED);

  /* RGBA 15x15 at 3840x2160 (3 channels on both sides), unrolled: direct
   * 8294400 * 3 * 225 / 12e12 = 0.47 ms; FFT: tiles of 256, 242 valid,
   * 16 x 9 of them, 144 * 3 * 65536 * 83 / 3e12 + 25 us = 0.81 ms (128:
   * 34 x 19 tiles, 0.84 ms): tiled. Adaptive: direct 8294400 * 3 * 225 /
   * 4.5e12 = 1.24 ms: fft */
  g_assert_false (fft_expected (GCV_FORMAT_RGBA, 15, 15, 3840, 2160, TRUE,
          &dev));
  g_assert_cmpint (heuristic_unrolled (GCV_FORMAT_RGBA, 15, 15, FALSE, 3840,
          2160, TRUE), ==, GCV_FAMILY_TILED);
  g_assert_true (fft_expected (GCV_FORMAT_RGBA, 15, 15, 3840, 2160, FALSE,
          &dev));
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 15, 15, FALSE, 3840, 2160),
      ==, GCV_FAMILY_FFT);

  /* GRAY32F 63x63 at 4096x4096, adaptive: direct 16777216 * 3969 / 5.1e12
   * = 13.1 ms (unrolled, / 18e12: 3.70 ms); FFT: tiles of 1024, 962
   * valid, 5 x 5 of them, 25 * 1048576 * 80 / 3e12 + 25 us = 0.72 ms (512:
   * 10 x 10 tiles, 0.79 ms): fft */
  g_assert_true (fft_expected (GCV_FORMAT_GRAY32F, 63, 63, 4096, 4096,
          FALSE, &dev));
  g_assert_cmpint (heuristic (GCV_FORMAT_GRAY32F, 63, 63, FALSE, 4096,
          4096), ==, GCV_FAMILY_FFT);

  /* RGBA 63x63 at 3840x2160, adaptive: direct 8294400 * 3 * 3969 / 3e12
   * = 32.9 ms; FFT: tiles of 1024, 4 x 3 of them, 12 * 3 * 1048576 * 80 /
   * 3e12 + 25 us = 1.03 ms: fft */
  g_assert_true (fft_expected (GCV_FORMAT_RGBA, 63, 63, 3840, 2160, FALSE,
          &dev));
  /* GRAY32F 35x35 at 1280x720, run 43 wide: direct 921600 * 43 * 35 /
   * 18e12 = 77 us (35 wide it would be 63 us); FFT: tiles of 256, 222
   * valid, 6 x 4 of them, 24 * 65536 * 83 / 3e12 + 25 us = 69 us (128:
   * 72 us): fft */
  {
    GcvDispatchKey key = { GCV_FORMAT_GRAY32F, 35, 35, FALSE, 1280, 720,
      TRUE, 43
    };
    g_assert_true (gcv_dispatch_prefers_fft (&key, &dev));
    key.unrolled_kw = 35;
    g_assert_false (gcv_dispatch_prefers_fft (&key, &dev));
  }
  g_assert_cmpint (heuristic (GCV_FORMAT_RGBA, 63, 63, FALSE, 3840, 2160),
      ==, GCV_FAMILY_FFT);
}

/* What the heuristic picks for a 2D kernel, given the crossover: the FFT
 * or tiled. */
static GcvFamily
expected_2d (const GcvDispatchKey * key, gboolean fft)
{
  if (key->kw == 1)
    return GCV_FAMILY_TILED;    /* its column pass */
  return fft ? GCV_FAMILY_FFT : GCV_FAMILY_TILED;
}

/* The whole grid against the formula. */
static void
test_heuristic_formula (void)
{
  static const GcvFormat formats[] = { GCV_FORMAT_GRAY32F, GCV_FORMAT_RGBA,
    GCV_FORMAT_BGRX, GCV_FORMAT_GRAY8
  };
  static const guint sizes[][2] = { {320, 240}, {1280, 720}, {1920, 1080},
  {2560, 1440}, {3840, 2160}, {4096, 4096}
  };
  static const guint shapes[][2] = { {1, 1}, {3, 3}, {5, 5}, {9, 9},
  {15, 15}, {17, 17}, {19, 19}, {21, 21}, {23, 23}, {25, 25}, {31, 31},
  {43, 43}, {63, 63}, {127, 127}, {3, 15}, {15, 3}, {1, 31}, {31, 1},
  {5, 9}, {9, 5}, {2, 7}, {12, 5}, {4, 4}, {51, 51}, {255, 255}
  };
  GcvDeviceInfo dev;
  guint n_fft = 0, n_tiled = 0;

  device (&dev);
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint z = 0; z < G_N_ELEMENTS (sizes); z++)
      for (guint s = 0; s < G_N_ELEMENTS (shapes); s++) {
        GcvDispatchKey key = { formats[f], shapes[s][0], shapes[s][1], FALSE,
          sizes[z][0], sizes[z][1], FALSE
        };
        gboolean fft = fft_expected (key.format, key.kw, key.kh, key.width,
            key.height, FALSE, &dev);
        GcvFamily got = heuristic (key.format, key.kw, key.kh, FALSE,
            key.width, key.height);
        if (!!gcv_dispatch_prefers_fft (&key, &dev) != !!fft
            || got != expected_2d (&key, fft))
          g_error ("%s %ux%u %ux%u: expected %s, the heuristic says %s",
              gcv_format_name (key.format), key.width, key.height, key.kw,
              key.kh, gcv_family_nick (expected_2d (&key, fft)),
              gcv_family_nick (got));
        if (fft) {
          int tile = 0;
          fft_seconds (gcv_format_channels (key.format) == 1 ? 1.0 : 3.0,
              key.kw, key.kh, key.width, key.height, &dev, &tile);
          g_assert_cmpint (gcv_dispatch_fft_tile (&key, &dev), ==, tile);
          n_fft++;
        } else {
          n_tiled++;
        }
        /* a rank-1 kernel: the separable paths one tap wide (the column
         * pass); odd squares (fused) from 5x5 for one channel and from 3x3
         * for the RGBA family; others from 9 taps each way, or 5 where the
         * width has no unrolled kernel (as here); never one tap tall; else
         * the 2D choice */
        {
          guint least = MIN (key.kw, key.kh);
          gboolean one_channel = key.format == GCV_FORMAT_GRAY8
              || key.format == GCV_FORMAT_GRAY32F;
          gboolean fused = key.kw == key.kh && key.kw % 2 == 1;
          gboolean sep = key.kw == 1 || (key.kh > 1 && (fused ?
                  least >= (one_channel ? 5u : 3u) :
                  least >= (key.unrolled ? 9u : 5u)));
          g_assert_cmpint (heuristic (key.format, key.kw, key.kh, TRUE,
                  key.width, key.height), ==,
              sep ? GCV_FAMILY_SEPARABLE : expected_2d (&key, fft));
        }
      }
  /* the grid has both sides of the crossover */
  g_assert_cmpuint (n_fft, >, 0);
  g_assert_cmpuint (n_tiled, >, 0);
}

/* --- the choice ----------------------------------------------------------- */

/* Limits where every family runs with every row count. */
static void
all_fit (GcvFamilyLimits * l)
{
  memset (l, 0, sizeof (*l));
  l->unrolled_rows = l->fused_rows = (1u << 1) | (1u << 2) | (1u << 4)
      | (1u << 8);
  l->adaptive_rows = 4;
  l->register_fits = TRUE;
}

/* Chooses, and returns what runs as text. */
static gchar *
choose (const GcvDispatchKey * key, const GcvFamilyLimits * l,
    const GcvTuningTable * table, GcvFamily requested,
    const gchar * forced, gboolean rank1, GcvChoice * c)
{
  GcvDeviceInfo dev;
  GcvVariant f;

  device (&dev);
  if (forced)
    g_assert_true (gcv_variant_parse (forced, &f, NULL));
  gcv_dispatch_choose (key, &dev, l, table, requested, forced ? &f : NULL,
      rank1, c);
  return gcv_variant_to_string (&c->variant);
}

static void
assert_choice (const GcvDispatchKey * key, const GcvFamilyLimits * l,
    const GcvTuningTable * table, GcvFamily requested,
    const gchar * forced, gboolean rank1, const gchar * want,
    GcvChoiceSource source, GcvFallback fallback)
{
  GcvChoice c;
  gchar *got = choose (key, l, table, requested, forced, rank1, &c);

  g_assert_cmpstr (got, ==, want);
  g_assert_cmpint (c.source, ==, source);
  g_assert_cmpint (c.fallback, ==, fallback);
  g_free (got);
}

static void
test_choice (void)
{
  GcvDispatchKey small = { GCV_FORMAT_GRAY32F, 5, 5, FALSE, 1920, 1080, 0 };
  GcvDispatchKey sep = { GCV_FORMAT_GRAY32F, 9, 9, TRUE, 1920, 1080, 0 };
  GcvFamilyLimits l;
  GcvTuningTable *t = gcv_tuning_table_new ("test GPU", "sm_90");
  GcvChoice c;

  all_fit (&l);
  /* the heuristic: unrolled tiled for a small 2D kernel, fused separable
   * for a rank-1 one */
  assert_choice (&small, &l, NULL, GCV_FAMILY_AUTO, NULL, FALSE,
      "tiled ty=2", GCV_SOURCE_HEURISTIC, GCV_FALLBACK_NONE);
  assert_choice (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE,
      "separable fused ty=4", GCV_SOURCE_HEURISTIC, GCV_FALLBACK_NONE);
  /* but 2D for rank-1 kernels 3 taps wide or tall (but the RGBA family's
   * 3x3), for one channel below 9 taps each way unless square or of a
   * width with no unrolled tiled kernel (12 here), and for the RGBA family
   * at 4x4; one tap wide, the
   * column pass (separable or tiled: either runs it); one tap tall, tiled */
  {
    static const struct
    {
      GcvFormat format;
      guint kw, kh;
      GcvFamily family;
    } rank1[] = {
      {GCV_FORMAT_GRAY32F, 3, 3, GCV_FAMILY_TILED},
      {GCV_FORMAT_GRAY32F, 3, 15, GCV_FAMILY_TILED},
      {GCV_FORMAT_GRAY32F, 15, 3, GCV_FAMILY_TILED},
      {GCV_FORMAT_GRAY32F, 5, 5, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_GRAY32F, 5, 9, GCV_FAMILY_TILED},
      {GCV_FORMAT_GRAY32F, 9, 13, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_GRAY32F, 12, 5, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_RGBA, 3, 3, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_RGBA, 4, 4, GCV_FAMILY_TILED},
      {GCV_FORMAT_RGBA, 5, 5, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_RGBA, 12, 5, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_RGBA, 7, 7, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_GRAY32F, 1, 31, GCV_FAMILY_SEPARABLE},
      {GCV_FORMAT_GRAY8, 31, 1, GCV_FAMILY_TILED},
    };
    for (guint i = 0; i < G_N_ELEMENTS (rank1); i++) {
      GcvDispatchKey k = { rank1[i].format, rank1[i].kw, rank1[i].kh, TRUE,
        1920, 1080, FALSE
      };
      /* what tiled has unrolled for the width (a bit set: an instance) */
      l.unrolled_rows = rank1[i].kw == 12 ? 0 : 1u << 2;
      g_free (choose (&k, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
      g_assert_cmpint (c.variant.family, ==, rank1[i].family);
      /* separable=always keeps them on the separable paths, and
       * separable=never gives a kernel one tap wide to tiled's column
       * pass */
      k.separable_only = TRUE;
      g_free (choose (&k, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
      g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_SEPARABLE);
      k.separable_only = FALSE;
      k.separable = FALSE;
      g_free (choose (&k, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
      if (rank1[i].kw == 1)
        g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
      g_assert_cmpint (c.variant.family, !=, GCV_FAMILY_SEPARABLE);
    }
    all_fit (&l);
  }
  /* a table row, where it can run */
  add_row (t, GCV_FORMAT_GRAY32F, 5, 5, FALSE, 1920, 1080, 0.1,
      "register p=4 block=64");
  assert_choice (&small, &l, t, GCV_FAMILY_AUTO, NULL, FALSE,
      "register p=4 block=64", GCV_SOURCE_TABLE, GCV_FALLBACK_NONE);
  /* a rank-1 kernel's row holds whichever family was fastest
   * (docs/properties.md, `separable`), unless separable=always asks for the
   * separable paths */
  add_row (t, GCV_FORMAT_GRAY32F, 9, 9, TRUE, 1920, 1080, 0.1, "tiled ty=4");
  assert_choice (&sep, &l, t, GCV_FAMILY_AUTO, NULL, TRUE,
      "tiled ty=4", GCV_SOURCE_TABLE, GCV_FALLBACK_NONE);
  sep.separable_only = TRUE;
  assert_choice (&sep, &l, t, GCV_FAMILY_AUTO, NULL, TRUE,
      "separable fused ty=4", GCV_SOURCE_HEURISTIC, GCV_FALLBACK_NONE);
  sep.separable_only = FALSE;
  /* the requested family over the table */
  assert_choice (&small, &l, t, GCV_FAMILY_DIRECT, NULL, FALSE, "direct",
      GCV_SOURCE_REQUESTED, GCV_FALLBACK_NONE);
  /* forced over everything */
  assert_choice (&small, &l, t, GCV_FAMILY_DIRECT, "tiled ty=8", FALSE,
      "tiled ty=8", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);

  /* fallbacks: separable for a kernel that is not rank 1, register where
   * it has no instance; both to tiled */
  assert_choice (&small, &l, NULL, GCV_FAMILY_SEPARABLE, NULL, FALSE,
      "tiled ty=2", GCV_SOURCE_REQUESTED, GCV_FALLBACK_NOT_RANK1);
  l.register_fits = FALSE;
  assert_choice (&small, &l, NULL, GCV_FAMILY_REGISTER, NULL, FALSE,
      "tiled ty=2", GCV_SOURCE_REQUESTED, GCV_FALLBACK_REGISTER_SIZE);

  /* tiled: rows the unrolled kernels lack (not compiled, or not fitting)
   * go to the nearest they have, the fewer first; with none, adaptive,
   * with the rows adaptive tiling takes; no tile at all goes direct */
  all_fit (&l);
  l.unrolled_rows = (1u << 1) | (1u << 8);
  g_free (choose (&small, &l, NULL, GCV_FAMILY_TILED, NULL, FALSE, &c));
  g_assert_false (c.variant.adaptive);
  g_assert_cmpint (c.variant.rows, ==, 1);
  g_free (choose (&small, &l, NULL, GCV_FAMILY_AUTO, "tiled ty=4", FALSE,
          &c));
  g_assert_false (c.variant.adaptive);
  g_assert_cmpint (c.variant.rows, ==, 8);
  l.unrolled_rows = 1u << 4;
  g_free (choose (&small, &l, NULL, GCV_FAMILY_AUTO, "tiled ty=1", FALSE,
          &c));
  g_assert_false (c.variant.adaptive);
  g_assert_cmpint (c.variant.rows, ==, 4);
  l.unrolled_rows = 0;
  g_free (choose (&small, &l, NULL, GCV_FAMILY_TILED, NULL, FALSE, &c));
  g_assert_true (c.variant.adaptive);
  g_assert_cmpint (c.variant.rows, ==, 4);
  l.adaptive_rows = 0;
  l.unrolled_rows = 0;
  assert_choice (&small, &l, NULL, GCV_FAMILY_TILED, NULL, FALSE,
      "direct", GCV_SOURCE_HEURISTIC, GCV_FALLBACK_TILE_TOO_LARGE);
  /* too many taps for the constant bank: the one unrolled instance */
  all_fit (&l);
  l.taps_in_memory = TRUE;
  assert_choice (&small, &l, NULL, GCV_FAMILY_AUTO, "tiled ty=8", FALSE,
      "tiled ty=2", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);

  /* fused separable: 8 rows as asked where they fit, else 4, else two
   * passes */
  all_fit (&l);
  assert_choice (&sep, &l, NULL, GCV_FAMILY_AUTO, "separable fused ty=8",
      TRUE, "separable fused ty=8", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);
  l.fused_rows = 1u << 4;
  assert_choice (&sep, &l, NULL, GCV_FAMILY_AUTO, "separable fused ty=8",
      TRUE, "separable fused ty=4", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);
  l.fused_rows = 0;
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
  g_assert_true (c.variant.two_pass);
  g_assert_cmpint (c.variant.rows, ==, 0);

  /* FFT tiles: asked for, the best by the model (5x5 at 1920x1080: 16 x
   * 9 tiles of 128, 61 us of traffic; 256: 73 us); forced, a power of two
   * from 128 and at least twice the kernel; the whole frame, p=7 unless
   * 2, 3 or 5 */
  all_fit (&l);
  assert_choice (&small, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE,
      "fft tile=128", GCV_SOURCE_REQUESTED, GCV_FALLBACK_NONE);
  assert_choice (&small, &l, NULL, GCV_FAMILY_AUTO, "fft tile=100", FALSE,
      "fft tile=128", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);
  assert_choice (&small, &l, NULL, GCV_FAMILY_AUTO, "fft tile=1024 p=5",
      FALSE, "fft tile=1024", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);
  assert_choice (&small, &l, NULL, GCV_FAMILY_AUTO, "fft p=4", FALSE,
      "fft", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);
  {
    GcvDispatchKey big = small;
    big.kw = 127;
    big.kh = 65;
    assert_choice (&big, &l, NULL, GCV_FAMILY_AUTO, "fft tile=128", FALSE,
        "fft tile=256", GCV_SOURCE_FORCED, GCV_FALLBACK_NONE);
  }
  g_assert_cmpint (gcv_dispatch_fft_edge (0, 3, 3), ==, 128);
  g_assert_cmpint (gcv_dispatch_fft_edge (129, 3, 3), ==, 256);
  g_assert_cmpint (gcv_dispatch_fft_edge (0, 64, 65), ==, 256);
  g_assert_cmpint (gcv_dispatch_fft_edge (512, 1, 300), ==, 1024);

  /* an FFT set-up that failed falls back to tiled, settled (the second
   * call, /dispatch/record/fft-setup) */
  g_free (choose (&small, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_FFT);
  g_assert_cmpint (c.variant.fft_tile, ==, 128);
  g_assert_cmpint (c.variant.fft_prime, ==, 0);
  l.fft_failed = "";
  g_free (choose (&small, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE, &c));
  l.fft_failed = NULL;
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_cmpint (c.variant.rows, ==, 2);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_FFT_SETUP);
  g_assert_cmpstr (gcv_fallback_reason (c.fallback), ==,
      "fft could not be set up");
  gcv_tuning_table_free (t);
}

/* Gradient magnitudes (filter=sobel, scharr) run on direct and tiled only:
 * auto takes tiled with two rows (the rows of its magnitude kernels), even
 * where a table row or the FFT crossover says otherwise; register, fft or
 * a forced separable fall back to tiled and say why; direct and tiled run
 * as asked; without an unrolled kernel tiled is adaptive. */
static void
test_magnitude_choice (void)
{
  GcvDispatchKey gray = { GCV_FORMAT_GRAY8, 3, 3, FALSE, 1920, 1080, 0 };
  GcvDispatchKey rgba = { GCV_FORMAT_RGBA, 3, 3, FALSE, 3840, 2160, 0 };
  GcvDispatchKey big = { GCV_FORMAT_GRAY32F, 63, 63, FALSE, 3840, 2160, 0 };
  GcvTuningTable *t = gcv_tuning_table_new ("test GPU", "sm_90");
  GcvFamilyLimits l;
  GcvDeviceInfo dev;
  GcvVariant v;
  GcvChoice c;

  gray.magnitude = rgba.magnitude = TRUE;
  all_fit (&l);
  /* the table's row is for one kernel, not a magnitude's two */
  add_row (t, GCV_FORMAT_GRAY32F, 3, 3, FALSE, 1920, 1080, 0.1,
      "register p=4 block=64");
  assert_choice (&gray, &l, t, GCV_FAMILY_AUTO, NULL, FALSE, "tiled ty=2",
      GCV_SOURCE_HEURISTIC, GCV_FALLBACK_NONE);
  assert_choice (&rgba, &l, NULL, GCV_FAMILY_AUTO, NULL, FALSE, "tiled ty=2",
      GCV_SOURCE_HEURISTIC, GCV_FALLBACK_NONE);
  /* where one kernel would go to the FFT */
  device (&dev);
  gcv_dispatch_heuristic (&big, &dev, &v);
  g_assert_cmpint (v.family, ==, GCV_FAMILY_FFT);
  big.magnitude = TRUE;
  gcv_dispatch_heuristic (&big, &dev, &v);
  g_assert_cmpint (v.family, ==, GCV_FAMILY_TILED);
  /* asked for */
  assert_choice (&gray, &l, NULL, GCV_FAMILY_REGISTER, NULL, FALSE,
      "tiled ty=2", GCV_SOURCE_REQUESTED, GCV_FALLBACK_MAGNITUDE);
  assert_choice (&gray, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE, "tiled ty=2",
      GCV_SOURCE_REQUESTED, GCV_FALLBACK_MAGNITUDE);
  assert_choice (&rgba, &l, NULL, GCV_FAMILY_AUTO, "separable fused ty=4",
      FALSE, "tiled ty=2", GCV_SOURCE_FORCED, GCV_FALLBACK_MAGNITUDE);
  assert_choice (&gray, &l, NULL, GCV_FAMILY_DIRECT, NULL, FALSE, "direct",
      GCV_SOURCE_REQUESTED, GCV_FALLBACK_NONE);
  assert_choice (&gray, &l, NULL, GCV_FAMILY_TILED, NULL, FALSE,
      "tiled ty=2", GCV_SOURCE_HEURISTIC, GCV_FALLBACK_NONE);
  g_assert_cmpstr (gcv_fallback_reason (GCV_FALLBACK_MAGNITUDE), ==,
      "only direct and tiled run gradient magnitudes");
  /* no unrolled magnitude kernel for the width: adaptive */
  l.unrolled_rows = 0;
  g_free (choose (&gray, &l, NULL, GCV_FAMILY_REGISTER, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_true (c.variant.adaptive);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_MAGNITUDE);
  gcv_tuning_table_free (t);
}

/* --- the engine's ring ---------------------------------------------------- */

/* A plan holds as many frames in flight as the engine says (1 on the CPU);
 * a submit beyond that is refused until the oldest is waited for. */
static void
test_ring (void)
{
  GcvFilterDesc desc;
  GcvFilter *f;
  GcvEngine *e = gcv_engine_new (GCV_BACKEND_CPU, -1, NULL);
  GcvGeometry g = { GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY8, 8, 4 };
  guint8 in[32] = { 0 }, out[32];
  GcvImage src = { in, 8, FALSE }, dst = { out, 8, FALSE };
  GcvTicket t1, t2, t3;
  GError *error = NULL;
  GcvPlan *p;

  gcv_filter_desc_init (&desc);
  f = gcv_filter_new (&desc, NULL);
  g_assert_nonnull (e);
  g_assert_cmpuint (gcv_engine_frames_in_flight (e, 4), ==, 1);
  p = gcv_plan_new (e, &g, f, GCV_FAMILY_AUTO, 4, NULL);
  g_assert_cmpuint (gcv_plan_get_capacity (p), ==, 1);
  g_assert_true (gcv_plan_submit (p, &src, &dst, &t1, NULL));
  g_assert_false (gcv_plan_submit (p, &src, &dst, &t2, &error));
  g_assert_error (error, GCV_ERROR, GCV_ERROR_FRAME);
  g_clear_error (&error);
  g_assert_true (gcv_plan_wait (p, t1, NULL));
  g_assert_true (gcv_plan_submit (p, &src, &dst, &t3, NULL));
  g_assert_cmpuint (t3, !=, t1);
  g_assert_true (gcv_plan_wait (p, t3, NULL));
  gcv_plan_free (p);
  gcv_filter_free (f);
  gcv_engine_free (e);
}

/* A CPU plan's record and its text, as the plan is made, as its filter
 * changes and where a change is refused (the text stays). */
static void
test_record_cpu_plan (void)
{
  static const gfloat k2d[9] = { 1, 2, 0, -1, 3, 1, 0, 1, 5 };
  GcvFilterDesc desc;
  GcvFilter *box, *dense;
  GcvEngine *e = gcv_engine_new (GCV_BACKEND_CPU, -1, NULL);
  GcvGeometry g = { GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY8, 16, 8 };
  GcvPlan *p;

  gcv_filter_desc_init (&desc);
  desc.builtin = GCV_BUILTIN_BOX;
  desc.size = 3;
  box = gcv_filter_new (&desc, NULL);
  gcv_filter_desc_init (&desc);
  desc.builtin = GCV_BUILTIN_CUSTOM;
  desc.kernel = k2d;
  desc.n_kernel = 9;
  desc.kernel_width = desc.kernel_height = 3;
  dense = gcv_filter_new (&desc, NULL);
  g_assert_nonnull (box);
  g_assert_nonnull (dense);

  p = gcv_plan_new (e, &g, box, GCV_FAMILY_AUTO, 1, NULL);
  g_assert_nonnull (p);
  g_assert_cmpint (gcv_plan_get_family (p), ==, GCV_FAMILY_SEPARABLE);
  g_assert_cmpstr (gcv_plan_describe (p), ==, "separable");
  g_assert_true (gcv_plan_set_filter (p, box, GCV_FAMILY_TILED, NULL));
  g_assert_cmpstr (gcv_plan_describe (p), ==,
      "separable (tiled runs on CUDA only)");
  g_assert_true (gcv_plan_set_filter (p, dense, GCV_FAMILY_AUTO, NULL));
  g_assert_cmpint (gcv_plan_get_choice (p)->variant.family, ==,
      GCV_FAMILY_DIRECT);
  g_assert_cmpstr (gcv_plan_describe (p), ==, "direct");
  gcv_plan_free (p);
  gcv_filter_free (box);
  gcv_filter_free (dense);
  gcv_engine_free (e);
}

/* The CPU backend fills the record as it sets a plan up: its path (fixed
 * point only where the 16-bit bound holds, which a bias breaks; a
 * gradient magnitude's own), the workers it runs on, the GRAY32F check and
 * why it runs another family than the one asked for. */
static void
test_record_cpu_paths (void)
{
  GcvFilterDesc desc;
  GcvFilter *blur, *biased, *sobel;
  GcvEngine *e = gcv_engine_new (GCV_BACKEND_CPU, -1, NULL);
  GcvGeometry g8 = { GCV_FORMAT_GRAY8, GCV_FORMAT_GRAY8, 16, 8 };
  GcvGeometry gf = { GCV_FORMAT_GRAY32F, GCV_FORMAT_GRAY32F, 16, 8 };
  const GcvChoice *c;
  GcvPlan *p;

  gcv_filter_desc_init (&desc);
  desc.builtin = GCV_BUILTIN_GAUSSIAN;
  desc.size = 5;
  blur = gcv_filter_new (&desc, NULL);
  desc.bias = 3;
  biased = gcv_filter_new (&desc, NULL);
  gcv_filter_desc_init (&desc);
  desc.builtin = GCV_BUILTIN_SOBEL;
  desc.size = 3;
  sobel = gcv_filter_new (&desc, NULL);
  g_assert_nonnull (blur);
  g_assert_nonnull (biased);
  g_assert_nonnull (sobel);

  p = gcv_plan_new (e, &g8, blur, GCV_FAMILY_AUTO, 1, NULL);
  g_assert_nonnull (p);
  c = gcv_plan_get_choice (p);
  g_assert_cmpint (c->backend, ==, GCV_BACKEND_CPU);
  g_assert_cmpint (c->cpu_path, ==, GCV_CPU_PATH_FIXED_POINT);
  g_assert_cmpuint (c->threads, ==, g_get_num_processors ());
  g_assert_false (c->check_finite);
  g_assert_true (gcv_plan_set_filter (p, biased, GCV_FAMILY_AUTO, NULL));
  g_assert_cmpint (gcv_plan_get_choice (p)->cpu_path, ==,
      GCV_CPU_PATH_SEPARABLE);
  g_assert_true (gcv_plan_set_filter (p, blur, GCV_FAMILY_DIRECT, NULL));
  g_assert_cmpint (gcv_plan_get_choice (p)->cpu_path, ==,
      GCV_CPU_PATH_DIRECT);
  g_assert_true (gcv_plan_set_filter (p, sobel, GCV_FAMILY_FFT, NULL));
  c = gcv_plan_get_choice (p);
  g_assert_cmpint (c->cpu_path, ==, GCV_CPU_PATH_MAGNITUDE);
  g_assert_cmpint (c->fallback, ==, GCV_FALLBACK_CUDA_ONLY);
  g_assert_cmpstr (gcv_plan_describe (p), ==,
      "direct (fft runs on CUDA only)");
  gcv_plan_free (p);

  p = gcv_plan_new (e, &gf, blur, GCV_FAMILY_AUTO, 1, NULL);
  g_assert_nonnull (p);
  c = gcv_plan_get_choice (p);
  g_assert_cmpint (c->cpu_path, ==, GCV_CPU_PATH_SEPARABLE);
  g_assert_true (c->check_finite);
  gcv_plan_free (p);
  gcv_filter_free (blur);
  gcv_filter_free (biased);
  gcv_filter_free (sobel);
  gcv_engine_free (e);
}

/* --- the record of what runs ---------------------------------------------- */

/* The record's text is what active-algorithm shows (docs/properties.md,
 * docs/tuning.md). */
static void
assert_described (const GcvChoice * c, const gchar * want)
{
  gchar *text = gcv_choice_describe (c);
  g_assert_cmpstr (text, ==, want);
  g_free (text);
}

/* One tap wide in tiled or separable: one pass down the columns; never in
 * the other families, nor for a gradient magnitude. */
static void
test_record_column_pass (void)
{
  GcvDispatchKey column = { GCV_FORMAT_GRAY32F, 1, 9, FALSE, 1920, 1080, 0 };
  GcvDispatchKey sep = column;
  GcvFamilyLimits l;
  GcvChoice c;

  all_fit (&l);
  l.unrolled_kw = 1;
  g_free (choose (&column, &l, NULL, GCV_FAMILY_AUTO, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_true (c.column_pass);
  g_assert_cmpuint (c.run_kw, ==, 1);
  assert_described (&c, "tiled column pass (heuristic)");
  sep.separable = TRUE;
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_SEPARABLE);
  g_assert_true (c.column_pass);
  assert_described (&c, "separable column pass (heuristic)");
  g_free (choose (&column, &l, NULL, GCV_FAMILY_DIRECT, NULL, FALSE, &c));
  g_assert_false (c.column_pass);
  assert_described (&c, "direct (requested)");
  g_free (choose (&column, &l, NULL, GCV_FAMILY_REGISTER, NULL, FALSE, &c));
  g_assert_false (c.column_pass);
  column.magnitude = TRUE;
  g_free (choose (&column, &l, NULL, GCV_FAMILY_TILED, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_false (c.column_pass);
}

/* Tiled's unrolled kernels run a width with no instance of its own widened
 * to the next instance; adaptive tiling, the other families and gradient
 * magnitudes run the filter's own width. */
static void
test_record_run_width (void)
{
  GcvDispatchKey k6 = { GCV_FORMAT_GRAY32F, 6, 5, FALSE, 1920, 1080, 0 };
  GcvFamilyLimits l;
  GcvChoice c;

  all_fit (&l);
  l.unrolled_kw = 7;
  g_free (choose (&k6, &l, NULL, GCV_FAMILY_AUTO, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_false (c.variant.adaptive);
  g_assert_cmpuint (c.kw, ==, 6);
  g_assert_cmpuint (c.run_kw, ==, 7);
  assert_described (&c, "tiled ty=2 unrolled 7 wide (heuristic)");
  g_free (choose (&k6, &l, NULL, GCV_FAMILY_AUTO, "tiled", FALSE, &c));
  g_assert_true (c.variant.adaptive);
  g_assert_cmpuint (c.run_kw, ==, 6);
  assert_described (&c, "tiled ty=4 adaptive (forced)");
  g_free (choose (&k6, &l, NULL, GCV_FAMILY_DIRECT, NULL, FALSE, &c));
  g_assert_cmpuint (c.run_kw, ==, 6);
  /* the same width: no widening to speak of */
  l.unrolled_kw = 6;
  g_free (choose (&k6, &l, NULL, GCV_FAMILY_AUTO, NULL, FALSE, &c));
  assert_described (&c, "tiled ty=2 unrolled (heuristic)");
  /* a gradient magnitude is never widened */
  l.unrolled_kw = 7;
  k6.magnitude = TRUE;
  g_free (choose (&k6, &l, NULL, GCV_FAMILY_AUTO, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_cmpuint (c.run_kw, ==, 6);
}

/* The FFT set-up is an input of a second call: made, its size goes into
 * the record; not made, tiled runs and the record says why, with the
 * words the set-up gave. */
static void
test_record_fft_setup (void)
{
  GcvDispatchKey small = { GCV_FORMAT_GRAY32F, 5, 5, FALSE, 1920, 1080, 0 };
  GcvFamilyLimits l;
  GcvChoice c;

  all_fit (&l);
  g_free (choose (&small, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_FFT);
  g_assert_cmpint (c.variant.fft_tile, ==, 128);
  l.fft_nx = l.fft_ny = 128;
  l.fft_tiles = 160;
  g_free (choose (&small, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_FFT);
  g_assert_cmpint (c.fft_tiles, ==, 160);
  assert_described (&c, "fft tile=128, 160 tiles (requested)");
  g_free (choose (&small, &l, NULL, GCV_FAMILY_AUTO, "fft p=5", FALSE, &c));
  l.fft_nx = 1944;
  l.fft_ny = 1088;
  l.fft_tiles = 1;
  g_free (choose (&small, &l, NULL, GCV_FAMILY_AUTO, "fft p=5", FALSE, &c));
  assert_described (&c, "fft p=5 1944x1088 (forced)");

  memset (&l, 0, sizeof (l));
  all_fit (&l);
  l.fft_failed = "cuFFT: out of memory";
  g_free (choose (&small, &l, NULL, GCV_FAMILY_FFT, NULL, FALSE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_cmpint (c.variant.rows, ==, 2);
  g_assert_cmpint (c.source, ==, GCV_SOURCE_REQUESTED);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_FFT_SETUP);
  g_assert_cmpstr (c.detail, ==, "cuFFT: out of memory");
  assert_described (&c, "tiled ty=2 unrolled (requested) (fft could not be "
      "set up): cuFFT: out of memory");
  /* the outcome only matters where fft was chosen */
  g_free (choose (&small, &l, NULL, GCV_FAMILY_DIRECT, NULL, FALSE, &c));
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_NONE);
  g_assert_cmpstr (c.detail, ==, "");
}

/* GRAY32F input with factors that do not keep the kernel's zeros and
 * signs: no separable path, and where one was asked for, that is the
 * reason. Only float frames check for NaN and Inf. */
static void
test_record_gray32f_guard (void)
{
  GcvDispatchKey sep = { GCV_FORMAT_GRAY32F, 9, 9, TRUE, 1920, 1080, 0 };
  GcvFamilyLimits l;
  GcvChoice c;

  all_fit (&l);
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_SEPARABLE);
  g_assert_true (c.check_finite);
  sep.factors_differ = TRUE;
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
  g_assert_cmpint (c.variant.family, !=, GCV_FAMILY_SEPARABLE);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_NONE);
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_SEPARABLE, NULL, TRUE, &c));
  g_assert_cmpint (c.variant.family, ==, GCV_FAMILY_TILED);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_FACTOR_SIGNS);
  sep.separable_only = TRUE;
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
  g_assert_cmpint (c.variant.family, !=, GCV_FAMILY_SEPARABLE);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_FACTOR_SIGNS);
  sep.format = GCV_FORMAT_RGBA;
  sep.factors_differ = FALSE;
  g_free (choose (&sep, &l, NULL, GCV_FAMILY_AUTO, NULL, TRUE, &c));
  g_assert_false (c.check_finite);
}

/* The key from a filter: a kernel rank 1 only within the tolerance whose
 * factors give a tap of the other sign (tests/test-nonfinite.c,
 * nearly_rank1) trips the guard on GRAY32F frames only. */
static void
test_record_key (void)
{
  static const gfloat column[] = { 0.5f, 1.0f, 0.0f, 0.75f };
  static const gfloat row[] = { 0.3f, -0.6f, 1.0f, 0.8f, 1e-6f };
  gfloat k[20];
  GcvFilterDesc desc;
  GcvGeometry g = { 0 };
  GcvDispatchKey key;
  GcvFilter *f;

  for (guint j = 0; j < 4; j++)
    for (guint i = 0; i < 5; i++)
      k[j * 5 + i] = column[j] * row[i];
  gcv_filter_desc_init (&desc);
  desc.builtin = GCV_BUILTIN_CUSTOM;
  desc.kernel = k;
  desc.n_kernel = 20;
  desc.kernel_width = 5;
  desc.kernel_height = 4;
  g.width = 64;
  g.height = 48;
  g.in_format = g.out_format = GCV_FORMAT_GRAY32F;
  f = gcv_filter_new (&desc, NULL);
  g_assert_nonnull (f);
  gcv_dispatch_key_init (&key, &g, f);
  g_assert_cmpuint (key.kw, ==, 5);
  g_assert_cmpuint (key.kh, ==, 4);
  g_assert_true (key.separable);
  g_assert_false (key.factors_differ);
  g_assert_false (key.magnitude);
  gcv_filter_free (f);

  k[2 * 5 + 1] = 1e-7f;
  k[0 * 5 + 4] = -5e-7f;
  f = gcv_filter_new (&desc, NULL);
  g_assert_nonnull (f);
  gcv_dispatch_key_init (&key, &g, f);
  g_assert_true (key.separable);
  g_assert_true (key.factors_differ);
  g.in_format = g.out_format = GCV_FORMAT_GRAY8;
  gcv_dispatch_key_init (&key, &g, f);
  g_assert_false (key.factors_differ);
  gcv_filter_free (f);
}

/* The CPU backend's choice: separable for rank-1 kernels (fixed point
 * where it holds), direct where asked or where the GRAY32F guard says no,
 * a gradient magnitude's own path; families it does not have named. */
static void
test_record_cpu (void)
{
  GcvDispatchKey sep = { GCV_FORMAT_GRAY8, 5, 5, TRUE, 640, 480, 0 };
  GcvDispatchKey mag = { GCV_FORMAT_GRAY8, 3, 3, FALSE, 640, 480, 0 };
  GcvCpuLimits l = { FALSE, 4 };
  GcvChoice c;

  gcv_dispatch_choose_cpu (&sep, GCV_FAMILY_AUTO, &l, &c);
  g_assert_cmpint (c.backend, ==, GCV_BACKEND_CPU);
  g_assert_cmpint (c.cpu_path, ==, GCV_CPU_PATH_SEPARABLE);
  g_assert_cmpuint (c.threads, ==, 4);
  assert_described (&c, "separable");
  l.fixed_point = TRUE;
  gcv_dispatch_choose_cpu (&sep, GCV_FAMILY_AUTO, &l, &c);
  g_assert_cmpint (c.cpu_path, ==, GCV_CPU_PATH_FIXED_POINT);
  assert_described (&c, "separable");
  gcv_dispatch_choose_cpu (&sep, GCV_FAMILY_DIRECT, &l, &c);
  g_assert_cmpint (c.cpu_path, ==, GCV_CPU_PATH_DIRECT);
  assert_described (&c, "direct");
  gcv_dispatch_choose_cpu (&sep, GCV_FAMILY_TILED, &l, &c);
  g_assert_cmpint (c.cpu_path, ==, GCV_CPU_PATH_FIXED_POINT);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_CUDA_ONLY);
  assert_described (&c, "separable (tiled runs on CUDA only)");
  sep.format = GCV_FORMAT_GRAY32F;
  sep.factors_differ = TRUE;
  gcv_dispatch_choose_cpu (&sep, GCV_FAMILY_AUTO, &l, &c);
  g_assert_cmpint (c.cpu_path, ==, GCV_CPU_PATH_DIRECT);
  g_assert_cmpint (c.fallback, ==, GCV_FALLBACK_FACTOR_SIGNS);
  g_assert_true (c.check_finite);
  assert_described (&c, "direct (GRAY32F input: the separable factors do "
      "not keep the kernel's zeros and signs)");
  mag.magnitude = TRUE;
  gcv_dispatch_choose_cpu (&mag, GCV_FAMILY_AUTO, &l, &c);
  g_assert_cmpint (c.cpu_path, ==, GCV_CPU_PATH_MAGNITUDE);
  assert_described (&c, "direct");
  gcv_dispatch_choose_cpu (&mag, GCV_FAMILY_FFT, &l, &c);
  assert_described (&c, "direct (fft runs on CUDA only)");
}

/* Where a table's choice came from is in the record and its text. */
static void
test_record_table_source (void)
{
  GcvDispatchKey small = { GCV_FORMAT_GRAY32F, 5, 5, FALSE, 1920, 1080, 0 };
  GcvTuningTable *t = gcv_tuning_table_new ("test GPU", "sm_90");
  GcvFamilyLimits l;
  GcvChoice c;

  all_fit (&l);
  add_row (t, GCV_FORMAT_GRAY32F, 5, 5, FALSE, 1920, 1080, 0.1,
      "register p=4 block=64");
  t->source = "shipped";
  g_free (choose (&small, &l, t, GCV_FAMILY_AUTO, NULL, FALSE, &c));
  g_assert_cmpint (c.source, ==, GCV_SOURCE_TABLE);
  g_assert_cmpstr (c.table_source, ==, "shipped");
  assert_described (&c, "register p=4 block=64 (table: shipped)");
  l.register_fits = FALSE;
  g_free (choose (&small, &l, t, GCV_FAMILY_AUTO, NULL, FALSE, &c));
  assert_described (&c, "tiled ty=2 unrolled (table: shipped) (register "
      "cannot run this size)");
  gcv_tuning_table_free (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/dispatch/variant/round-trip", test_variant_round_trip);
  g_test_add_func ("/dispatch/variant/bad", test_variant_bad);
  g_test_add_func ("/dispatch/table/parse-valid", test_parse_valid);
  for (guint i = 0; i < G_N_ELEMENTS (garbage); i++) {
    gchar *path = g_strdup_printf ("/dispatch/table/garbage/%s",
        garbage[i].name);
    g_test_add_data_func (path, &garbage[i], test_parse_garbage);
    g_free (path);
  }
  g_test_add_func ("/dispatch/table/long-line", test_parse_long_line);
  g_test_add_func ("/dispatch/table/round-trip", test_round_trip);
  g_test_add_func ("/dispatch/table/lookup", test_lookup);
  g_test_add_func ("/dispatch/table/file-name", test_file_name);
  g_test_add_func ("/dispatch/table/find", test_find);
  g_test_add_func ("/dispatch/heuristic/cases", test_heuristic_cases);
  g_test_add_func ("/dispatch/heuristic/formula", test_heuristic_formula);
  g_test_add_func ("/dispatch/choice", test_choice);
  g_test_add_func ("/dispatch/choice/magnitude", test_magnitude_choice);
  g_test_add_func ("/dispatch/record/column-pass", test_record_column_pass);
  g_test_add_func ("/dispatch/record/run-width", test_record_run_width);
  g_test_add_func ("/dispatch/record/fft-setup", test_record_fft_setup);
  g_test_add_func ("/dispatch/record/gray32f-guard",
      test_record_gray32f_guard);
  g_test_add_func ("/dispatch/record/key", test_record_key);
  g_test_add_func ("/dispatch/record/cpu", test_record_cpu);
  g_test_add_func ("/dispatch/record/table-source", test_record_table_source);
  g_test_add_func ("/engine/record/cpu-plan", test_record_cpu_plan);
  g_test_add_func ("/engine/record/cpu-paths", test_record_cpu_paths);
  g_test_add_func ("/engine/ring", test_ring);
  return g_test_run ();
}
