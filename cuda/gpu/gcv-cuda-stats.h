/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CUDA backend's per-frame statistics, the host's part
 * (docs/statistics.md; the device's is kernels/gcv-kernels-stats.cuh). */
#ifndef GCV_CUDA_STATS_H
#define GCV_CUDA_STATS_H

#include "gcv.h"
#include "kernels/gcv-kernels.h"

G_BEGIN_DECLS

/* A slot's statistics: its records in device memory and its page-locked
 * result block, both made when a frame of the slot first asks for
 * statistics and kept until the plan is freed; and what the frame in the
 * slot asked for. */
typedef struct {
  GcvCudaStatsState *state;
  GcvCudaStatsResult *result;
  gboolean on;                  /* the slot's frame takes statistics */
  gfloat threshold;             /* its threshold, as the kernels compare */
  guint n_channels;             /* its channels */
  gboolean stale;               /* a frame did not finish its records:
                                 * zero them before the next */
  guint total;                  /* the samples the frame measures */
  guint device_total;           /* what the records' total holds */
} GcvCudaSlotStats;

/* Before a frame's submit: what it asks for (options may be NULL), with
 * the slot's buffers made on its stream the first time. */
gboolean gcv_cuda_stats_begin (GcvCudaSlotStats * st,
    const GcvFrameOptions * options, guint n_channels, cudaStream_t stream,
    GError ** error);
/* The samples the frame measures (its width x height, or the filtered
 * area of its regions), given to the kernels on the slot's stream before
 * its launches. */
gboolean gcv_cuda_stats_set_total (GcvCudaSlotStats * st, guint64 total,
    cudaStream_t stream, GError ** error);
/* The launch arguments of the slot's frame (c->width set: the frame's). */
void gcv_cuda_stats_args (const GcvCudaSlotStats * st, GcvCudaConv * c);
/* After the frame's wait: its statistics, the places in a frame `width`
 * samples wide. */
void gcv_cuda_stats_end (GcvCudaSlotStats * st, guint width,
    GcvFrameStats * out);
/* Frees the buffers (the slot's work done). */
void gcv_cuda_stats_free (GcvCudaSlotStats * st, cudaStream_t stream);

G_END_DECLS

#endif /* GCV_CUDA_STATS_H */
