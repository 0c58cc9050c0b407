/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-batch-run's messages (batch-log.h). A worker runs several
 * jobs at once, each in a thread of its own: what a job prints (its
 * errors, warnings and bus messages, all printed from the thread that runs
 * it) is kept per thread, not by redirecting the process's descriptors,
 * which every thread shares. What other threads print (GStreamer's
 * streaming threads, the debug log) goes to the worker's own output. */
#include "batch-log.h"

#include <stdio.h>
#include <string.h>

/* a failed job's output kept: its start and its end */
#define LOG_HEAD (256 << 10)
#define LOG_TAIL (64 << 10)

struct _BatchJobLog
{
  GString *head, *tail;
  gboolean cut;                 /* something between head and tail dropped */
};

static GPrivate collected = G_PRIVATE_INIT (NULL);      /* GString */
static GPrivate job_log = G_PRIVATE_INIT (NULL);        /* BatchJobLog */

static void
job_log_append (BatchJobLog * log, const gchar * text, gsize len)
{
  gsize room = LOG_HEAD - log->head->len;

  if (room) {
    g_string_append_len (log->head, text, MIN (room, len));
    if (len <= room)
      return;
    text += room;
    len -= room;
  }
  g_string_append_len (log->tail, text, len);
  if (log->tail->len > 2 * LOG_TAIL) {
    g_string_erase (log->tail, 0, log->tail->len - LOG_TAIL);
    log->cut = TRUE;
  }
}

static void
print_to (const gchar * text, FILE * stream)
{
  BatchJobLog *log = g_private_get (&job_log);

  if (log) {
    job_log_append (log, text, strlen (text));
  } else {
    fputs (text, stream);
    fflush (stream);
  }
}

static void
on_print (const gchar * text)
{
  print_to (text, stdout);
}

static void
on_printerr (const gchar * text)
{
  print_to (text, stderr);
}

static GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField * fields, gsize n_fields,
    gpointer user_data)
{
  GString *text = g_private_get (&collected);
  BatchJobLog *log = g_private_get (&job_log);

  if (text && (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL))) {
    for (gsize i = 0; i < n_fields; i++) {
      if (!g_str_equal (fields[i].key, "MESSAGE"))
        continue;
      if (text->len)
        g_string_append (text, "; ");
      g_string_append_len (text, fields[i].value, fields[i].length);
    }
    return G_LOG_WRITER_HANDLED;
  }
  if (log && !g_log_writer_default_would_drop (level, NULL)) {
    gchar *line = g_log_writer_format_fields (level, fields, n_fields, FALSE);
    job_log_append (log, line, strlen (line));
    job_log_append (log, "\n", 1);
    g_free (line);
    /* (what aborts still aborts) */
    return (level & G_LOG_FLAG_FATAL) ? g_log_writer_default (level, fields,
        n_fields, user_data) : G_LOG_WRITER_HANDLED;
  }
  return g_log_writer_default (level, fields, n_fields, user_data);
}

void
batch_collect_begin (void)
{
  g_assert (g_private_get (&collected) == NULL);
  g_private_set (&collected, g_string_new (NULL));
}

gchar *
batch_collect_end (void)
{
  GString *text = g_private_get (&collected);

  g_private_set (&collected, NULL);
  if (!text->len) {
    g_string_free (text, TRUE);
    return NULL;
  }
  return g_string_free (text, FALSE);
}

BatchJobLog *
batch_job_log_begin (void)
{
  BatchJobLog *log = g_new0 (BatchJobLog, 1);

  log->head = g_string_new (NULL);
  log->tail = g_string_new (NULL);
  g_private_set (&job_log, log);
  return log;
}

GBytes *
batch_job_log_end (BatchJobLog * log)
{
  GString *text = log->head;

  g_private_set (&job_log, NULL);
  if (log->tail->len > LOG_TAIL) {
    g_string_erase (log->tail, 0, log->tail->len - LOG_TAIL);
    log->cut = TRUE;
  }
  if (log->cut)
    g_string_append (text, "\n...\n");
  g_string_append_len (text, log->tail->str, log->tail->len);
  g_string_free (log->tail, TRUE);
  g_free (log);
  return g_string_free_to_bytes (text);
}

void
batch_log_init (void)
{
  g_set_print_handler (on_print);
  g_set_printerr_handler (on_printerr);
  g_log_set_writer_func (log_writer, NULL, NULL);
}
