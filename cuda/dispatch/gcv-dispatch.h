/* The tuned kernel dispatcher: which family, with which parameters, runs a
 * filter on a frame. Plain C with no CUDA in it, so it is unit-tested
 * everywhere. */
#ifndef GCV_DISPATCH_H
#define GCV_DISPATCH_H

#include "gcv.h"

G_BEGIN_DECLS

/* A family with its parameters, one meaning to each field; 0 leaves the
 * value to the family. As text (tuning tables, gcv_plan_set_variant()):
 * "tiled ty=2", "tiled" (adaptive), "register p=8 block=128",
 * "separable fused ty=4", "separable two-pass", "fft p=5", "fft tile=512",
 * "direct". */
typedef struct {
  GcvFamily family;
  gint rows;                    /* tiled, fused separable: outputs down per
                                 * thread */
  gboolean adaptive;            /* tiled: the generic kernel, its tile height
                                 * chosen for the device (else the kernel
                                 * unrolled for the width) */
  gboolean two_pass;            /* separable: a row pass, then a column pass
                                 * (else one fused kernel) */
  gint lane_outputs;            /* register: outputs per lane */
  gint block;                   /* register: threads per block */
  gint fft_prime;               /* fft over the whole frame: the largest
                                 * prime factor of the transform sizes */
  gint fft_tile;                /* fft over overlap-save tiles this many
                                 * pixels on a side (0: the whole frame) */
} GcvVariant;

/* What a choice depends on. */
typedef struct {
  GcvFormat format;             /* input format */
  guint kw, kh;
  gboolean separable;           /* the separable paths may be used */
  guint width, height;
  gboolean unrolled;            /* a tiled kernel unrolled for kw exists;
                                 * not part of table keys */
  guint unrolled_kw;            /* the width it runs at, kw widened by zero
                                 * taps (0: kw); not part of table keys */
  gboolean separable_only;      /* separable=always: the separable paths
                                 * alone; not part of table keys */
  gboolean magnitude;           /* a gradient magnitude (filter=sobel,
                                 * scharr), which only direct and tiled
                                 * run; not part of table keys */
} GcvDispatchKey;

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

typedef struct _GcvTuningTable GcvTuningTable;

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

gchar *gcv_variant_to_string (const GcvVariant * v);
gboolean gcv_variant_parse (const gchar * text, GcvVariant * v,
    GError ** error);

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
