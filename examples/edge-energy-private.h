/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What edge-energy-analysis.c and edge-energy-host.c (the host reduction)
 * share; not for programs. */
#pragma once

#include "edge-energy-analysis.h"

G_BEGIN_DECLS

#define CUDA_FEATURE "memory:CUDAMemory"

/* One run of the analysis. */
typedef struct
{
  const EdgeEnergyOptions *options;
  GstElement *pipeline;
  /* where the video goes in: the statistics element, or the tee before
   * the two derivative elements */
  GstPad *entry;
  gboolean gpu_possible;        /* gpuconvolve may take CUDA memory */
  GRecMutex lock;               /* guards what follows */
  gboolean linked;
  gchar *decoder;               /* factory of the video decoder, or NULL */
  gchar *path;                  /* the path linked, for stderr */
  gchar *link_error;            /* why the decoded video was not linked */
  /* written by the thread that reduces: the CSV, its rows */
  FILE *out;
  guint frames;
  gboolean meta_missing;        /* the statistics path: a frame without */
} App;

/* An element, or NULL after saying that it is missing. */
GstElement *ee_make (const gchar * factory, const gchar * name);
GstElement *ee_make_caps_filter (const gchar * caps_str);
/* Adds the `n` elements that were made (not NULL) to the pipeline, which
 * then owns them; FALSE when one is missing. */
gboolean ee_add_all (App * app, GstElement ** elements, guint n);
/* Handles what is on the bus now; FALSE after an error (printed). */
gboolean ee_poll_bus (GstBus * bus);
/* Whether the deadline (0: none) has passed. */
gboolean ee_past (gint64 deadline);
/* One CSV line: the same text whichever reduction made the numbers. */
void ee_print_row (FILE * out, guint n, GstClockTime pts, gdouble energy,
    gdouble fraction);

/* edge-energy-host.c: tee ! queue ! gpuconvolve ! GRAY32F ! appsink, in x
 * and in y; returns the tee (the entry), the sinks in `sinks`. */
GstElement *ee_build_host (App * app, GPtrArray * elements,
    GstElement ** sinks);
/* Pulls both derivatives frame by frame and reduces them; FALSE on an
 * error (printed). */
gboolean ee_reduce_on_host (App * app, GstBus * bus, GstElement ** sinks,
    EdgeEnergyResult * result);

G_END_DECLS
