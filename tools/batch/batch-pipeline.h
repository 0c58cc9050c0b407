/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gst-launch-1.0 description run on one file with the file's paths kept
 * out of its text, for gpuconvolve-batch-run (batch-pipeline.c says how). */
#pragma once

#include <gst/gst.h>

#include "batch-log.h"

G_BEGIN_DECLS

#define BATCH_PROGRAM "gpuconvolve-batch-run"
/* seconds a pipeline has to preroll, as the edge-energy analysis has */
#define BATCH_PREROLL_SECONDS 30

typedef enum
{
  BATCH_OK = 0,
  BATCH_FAILED = 1,             /* the file or its pipeline failed */
  BATCH_REFUSED = 2,            /* the arguments or the description */
  BATCH_MISSING = 3,            /* only an element is missing here */
} BatchStatus;

/* Error domain of the refusals: the code is a BatchStatus. */
#define BATCH_ERROR (g_quark_from_static_string (BATCH_PROGRAM))

/* {input}, {output}: the paths' places in the description. */
enum
{
  BATCH_INPUT,
  BATCH_OUTPUT,
  BATCH_N_PATHS
};

/* A description with {input} and {output} replaced by placeholders. */
typedef struct
{
  gchar **words;
  gchar *marks[BATCH_N_PATHS];  /* the placeholders */
  guint counts[BATCH_N_PATHS];  /* how often each stands in the words */
} BatchTemplate;

/* How one pipeline runs, and what it ran. */
typedef struct
{
  /* g_get_monotonic_time() past which it stops and fails; 0: none */
  gint64 deadline;
  /* seconds it has to preroll (its sinks' first buffers) before it
   * fails; 0: BATCH_PREROLL_SECONDS */
  gdouble preroll;
  /* with the pipeline once it is made (done FALSE) and before it is let
   * go (done TRUE); NULL: none */
  void (*on_pipeline) (GstElement * pipeline, gboolean done, gpointer data);
  gpointer data;
  /* out: it stopped at the deadline */
  gboolean timed_out;
  /* out: each gpuconvolve element's last active-algorithm, as name,
   * value, name, value...; made by batch_run_job */
  GPtrArray *algorithms;
} BatchPlay;

gboolean batch_set_from_string (GObject * object, const gchar * name,
    const gchar * value, GError ** error);

void batch_template_init (BatchTemplate * t, gchar ** words);
void batch_template_clear (BatchTemplate * t);

GstElement *batch_build_pipeline (const BatchTemplate * t,
    const gchar * paths[BATCH_N_PATHS], GError ** error);

GstElement *batch_make_gpuconvolve (void);

/* One file through the description, to the end of the stream: what a
 * single run and each job of a server do. `play` may be NULL; its
 * algorithms are made here (free them with g_ptr_array_unref). */
BatchStatus batch_run_job (const BatchTemplate * t, const gchar * input,
    const gchar * output, BatchPlay * play);

G_END_DECLS
