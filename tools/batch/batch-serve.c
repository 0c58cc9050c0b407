/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-batch-run serve: the warm worker of a gpuconvolve-batch
 * worker, one a GPU (docs/batch.md; tools/batch/gpuconvolve_batch/serve.py
 * is the other end). It loads GStreamer, the registry, gpuconvolve, nvcodec
 * and the CUDA context once, before the first job, and runs the jobs sent
 * to it, each in a thread of its own, side by side: a file through a
 * description (batch-pipeline.c) or the edge-energy analysis
 * (examples/edge-energy-analysis.c). Every pipeline gets the one CUDA
 * context of the process (GstContext), so that the decoders and
 * gpuconvolve of all its files share it.
 *
 * Messages, both ways: a 32-bit little-endian count of items, then each
 * item as a 32-bit little-endian length and that many bytes. Items go in
 * pairs, a key then its value; a key may repeat (its values keep their
 * order). A path is a value as it is, never put into text.
 *
 * Requests, on standard input (the end of it ends the worker, once its
 * jobs have ended); each starts at once, beside those running:
 *   job pipeline      id, input, output, timeout, optionally preroll
 *                     (seconds it has to preroll, default 30, as the
 *                     edge-energy analysis has), then word for each word
 *                     of the description ({input} and {output} in them)
 *   job edge-energy   id, input, output, timeout, and optionally backend,
 *                     path, reduce and threshold (edge-energy's options)
 * timeout: seconds the job may run, 0 for no limit; the job stops itself
 * there (its pipeline is stopped) and the worker goes on. id names the
 * job in its replies: unique among the jobs running.
 *
 * Replies, on standard output:
 *   reply ready       pid, gstreamer (its version); once, when loaded
 *   reply progress    id, frames: edge-energy, after the first frame and
 *                     then at most every half second
 *   reply result      id, status (0 done, 1 failed, 2 the request or the
 *                     description refused), frames (edge-energy), timed-out
 *                     (0 or 1), no-video (1: the job failed and its input
 *                     holds streams, none of them video), seconds, then
 *                     element and algorithm for
 *                     each gpuconvolve element (its last active-algorithm),
 *                     and log: the job's standard output and error (its
 *                     start and its end when long)
 * The jobs' replies interleave, each whole. The jobs' own output never
 * mixes with the replies: at the start the requests and replies move to
 * descriptors of their own, standard input and output become /dev/null,
 * and what a job's thread prints is kept for its reply (batch-log.c).
 */
#include "batch-serve.h"
#include "batch-pipeline.h"
#include "edge-energy-analysis.h"

#include <gst/pbutils/pbutils.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_ITEMS (1 << 16)
#define MAX_ITEM (16 << 20)
#define PROGRESS_INTERVAL (G_USEC_PER_SEC / 2)
/* how long a failed job's input may take to show its streams */
#define DISCOVER_SECONDS 10
/* GStreamer's CUDA context (GST_CUDA_CONTEXT_TYPE), one a process */
#define CUDA_CONTEXT_TYPE "gst.cuda.context"

typedef struct
{
  int requests, replies;        /* the protocol's descriptors */
  int null_fd;
  GMutex write_lock;
  GMutex lock;                  /* cuda and running */
  GCond ended;
  GstContext *cuda;             /* the process's CUDA context, or NULL */
  guint running;                /* jobs running */
} Serve;

/* A job, in its own thread. */
typedef struct
{
  Serve *s;
  GPtrArray *req;
  gchar *id;
  gint64 last_progress;
} Job;

/* ---- messages ---------------------------------------------------------- */

/* FALSE at the end of the input (nothing read) or on an error (*broken). */
static gboolean
read_full (int fd, void *buf, gsize n, gboolean * broken)
{
  gsize done = 0;

  while (done < n) {
    ssize_t r = read (fd, (guint8 *) buf + done, n - done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      *broken = r < 0 || done > 0;
      return FALSE;
    }
    done += r;
  }
  return TRUE;
}

static gboolean
read_u32 (int fd, guint32 * v, gboolean * broken)
{
  guint8 b[4];

  if (!read_full (fd, b, 4, broken))
    return FALSE;
  *v = b[0] | b[1] << 8 | b[2] << 16 | (guint32) b[3] << 24;
  return TRUE;
}

/* The next message, as GBytes items; NULL at the end of the input, or
 * with *broken set when it is not a message. */
static GPtrArray *
read_message (int fd, gboolean * broken)
{
  GPtrArray *items;
  guint32 count, len;

  *broken = FALSE;
  if (!read_u32 (fd, &count, broken))
    return NULL;
  if (count % 2 || count > MAX_ITEMS) {
    *broken = TRUE;
    return NULL;
  }
  items = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint32 i = 0; i < count; i++) {
    guint8 *data;
    if (!read_u32 (fd, &len, broken) || len > MAX_ITEM) {
      *broken = TRUE;
      g_ptr_array_unref (items);
      return NULL;
    }
    data = g_malloc (len ? len : 1);
    if (len && !read_full (fd, data, len, broken)) {
      *broken = TRUE;
      g_free (data);
      g_ptr_array_unref (items);
      return NULL;
    }
    g_ptr_array_add (items, g_bytes_new_take (data, len));
  }
  return items;
}

static gboolean
key_is (GBytes * item, const gchar * key)
{
  gsize len;
  const gchar *data = g_bytes_get_data (item, &len);

  return len == strlen (key) && memcmp (data, key, len) == 0;
}

/* The `n`th value of `key` as a string; NULL when there is none, or when
 * it holds a NUL byte (no path or word does). */
static gchar *
value_of (GPtrArray * message, const gchar * key, guint n)
{
  for (guint i = 0; i + 1 < message->len; i += 2) {
    GBytes *v;
    const gchar *data;
    gsize len;

    if (!key_is (g_ptr_array_index (message, i), key) || n-- > 0)
      continue;
    v = g_ptr_array_index (message, i + 1);
    data = g_bytes_get_data (v, &len);
    return len && memchr (data, '\0', len) ? NULL : g_strndup (data, len);
  }
  return NULL;
}

static GPtrArray *
reply_new (const gchar * kind)
{
  GPtrArray *r = g_ptr_array_new_with_free_func ((GDestroyNotify)
      g_bytes_unref);

  g_ptr_array_add (r, g_bytes_new_static ("reply", 5));
  g_ptr_array_add (r, g_bytes_new (kind, strlen (kind)));
  return r;
}

static void
reply_add (GPtrArray * r, const gchar * key, const gchar * value)
{
  g_ptr_array_add (r, g_bytes_new (key, strlen (key)));
  g_ptr_array_add (r, g_bytes_new (value, strlen (value)));
}

static void
put_u32 (GByteArray * out, guint32 v)
{
  guint8 b[4] = { v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24 };

  g_byte_array_append (out, b, 4);
}

/* Sends `r` whole (and frees it); from any thread. A reader that is gone
 * ends the process (SIGPIPE): the worker has no one left to work for. */
static void
send_reply (Serve * s, GPtrArray * r)
{
  GByteArray *out = g_byte_array_new ();
  gsize done = 0;

  put_u32 (out, r->len);
  for (guint i = 0; i < r->len; i++) {
    gsize len;
    const guint8 *data = g_bytes_get_data (g_ptr_array_index (r, i), &len);
    put_u32 (out, len);
    g_byte_array_append (out, data, len);
  }
  g_mutex_lock (&s->write_lock);
  while (done < out->len) {
    ssize_t w = write (s->replies, out->data + done, out->len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      break;
    done += w;
  }
  g_mutex_unlock (&s->write_lock);
  g_byte_array_unref (out);
  g_ptr_array_unref (r);
}

/* ---- what jobs share --------------------------------------------------- */

/* Answers a CUDA element's NEED_CONTEXT with the process's context (where
 * the pipeline's bin had none to give), and keeps the first context an
 * element made where the process had none yet (no GPU at start-up, or a
 * pipeline without gpuconvolve). */
static GstBusSyncReply
on_sync_message (GstBus * bus, GstMessage * msg, gpointer data)
{
  Serve *s = data;
  const gchar *type = NULL;
  GstContext *context = NULL;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_NEED_CONTEXT
      && gst_message_parse_context_type (msg, &type)
      && g_str_equal (type, CUDA_CONTEXT_TYPE)) {
    g_mutex_lock (&s->lock);
    context = s->cuda ? gst_context_ref (s->cuda) : NULL;
    g_mutex_unlock (&s->lock);
    if (context) {
      gst_element_set_context (GST_ELEMENT (GST_MESSAGE_SRC (msg)), context);
      gst_context_unref (context);
    }
  } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_HAVE_CONTEXT) {
    gst_message_parse_have_context (msg, &context);
    g_mutex_lock (&s->lock);
    if (context && !s->cuda && g_str_equal (gst_context_get_context_type
            (context), CUDA_CONTEXT_TYPE))
      s->cuda = gst_context_ref (context);
    g_mutex_unlock (&s->lock);
    if (context)
      gst_context_unref (context);
  }
  return GST_BUS_PASS;
}

/* The process's CUDA context goes to each new pipeline (a bin hands its
 * contexts to every element added to it, decoders included, and answers
 * their NEED_CONTEXT), so that no element of any file makes a context of
 * its own: one context a GPU, not one a file. */
static void
on_pipeline (GstElement * pipeline, gboolean done, gpointer data)
{
  Serve *s = ((Job *) data)->s;
  GstBus *bus;

  if (done)
    return;
  g_mutex_lock (&s->lock);
  if (s->cuda)
    gst_element_set_context (pipeline, s->cuda);
  g_mutex_unlock (&s->lock);
  bus = gst_element_get_bus (pipeline);
  gst_bus_set_sync_handler (bus, on_sync_message, s, NULL);
  gst_object_unref (bus);
}

/* The CUDA context made before the first job: a gpuconvolve (backend
 * auto) started in a pipeline of its own makes it, or finds no GPU (the
 * CPU backend: nothing to share). What the first file would pay,
 * cuCtxCreate and loading the CUDA library, is the worker's start-up. */
static void
warm_up_cuda (Serve * s)
{
  GstElement *pipeline = gst_pipeline_new ("warm-up");
  GstElement *element = gst_element_factory_make ("gpuconvolve", NULL);
  GstBus *bus = gst_element_get_bus (pipeline);

  if (element) {
    gst_bin_add (GST_BIN (pipeline), element);
    gst_bus_set_sync_handler (bus, on_sync_message, s, NULL);
    gst_element_set_state (pipeline, GST_STATE_PAUSED);
    gst_element_set_state (pipeline, GST_STATE_NULL);
  }
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  GST_INFO ("CUDA context for every job: %" GST_PTR_FORMAT, s->cuda);
}

static void
on_frame (guint frames, gpointer data)
{
  Job *job = data;
  gint64 now = g_get_monotonic_time ();
  GPtrArray *r;
  gchar *n;

  if (frames != 1 && now - job->last_progress < PROGRESS_INTERVAL)
    return;
  job->last_progress = now;
  r = reply_new ("progress");
  n = g_strdup_printf ("%u", frames);
  reply_add (r, "id", job->id);
  reply_add (r, "frames", n);
  g_free (n);
  send_reply (job->s, r);
}

/* ---- the two kinds of job ---------------------------------------------- */

static BatchStatus
run_pipeline (Job * job, GPtrArray * req, const gchar * input,
    const gchar * output, gint64 deadline, gboolean * timed_out,
    GPtrArray ** algorithms)
{
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);
  BatchPlay how = { 0 };
  BatchTemplate t;
  BatchStatus status;
  gchar *word, *preroll = value_of (req, "preroll", 0), *end = NULL;

  if (preroll) {
    how.preroll = g_ascii_strtod (preroll, &end);
    if (end == preroll || *end || !(how.preroll > 0)) {
      g_printerr (BATCH_PROGRAM ": error: the request: preroll %s\n", preroll);
      g_free (preroll);
      g_ptr_array_unref (words);
      return BATCH_REFUSED;
    }
    g_free (preroll);
  }
  while ((word = value_of (req, "word", words->len)))
    g_ptr_array_add (words, word);
  if (!words->len) {
    g_printerr (BATCH_PROGRAM ": error: the request: a pipeline job with no "
        "description (word)\n");
    g_ptr_array_unref (words);
    return BATCH_REFUSED;
  }
  g_ptr_array_add (words, NULL);
  batch_template_init (&t, (gchar **) words->pdata);
  how.deadline = deadline;
  how.on_pipeline = on_pipeline;
  how.data = job;
  status = batch_run_job (&t, input, output, &how);
  *timed_out = how.timed_out;
  *algorithms = how.algorithms;
  batch_template_clear (&t);
  g_ptr_array_unref (words);
  return status;
}

/* The options of an edge-energy request; FALSE (printed) for a bad one. */
static gboolean
edge_energy_options (GPtrArray * req, EdgeEnergyOptions * o, gchar ** backend)
{
  gchar *path = value_of (req, "path", 0), *reduce = value_of (req,
      "reduce", 0), *threshold = value_of (req, "threshold", 0), *end = NULL;
  gboolean ok = TRUE;

  *backend = value_of (req, "backend", 0);
  if (*backend)
    o->backend = *backend;
  if (path && !edge_energy_parse_path (path, &o->path)) {
    g_printerr (BATCH_PROGRAM ": error: the request: path %s\n", path);
    ok = FALSE;
  }
  if (reduce && !edge_energy_parse_reduce (reduce, &o->reduce)) {
    g_printerr (BATCH_PROGRAM ": error: the request: reduce %s\n", reduce);
    ok = FALSE;
  }
  if (threshold) {
    o->threshold = g_ascii_strtod (threshold, &end);
    if (end == threshold || *end) {
      g_printerr (BATCH_PROGRAM ": error: the request: threshold %s\n",
          threshold);
      ok = FALSE;
    }
  }
  g_free (path);
  g_free (reduce);
  g_free (threshold);
  return ok;
}

/* The temporary output, written through stdio with the first write error
 * kept: where a disk fills in the middle of the stream, stdio notes the
 * failure (ferror), drops the buffer and takes the next rows again, and
 * fclose() of an emptied buffer reports nothing. The output must fail
 * with the OS's reason, not be published short. */
typedef struct
{
  int fd;
  int error;                    /* errno of the first failed write, or 0 */
} Output;

static ssize_t
output_write (void *cookie, const char *buf, size_t n)
{
  Output *o = cookie;
  size_t done = 0;

  while (done < n) {
    ssize_t w = write (o->fd, buf + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0) {
      if (!o->error)
        o->error = errno;
      return done ? (ssize_t) done : -1;
    }
    done += w;
  }
  return done;
}

/* Opens the temporary output (which the batch made); NULL with errno. */
static FILE *
output_open (const gchar * path, Output * o)
{
  cookie_io_functions_t io = { .write = output_write };
  FILE *out;

  o->error = 0;
  o->fd = open (path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  if (o->fd < 0)
    return NULL;
  out = fopencookie (o, "w", io);
  if (!out) {
    int err = errno;
    close (o->fd);
    errno = err;
  }
  return out;
}

/* Flushes, syncs (fsync() reports data the kernel could not write back)
 * and closes; FALSE, printed with the OS's reason, where a write failed. */
static gboolean
output_close (FILE * out, Output * o)
{
  int err;

  fflush (out);
  fclose (out);
  err = o->error;
  if (!err && fsync (o->fd) != 0)
    err = errno;
  if (close (o->fd) != 0 && !err && errno != EINTR)
    err = errno;
  if (err)
    g_printerr (BATCH_PROGRAM ": error: cannot write the temporary output: "
        "%s\n", g_strerror (err));
  return err == 0;
}

/* The analysis, its CSV into the output (the temporary file the batch
 * made for it, which must exist). */
static BatchStatus
run_edge_energy (Job * job, GPtrArray * req, const gchar * input,
    const gchar * output, gint64 deadline, gboolean * timed_out,
    guint * frames, GPtrArray ** algorithms)
{
  EdgeEnergyOptions o;
  EdgeEnergyResult result;
  EdgeEnergyStatus status;
  gchar *backend = NULL;
  Output sink;
  FILE *out;

  edge_energy_options_init (&o);
  if (!edge_energy_options (req, &o, &backend)) {
    g_free (backend);
    return BATCH_REFUSED;
  }
  o.input = input;
  o.input_is_path = TRUE;
  o.deadline = deadline;
  o.on_frame = on_frame;
  o.on_pipeline = on_pipeline;
  o.data = job;
  out = output_open (output, &sink);
  if (!out) {
    g_printerr (BATCH_PROGRAM ": error: cannot open the temporary output: "
        "%s\n", g_strerror (errno));
    g_free (backend);
    return BATCH_FAILED;
  }
  status = edge_energy_run (&o, out, &result);
  if (!output_close (out, &sink) && status == EDGE_ENERGY_OK)
    status = EDGE_ENERGY_FAILED;
  *timed_out = result.timed_out;
  *frames = result.frames;
  *algorithms = g_steal_pointer (&result.algorithms);
  edge_energy_result_clear (&result);
  g_free (backend);
  return status == EDGE_ENERGY_OK ? BATCH_OK : status == EDGE_ENERGY_USAGE ?
      BATCH_REFUSED : BATCH_FAILED;
}

/* TRUE where `input` is media that holds streams, none of them video: an
 * audio-only file, whose job fails with a demuxer's "Internal data stream
 * error" (its audio linked nowhere). Asked only once a job failed. */
static gboolean
has_no_video (const gchar * input)
{
  GstDiscoverer *discoverer = gst_discoverer_new (DISCOVER_SECONDS *
      GST_SECOND, NULL);
  gchar *uri = gst_filename_to_uri (input, NULL);
  GstDiscovererInfo *info = discoverer && uri ?
      gst_discoverer_discover_uri (discoverer, uri, NULL) : NULL;
  gboolean no_video = FALSE;

  if (info && gst_discoverer_info_get_result (info) == GST_DISCOVERER_OK) {
    GList *all = gst_discoverer_info_get_stream_list (info);
    GList *video = gst_discoverer_info_get_video_streams (info);
    no_video = all && !video;
    gst_discoverer_stream_info_list_free (all);
    gst_discoverer_stream_info_list_free (video);
  }
  g_clear_object (&info);
  g_clear_object (&discoverer);
  g_free (uri);
  return no_video;
}

/* One job, in a thread of its own; its reply sent, it is freed. */
static gpointer
run_job (gpointer data)
{
  Job *job = data;
  Serve *s = job->s;
  GPtrArray *req = job->req;
  gchar *kind = value_of (req, "job", 0), *input = value_of (req, "input", 0);
  gchar *output = value_of (req, "output", 0);
  gchar *timeout = value_of (req, "timeout", 0), *end = NULL;
  gint64 start = g_get_monotonic_time (), deadline = 0;
  GPtrArray *algorithms = NULL, *r;
  gboolean timed_out = FALSE, no_video = FALSE, edge_energy = g_strcmp0 (kind, "edge-energy")
      == 0;
  BatchStatus status = BATCH_REFUSED;
  guint frames = 0;
  gdouble seconds = timeout ? g_ascii_strtod (timeout, &end) : -1;
  BatchJobLog *log = batch_job_log_begin ();
  gchar *text;

  if (!kind || !input || !output || !timeout) {
    g_printerr (BATCH_PROGRAM ": error: the request: a job needs job, id, "
        "input, output and timeout (paths without NUL bytes)\n");
  } else if (end == timeout || *end || !(seconds >= 0)) {
    g_printerr (BATCH_PROGRAM ": error: the request: timeout %s\n", timeout);
  } else {
    deadline = seconds > 0 ? start + (gint64) (seconds * G_USEC_PER_SEC) : 0;
    if (edge_energy)
      status = run_edge_energy (job, req, input, output, deadline, &timed_out,
          &frames, &algorithms);
    else if (g_str_equal (kind, "pipeline"))
      status = run_pipeline (job, req, input, output, deadline, &timed_out,
          &algorithms);
    else
      g_printerr (BATCH_PROGRAM ": error: the request: no job %s\n", kind);
    no_video = status == BATCH_FAILED && !timed_out && has_no_video (input);
  }

  r = reply_new ("result");
  reply_add (r, "id", job->id);
  text = g_strdup_printf ("%d", status);
  reply_add (r, "status", text);
  g_free (text);
  if (edge_energy) {
    text = g_strdup_printf ("%u", frames);
    reply_add (r, "frames", text);
    g_free (text);
  }
  reply_add (r, "timed-out", timed_out ? "1" : "0");
  reply_add (r, "no-video", no_video ? "1" : "0");
  text = g_strdup_printf ("%.3f", (g_get_monotonic_time () - start) / 1e6);
  reply_add (r, "seconds", text);
  g_free (text);
  for (guint i = 0; algorithms && i + 1 < algorithms->len; i += 2) {
    reply_add (r, "element", g_ptr_array_index (algorithms, i));
    reply_add (r, "algorithm", g_ptr_array_index (algorithms, i + 1));
  }
  g_ptr_array_add (r, g_bytes_new_static ("log", 3));
  g_ptr_array_add (r, batch_job_log_end (log));
  send_reply (s, r);

  if (algorithms)
    g_ptr_array_unref (algorithms);
  g_free (kind);
  g_free (input);
  g_free (output);
  g_free (timeout);
  g_free (job->id);
  g_ptr_array_unref (job->req);
  g_free (job);

  g_mutex_lock (&s->lock);
  s->running--;
  g_cond_signal (&s->ended);
  g_mutex_unlock (&s->lock);
  return NULL;
}

/* Starts `req` beside the jobs running (and takes it). */
static void
start_job (Serve * s, GPtrArray * req)
{
  Job *job = g_new0 (Job, 1);
  GThread *thread;
  GError *error = NULL;

  job->s = s;
  job->req = req;
  job->id = value_of (req, "id", 0);
  if (!job->id)
    job->id = g_strdup ("");
  g_mutex_lock (&s->lock);
  s->running++;
  g_mutex_unlock (&s->lock);
  /* (detached: its resources go when it ends) */
  thread = g_thread_try_new ("job", run_job, job, &error);
  if (thread) {
    g_thread_unref (thread);
    return;
  }
  /* (no thread: run it here, in turn) */
  g_printerr (BATCH_PROGRAM ": serve: %s\n", error->message);
  g_clear_error (&error);
  run_job (job);
}

/* Loads a plugin now, so that its cost (nvcodec opens the GPUs it sees)
 * is the worker's start-up, not its first job's. */
static void
preload (const gchar * name)
{
  GstPlugin *plugin = gst_registry_find_plugin (gst_registry_get (), name);
  GstPlugin *loaded;

  if (!plugin)
    return;
  loaded = gst_plugin_load (plugin);
  if (loaded)
    gst_object_unref (loaded);
  gst_object_unref (plugin);
}

int
batch_serve (void)
{
  Serve s = { 0 };
  GPtrArray *r, *req;
  gboolean broken = FALSE;
  gchar *text;

  s.requests = fcntl (STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  s.replies = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  s.null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (s.requests < 0 || s.replies < 0 || s.null_fd < 0
      || dup2 (s.null_fd, STDIN_FILENO) < 0
      || dup2 (s.null_fd, STDOUT_FILENO) < 0) {
    g_printerr (BATCH_PROGRAM ": error: serve: %s\n", g_strerror (errno));
    return BATCH_FAILED;
  }
  g_mutex_init (&s.write_lock);
  g_mutex_init (&s.lock);
  g_cond_init (&s.ended);
  preload ("gpuconvolve");
  preload ("nvcodec");
  warm_up_cuda (&s);

  r = reply_new ("ready");
  text = g_strdup_printf ("%d", (int) getpid ());
  reply_add (r, "pid", text);
  g_free (text);
  text = gst_version_string ();
  reply_add (r, "gstreamer", text);
  g_free (text);
  send_reply (&s, r);

  while ((req = read_message (s.requests, &broken)))
    start_job (&s, req);
  if (broken)
    g_printerr (BATCH_PROGRAM ": error: serve: a request that is not one "
        "(or its end missing)\n");
  g_mutex_lock (&s.lock);
  while (s.running)
    g_cond_wait (&s.ended, &s.lock);
  g_mutex_unlock (&s.lock);
  g_clear_pointer (&s.cuda, gst_context_unref);
  g_cond_clear (&s.ended);
  g_mutex_clear (&s.lock);
  g_mutex_clear (&s.write_lock);
  close (s.requests);
  close (s.replies);
  return broken ? BATCH_REFUSED : BATCH_OK;
}
