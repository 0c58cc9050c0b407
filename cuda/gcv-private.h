/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Engine internals: filters as the backends run them. For the engine's own
 * files only: the benchmark, the tuner, the fuzz targets and the tests use
 * gcv-tools.h; applications use gcv.h and gcv-interop.h. Each file includes
 * the other internal headers it uses itself. */
#ifndef GCV_PRIVATE_H
#define GCV_PRIVATE_H

#include "gcv.h"

G_BEGIN_DECLS

/* A validated filter, ready to run: correlation taps with the scale folded in. */
struct _GcvFilter {
  guint kw, kh;
  guint ax, ay;
  gfloat *taps;                 /* kh * kw, row-major */
  gboolean rank1;               /* taps == column (x) row, within float tolerance */
  gfloat *row, *column;         /* factors when rank1, else NULL */
  gboolean use_separable;       /* rank1 and not disabled by separable=never */
  gboolean separable_only;      /* separable=always */
  gfloat bias;
  GcvBorder border;
  gfloat border_value;
  gboolean filter_alpha;
  GcvPlanes planes;
  gboolean identity;            /* one tap of 1 at the anchor and no bias */
  /* A gradient magnitude (filter=sobel, scharr): taps give gx and taps_y
   * gy, and the output is bias + magnitude_sign * sqrt (gx^2 + gy^2), the
   * scale's size folded into both and its sign here. NULL otherwise. */
  gfloat *taps_y;
  gfloat magnitude_sign;
};

/* Whether column[j] * row[i], as the separable paths multiply them, has
 * the sign of K[j][i] for every tap, zero where K is zero: then NaN or an
 * infinity under the footprint gives what K gives it. A kernel rank 1
 * only within the tolerance may not (a tiny tap where the factors give 0
 * turns an infinity into NaN). TRUE for kernels that are not rank 1. */
gboolean gcv_filter_factors_keep_signs (const GcvFilter * filter);
/* Size the described filter will have (built-ins: from size; custom:
 * kernel-width and kernel-height). */
void gcv_filter_desc_get_size (const GcvFilterDesc * desc, guint * kw,
    guint * kh);

G_END_DECLS

#endif /* GCV_PRIVATE_H */
