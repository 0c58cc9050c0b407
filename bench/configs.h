/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the kernel-level benchmark runs: formats and frame sizes, kernel
 * shapes, the two forms of each kernel, the families and the peers. */
#ifndef BENCH_CONFIGS_H
#define BENCH_CONFIGS_H

#include <glib.h>
#include "gcv-tools.h"

G_BEGIN_DECLS

typedef struct {
  guint kw, kh;
} BenchShape;

typedef enum {
  BENCH_FORM_2D,                /* a random non-separable kernel */
  BENCH_FORM_SEPARABLE,         /* a Gaussian given as row and column */
} BenchForm;

typedef struct {
  GcvFormat format;
  guint width, height;
} BenchFrame;

typedef enum {
  BENCH_PEER_NPP = 1 << 0,
  BENCH_PEER_CUFFT = 1 << 1,
} BenchPeers;

typedef struct {
  GArray *frames;               /* BenchFrame */
  GArray *shapes;               /* BenchShape */
  gboolean forms[2];            /* by BenchForm */
  GArray *families;             /* GcvFamily, auto included when asked */
  guint peers;                  /* BenchPeers */
} BenchPlan;

/* "3,5,3x15" -> shapes (WxH is kernel-width x kernel-height). */
gboolean bench_parse_shapes (const char *text, GArray * shapes,
    GError ** error);
gboolean bench_parse_families (const char *text, GArray * families,
    GError ** error);
gboolean bench_parse_forms (const char *text, gboolean forms[2],
    GError ** error);
gboolean bench_parse_peers (const char *text, guint * peers, GError ** error);

const char *bench_form_name (BenchForm form);       /* "2d", "sep" */

/* The filter of a shape and form: the separable form is a Gaussian of
 * sigma = size/6 in each direction given as row-kernel and column-kernel;
 * the 2D form is that Gaussian plus uniform noise of 5% of its largest tap,
 * with separable=never so that no separable path is taken. Border replicate.
 * Same seed, same kernel. */
GcvFilter *bench_make_filter (BenchShape shape, BenchForm form, guint32 seed,
    GError ** error);

/* Whether a family applies to a form (separable: separable forms only). */
gboolean bench_family_applies (GcvFamily family, BenchForm form);

G_END_DECLS

#endif /* BENCH_CONFIGS_H */
