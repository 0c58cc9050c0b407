/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tuned kernel dispatcher: which family, with which parameters, runs a
 * filter on a frame. Plain C with no CUDA in it, so it is unit-tested
 * everywhere. */
#ifndef GCV_DISPATCH_H
#define GCV_DISPATCH_H

#include "gcv-variant.h"
#include "gcv-choice.h"
#include "gcv-tuning.h"

G_BEGIN_DECLS

/* The device, as far as choices depend on it. */
typedef struct {
  gchar *name;                  /* e.g. "NVIDIA H100 80GB HBM3" */
  gint major, minor;
  gint sm_count;
  gsize smem_per_sm, smem_per_block;
  gdouble fma_per_s;            /* FP32 FMA rate, estimated from clocks */
  gdouble bytes_per_s;          /* device memory bandwidth, estimated */
} GcvDeviceInfo;

/* What the kernel families can run for one filter and frame on one device,
 * as each family reports it (filled by the CUDA backend from the .cu
 * files; plain data, so the choice is tested without a GPU). Row counts
 * are bit masks: bit r set when r rows per thread fit. */
typedef struct {
  guint unrolled_rows;          /* tiled, unrolled for this kernel width */
  gboolean taps_in_memory;      /* too many taps for the constant bank: the
                                 * unrolled tiled kernel has rows=2 only */
  gint adaptive_rows;           /* what adaptive tiling takes; 0: no tile
                                 * fits shared memory */
  gboolean register_fits;       /* the register cache has an instance */
  guint fused_rows;             /* fused separable */
  guint unrolled_kw;            /* tiled, unrolled: the width of the kernel
                                 * that runs (0: kw) */
  /* How the FFT set-up went, for a second call where the first chose fft
   * and the backend tried to make it (first call: NULL and 0). */
  const gchar *fft_failed;      /* it could not be made: why (cuFFT's or
                                 * CUDA's words); NULL: it was made */
  gint fft_nx, fft_ny;          /* made: the transform size */
  gint fft_tiles;               /* made: overlap-save tiles per channel, or
                                 * 1 for the whole frame */
} GcvFamilyLimits;

/* What the CPU backend can run for one filter and frame. */
typedef struct {
  gboolean fixed_point;         /* the 16-bit fixed-point path's error bound
                                 * holds for this filter on 8-bit frames,
                                 * were it to run separable (cuda/cpu/) */
  guint threads;                /* workers a frame's bands run on */
} GcvCpuLimits;

/* Whether the kernels check for NaN and Inf (reading past a footprint:
 * widened taps, FFT tiles): only GRAY32F frames hold them
 * (docs/filters.md); 8-bit frames unpacked to floats do not. The record's
 * check_finite, and what the CUDA backend sizes and launches with. */
gboolean gcv_dispatch_check_finite (GcvFormat format);

/* The key for a filter on a frame (GcvGeometry's input format and size,
 * the filter's size, separable settings, magnitude and GRAY32F guard). */
void gcv_dispatch_key_init (GcvDispatchKey * key,
    const GcvGeometry * geometry, const GcvFilter * filter);

/* The one place what runs on CUDA is settled, into `choice`: the forced
 * variant, else the table's row for the key (where its choice can run,
 * and is separable for kernels that take the separable path; gradient
 * magnitudes take no table row), else the heuristic; then the requested
 * family where it differs; then what `limits` allow (a family that cannot
 * run hands over to tiled or direct, with the reason); then the GRAY32F
 * guard, the column pass and the width the kernel runs at. Where it
 * chooses fft, the backend makes the set-up and calls again with its
 * outcome in `limits` (fft_failed, or the transform size): a set-up that
 * could not be made hands over to tiled, the reason in the record. */
void gcv_dispatch_choose (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev, const GcvFamilyLimits * limits,
    const GcvTuningTable * table, GcvFamily requested,
    const GcvVariant * forced, gboolean rank1, GcvChoice * choice);
/* The same for the CPU backend: separable for rank-1 kernels (fixed point
 * where `limits` say it holds) unless direct is asked for or the GRAY32F
 * guard says no, else direct (a gradient magnitude's two kernels in one
 * sweep); families it does not have are named in the fall-back. */
void gcv_dispatch_choose_cpu (const GcvDispatchKey * key,
    GcvFamily requested, const GcvCpuLimits * limits, GcvChoice * choice);

/* The analytic choice, no table: the separable path for rank-1 kernels,
 * FFT above the crossover, tiled otherwise (gradient magnitudes: tiled). */
void gcv_dispatch_heuristic (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev, GcvVariant * v);
/* FFT tiles: the largest edge a variant may ask for; the edge that runs
 * for `tile` asked (a power of two, at least 128 and twice the kernel);
 * the edge expected fastest for the key. */
#define GCV_FFT_MAX_TILE 1024
gint gcv_dispatch_fft_edge (gint tile, guint kw, guint kh);
gint gcv_dispatch_fft_tile (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev);
/* Whether FFT is expected to beat direct 2D for this key (the crossover). */
gboolean gcv_dispatch_prefers_fft (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev);

G_END_DECLS

#endif /* GCV_DISPATCH_H */
