/* The tuned kernel dispatcher: which family, with which parameters, runs a
 * filter on a frame. Plain C with no CUDA in it, so it is unit-tested
 * everywhere. */
#ifndef GCV_DISPATCH_H
#define GCV_DISPATCH_H

#include "gcv-variant.h"
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
} GcvFamilyLimits;

/* Where a choice came from. */
typedef enum {
  GCV_SOURCE_HEURISTIC,
  GCV_SOURCE_TABLE,
  GCV_SOURCE_REQUESTED,         /* the algorithm property */
  GCV_SOURCE_FORCED,            /* gcv_plan_set_variant() */
} GcvChoiceSource;

/* Why the family asked for does not run. */
typedef enum {
  GCV_FALLBACK_NONE,
  GCV_FALLBACK_NOT_RANK1,       /* separable, kernel not rank 1: tiled */
  GCV_FALLBACK_REGISTER_SIZE,   /* no register instance: tiled */
  GCV_FALLBACK_FFT_SETUP,       /* the transforms could not be made: tiled */
  GCV_FALLBACK_TILE_TOO_LARGE,  /* no tile fits shared memory: direct */
  GCV_FALLBACK_FACTOR_SIGNS,    /* separable, GRAY32F, factors whose zeros
                                 * and signs are not K's: 2D */
  GCV_FALLBACK_MAGNITUDE,       /* register or fft asked for a gradient
                                 * magnitude, which they do not run: tiled */
} GcvFallback;

typedef struct {
  GcvVariant variant;           /* settled: every parameter what runs */
  GcvChoiceSource source;
  GcvFallback fallback;
} GcvChoice;

/* The one place a family is chosen: the forced variant, else the table's
 * row for the key (where its choice can run, and is separable for kernels
 * that take the separable path; gradient magnitudes take no table row),
 * else the heuristic; then the requested family where it differs; then
 * what `limits` allow. */
void gcv_dispatch_choose (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev, const GcvFamilyLimits * limits,
    const GcvTuningTable * table, GcvFamily requested,
    const GcvVariant * forced, gboolean rank1, GcvChoice * choice);
/* The chosen family cannot run after all (`why`): tiled, settled. */
void gcv_dispatch_fall_back (GcvChoice * choice, GcvFallback why,
    const GcvDispatchKey * key, const GcvFamilyLimits * limits);
const gchar *gcv_choice_source_nick (GcvChoiceSource source);
/* "" for GCV_FALLBACK_NONE */
const gchar *gcv_fallback_reason (GcvFallback fallback);

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
