/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --check-dispatch: at points between the tuned ones, every candidate
 * variant measured, and the dispatcher's picks timed against the best:
 * with the tuning table (within 10%) and with none, by the heuristic
 * (within 25%). */
#ifndef BENCH_CHECK_DISPATCH_H
#define BENCH_CHECK_DISPATCH_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gint device;
  guint32 seed;
  const char *tuning_file;      /* NULL: the user cache table of the GPU */
  const char *formats;          /* NULL: GRAY32F,RGBA */
  const char *sizes;            /* NULL: 1280x720,2560x1440,3840x2160 */
  const char *kernels;          /* NULL: sizes between the tuned ones */
  gboolean forms[2];            /* by BenchForm */
  gboolean quick;               /* a few points */
  double noise_ms;              /* a pick this close to the best passes */
} BenchDispatchCheck;

/* Prints one row per point and a summary; returns the exit status: 0 when
 * every pick is within its bound, 1 otherwise. Must run before anything in
 * the process looks up a tuning table or GLib's user cache folder: it
 * points both at an empty folder so that the table-less engine finds none. */
int bench_check_dispatch (const BenchDispatchCheck * check);

G_END_DECLS

#endif /* BENCH_CHECK_DISPATCH_H */
