/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared by the libFuzzer targets: reading typed values off the input, the
 * process set-up (GStreamer without system plugins, GLib messages), and the
 * findings that are not crashes (a broken promise: abort with a message). */
#ifndef GCV_FUZZ_COMMON_H
#define GCV_FUZZ_COMMON_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
  const uint8_t *p;
  size_t n;
} FuzzInput;

static inline guint8
fuzz_u8 (FuzzInput * in)
{
  guint8 v = 0;
  if (in->n) {
    v = in->p[0];
    in->p++;
    in->n--;
  }
  return v;
}

static inline guint32
fuzz_u32 (FuzzInput * in)
{
  guint32 v = 0;
  for (guint i = 0; i < 4; i++)
    v = v << 8 | fuzz_u8 (in);
  return v;
}

/* A double from eight raw bytes: NaN, infinities and denormals included. */
static inline gdouble
fuzz_raw_double (FuzzInput * in)
{
  guint64 bits = (guint64) fuzz_u32 (in) << 32 | fuzz_u32 (in);
  gdouble d;
  memcpy (&d, &bits, sizeof (d));
  return d;
}

static inline gfloat
fuzz_raw_float (FuzzInput * in)
{
  guint32 bits = fuzz_u32 (in);
  gfloat f;
  memcpy (&f, &bits, sizeof (f));
  return f;
}

/* Mostly ordinary numbers, sometimes anything at all. */
static inline gdouble
fuzz_double (FuzzInput * in)
{
  guint8 kind = fuzz_u8 (in);
  if (kind < 160)
    return ((gint) fuzz_u8 (in) - 128) / 16.0;
  if (kind < 200)
    return (gint32) fuzz_u32 (in) / 65536.0;
  return fuzz_raw_double (in);
}

static inline gfloat
fuzz_float (FuzzInput * in)
{
  guint8 kind = fuzz_u8 (in);
  if (kind < 200)
    return ((gint) fuzz_u8 (in) - 128) / 32.0f;
  return fuzz_raw_float (in);
}

/* Up to `max` bytes up to the next NUL (which is consumed), as a string. */
static inline gchar *
fuzz_text (FuzzInput * in, size_t max)
{
  size_t len = 0;
  gchar *s;
  while (len < in->n && len < max && in->p[len])
    len++;
  s = g_strndup ((const gchar *) in->p, len);
  in->p += len;
  in->n -= len;
  if (in->n && in->p[0] == 0) {
    in->p++;
    in->n--;
  }
  return s;
}

/* GStreamer 1.22's value and caps parsers lose the inner list they were
 * filling when an element of a nested array or list does not parse
 * (gstvalue.c; docs/reliability.md). Allocations made while LeakSanitizer
 * is off are never reported, so the targets turn it off around those
 * parsers only: leaks of the element and the engine are still found. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define FUZZ_LSAN_OFF() __lsan_disable ()
#define FUZZ_LSAN_ON() __lsan_enable ()
#endif
#endif
#ifndef FUZZ_LSAN_OFF
#define FUZZ_LSAN_OFF() ((void) 0)
#define FUZZ_LSAN_ON() ((void) 0)
#endif

/* Inside GStreamer's parsers, and GStreamer calls the targets make only to
 * check results, criticals are GStreamer's business (its caps parser hands
 * invalid structure names to gst_structure_new_empty(); comparing lists
 * that mix types asserts); elsewhere they are findings. */
static gboolean fuzz_in_gst_parser;
#define FUZZ_GST_PARSER_BEGIN() G_STMT_START {  \
    FUZZ_LSAN_OFF ();                           \
    fuzz_in_gst_parser = TRUE;                  \
  } G_STMT_END
#define FUZZ_GST_PARSER_END() G_STMT_START {    \
    fuzz_in_gst_parser = FALSE;                 \
    FUZZ_LSAN_ON ();                            \
  } G_STMT_END

/* Text with a collection inside a collection (where the parsers leak). */
static inline gboolean
fuzz_nested_collection (const gchar * text)
{
  guint depth = 0;
  for (const gchar * c = text; *c; c++) {
    if (*c == '<' || *c == '{' || *c == '[') {
      if (++depth > 1)
        return TRUE;
    } else if ((*c == '>' || *c == '}' || *c == ']') && depth > 0) {
      depth--;
    }
  }
  return FALSE;
}

/* Prints a finding's message; with GStreamer, through its printf, which
 * knows GST_PTR_FORMAT (caps, structures) where g_printerr() does not. */
#ifdef GST_FUZZ_WITH_GSTREAMER
#include <gst/gst.h>
#define FUZZ_PRINT_MESSAGE(...) G_STMT_START {                          \
    gchar *fuzz_msg_ = gst_info_strdup_printf (__VA_ARGS__);            \
    g_printerr ("%s", fuzz_msg_);                                       \
    g_free (fuzz_msg_);                                                 \
  } G_STMT_END
#else
#define FUZZ_PRINT_MESSAGE(...) g_printerr (__VA_ARGS__)
#endif

/* A promise of the code under test does not hold: a finding. */
#define FUZZ_ASSERT(cond, ...) G_STMT_START {                           \
    if (G_UNLIKELY (!(cond))) {                                         \
      g_printerr ("FUZZ FINDING at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      FUZZ_PRINT_MESSAGE (__VA_ARGS__);                                 \
      g_printerr ("\n");                                                \
      abort ();                                                         \
    }                                                                   \
  } G_STMT_END

/* GLib-GObject and gpuconvolve warnings (a value refused by GObject's range
 * checks or by the element's setters) are part of the contract and go
 * unprinted; criticals (a g_return_if_fail() failing)
 * are findings. */
static void
fuzz_log_handler (const gchar * domain, GLogLevelFlags level,
    const gchar * message, gpointer user_data)
{
  if ((level & (G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_LEVEL_ERROR))
      && !fuzz_in_gst_parser) {
    g_printerr ("FUZZ FINDING: critical from %s: %s\n",
        domain ? domain : "(none)", message);
    abort ();
  }
}

static inline void
fuzz_setup_logging (void)
{
  static const gchar *const domains[] = { NULL, "GLib", "GLib-GObject",
    "GStreamer", "GStreamer-Video", "GStreamer-Base", "gpuconvolve"
  };
  for (guint i = 0; i < G_N_ELEMENTS (domains); i++)
    g_log_set_handler (domains[i], G_LOG_LEVEL_MASK | G_LOG_FLAG_FATAL
        | G_LOG_FLAG_RECURSION, fuzz_log_handler, NULL);
}

/* GStreamer for one process: no system plugins to scan (the element is
 * linked in), its own registry and data folders, no debug output. */
#ifdef GST_FUZZ_WITH_GSTREAMER
static inline void
fuzz_gst_init (void)
{
  gchar *dir = g_dir_make_tmp ("gcv-fuzz-XXXXXX", NULL);
  gchar *registry = g_build_filename (dir, "registry.bin", NULL);
  gchar *data = g_build_filename (dir, "data", NULL);

  g_setenv ("GST_PLUGIN_SYSTEM_PATH_1_0", "", TRUE);
  g_setenv ("GST_PLUGIN_PATH_1_0", "", TRUE);
  g_setenv ("GST_REGISTRY_1_0", registry, TRUE);
  g_setenv ("GST_REGISTRY_FORK", "no", TRUE);
  g_setenv ("XDG_DATA_HOME", data, TRUE);
  g_setenv ("XDG_CONFIG_HOME", data, TRUE);
  g_setenv ("XDG_CACHE_HOME", data, TRUE);
  g_unsetenv ("GST_DEBUG");
  g_unsetenv ("GST_TRACERS");
  gst_init (NULL, NULL);
  fuzz_setup_logging ();
  g_free (registry);
  g_free (data);
  g_free (dir);
}
#endif

#endif /* GCV_FUZZ_COMMON_H */
