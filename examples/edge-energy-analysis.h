/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The edge-energy analysis: per-frame edge statistics of a video, as CSV
 * (frame,pts,energy,fraction). Used by examples/edge-energy (the program)
 * and by gpuconvolve-batch-run's warm workers (tools/batch), which run it
 * on file after file in one process. edge-energy-analysis.c says how. */
#pragma once

#include <gst/gst.h>
#include <stdio.h>

G_BEGIN_DECLS

#define EDGE_ENERGY_DEFAULT_THRESHOLD 0.5

/* How decoded video reaches gpuconvolve. */
typedef enum
{
  EDGE_ENERGY_PATH_AUTO,        /* CUDA memory where the decoder gives it */
  EDGE_ENERGY_PATH_GPU,         /* that, or an error */
  EDGE_ENERGY_PATH_HOST,        /* videoconvert to GRAY8 */
} EdgeEnergyPath;

/* Where the frames are reduced to their two numbers. */
typedef enum
{
  /* one gpuconvolve filter=sobel with statistics=true: the numbers come
   * from its statistics meta, the frames are never mapped (default) */
  EDGE_ENERGY_REDUCE_STATISTICS,
  /* the reference: sobel-x and sobel-y as GRAY32F into two appsinks,
   * reduced here on the CPU */
  EDGE_ENERGY_REDUCE_HOST,
} EdgeEnergyReduce;

typedef struct
{
  const gchar *backend;         /* "auto", "cuda" or "cpu" */
  EdgeEnergyPath path;
  EdgeEnergyReduce reduce;
  gdouble threshold;            /* strong edge: magnitude above this */
  /* a file's path or URI, or NULL for the test source */
  const gchar *input;
  gboolean input_is_path;       /* input is a path, never read as a URI */
  /* the test source */
  gint frames, width, height;
  const gchar *pattern;
  /* g_get_monotonic_time() past which the run stops and fails; 0: none */
  gint64 deadline;
  /* after each CSV row, with the rows so far (from a streaming thread) */
  void (*on_frame) (guint frames, gpointer data);
  /* with the pipeline right after it is made (done FALSE) and before it
   * is let go (done TRUE): a caller that runs file after file shares
   * contexts (the CUDA context) between its pipelines here */
  void (*on_pipeline) (GstElement * pipeline, gboolean done, gpointer data);
  gpointer data;
} EdgeEnergyOptions;

typedef struct
{
  guint frames;                 /* CSV rows written */
  gboolean timed_out;           /* stopped at the deadline */
  /* what each gpuconvolve element ran: name, active-algorithm, name, ... */
  GPtrArray *algorithms;
} EdgeEnergyResult;

typedef enum
{
  EDGE_ENERGY_OK = 0,
  EDGE_ENERGY_FAILED = 1,       /* the file or the pipeline failed */
  EDGE_ENERGY_USAGE = 2,        /* the options do not fit together */
} EdgeEnergyStatus;

void edge_energy_options_init (EdgeEnergyOptions * options);

gboolean edge_energy_parse_path (const gchar * text, EdgeEnergyPath * path);
gboolean edge_energy_parse_reduce (const gchar * text,
    EdgeEnergyReduce * reduce);
gboolean edge_energy_backend_valid (const gchar * text);

/* Runs the analysis, writing the CSV (header and a line per frame) to
 * `out`; what went wrong goes to stderr, each line starting with
 * "edge-energy: ". `result` is filled in whatever the status; clear it
 * with edge_energy_result_clear(). Needs gst_init(); may be called again
 * and again in one process. */
EdgeEnergyStatus edge_energy_run (const EdgeEnergyOptions * options,
    FILE * out, EdgeEnergyResult * result);

void edge_energy_result_clear (EdgeEnergyResult * result);

G_END_DECLS
