/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzz target: the tuning-table reader, gcv_tuning_table_parse() on raw
 * bytes (what the tuning-file property, the user cache and the shipped
 * tables go through). A table that parses is looked up, written out with
 * gcv_tuning_table_to_string() and read back: it must parse again, to the
 * same rows, and write out the same. */
#include "fuzz-common.h"

#include "gcv-tools.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t * data, size_t size);

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_setup_logging ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  GError *error = NULL;
  GcvTuningTable *t = gcv_tuning_table_parse ((const gchar *) data, size,
      "input", &error);
  GcvTuningTable *again;
  gchar *text, *text2;

  if (!t) {
    FUZZ_ASSERT (error && error->message[0], "refused with no reason");
    g_error_free (error);
    return 0;
  }
  FUZZ_ASSERT (t->gpu && t->rows->len > 0, "a table with no gpu or rows");
  for (guint f = 0; f <= GCV_FORMAT_GRAY32F; f++) {
    GcvDispatchKey key = { f, 1 + f, 3 + 2 * f, f & 1, 640, 480 };
    const GcvTuningRow *r = gcv_tuning_table_lookup (t, &key);
    if (r)
      FUZZ_ASSERT (r->key.format == key.format, "lookup gave another format");
  }
  text = gcv_tuning_table_to_string (t);
  again = gcv_tuning_table_parse (text, strlen (text), "written", &error);
  FUZZ_ASSERT (again != NULL, "a table written out does not read back: %s\n"
      "%s", error ? error->message : "?", text);
  FUZZ_ASSERT (again->rows->len == t->rows->len, "%u rows, then %u",
      t->rows->len, again->rows->len);
  text2 = gcv_tuning_table_to_string (again);
  FUZZ_ASSERT (g_str_equal (text, text2), "written twice differently:\n%s\n"
      "---\n%s", text, text2);
  g_free (text);
  g_free (text2);
  gcv_tuning_table_free (again);
  gcv_tuning_table_free (t);
  return 0;
}
