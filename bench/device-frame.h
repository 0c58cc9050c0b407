/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Frames in CUDA device memory (cudaMallocPitch), as a decoder such as
 * nvh264dec hands them on: every plane of NV12 and I420 too. */
#ifndef BENCH_DEVICE_FRAME_H
#define BENCH_DEVICE_FRAME_H

#include <glib.h>
#include "gcv-tools.h"

G_BEGIN_DECLS

/* A device frame and its planes' sizes: row[] bytes of samples in each
 * of rows[] rows, pitch[] bytes apart. */
typedef struct {
  GcvImage img;                 /* on_device, its planes below */
  void *planes[3];
  gsize row[3], pitch[3];
  guint rows[3], n_planes;
} BenchDeviceFrame;

void bench_device_frame_alloc (BenchDeviceFrame * f, GcvFormat format,
    guint width, guint height);
/* Random samples: floats in [0, 1) for GRAY32F, bytes otherwise. */
void bench_device_frame_fill (BenchDeviceFrame * f, GcvFormat format,
    guint32 seed);
/* Every byte of every plane set to `value`. */
void bench_device_frame_set (const BenchDeviceFrame * f, guint8 value);
/* The frame's bytes, rows packed, planes one after the other. */
guint8 *bench_device_frame_download (const BenchDeviceFrame * f,
    gsize * size);
void bench_device_frame_free (BenchDeviceFrame * f);

G_END_DECLS

#endif /* BENCH_DEVICE_FRAME_H */
