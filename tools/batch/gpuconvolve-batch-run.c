/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-batch-run: runs a gst-launch-1.0 description on one file for
 * gpuconvolve-batch (docs/batch.md), with the file's paths kept out of the
 * description's text.
 *
 *   gpuconvolve-batch-run run INPUT OUTPUT WORD...
 *   gpuconvolve-batch-run check [--property NAME=VALUE]... [--preset NAME]
 *                               [-- WORD...]
 *
 * The WORDs are the description, split into words as gst-launch-1.0 gets
 * them from a shell. {input} and {output} in them stand for INPUT and
 * OUTPUT: they are replaced by placeholder words found nowhere else, the
 * words are parsed as gst-launch-1.0 parses them (gst_parse_launchv), and
 * each string property that then holds a placeholder is set to its value
 * with the path in the placeholder's place. A path is never parsed, so it
 * may hold any bytes but NUL. A placeholder that ends up anywhere but in a
 * writable string property (caps, a number, an element's name, a pad's
 * property) is refused. The description itself is the user's and trusted.
 *
 * run: plays the pipeline to the end of the stream. Each change of a
 * gpuconvolve element's active-algorithm goes to stderr as
 *   gpuconvolve-batch-run: NAME: active-algorithm = VALUE
 * an error as
 *   gpuconvolve-batch-run: error from ELEMENT: MESSAGE
 * followed by its debug text, and a refused description as
 *   gpuconvolve-batch-run: error: the description: REASON
 * Exit status 0 when the stream ended, 1 when the pipeline failed, 2 when
 * the arguments or the description were refused.
 *
 * check: what gpuconvolve-batch checks before a batch starts. Sets each
 * property, in the order given, on a gpuconvolve element of its own, as
 * gst-launch-1.0 does (gst_value_deserialize_with_pspec), and takes GLib's
 * warnings (a value out of range, one the element refuses) as errors; loads
 * the preset on another; parses the description with placeholder paths and
 * checks where {input} and {output} land. Prints the properties a preset
 * sets, one line each: "preset-property NAME". Exit status 0 when all is
 * well, 2 when something was refused, 3 when only an element is missing
 * here (the nodes of a cluster may have it).
 */
#include <gst/gst.h>

#include <string.h>

#define PROGRAM "gpuconvolve-batch-run"

typedef enum
{
  STATUS_OK = 0,
  STATUS_FAILED = 1,
  STATUS_REFUSED = 2,
  STATUS_MISSING = 3,
} Status;

/* Error codes of RUN_ERROR: what went wrong, as its exit status. */
#define RUN_ERROR (g_quark_from_static_string (PROGRAM))

/* {input}, {output}: the paths' places in the description. */
enum
{
  PATH_INPUT,
  PATH_OUTPUT,
  N_PATHS
};
static const gchar *const path_names[N_PATHS] = { "{input}", "{output}" };

/* A description with {input} and {output} replaced by placeholders. */
typedef struct
{
  gchar **words;
  gchar *marks[N_PATHS];        /* the placeholders */
  guint counts[N_PATHS];        /* how often each stands in the words */
} Template;

/* While not NULL, GLib's warnings and criticals (GObject's "value is
 * invalid or out of range", the element's "refusing ...") are collected
 * here instead of printed: they are errors where they are collected. */
static GString *collected;

static GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField * fields, gsize n_fields,
    gpointer user_data)
{
  if (!collected || !(level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL)))
    return g_log_writer_default (level, fields, n_fields, user_data);
  for (gsize i = 0; i < n_fields; i++) {
    if (!g_str_equal (fields[i].key, "MESSAGE"))
      continue;
    if (collected->len)
      g_string_append (collected, "; ");
    g_string_append_len (collected, fields[i].value, fields[i].length);
  }
  return G_LOG_WRITER_HANDLED;
}

static void
collect_begin (void)
{
  g_assert (collected == NULL);
  collected = g_string_new (NULL);
}

/* What was collected since collect_begin(), or NULL when nothing. */
static gchar *
collect_end (void)
{
  GString *text = collected;

  collected = NULL;
  if (!text->len) {
    g_string_free (text, TRUE);
    return NULL;
  }
  return g_string_free (text, FALSE);
}

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
static gboolean
set_from_string (GObject * object, const gchar * name, const gchar * value,
    GError ** error)
{
  GParamSpec *pspec =
      g_object_class_find_property (G_OBJECT_GET_CLASS (object), name);
  GValue v = G_VALUE_INIT;
  gchar *refused;

  if (!pspec) {
    g_set_error (error, RUN_ERROR, STATUS_REFUSED, "%s has no property '%s'",
        G_OBJECT_TYPE_NAME (object), name);
    return FALSE;
  }
  if (!(pspec->flags & G_PARAM_WRITABLE)
      || (pspec->flags & G_PARAM_CONSTRUCT_ONLY)) {
    g_set_error (error, RUN_ERROR, STATUS_REFUSED, "'%s' is read-only", name);
    return FALSE;
  }
  g_value_init (&v, G_PARAM_SPEC_VALUE_TYPE (pspec));
  if (!gst_value_deserialize_with_pspec (&v, value, pspec)) {
    g_set_error (error, RUN_ERROR, STATUS_REFUSED,
        "'%s' is not a value of '%s' (a %s)", value, name,
        g_type_name (G_PARAM_SPEC_VALUE_TYPE (pspec)));
    g_value_unset (&v);
    return FALSE;
  }
  collect_begin ();
  g_object_set_property (object, name, &v);
  refused = collect_end ();
  g_value_unset (&v);
  if (refused) {
    g_set_error (error, RUN_ERROR, STATUS_REFUSED, "%s", refused);
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

static void
template_clear (Template * t)
{
  g_strfreev (t->words);
  for (guint i = 0; i < N_PATHS; i++)
    g_free (t->marks[i]);
  memset (t, 0, sizeof (*t));
}

static void
template_init (Template * t, gchar ** words)
{
  memset (t, 0, sizeof (*t));
  for (guint i = 0; i < N_PATHS; i++) {
    /* a word of letters and digits, found nowhere in the description, that
     * gst_parse keeps as it is wherever it stands */
    do {
      g_free (t->marks[i]);
      t->marks[i] = g_strdup_printf ("gpuconvolvebatch%s%08x%08x",
          i == PATH_INPUT ? "input" : "output", g_random_int (),
          g_random_int ());
    } while (words_contain (words, t->marks[i]));
  }
  t->words = g_strdupv (words);
  for (gchar ** w = t->words; *w; w++)
    for (guint i = 0; i < N_PATHS; i++) {
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
set_paths (GObject * object, const Template * t, const gchar * paths[N_PATHS],
    guint found[N_PATHS], GError ** error)
{
  guint n_specs;
  GParamSpec **specs =
      g_object_class_list_properties (G_OBJECT_GET_CLASS (object), &n_specs);
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < n_specs; i++) {
    GParamSpec *p = specs[i];
    gchar *value = NULL, *with_paths;
    guint here[N_PATHS], total = 0;

    if (!(p->flags & G_PARAM_READABLE)
        || G_PARAM_SPEC_VALUE_TYPE (p) != G_TYPE_STRING)
      continue;
    g_object_get (object, p->name, &value, NULL);
    for (guint k = 0; k < N_PATHS; k++)
      total += here[k] = value ? count_in (value, t->marks[k]) : 0;
    if (!total) {
      g_free (value);
      continue;
    }
    if (g_str_equal (p->name, "name")) {
      g_set_error (error, RUN_ERROR, STATUS_REFUSED, "the description: "
          "%s or %s in an element's name", path_names[0], path_names[1]);
      ok = FALSE;
    } else if (!(p->flags & G_PARAM_WRITABLE)
        || (p->flags & G_PARAM_CONSTRUCT_ONLY)) {
      g_set_error (error, RUN_ERROR, STATUS_REFUSED, "the description: "
          "%s or %s in %s's property '%s', which can be set only when the "
          "element is made", path_names[0], path_names[1],
          GST_IS_OBJECT (object) ? GST_OBJECT_NAME (object) :
          G_OBJECT_TYPE_NAME (object), p->name);
      ok = FALSE;
    } else {
      with_paths = g_strdup (value);
      for (guint k = 0; k < N_PATHS; k++) {
        gchar *next = replace_all (with_paths, t->marks[k], paths[k]);
        g_free (with_paths);
        with_paths = next;
        found[k] += here[k];
      }
      collect_begin ();
      g_object_set (object, p->name, with_paths, NULL);
      g_free (with_paths);
      with_paths = collect_end ();
      if (with_paths) {
        g_set_error (error, RUN_ERROR, STATUS_REFUSED, "cannot set %s's '%s' "
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
static GstElement *
build_pipeline (const Template * t, const gchar * paths[N_PATHS],
    GError ** error)
{
  GstParseContext *context = gst_parse_context_new ();
  GError *parse_error = NULL;
  GstElement *top;
  GPtrArray *elements;
  gchar *warnings;
  guint found[N_PATHS] = { 0, 0 };
  gboolean ok = TRUE;

  collect_begin ();
  top = gst_parse_launchv_full ((const gchar **) t->words, context,
      GST_PARSE_FLAG_FATAL_ERRORS, &parse_error);
  warnings = collect_end ();
  if (!top) {
    gboolean missing = g_error_matches (parse_error, GST_PARSE_ERROR,
        GST_PARSE_ERROR_NO_SUCH_ELEMENT);
    gchar *reason = g_strdup (parse_error ? parse_error->message :
        "it cannot be parsed");

    /* the reason in the user's words: {input}, not the placeholder */
    for (guint k = 0; k < N_PATHS; k++) {
      gchar *named = replace_all (reason, t->marks[k], path_names[k]);
      g_free (reason);
      reason = named;
    }
    g_set_error (error, RUN_ERROR, missing ? STATUS_MISSING : STATUS_REFUSED,
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
    g_set_error (error, RUN_ERROR, STATUS_REFUSED, "the description: %s",
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
  for (guint k = 0; ok && k < N_PATHS; k++) {
    if (found[k] == t->counts[k])
      continue;
    g_set_error (error, RUN_ERROR, STATUS_REFUSED, "the description: %s "
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

static void
on_active_algorithm (GObject * element, GParamSpec * pspec, gpointer data)
{
  gchar *value = NULL;

  g_object_get (element, "active-algorithm", &value, NULL);
  g_printerr (PROGRAM ": %s: active-algorithm = %s\n",
      GST_OBJECT_NAME (element), value ? value : "(not running)");
  g_free (value);
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
  g_printerr (PROGRAM ": %s from %s: %s\n%s%s", what,
      GST_MESSAGE_SRC (msg) ? GST_MESSAGE_SRC_NAME (msg) : "the pipeline",
      err->message, debug ? debug : "", debug ? "\n" : "");
  g_clear_error (&err);
  g_free (debug);
}

/* Plays `pipeline` to the end of the stream; FALSE after an error (which
 * is printed). */
static gboolean
play (GstElement * pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GPtrArray *elements = all_elements (pipeline);
  gboolean ok = TRUE, done = FALSE;

  for (guint i = 0; i < elements->len; i++) {
    GstElement *e = g_ptr_array_index (elements, i);
    if (is_gpuconvolve (e))
      g_signal_connect (e, "notify::active-algorithm",
          G_CALLBACK (on_active_algorithm), NULL);
  }
  g_ptr_array_unref (elements);

  if (gst_element_set_state (pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE) {
    /* the element that failed posted why */
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    if (msg) {
      print_message (msg, "error");
      gst_message_unref (msg);
    } else {
      g_printerr (PROGRAM ": error: the pipeline could not be started\n");
    }
    ok = FALSE;
    done = TRUE;
  }
  while (!done) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
        GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_EOS);
    switch (GST_MESSAGE_TYPE (msg)) {
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

/* One file through the description: the part a server that runs job after
 * job in one process would call for each. */
static Status
run_job (const Template * t, const gchar * input, const gchar * output)
{
  const gchar *paths[N_PATHS] = { input, output };
  GError *error = NULL;
  GstElement *pipeline = build_pipeline (t, paths, &error);
  gboolean ok;

  if (!pipeline) {
    /* a missing element fails the file like any other failure; a refused
     * description is the arguments' fault */
    Status status = error->code == STATUS_MISSING ? STATUS_FAILED :
        STATUS_REFUSED;
    g_printerr (PROGRAM ": error: %s\n", error->message);
    g_clear_error (&error);
    return status;
  }
  ok = play (pipeline);
  gst_object_unref (pipeline);
  return ok ? STATUS_OK : STATUS_FAILED;
}

/* A refusal outweighs a missing element. */
static Status
worse (Status a, Status b)
{
  if (a == STATUS_REFUSED || b == STATUS_REFUSED)
    return STATUS_REFUSED;
  return MAX (a, b);
}

static GstElement *
make_gpuconvolve (void)
{
  GstElement *element = gst_element_factory_make ("gpuconvolve", NULL);

  if (!element) {
    g_printerr (PROGRAM ": error: no gpuconvolve element here (is the plugin "
        "on GST_PLUGIN_PATH?)\n");
    return NULL;
  }
  return gst_object_ref_sink (element);
}

static Status
check_properties (GstElement * element, GPtrArray * properties)
{
  Status status = STATUS_OK;

  for (guint i = 0; i < properties->len; i++) {
    const gchar *item = g_ptr_array_index (properties, i);
    const gchar *eq = strchr (item, '=');
    gchar *name = eq ? g_strndup (item, eq - item) : g_strdup (item);
    GError *error = NULL;

    if (!eq) {
      g_printerr (PROGRAM ": error: --property %s: expected NAME=VALUE\n",
          item);
      status = STATUS_REFUSED;
    } else if (!set_from_string (G_OBJECT (element), name, eq + 1, &error)) {
      g_printerr (PROGRAM ": error: --property %s: %s\n", item,
          error->message);
      g_clear_error (&error);
      status = STATUS_REFUSED;
    }
    g_free (name);
  }
  return status;
}

static Status
check_preset (const gchar * preset)
{
  GstElement *element = make_gpuconvolve ();
  gboolean loaded;
  gchar *refused;
  Status status = STATUS_OK;

  if (!element)
    return STATUS_REFUSED;
  collect_begin ();
  loaded = gst_preset_load_preset (GST_PRESET (element), preset);
  refused = collect_end ();
  if (!loaded) {
    gchar **names = gst_preset_get_preset_names (GST_PRESET (element));
    gchar *list = names ? g_strjoinv (", ", names) : g_strdup ("none");
    g_printerr (PROGRAM ": error: --preset %s: gpuconvolve has no such preset "
        "(it has: %s)\n", preset, list);
    g_free (list);
    g_strfreev (names);
    status = STATUS_REFUSED;
  } else if (refused) {
    g_printerr (PROGRAM ": error: --preset %s: %s\n", preset, refused);
    status = STATUS_REFUSED;
  }
  g_free (refused);
  gst_object_unref (element);
  return status;
}

static Status
check (gint argc, gchar ** argv)
{
  GPtrArray *properties = g_ptr_array_new ();
  const gchar *preset = NULL;
  gchar **words = NULL;
  GstElement *element;
  Status status = STATUS_OK;
  gint i;

  for (i = 0; i < argc; i++) {
    if (g_str_equal (argv[i], "--") && i + 1 < argc) {
      words = argv + i + 1;
      break;
    } else if (g_str_equal (argv[i], "--property") && i + 1 < argc) {
      g_ptr_array_add (properties, argv[++i]);
    } else if (g_str_equal (argv[i], "--preset") && i + 1 < argc) {
      preset = argv[++i];
    } else {
      g_printerr (PROGRAM ": error: check: unexpected '%s'\n", argv[i]);
      g_ptr_array_unref (properties);
      return STATUS_REFUSED;
    }
  }

  element = make_gpuconvolve ();
  if (!element) {
    g_ptr_array_unref (properties);
    return STATUS_REFUSED;
  }
  status = check_properties (element, properties);
  if (preset)
    status = worse (status, check_preset (preset));
  {
    gchar **names = gst_preset_get_property_names (GST_PRESET (element));
    for (gchar ** n = names; n && *n; n++)
      g_print ("preset-property %s\n", *n);
    g_strfreev (names);
  }
  gst_object_unref (element);
  g_ptr_array_unref (properties);

  if (words) {
    /* never played: the paths only have to be paths */
    const gchar *paths[N_PATHS] = { "/input", "/output" };
    Template t;
    GError *error = NULL;
    GstElement *pipeline;

    template_init (&t, words);
    pipeline = build_pipeline (&t, paths, &error);
    if (pipeline) {
      gst_object_unref (pipeline);
    } else {
      g_printerr (PROGRAM ": %s: %s\n", error->code == STATUS_MISSING ?
          "note" : "error", error->message);
      status = worse (status, (Status) error->code);
      g_clear_error (&error);
    }
    template_clear (&t);
  }
  return status;
}

int
main (int argc, char **argv)
{
  Status status;

  g_log_set_writer_func (log_writer, NULL, NULL);
  if (argc >= 5 && g_str_equal (argv[1], "run")) {
    Template t;

    /* no command line for GStreamer: a path may look like one of its
     * options */
    gst_init (NULL, NULL);
    template_init (&t, argv + 4);
    status = run_job (&t, argv[2], argv[3]);
    template_clear (&t);
  } else if (argc >= 2 && g_str_equal (argv[1], "check")) {
    gst_init (NULL, NULL);
    status = check (argc - 2, argv + 2);
  } else {
    g_printerr ("usage: " PROGRAM " run INPUT OUTPUT WORD...\n"
        "       " PROGRAM " check [--property NAME=VALUE]... [--preset NAME] "
        "[-- WORD...]\n(tools/batch/gpuconvolve-batch-run.c says more)\n");
    return STATUS_REFUSED;
  }
  gst_deinit ();
  return status;
}
