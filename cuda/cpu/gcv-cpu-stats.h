/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics on the CPU backend (docs/statistics.md): the output
 * values of each row, as the row is about to be stored, accumulated per
 * band and merged in band order. */
#ifndef GCV_CPU_STATS_H
#define GCV_CPU_STATS_H

#include "gcv.h"

G_BEGIN_DECLS

/* Lanes of the accumulators: three vectors of eight, a whole number of
 * pixels of 1, 3 or 4 channels. */
#define GCV_CPU_STATS_LANES 24

/* One band: runs of samples summed in float, the runs in double, by lane
 * (lane i holds channel i % channels); the extremes by channel, where they
 * are first met (y * width + x; GCV_CPU_STATS_NONE until a sample that is
 * not NaN is met) and, in each of its lanes, their value. */
typedef struct {
  gdouble sum[GCV_CPU_STATS_LANES], sum_squares[GCV_CPU_STATS_LANES];
  guint64 above[GCV_CPU_STATS_LANES];
  gfloat min[GCV_CPU_STATS_LANES], max[GCV_CPU_STATS_LANES];
  guint64 min_at[GCV_MAX_CHANNELS], max_at[GCV_MAX_CHANNELS];
} GcvCpuStatsAcc;

#define GCV_CPU_STATS_NONE G_MAXUINT64

/* A frame being measured. */
typedef struct {
  guint n_channels;             /* measured: the first n_channels of each
                                 * pixel */
  guint channels;               /* samples per pixel: 1, 3 or 4 */
  guint width, height;
  guint64 count;                /* samples measured: the filtered area */
  gfloat threshold;             /* the largest float <= the threshold, so
                                 * that |v| > it is |v| > the threshold */
  guint n_bands;
  GcvCpuStatsAcc *acc;          /* one per band */
  guint n_allocated;
} GcvCpuStats;

/* Starts a frame of n_bands bands, `count` pixels of which are measured
 * (the accumulators are kept between frames, grown when a frame needs
 * more). */
void gcv_cpu_stats_begin (GcvCpuStats * st, guint n_bands, guint n_channels,
    guint channels, guint width, guint height, guint64 count,
    gdouble threshold);

/* The accumulators of band `band`. */
static inline GcvCpuStatsAcc *
gcv_cpu_stats_band (const GcvCpuStats * st, guint band)
{
  return st->acc + band;
}

/* n pixels of output row y from column x0 on, in output units. */
void gcv_cpu_stats_floats (const GcvCpuStats * st, GcvCpuStatsAcc * acc,
    guint y, guint x0, const gfloat * v, guint n);

/* The bands merged in band order into `out`. */
void gcv_cpu_stats_end (const GcvCpuStats * st, GcvFrameStats * out);

void gcv_cpu_stats_clear (GcvCpuStats * st);

G_END_DECLS

#endif /* GCV_CPU_STATS_H */
