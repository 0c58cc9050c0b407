/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Format facts the engine and its tools share (gcv-private.h,
 * gcv-tools.h). */
#ifndef GCV_FORMAT_H
#define GCV_FORMAT_H

#include "gcv.h"

G_BEGIN_DECLS

/* One plane of a P010_10LE frame (Y, or U or V of its UV plane), which
 * gcv-planar.c hands to the backends: 16-bit little-endian words holding a
 * 10-bit value in their high bits. Internal: not in the public enum, and
 * never a geometry's format outside gcv-planar.c. */
#define GCV_FORMAT_P010_PLANE ((GcvFormat) 0x100)

/* NV12, I420 and P010_10LE: frames of several planes, filtered plane by
 * plane (gcv-planar.c); the backends see one-plane formats only. */
static inline gboolean
gcv_format_is_planar (GcvFormat format)
{
  return format == GCV_FORMAT_NV12 || format == GCV_FORMAT_I420
      || format == GCV_FORMAT_P010_10LE;
}

/* Samples per pixel in memory (of the Y plane for the planar formats). */
static inline guint
gcv_format_channels (GcvFormat format)
{
  if (format == GCV_FORMAT_RGB || format == GCV_FORMAT_BGR)
    return 3;
  return (format == GCV_FORMAT_RGBA || format == GCV_FORMAT_BGRA
      || format == GCV_FORMAT_RGBX || format == GCV_FORMAT_BGRX) ? 4 : 1;
}

/* 16-bit samples (GRAY16_LE, P010_10LE and its planes), and the largest
 * value one holds: 65535, or 1023 for P010's 10 bits. */
static inline gboolean
gcv_format_is_16bit (GcvFormat format)
{
  return format == GCV_FORMAT_GRAY16_LE || format == GCV_FORMAT_P010_10LE
      || format == GCV_FORMAT_P010_PLANE;
}

/* The largest sample of an integer format (255, 65535, 1023); 1.0 for
 * GRAY32F, whose conversions map it to the integer formats' largest. */
static inline gdouble
gcv_format_max_value (GcvFormat format)
{
  if (format == GCV_FORMAT_GRAY32F)
    return 1.0;
  if (format == GCV_FORMAT_GRAY16_LE)
    return 65535.0;
  if (format == GCV_FORMAT_P010_10LE || format == GCV_FORMAT_P010_PLANE)
    return 1023.0;
  return 255.0;
}

/* Channels of a pixel that are filtered (the rest are copied from input). */
static inline guint
gcv_filtered_channels (GcvFormat format, gboolean filter_alpha)
{
  if (gcv_format_channels (format) < 4)
    return gcv_format_channels (format);
  return filter_alpha ? 4 : 3;
}

G_END_DECLS

#endif /* GCV_FORMAT_H */
