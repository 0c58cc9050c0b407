/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The engine's names (built-in filters, borders, families, formats) and
 * the facts of each format. */
#include "gcv-private.h"
#include "gcv-format.h"

#include <string.h>

static const gchar *const builtin_nicks[] = {
  "custom", "box", "gaussian", "sharpen", "laplacian", "sobel-x", "sobel-y",
  "scharr-x", "scharr-y", "emboss", "log", "dog", "sobel", "scharr",
};

static const gchar *const border_nicks[] = {
  "constant", "replicate", "reflect", "reflect101", "wrap",
};

static const gchar *const family_nicks[] = {
  "auto", "direct", "tiled", "register", "separable", "fft",
};

static const gchar *const format_names[] = {
  "RGBA", "BGRA", "RGBx", "BGRx", "GRAY8", "GRAY32F", "NV12", "I420",
  "GRAY16_LE", "RGB", "BGR", "P010_10LE",
};

const gchar *
gcv_builtin_nick (GcvBuiltin filter)
{
  return filter < G_N_ELEMENTS (builtin_nicks) ? builtin_nicks[filter] : "?";
}

const gchar *
gcv_border_nick (GcvBorder border)
{
  return border < G_N_ELEMENTS (border_nicks) ? border_nicks[border] : "?";
}

const gchar *
gcv_family_nick (GcvFamily family)
{
  return family < G_N_ELEMENTS (family_nicks) ?
      family_nicks[family] : "?";
}

const gchar *
gcv_format_name (GcvFormat format)
{
  if (format == GCV_FORMAT_P010_PLANE)
    return "P010_10LE plane";
  return format < G_N_ELEMENTS (format_names) ? format_names[format] : "?";
}

gboolean
gcv_format_from_name (const gchar * name, GcvFormat * format)
{
  for (guint i = 0; name && i < G_N_ELEMENTS (format_names); i++)
    if (strcmp (name, format_names[i]) == 0) {
      *format = (GcvFormat) i;
      return TRUE;
    }
  return FALSE;
}

guint
gcv_format_pixel_size (GcvFormat format)
{
  switch ((guint) format) {
    case GCV_FORMAT_GRAY8:
    case GCV_FORMAT_NV12:
    case GCV_FORMAT_I420:
      return 1;
    case GCV_FORMAT_GRAY16_LE:
    case GCV_FORMAT_P010_10LE:
    case GCV_FORMAT_P010_PLANE:
      return 2;
    case GCV_FORMAT_RGB:
    case GCV_FORMAT_BGR:
      return 3;
    default:
      return 4;
  }
}

gboolean
gcv_format_chroma_size (GcvFormat format, guint width, guint height,
    guint * chroma_width, guint * chroma_height)
{
  if (!gcv_format_is_planar (format))
    return FALSE;
  /* 4:2:0: a chroma sample for each 2x2 luma samples, the last row and
   * column of odd sizes included */
  *chroma_width = width / 2 + width % 2;
  *chroma_height = height / 2 + height % 2;
  return TRUE;
}

gsize
gcv_frame_size (GcvFormat format, guint width, guint height, gsize stride)
{
  if (width == 0 || height == 0)
    return 0;
  return stride * (height - 1) + (gsize) width * gcv_format_pixel_size (format);
}

gboolean
gcv_format_converts_to (GcvFormat in, GcvFormat out)
{
  if (in > GCV_FORMAT_LAST || out > GCV_FORMAT_LAST)
    return FALSE;
  if (in == out)
    return TRUE;
  switch (out) {
    case GCV_FORMAT_GRAY32F:
      return in == GCV_FORMAT_GRAY8 || in == GCV_FORMAT_GRAY16_LE
          || gcv_format_is_planar (in);
    case GCV_FORMAT_GRAY8:
      return in == GCV_FORMAT_GRAY32F || in == GCV_FORMAT_NV12
          || in == GCV_FORMAT_I420;
    case GCV_FORMAT_GRAY16_LE:
      return in == GCV_FORMAT_GRAY32F || in == GCV_FORMAT_P010_10LE;
    default:
      return FALSE;
  }
}
