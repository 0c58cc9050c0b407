/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The words the dispatcher (gcv-dispatch.c) and the tuning tables
 * (gcv-tuning.c) share: a kernel family with its parameters and its text
 * form (gcv-variant.c), which the tables and forced variants are written
 * in, and the key a choice depends on, which the tables' rows are keyed
 * by. Neither calls the other for them. */
#ifndef GCV_VARIANT_H
#define GCV_VARIANT_H

#include "gcv.h"

G_BEGIN_DECLS

/* A family with its parameters, one meaning to each field; 0 leaves the
 * value to the family. As text: "tiled ty=2", "tiled" (adaptive),
 * "register p=8 block=128", "separable fused ty=4", "separable two-pass",
 * "fft p=5", "fft tile=512", "direct". */
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

/* What a choice depends on (gcv_dispatch_key_init() fills it for a
 * filter and a frame). format, kw, kh, separable, width and height key the
 * tuning tables' rows; the rest does not. */
typedef struct {
  GcvFormat format;             /* input format */
  guint kw, kh;
  gboolean separable;           /* the separable paths may be used */
  guint width, height;
  gboolean unrolled;            /* a tiled kernel unrolled for kw exists */
  guint unrolled_kw;            /* the width it runs at, kw widened by zero
                                 * taps (0: kw) */
  gboolean separable_only;      /* separable=always: the separable paths
                                 * alone */
  gboolean magnitude;           /* a gradient magnitude (filter=sobel,
                                 * scharr), which only direct and tiled
                                 * run */
  gboolean factors_differ;      /* GRAY32F input and separable factors
                                 * whose zeros and signs are not the
                                 * kernel's: NaN and Inf would reach other
                                 * outputs than K sends them to, so the
                                 * separable paths are not taken (the
                                 * GRAY32F guard, docs/filters.md) */
} GcvDispatchKey;

gchar *gcv_variant_to_string (const GcvVariant * v);
/* "family [word] [key=value ...]" as gcv_variant_to_string() writes it. */
gboolean gcv_variant_parse (const gchar * text, GcvVariant * v,
    GError ** error);

G_END_DECLS

#endif /* GCV_VARIANT_H */
