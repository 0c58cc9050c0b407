/* The tuned kernel dispatcher: which family, with which parameters, runs a
 * filter on a frame. Plain C with no CUDA in it, so it is unit-tested
 * everywhere. */
#ifndef GCV_DISPATCH_H
#define GCV_DISPATCH_H

#include "gcv.h"

G_BEGIN_DECLS

/* A family with its parameters; 0 means "the family's own choice". */
typedef struct {
  GcvAlgorithm family;
  gint ty;                      /* tiled, separable: outputs down per thread;
                                 * separable: 0 = two passes */
  gint p;                       /* register: outputs per lane; fft: the
                                 * largest prime factor of the sizes */
  gint block;                   /* register: threads per block */
} GcvVariant;

/* What a choice depends on. */
typedef struct {
  GcvFormat format;             /* input format */
  guint kw, kh;
  gboolean separable;           /* the separable path may be used */
  guint width, height;
  gboolean unrolled;            /* a tiled kernel unrolled for kw exists;
                                 * not part of table keys */
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

gchar *gcv_variant_to_string (const GcvVariant * v);
gboolean gcv_variant_parse (const gchar * text, GcvVariant * v,
    GError ** error);

/* The analytic choice, no table: the separable path for rank-1 kernels,
 * FFT above the crossover, tiled otherwise. */
void gcv_dispatch_heuristic (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev, GcvVariant * v);
/* Whether FFT is expected to beat direct 2D for this key (the crossover). */
gboolean gcv_dispatch_prefers_fft (const GcvDispatchKey * key,
    const GcvDeviceInfo * dev);

G_END_DECLS

#endif /* GCV_DISPATCH_H */
