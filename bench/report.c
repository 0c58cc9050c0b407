/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table on stdout and the CSV file. */
#include "report.h"
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

struct _BenchReport {
  FILE *csv;
  guint failures;
};

static const char csv_header[] =
    "section,format,width,height,kw,kh,form,rank1,impl,requested,description,"
    "runs,ms_median,ms_min,ms_max,gflops,pct_fma_peak,gbps,x_copy_floor,"
    "max_abs_diff,tolerance,check,note\n";

BenchReport *
bench_report_new (const char *csv_path, GError ** error)
{
  BenchReport *r = g_new0 (BenchReport, 1);

  if (csv_path && *csv_path) {
    gchar *dir = g_path_get_dirname (csv_path);
    g_mkdir_with_parents (dir, 0755);
    g_free (dir);
    r->csv = fopen (csv_path, "w");
    if (!r->csv) {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
          "cannot write %s: %s", csv_path, g_strerror (errno));
      g_free (r);
      return NULL;
    }
    fputs (csv_header, r->csv);
  }
  return r;
}

void
bench_row_init (BenchRow * row, const char *section)
{
  memset (row, 0, sizeof (*row));
  row->section = section;
  row->form = row->requested = row->description = row->note = "";
  row->rank1 = -1;
  row->impl = "";
  row->check = "n/a";
  row->gflops = row->pct_peak = row->gbps = row->x_copy = NAN;
  row->max_diff = row->tolerance = NAN;
}

void
bench_report_section (BenchReport * r, const char *format, ...)
{
  va_list args;

  putchar ('\n');
  va_start (args, format);
  vprintf (format, args);
  va_end (args);
  printf ("\n%-7s %-4s %-16s %9s %9s %9s %9s %6s %7s %6s %9s %-5s %s\n",
      "kernel", "form", "impl", "ms med", "ms min", "ms max", "GFLOP/s",
      "%peak", "GB/s", "xcopy", "maxdiff", "check", "description");
  fflush (stdout);
}

static void
print_num (const char *format, double v, int width)
{
  if (isnan (v))
    printf ("%*s", width, "-");
  else
    printf (format, v);
}

static void
csv_num (FILE * f, const char *format, double v)
{
  if (!isnan (v))
    fprintf (f, format, v);
  fputc (',', f);
}

void
bench_report_row (BenchReport * r, const BenchRow * row)
{
  gchar *kernel = row->kw ? g_strdup_printf ("%ux%u", row->kw, row->kh) :
      g_strdup ("-");
  gchar *impl = *row->requested ? g_strdup_printf ("%s:%s", row->impl,
      row->requested) : g_strdup (row->impl);
  gboolean measured = row->stats.runs > 0;

  if (g_strcmp0 (row->check, "FAIL") == 0
      || g_strcmp0 (row->check, "error") == 0)
    r->failures++;

  printf ("%-7s %-4s %-16s ", kernel, *row->form ? row->form : "-", impl);
  print_num ("%9.4f", measured ? row->stats.median : NAN, 9);
  putchar (' ');
  print_num ("%9.4f", measured ? row->stats.min : NAN, 9);
  putchar (' ');
  print_num ("%9.4f", measured ? row->stats.max : NAN, 9);
  putchar (' ');
  print_num ("%9.1f", row->gflops, 9);
  putchar (' ');
  print_num ("%6.1f", row->pct_peak, 6);
  putchar (' ');
  print_num ("%7.1f", row->gbps, 7);
  putchar (' ');
  print_num ("%6.2f", row->x_copy, 6);
  putchar (' ');
  print_num ("%9.2e", row->max_diff, 9);
  printf (" %-5s %s%s%s\n", row->check, row->description,
      *row->note ? "  -- " : "", row->note);
  fflush (stdout);

  if (r->csv) {
    FILE *f = r->csv;
    fprintf (f, "%s,%s,%u,%u,%u,%u,%s,", row->section,
        gcv_format_name (row->format), row->width, row->height, row->kw,
        row->kh, row->form);
    if (row->rank1 >= 0)
      fprintf (f, "%d", row->rank1);
    fputc (',', f);
    bench_csv_field (f, row->impl);
    fputc (',', f);
    bench_csv_field (f, row->requested);
    fputc (',', f);
    bench_csv_field (f, row->description);
    fprintf (f, ",%u,", row->stats.runs);
    csv_num (f, "%.6f", measured ? row->stats.median : NAN);
    csv_num (f, "%.6f", measured ? row->stats.min : NAN);
    csv_num (f, "%.6f", measured ? row->stats.max : NAN);
    csv_num (f, "%.3f", row->gflops);
    csv_num (f, "%.3f", row->pct_peak);
    csv_num (f, "%.3f", row->gbps);
    csv_num (f, "%.4f", row->x_copy);
    csv_num (f, "%.6g", row->max_diff);
    csv_num (f, "%.6g", row->tolerance);
    bench_csv_field (f, row->check);
    fputc (',', f);
    bench_csv_field (f, row->note);
    fputc ('\n', f);
    fflush (f);
  }
  g_free (kernel);
  g_free (impl);
}

guint
bench_report_failures (BenchReport * r)
{
  return r->failures;
}

void
bench_report_free (BenchReport * r)
{
  if (!r)
    return;
  if (r->csv)
    fclose (r->csv);
  g_free (r);
}
