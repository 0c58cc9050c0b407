/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A gst-launch-1.0 description run on one file for gpuconvolve-batch
 * (docs/batch.md), with the file's paths kept out of the description's
 * text (batch-pipeline.h).
 *
 * The words are the description, split into words as gst-launch-1.0 gets
 * them from a shell. {input} and {output} in them stand for the input and
 * output paths: they are replaced by placeholder words found nowhere else,
 * the words are parsed as gst-launch-1.0 parses them (gst_parse_launchv),
 * and each string property that then holds a placeholder is set to its
 * value with the path in the placeholder's place. A path is never parsed,
 * so it may hold any bytes but NUL. A placeholder that ends up anywhere but
 * in a writable string property (caps, a number, an element's name, a
 * pad's property) is refused. The description itself is the user's and
 * trusted.
 *
 * The pipeline plays to the end of the stream. Each change of a gpuconvolve
 * element's active-algorithm goes to stderr as
 *   gpuconvolve-batch-run: NAME: active-algorithm = VALUE
 * an error as
 *   gpuconvolve-batch-run: error from ELEMENT: MESSAGE
 * followed by its debug text, and a refused description as
 *   gpuconvolve-batch-run: error: the description: REASON
 */
#include "batch-pipeline.h"

#include <string.h>

static const gchar *const path_names[BATCH_N_PATHS] = { "{input}",
  "{output}"
};

static guint
count_in (const gchar * text, const gchar * word)
{
  guint n = 0;
  gsize len = strlen (word);

  for (const gchar * p = strstr (text, word); p; p = strstr (p + len, word))
    n++;
  return n;
}

static gchar *
replace_all (const gchar * text, const gchar * word, const gchar * by)
{
  gchar **parts = g_strsplit (text, word, -1);
  gchar *result = g_strjoinv (by, parts);

  g_strfreev (parts);
  return result;
}

/* Sets `name` from its text form, as gst-launch-1.0 and presets do; a
 * value GLib or the element refuses is an error, not a warning. */
gboolean
batch_set_from_string (GObject * object, const gchar * name,
    const gchar * value, GError ** error)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (object), name);
  GValue v = G_VALUE_INIT;
  gchar *refused;

  if (!pspec) {
    g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "%s has no property '%s'",
        G_OBJECT_TYPE_NAME (object), name);
    return FALSE;
  }
  if (!(pspec->flags & G_PARAM_WRITABLE)
      || (pspec->flags & G_PARAM_CONSTRUCT_ONLY)) {
    g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "'%s' is read-only", name);
    return FALSE;
  }
  g_value_init (&v, G_PARAM_SPEC_VALUE_TYPE (pspec));
  if (!gst_value_deserialize_with_pspec (&v, value, pspec)) {
    g_set_error (error, BATCH_ERROR, BATCH_REFUSED,
        "'%s' is not a value of '%s' (a %s)", value, name,
        g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
    g_value_unset (&v);
    return FALSE;
  }
  batch_collect_begin ();
  g_object_set_property (object, name, &v);
  refused = batch_collect_end ();
  g_value_unset (&v);
  if (refused) {
    g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "%s", refused);
    g_free (refused);
    return FALSE;
  }
  return TRUE;
}

static gboolean
words_contain (gchar ** words, const gchar * text)
{
  for (gchar ** w = words; *w; w++)
    if (strstr (*w, text))
      return TRUE;
  return FALSE;
}

void
batch_template_clear (BatchTemplate * t)
{
  g_strfreev (t->words);
  for (guint i = 0; i < BATCH_N_PATHS; i++)
    g_free (t->marks[i]);
  memset (t, 0, sizeof (*t));
}

void
batch_template_init (BatchTemplate * t, gchar ** words)
{
  memset (t, 0, sizeof (*t));
  for (guint i = 0; i < BATCH_N_PATHS; i++) {
    /* a word of letters and digits, found nowhere in the description, that
     * gst_parse keeps as it is wherever it stands */
    do {
      g_free (t->marks[i]);
      t->marks[i] = g_strdup_printf ("gpuconvolvebatch%s%08x%08x",
          i == BATCH_INPUT ? "input" : "output", g_random_int (),
          g_random_int ());
    } while (words_contain (words, t->marks[i]));
  }
  t->words = g_strdupv (words);
  for (gchar ** w = t->words; *w; w++)
    for (guint i = 0; i < BATCH_N_PATHS; i++) {
      gchar *replaced;
      t->counts[i] += count_in (*w, path_names[i]);
      replaced = replace_all (*w, path_names[i], t->marks[i]);
      g_free (*w);
      *w = replaced;
    }
}

/* Puts the paths into the string properties of `object` that hold a
 * placeholder; adds how many it put in to `found`. */
static gboolean
set_paths (GObject * object, const BatchTemplate * t,
    const gchar * paths[BATCH_N_PATHS], guint found[BATCH_N_PATHS],
    GError ** error)
{
  guint n_specs;
  GParamSpec **specs =
      g_object_class_list_properties (G_OBJECT_GET_CLASS (object), &n_specs);
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < n_specs; i++) {
    GParamSpec *p = specs[i];
    gchar *value = NULL, *with_paths;
    guint here[BATCH_N_PATHS], total = 0;

    if (!(p->flags & G_PARAM_READABLE)
        || G_PARAM_SPEC_VALUE_TYPE (p) != G_TYPE_STRING)
      continue;
    g_object_get (object, p->name, &value, NULL);
    for (guint k = 0; k < BATCH_N_PATHS; k++)
      total += here[k] = value ? count_in (value, t->marks[k]) : 0;
    if (!total) {
      g_free (value);
      continue;
    }
    if (g_str_equal (p->name, "name")) {
      g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "the description: "
          "%s or %s in an element's name", path_names[0], path_names[1]);
      ok = FALSE;
    } else if (!(p->flags & G_PARAM_WRITABLE)
        || (p->flags & G_PARAM_CONSTRUCT_ONLY)) {
      g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "the description: "
          "%s or %s in %s's property '%s', which can be set only when the "
          "element is made", path_names[0], path_names[1],
          GST_IS_OBJECT (object) ? GST_OBJECT_NAME (object) :
          G_OBJECT_TYPE_NAME (object), p->name);
      ok = FALSE;
    } else {
      with_paths = g_strdup (value);
      for (guint k = 0; k < BATCH_N_PATHS; k++) {
        gchar *next = replace_all (with_paths, t->marks[k], paths[k]);
        g_free (with_paths);
        with_paths = next;
        found[k] += here[k];
      }
      batch_collect_begin ();
      g_object_set (object, p->name, with_paths, NULL);
      g_free (with_paths);
      with_paths = batch_collect_end ();
      if (with_paths) {
        g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "cannot set %s's '%s' "
            "to the path: %s", GST_IS_OBJECT (object) ?
            GST_OBJECT_NAME (object) : G_OBJECT_TYPE_NAME (object), p->name,
            with_paths);
        g_free (with_paths);
        ok = FALSE;
      }
    }
    g_free (value);
  }
  g_free (specs);
  return ok;
}

/* `top` and every element inside it, however deep, each with a ref. */
static GPtrArray *
all_elements (GstElement * top)
{
  GPtrArray *elements = g_ptr_array_new_with_free_func (gst_object_unref);
  GstIterator *it;
  GValue item = G_VALUE_INIT;
  gboolean done = FALSE;

  g_ptr_array_add (elements, gst_object_ref (top));
  if (!GST_IS_BIN (top))
    return elements;
  it = gst_bin_iterate_recurse (GST_BIN (top));
  while (!done) {
    switch (gst_iterator_next (it, &item)) {
      case GST_ITERATOR_OK:
        g_ptr_array_add (elements, g_value_dup_object (&item));
        g_value_reset (&item);
        break;
      case GST_ITERATOR_RESYNC:
        g_ptr_array_set_size (elements, 1);
        gst_iterator_resync (it);
        break;
      default:
        done = TRUE;
        break;
    }
  }
  g_value_unset (&item);
  gst_iterator_free (it);
  return elements;
}

static gboolean
is_gpuconvolve (GstElement * element)
{
  GstElementFactory *factory = gst_element_get_factory (element);

  return factory && g_str_equal (GST_OBJECT_NAME (factory), "gpuconvolve");
}

/* The pipeline of `t` with the paths in their places, in the NULL state;
 * NULL with `error` set when the description is refused. */
GstElement *
batch_build_pipeline (const BatchTemplate * t,
    const gchar * paths[BATCH_N_PATHS], GError ** error)
{
  GstParseContext *context = gst_parse_context_new ();
  GError *parse_error = NULL;
  GstElement *top;
  GPtrArray *elements;
  gchar *warnings;
  guint found[BATCH_N_PATHS] = { 0, 0 };
  gboolean ok = TRUE;

  batch_collect_begin ();
  top = gst_parse_launchv_full ((const gchar **) t->words, context,
      GST_PARSE_FLAG_FATAL_ERRORS, &parse_error);
  warnings = batch_collect_end ();
  if (!top) {
    gboolean missing = g_error_matches (parse_error, GST_PARSE_ERROR,
        GST_PARSE_ERROR_NO_SUCH_ELEMENT);
    gchar *reason = g_strdup (parse_error ? parse_error->message :
        "it cannot be parsed");

    /* the reason in the user's words: {input}, not the placeholder */
    for (guint k = 0; k < BATCH_N_PATHS; k++) {
      gchar *named = replace_all (reason, t->marks[k], path_names[k]);
      g_free (reason);
      reason = named;
    }
    g_set_error (error, BATCH_ERROR, missing ? BATCH_MISSING : BATCH_REFUSED,
        "the description: %s", reason);
    g_free (reason);
    g_clear_error (&parse_error);
    g_free (warnings);
    gst_parse_context_free (context);
    return NULL;
  }
  gst_parse_context_free (context);
  if (!GST_IS_PIPELINE (top)) {
    GstElement *pipeline = gst_pipeline_new (NULL);
    gst_bin_add (GST_BIN (pipeline), top);
    top = pipeline;
  }
  gst_object_ref_sink (top);
  if (warnings) {
    /* a value GObject or the element refused, which gst_parse lets pass */
    g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "the description: %s",
        warnings);
    g_free (warnings);
    gst_object_unref (top);
    return NULL;
  }

  elements = all_elements (top);
  for (guint i = 0; ok && i < elements->len; i++)
    ok = set_paths (G_OBJECT (g_ptr_array_index (elements, i)), t, paths,
        found, error);
  g_ptr_array_unref (elements);
  for (guint k = 0; ok && k < BATCH_N_PATHS; k++) {
    if (found[k] == t->counts[k])
      continue;
    g_set_error (error, BATCH_ERROR, BATCH_REFUSED, "the description: %s "
        "stands there %u time(s), %u of them in string properties: %s and "
        "%s may stand only in the value of an element's string property, "
        "such as location=%s (not in caps, names, numbers or pad "
        "properties)", path_names[k], t->counts[k], found[k], path_names[0],
        path_names[1], path_names[k]);
    ok = FALSE;
  }
  if (!ok) {
    gst_object_unref (top);
    return NULL;
  }
  return top;
}

/* Each gpuconvolve element's last active-algorithm, from the streaming
 * threads that change it. */
typedef struct
{
  GMutex lock;
  GPtrArray *pairs;             /* name, value, name, value... */
} Algorithms;

static void
on_active_algorithm (GObject * element, GParamSpec * pspec, Algorithms * seen)
{
  gchar *value = NULL;
  const gchar *name = GST_OBJECT_NAME (element);
  guint i;

  g_object_get (element, "active-algorithm", &value, NULL);
  g_printerr (BATCH_PROGRAM ": %s: active-algorithm = %s\n", name,
      value ? value : "(not running)");
  if (!value)
    return;
  g_mutex_lock (&seen->lock);
  for (i = 0; i < seen->pairs->len; i += 2)
    if (g_str_equal (g_ptr_array_index (seen->pairs, i), name))
      break;
  if (i == seen->pairs->len) {
    g_ptr_array_add (seen->pairs, g_strdup (name));
    g_ptr_array_add (seen->pairs, value);
  } else {
    g_free (g_ptr_array_index (seen->pairs, i + 1));
    g_ptr_array_index (seen->pairs, i + 1) = value;
  }
  g_mutex_unlock (&seen->lock);
}

static void
print_message (GstMessage * msg, const gchar * what)
{
  GError *err = NULL;
  gchar *debug = NULL;

  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &err, &debug);
  else
    gst_message_parse_warning (msg, &err, &debug);
  g_printerr (BATCH_PROGRAM ": %s from %s: %s\n%s%s", what,
      GST_MESSAGE_SRC (msg) ? GST_MESSAGE_SRC_NAME (msg) : "the pipeline",
      err->message, debug ? debug : "", debug ? "\n" : "");
  g_clear_error (&err);
  g_free (debug);
}

/* How long the bus may be waited on before the first of two deadlines
 * (0: none). */
static GstClockTime
bus_wait (gint64 deadline, gint64 other)
{
  if (!deadline || (other && other < deadline))
    deadline = other;
  if (!deadline)
    return GST_CLOCK_TIME_NONE;
  return (GstClockTime) MAX (deadline - g_get_monotonic_time (), 0)
      * GST_USECOND;
}

/* Plays `pipeline` to the end of the stream; FALSE after an error (which
 * is printed), at the deadline, or where it has not prerolled in time (a
 * description that never gets a buffer to its sinks would hold its slot
 * for ever). */
static gboolean
play (GstElement * pipeline, BatchPlay * how, Algorithms * seen)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GPtrArray *elements = all_elements (pipeline);
  gboolean ok = TRUE, done = FALSE;
  gdouble preroll = how->preroll > 0 ? how->preroll : BATCH_PREROLL_SECONDS;
  gint64 prerolled_by;
  GstStateChangeReturn ret;

  for (guint i = 0; i < elements->len; i++) {
    GstElement *e = g_ptr_array_index (elements, i);
    if (is_gpuconvolve (e))
      g_signal_connect (e, "notify::active-algorithm",
          G_CALLBACK (on_active_algorithm), seen);
  }
  g_ptr_array_unref (elements);

  /* (a state change that blocks, as filesrc opening a FIFO does, is past
   * any deadline here: gpuconvolve-batch then ends the process) */
  ret = gst_element_set_state (pipeline, GST_STATE_PLAYING);
  /* (live sources do not preroll) */
  prerolled_by = ret == GST_STATE_CHANGE_ASYNC ? g_get_monotonic_time ()
      + (gint64) (preroll * G_USEC_PER_SEC) : 0;
  if (ret == GST_STATE_CHANGE_FAILURE) {
    /* the element that failed posted why */
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    if (msg) {
      print_message (msg, "error");
      gst_message_unref (msg);
    } else {
      g_printerr (BATCH_PROGRAM ": error: the pipeline could not be "
          "started\n");
    }
    ok = FALSE;
    done = TRUE;
  }
  while (!done) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, bus_wait
        (how->deadline, prerolled_by), GST_MESSAGE_ERROR | GST_MESSAGE_WARNING
        | GST_MESSAGE_EOS | GST_MESSAGE_ASYNC_DONE);
    if (!msg) {
      gint64 now = g_get_monotonic_time ();
      if (how->deadline && now >= how->deadline) {
        g_printerr (BATCH_PROGRAM ": error: stopped at the time limit\n");
        how->timed_out = TRUE;
        ok = FALSE;
        done = TRUE;
      } else if (prerolled_by && now >= prerolled_by) {
        g_printerr (BATCH_PROGRAM ": error: the pipeline did not preroll "
            "within %g s (no buffer reached a sink): the file may be damaged "
            "or the description never feeds one of its sinks\n", preroll);
        ok = FALSE;
        done = TRUE;
      }
      continue;
    }
    switch (GST_MESSAGE_TYPE (msg)) {
      case GST_MESSAGE_ASYNC_DONE:
        prerolled_by = 0;
        break;
      case GST_MESSAGE_ERROR:
        print_message (msg, "error");
        ok = FALSE;
        done = TRUE;
        break;
      case GST_MESSAGE_WARNING:
        print_message (msg, "warning");
        break;
      default:
        done = TRUE;
        break;
    }
    gst_message_unref (msg);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  return ok;
}

BatchStatus
batch_run_job (const BatchTemplate * t, const gchar * input,
    const gchar * output, BatchPlay * how)
{
  const gchar *paths[BATCH_N_PATHS] = { input, output };
  GError *error = NULL;
  GstElement *pipeline = batch_build_pipeline (t, paths, &error);
  BatchPlay none = { 0 };
  Algorithms seen;
  gboolean ok;

  if (!how)
    how = &none;
  how->algorithms = g_ptr_array_new_with_free_func (g_free);
  if (!pipeline) {
    /* a missing element fails the file like any other failure; a refused
     * description is the arguments' fault */
    BatchStatus status = error->code == BATCH_MISSING ? BATCH_FAILED :
        BATCH_REFUSED;
    g_printerr (BATCH_PROGRAM ": error: %s\n", error->message);
    g_clear_error (&error);
    if (how == &none)
      g_ptr_array_unref (none.algorithms);
    return status;
  }
  g_mutex_init (&seen.lock);
  seen.pairs = how->algorithms;
  if (how->on_pipeline)
    how->on_pipeline (pipeline, FALSE, how->data);
  ok = play (pipeline, how, &seen);
  if (how->on_pipeline)
    how->on_pipeline (pipeline, TRUE, how->data);
  gst_object_unref (pipeline);
  g_mutex_clear (&seen.lock);
  if (how == &none)
    g_ptr_array_unref (none.algorithms);
  return ok ? BATCH_OK : BATCH_FAILED;
}

GstElement *
batch_make_gpuconvolve (void)
{
  GstElement *element = gst_element_factory_make ("gpuconvolve", NULL);

  if (!element) {
    g_printerr (BATCH_PROGRAM ": error: no gpuconvolve element here (is the "
        "plugin on GST_PLUGIN_PATH?)\n");
    return NULL;
  }
  return gst_object_ref_sink (element);
}
