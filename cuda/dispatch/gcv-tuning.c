/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tuning tables: parsing, writing, nearest-neighbour lookup, and where the
 * table for a GPU is found. */
#include "gcv-tuning.h"
#include "gcv-private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GCV_TUNING_DIR
#define GCV_TUNING_DIR "/usr/local/share/gpuconvolve/tuning"
#endif

/* Lines longer than this are garbage, not a table. */
#define MAX_LINE 512
/* Files longer than this are not a table either (docs/errors.md). */
#define MAX_FILE (1024 * 1024)

GcvTuningTable *
gcv_tuning_table_new (const gchar * gpu, const gchar * arch)
{
  GcvTuningTable *t = g_new0 (GcvTuningTable, 1);
  t->gpu = g_strdup (gpu);
  t->arch = g_strdup (arch);
  t->rows = g_array_new (FALSE, TRUE, sizeof (GcvTuningRow));
  return t;
}

void
gcv_tuning_table_free (GcvTuningTable * table)
{
  if (!table)
    return;
  g_free (table->gpu);
  g_free (table->arch);
  g_array_unref (table->rows);
  g_free (table);
}

static gboolean
parse_uint (const gchar * s, guint max, guint * out)
{
  gchar *end;
  guint64 v = g_ascii_strtoull (s, &end, 10);
  if (end == s || *end || v < 1 || v > max)
    return FALSE;
  *out = (guint) v;
  return TRUE;
}

static gboolean
parse_row (gchar * line, GcvTuningRow * row, GError ** error)
{
  gchar *fields[6];
  gchar *rest = line, *x, *end;
  guint n = 0;

  memset (row, 0, sizeof (*row));
  /* six blank-separated fields, then the variant (the rest of the line) */
  while (n < 6) {
    while (*rest == ' ' || *rest == '\t')
      rest++;
    if (!*rest)
      break;
    fields[n++] = rest;
    while (*rest && *rest != ' ' && *rest != '\t')
      rest++;
    if (*rest)
      *rest++ = '\0';
  }
  while (*rest == ' ' || *rest == '\t')
    rest++;
  if (n < 6 || !*rest) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "expected 'format kw kh sep WxH ms variant'");
    return FALSE;
  }
  if (!gcv_format_from_name (fields[0], &row->key.format)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "unknown format '%s'",
        fields[0]);
    return FALSE;
  }
  x = strchr (fields[4], 'x');
  if (x)
    *x = '\0';
  if (!(strcmp (fields[3], "0") == 0 || strcmp (fields[3], "1") == 0) || !x
      || !parse_uint (fields[1], GCV_MAX_KERNEL_SIZE, &row->key.kw)
      || !parse_uint (fields[2], GCV_MAX_KERNEL_SIZE, &row->key.kh)
      || !parse_uint (fields[4], GCV_MAX_FRAME_SIZE, &row->key.width)
      || !parse_uint (x + 1, GCV_MAX_FRAME_SIZE, &row->key.height)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "bad size fields '%s %s %s %s%s%s'", fields[1], fields[2], fields[3],
        fields[4], x ? "x" : "", x ? x + 1 : "");
    return FALSE;
  }
  row->key.separable = fields[3][0] == '1';
  row->ms = g_ascii_strtod (fields[5], &end);
  if (end == fields[5] || *end || !(row->ms >= 0.0) || !isfinite (row->ms)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "bad time '%s'",
        fields[5]);
    return FALSE;
  }
  g_strchomp (rest);
  return gcv_variant_parse (rest, &row->variant, error);
}

GcvTuningTable *
gcv_tuning_table_parse (const gchar * text, gsize len, const gchar * where,
    GError ** error)
{
  GcvTuningTable *t = gcv_tuning_table_new (NULL, NULL);
  gchar **lines;
  guint number = 0;

  if (!g_utf8_validate (text, len, NULL) || memchr (text, '\0', len)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "%s: not a tuning table (not UTF-8 text)", where);
    gcv_tuning_table_free (t);
    return NULL;
  }
  {
    gchar *copy = g_strndup (text, len);
    lines = g_strsplit (copy, "\n", -1);
    g_free (copy);
  }
  for (gchar ** l = lines; *l; l++) {
    gchar *line = g_strstrip (*l);
    GError *err = NULL;
    GcvTuningRow row;

    number++;
    if (strlen (line) > MAX_LINE) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
          "%s:%u: line too long", where, number);
      goto fail;
    }
    if (!*line || *line == '#')
      continue;
    if (g_str_has_prefix (line, "gpu:")) {
      g_free (t->gpu);
      t->gpu = g_strdup (g_strstrip (line + 4));
      continue;
    }
    if (g_str_has_prefix (line, "arch:")) {
      g_free (t->arch);
      t->arch = g_strdup (g_strstrip (line + 5));
      continue;
    }
    if (!parse_row (line, &row, &err)) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS, "%s:%u: %s", where,
          number, err->message);
      g_error_free (err);
      goto fail;
    }
    g_array_append_val (t->rows, row);
  }
  if (!t->gpu || t->rows->len == 0) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "%s: not a tuning table (no 'gpu:' line or no rows)", where);
    goto fail;
  }
  g_strfreev (lines);
  return t;

fail:
  g_strfreev (lines);
  gcv_tuning_table_free (t);
  return NULL;
}

static const gchar *
file_kind (mode_t mode)
{
  if (S_ISDIR (mode))
    return "a directory";
  if (S_ISCHR (mode))
    return "a character device";
  if (S_ISBLK (mode))
    return "a block device";
  if (S_ISFIFO (mode))
    return "a FIFO";
  if (S_ISSOCK (mode))
    return "a socket";
  return "not a plain file";
}

/* The whole of `path`, NUL-terminated, when it is a regular file of at most
 * MAX_FILE bytes. Never blocks: the file is opened with O_NONBLOCK (a FIFO
 * with no writer opens at once) and what was opened is checked with fstat()
 * before anything is read, so a device, FIFO or socket is refused unread;
 * a regular file growing while it is read is cut off at MAX_FILE + 1 bytes
 * and refused. */
static gboolean
read_file_limited (const gchar * path, gchar ** text, gsize * len,
    GError ** error)
{
  struct stat st;
  gchar *buf = NULL;
  gsize n = 0;
  gint fd, saved;

  do
    fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    saved = errno;
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "cannot read tuning table: Failed to open file \u201c%s\u201d: %s",
        path, g_strerror (saved));
    return FALSE;
  }
  if (fstat (fd, &st) != 0) {
    saved = errno;
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "cannot read tuning table: \u201c%s\u201d: %s", path,
        g_strerror (saved));
    goto fail;
  }
  if (!S_ISREG (st.st_mode)) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "cannot read tuning table: \u201c%s\u201d is not a regular file (%s)",
        path, file_kind (st.st_mode));
    goto fail;
  }
  if (st.st_size > MAX_FILE) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "cannot read tuning table: \u201c%s\u201d is larger than 1 MiB "
        "(%" G_GINT64_FORMAT " bytes)", path, (gint64) st.st_size);
    goto fail;
  }
  buf = g_malloc (MAX_FILE + 2);
  while (n <= MAX_FILE) {
    gssize r = read (fd, buf + n, MAX_FILE + 1 - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      saved = errno;
      g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
          "cannot read tuning table: Error reading file \u201c%s\u201d: %s",
          path, g_strerror (saved));
      goto fail;
    }
    if (r == 0)
      break;
    n += r;
  }
  if (n > MAX_FILE) {
    g_set_error (error, GCV_ERROR, GCV_ERROR_SETTINGS,
        "cannot read tuning table: \u201c%s\u201d is larger than 1 MiB", path);
    goto fail;
  }
  close (fd);
  buf[n] = '\0';
  *text = g_realloc (buf, n + 1);
  *len = n;
  return TRUE;

fail:
  g_free (buf);
  close (fd);
  return FALSE;
}

GcvTuningTable *
gcv_tuning_table_load (const gchar * path, GError ** error)
{
  gchar *text = NULL;
  gsize len = 0;
  GcvTuningTable *t;

  if (!read_file_limited (path, &text, &len, error))
    return NULL;
  t = gcv_tuning_table_parse (text, len, path, error);
  g_free (text);
  return t;
}

gchar *
gcv_tuning_table_to_string (const GcvTuningTable * table)
{
  GString *s = g_string_new (NULL);

  g_string_append (s, "# gpuconvolve tuning table, written by "
      "gpuconvolve-tune (docs/tuning.md)\n");
  g_string_append_printf (s, "gpu: %s\narch: %s\n", table->gpu,
      table->arch ? table->arch : "unknown");
  g_string_append (s, "# format  kw  kh  sep  size       ms        variant\n");
  for (guint i = 0; i < table->rows->len; i++) {
    const GcvTuningRow *r = &g_array_index (table->rows, GcvTuningRow, i);
    gchar *v = gcv_variant_to_string (&r->variant);
    gchar *size = g_strdup_printf ("%ux%u", r->key.width, r->key.height);
    /* room for every finite time the reader takes: "%.4f" of 1e300 has
     * 300 digits, and a shorter buffer cut it to another number */
    gchar ms[G_ASCII_DTOSTR_BUF_SIZE + 320];
    g_ascii_formatd (ms, sizeof (ms), "%.4f", r->ms);
    g_string_append_printf (s, "%-9s %3u %3u  %u    %-10s %-9s %s\n",
        gcv_format_name (r->key.format), r->key.kw, r->key.kh,
        r->key.separable ? 1 : 0, size, ms, v);
    g_free (size);
    g_free (v);
  }
  return g_string_free (s, FALSE);
}

gboolean
gcv_tuning_table_save (const GcvTuningTable * table, const gchar * path,
    GError ** error)
{
  gchar *text = gcv_tuning_table_to_string (table);
  gchar *dir = g_path_get_dirname (path);
  gboolean ok;

  g_mkdir_with_parents (dir, 0755);
  ok = g_file_set_contents (path, text, -1, error);
  g_free (dir);
  g_free (text);
  return ok;
}

/* Distance on log scales: kernel sizes count more than frame sizes. */
static gdouble
distance (const GcvDispatchKey * a, const GcvDispatchKey * b)
{
  gdouble dw = log ((gdouble) a->kw / b->kw), dh = log ((gdouble) a->kh / b->kh);
  gdouble dp = log (((gdouble) a->width * a->height) /
      ((gdouble) b->width * b->height));
  return 4.0 * (dw * dw + dh * dh) + dp * dp;
}

const GcvTuningRow *
gcv_tuning_table_lookup (const GcvTuningTable * table,
    const GcvDispatchKey * key)
{
  const GcvTuningRow *best = NULL;
  gdouble best_d = G_MAXDOUBLE;

  for (guint i = 0; table && i < table->rows->len; i++) {
    const GcvTuningRow *r = &g_array_index (table->rows, GcvTuningRow, i);
    gdouble d;
    if (r->key.format != key->format
        || !r->key.separable != !key->separable)
      continue;
    d = distance (&r->key, key);
    if (d < best_d) {
      best_d = d;
      best = r;
    }
  }
  return best;
}

gchar *
gcv_tuning_file_name (const gchar * gpu)
{
  GString *s = g_string_new (NULL);
  gboolean dash = FALSE;

  for (const gchar * p = gpu; p && *p; p++) {
    if (g_ascii_isalnum (*p)) {
      if (dash && s->len)
        g_string_append_c (s, '-');
      g_string_append_c (s, g_ascii_tolower (*p));
      dash = FALSE;
    } else {
      dash = TRUE;
    }
  }
  g_string_append (s, ".tbl");
  return g_string_free (s, FALSE);
}

GcvTuningTable *
gcv_tuning_find (const gchar * tuning_file, const gchar * gpu,
    const gchar ** source, GError ** error)
{
  gchar *name, *path;
  GcvTuningTable *t = NULL;
  const gchar *env;

  if (tuning_file) {
    *source = "tuning-file";
    if ((t = gcv_tuning_table_load (tuning_file, error)))
      t->source = *source;
    return t;
  }
  name = gcv_tuning_file_name (gpu);
  path = g_build_filename (g_get_user_cache_dir (), "gpuconvolve", name, NULL);
  /* a broken cache or shipped table is skipped, not an error */
  if (g_file_test (path, G_FILE_TEST_EXISTS)
      && (t = gcv_tuning_table_load (path, NULL)))
    *source = "cache";
  g_free (path);
  env = g_getenv ("GPUCONVOLVE_TUNING_PATH");
  if (!t && env) {
    gchar **dirs = g_strsplit (env, G_SEARCHPATH_SEPARATOR_S, -1);
    for (gchar ** d = dirs; !t && *d; d++) {
      path = g_build_filename (*d, name, NULL);
      if (g_file_test (path, G_FILE_TEST_EXISTS)
          && (t = gcv_tuning_table_load (path, NULL)))
        *source = "shipped";
      g_free (path);
    }
    g_strfreev (dirs);
  }
  if (!t) {
    path = g_build_filename (GCV_TUNING_DIR, name, NULL);
    if (g_file_test (path, G_FILE_TEST_EXISTS)
        && (t = gcv_tuning_table_load (path, NULL)))
      *source = "shipped";
    g_free (path);
  }
  g_free (name);
  if (t)
    t->source = *source;
  return t;
}
