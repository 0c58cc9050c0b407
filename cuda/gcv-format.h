/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Format facts the engine and its tools share (gcv-private.h,
 * gcv-tools.h). */
#ifndef GCV_FORMAT_H
#define GCV_FORMAT_H

#include "gcv.h"

G_BEGIN_DECLS

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

#endif /* GCV_FORMAT_H */
