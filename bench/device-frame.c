/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Frames in CUDA device memory for the benchmarks. */
#include "device-frame.h"
#include "common.h"

#include <string.h>

void
bench_device_frame_alloc (BenchDeviceFrame * f, GcvFormat format, guint w,
    guint h)
{
  guint cw = 0, ch = 0;

  memset (f, 0, sizeof (*f));
  f->n_planes = 1;
  f->row[0] = (gsize) w * gcv_format_pixel_size (format);
  f->rows[0] = h;
  if (gcv_format_chroma_size (format, w, h, &cw, &ch)) {
    /* NV12 and P010: one plane of U and V pairs; I420: U, then V */
    f->n_planes = format == GCV_FORMAT_I420 ? 3 : 2;
    for (guint i = 1; i < f->n_planes; i++) {
      f->row[i] = format == GCV_FORMAT_I420 ? cw : 2 * (gsize) cw *
          gcv_format_pixel_size (format);
      f->rows[i] = ch;
    }
  }
  for (guint i = 0; i < f->n_planes; i++)
    BENCH_CUDA (cudaMallocPitch (&f->planes[i], &f->pitch[i], f->row[i],
            f->rows[i]));
  f->img.data = f->planes[0];
  f->img.stride = f->pitch[0];
  f->img.on_device = TRUE;
  for (guint i = 1; i < f->n_planes; i++) {
    f->img.chroma[i - 1] = f->planes[i];
    f->img.chroma_stride[i - 1] = f->pitch[i];
  }
}

void
bench_device_frame_fill (BenchDeviceFrame * f, GcvFormat format,
    guint32 seed)
{
  for (guint i = 0; i < f->n_planes; i++) {
    guint8 *host = format == GCV_FORMAT_GRAY32F ?
        bench_random_frame (format, f->row[i] / 4, f->rows[i], seed) :
        bench_random_frame (GCV_FORMAT_GRAY8, f->row[i], f->rows[i],
        seed + i);
    BENCH_CUDA (cudaMemcpy2D (f->planes[i], f->pitch[i], host, f->row[i],
            f->row[i], f->rows[i], cudaMemcpyHostToDevice));
    g_free (host);
  }
}

void
bench_device_frame_set (const BenchDeviceFrame * f, guint8 value)
{
  for (guint i = 0; i < f->n_planes; i++)
    BENCH_CUDA (cudaMemset2D (f->planes[i], f->pitch[i], value, f->row[i],
            f->rows[i]));
}

guint8 *
bench_device_frame_download (const BenchDeviceFrame * f, gsize * size)
{
  gsize n = 0, at = 0;
  guint8 *host;

  for (guint i = 0; i < f->n_planes; i++)
    n += f->row[i] * f->rows[i];
  host = g_malloc (n);
  for (guint i = 0; i < f->n_planes; i++) {
    BENCH_CUDA (cudaMemcpy2D (host + at, f->row[i], f->planes[i],
            f->pitch[i], f->row[i], f->rows[i], cudaMemcpyDeviceToHost));
    at += f->row[i] * f->rows[i];
  }
  *size = n;
  return host;
}

void
bench_device_frame_free (BenchDeviceFrame * f)
{
  for (guint i = 0; i < f->n_planes; i++)
    BENCH_CUDA (cudaFree (f->planes[i]));
}
