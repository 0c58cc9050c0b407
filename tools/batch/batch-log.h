/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where gpuconvolve-batch-run's messages go: GLib's warnings collected as
 * errors where a value is set, and each job's own output (g_print,
 * g_printerr and GLib's log) kept apart per thread, so that jobs that run
 * side by side in one worker each get their own (batch-log.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Installs the handlers; once, first. */
void batch_log_init (void);
/* While collecting (in this thread), GLib's warnings and criticals are
 * kept instead of printed: they are errors where they are collected. */
void batch_collect_begin (void);
/* What was collected since batch_collect_begin(), or NULL when nothing. */
gchar *batch_collect_end (void);

/* A job's output: its start and its end where long. */
typedef struct _BatchJobLog BatchJobLog;

/* From now on, what this thread prints goes into a new log. */
BatchJobLog *batch_job_log_begin (void);
/* Back to the process's own output; the text, the log freed. */
GBytes *batch_job_log_end (BatchJobLog * log);

G_END_DECLS
