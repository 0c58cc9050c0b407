/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Error checks and small helpers shared by the benchmark programs. */
#include "common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
bench_check_cuda (cudaError_t err, const char *call, const char *file,
    int line)
{
  if (err == cudaSuccess)
    return;
  fprintf (stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call,
      cudaGetErrorString (err), cudaGetErrorName (err));
  fflush (stdout);
  exit (1);
}

void
bench_die (const char *format, ...)
{
  va_list args;

  fflush (stdout);
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
  exit (1);
}

void
bench_require_cuda (int device_id)
{
  GError *error = NULL;

  if (gcv_backend_available (GCV_BACKEND_CUDA, device_id, &error))
    return;
  printf ("SKIP: no usable CUDA device: %s\n",
      error ? error->message : "unknown reason");
  fflush (stdout);
  g_clear_error (&error);
  exit (BENCH_EXIT_SKIP);
}

gboolean
bench_parse_size (const char *text, guint * width, guint * height)
{
  char *end;
  unsigned long w, h;

  if (!text)
    return FALSE;
  w = strtoul (text, &end, 10);
  if (end == text || (*end != 'x' && *end != 'X'))
    return FALSE;
  text = end + 1;
  h = strtoul (text, &end, 10);
  if (end == text || *end != '\0' || w < 1 || h < 1 || w > GCV_MAX_FRAME_SIZE
      || h > GCV_MAX_FRAME_SIZE)
    return FALSE;
  *width = (guint) w;
  *height = (guint) h;
  return TRUE;
}

void
bench_csv_field (FILE * f, const char *text)
{
  if (!text)
    text = "";
  if (!strpbrk (text, ",\"\n\r")) {
    fputs (text, f);
    return;
  }
  fputc ('"', f);
  for (const char *p = text; *p; p++) {
    if (*p == '"')
      fputc ('"', f);
    fputc (*p, f);
  }
  fputc ('"', f);
}

guint
bench_channels (GcvFormat format)
{
  return (format == GCV_FORMAT_GRAY8 || format == GCV_FORMAT_GRAY32F) ? 1 : 3;
}

gsize
bench_row_bytes (GcvFormat format, guint width)
{
  return (gsize) width * gcv_format_pixel_size (format);
}

guint8 *
bench_random_frame (GcvFormat format, guint width, guint height, guint32 seed)
{
  gsize row = bench_row_bytes (format, width);
  guint8 *frame = g_malloc (row * height);
  GRand *rand = g_rand_new_with_seed (seed);

  if (format == GCV_FORMAT_GRAY32F) {
    float *f = (float *) frame;
    for (gsize i = 0; i < (gsize) width * height; i++)
      f[i] = (float) g_rand_double (rand);
  } else {
    guint32 *w = (guint32 *) frame;
    gsize n = row * height;
    for (gsize i = 0; i < n / 4; i++)
      w[i] = g_rand_int (rand);
    for (gsize i = n / 4 * 4; i < n; i++)
      frame[i] = (guint8) g_rand_int (rand);
  }
  g_rand_free (rand);
  return frame;
}

gchar *
bench_describe_device (int device)
{
  struct cudaDeviceProp prop;
  int runtime = 0, driver = 0;

  BENCH_CUDA (cudaGetDeviceProperties (&prop, device));
  BENCH_CUDA (cudaRuntimeGetVersion (&runtime));
  BENCH_CUDA (cudaDriverGetVersion (&driver));
  return g_strdup_printf ("cuda:%d %s, sm_%d%d, %d SMs, %.1f GiB, "
      "runtime %d.%d, driver %d.%d", device, prop.name, prop.major,
      prop.minor, prop.multiProcessorCount,
      prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), runtime / 1000,
      (runtime % 1000) / 10, driver / 1000, (driver % 1000) / 10);
}
