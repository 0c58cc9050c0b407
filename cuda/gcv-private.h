/* Engine internals: filters as the backends run them and format facts,
 * with the backend interface (gcv-backend.h) and the built-in kernels
 * (gcv-builtin.h). For the engine's own files, the tests and the
 * benchmark; applications use gcv.h and gcv-interop.h. */
#ifndef GCV_PRIVATE_H
#define GCV_PRIVATE_H

#include "gcv.h"
#include "gcv-interop.h"
#include "gcv-backend.h"
#include "gcv-builtin.h"
#include "dispatch/gcv-dispatch.h"

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

GcvFilter *gcv_filter_copy (const GcvFilter * filter);
/* Whether column[j] * row[i], as the separable paths multiply them, has
 * the sign of K[j][i] for every tap, zero where K is zero: then NaN or an
 * infinity under the footprint gives what K gives it. A kernel rank 1
 * only within the tolerance may not (a tiny tap where the factors give 0
 * turns an infinity into NaN). TRUE for kernels that are not rank 1. */
gboolean gcv_filter_factors_keep_signs (const GcvFilter * filter);
gboolean gcv_filter_equal (const GcvFilter * a, const GcvFilter * b);
/* Size the described filter will have (built-ins: from size; custom:
 * kernel-width and kernel-height). */
void gcv_filter_desc_get_size (const GcvFilterDesc * desc, guint * kw,
    guint * kh);

/* NV12 and I420: frames of several planes, filtered plane by plane
 * (gcv-planar.c); the backends see one-plane formats only. */
static inline gboolean
gcv_format_is_planar (GcvFormat format)
{
  return format == GCV_FORMAT_NV12 || format == GCV_FORMAT_I420;
}

/* Samples per pixel in memory (of the Y plane for NV12 and I420). */
static inline guint
gcv_format_channels (GcvFormat format)
{
  return (format == GCV_FORMAT_RGBA || format == GCV_FORMAT_BGRA
      || format == GCV_FORMAT_RGBX || format == GCV_FORMAT_BGRX) ? 4 : 1;
}

/* Channels of a pixel that are filtered (the rest are copied from input). */
static inline guint
gcv_filtered_channels (GcvFormat format, gboolean filter_alpha)
{
  if (gcv_format_channels (format) == 1)
    return 1;
  return filter_alpha ? 4 : 3;
}

G_END_DECLS

#endif /* GCV_PRIVATE_H */
