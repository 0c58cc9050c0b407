/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared helpers of the tests of the formats only the CPU backend takes
 * (GRAY16_LE, RGB, BGR, P010_10LE; docs/formats.md), which tests/reference.h
 * has no RefFormat for: samples as each GcvFormat stores them, random
 * frames and filters in a format's units, the bound a result is checked
 * within, and the element's buffers in GStreamer's default layout. */
#ifndef GCVT_COMMON_FORMATS_H
#define GCVT_COMMON_FORMATS_H

#include "common.h"

#include "gcv.h"

#include <gst/video/video.h>

G_BEGIN_DECLS

/* 3 for RGB and BGR, else 1 (a plane of NV12, I420 and P010 is one). */
guint gcvt_fmt_channels (GcvFormat f);
/* The largest sample (GRAY32F: 1.0, which the conversions map to the
 * integer formats' largest): 65535, 1023 (P010's 10-bit values), 255. */
gdouble gcvt_fmt_max (GcvFormat f);
gsize gcvt_fmt_sample_bytes (GcvFormat f);
/* One sample to memory as the format stores it: P010's 10 bits high, the
 * low 6 bits zero. */
void gcvt_fmt_put (guint8 * p, GcvFormat f, gdouble v);
/* The value a sample holds; a P010 word with low bits set fails the test. */
gdouble gcvt_fmt_get (const guint8 * p, GcvFormat f);

/* Random samples: whole numbers of the format's range, or floats a little
 * beyond 0..1 for GRAY32F. */
RefImage *gcvt_fmt_random_image (GRand * r, GcvFormat f, guint w, guint h,
    guint channels);
/* A random kernel of up to 7x7 (rank 1: the separable path; else direct)
 * with random anchor, bias and border value in the input's units, scaled
 * to keep outputs in range; its description for the engine in `d`, whose
 * kernel is `*taps` (the caller frees both and the kernel). */
RefKernel *gcvt_fmt_random_params (GRand * r, GcvFormat in, RefBorder border,
    gboolean rank1, RefParams * p, GcvFilterDesc * d, gfloat ** taps);
/* The largest |input| the bounds count, the border value included. */
gdouble gcvt_fmt_largest_input (const RefImage * img, const RefParams * p);
/* A result against the exact value (in output units) within the format's
 * bound (docs/formats.md): the float bound, or for integer formats
 * max(1, 1e-5 * sum|scale K| * m) from the rounded exact value. */
void gcvt_fmt_check_value (gdouble got, gdouble exact, GcvFormat out,
    const RefParams * p, gdouble max_in, gdouble unit, const gchar * what,
    guint x, guint y, guint c);
/* "IN -> OUT WxH pad N, KWxKH rank-1|dense kernel, border=B" */
gchar *gcvt_fmt_describe (GcvFormat in, GcvFormat out, guint w, guint h,
    gsize pad, const RefParams * p, gboolean rank1);

/* --- the element's buffers (system memory, GStreamer's default layout) -- */

/* The layout of a w x h frame of `f`; GRAY32F, which has no
 * GstVideoFormat, as GRAY16_LE of twice the width. */
void gcvt_fmt_video_info (GstVideoInfo * info, GcvFormat f, guint w, guint h);
/* Sample c of (x, y) of plane i (0 Y or the image, 1 U, 2 V: P010's are
 * interleaved in one plane) of a mapped frame. */
guint8 *gcvt_fmt_sample_ptr (const GstVideoFrame * frame, GcvFormat f,
    guint i, guint x, guint y, guint c);
/* A buffer of `planes[0]` (channels interleaved) and for P010 `planes[1]`
 * and `planes[2]` (U and V; NULL: mid-grey, 512). */
GstBuffer *gcvt_fmt_buffer_new (GcvFormat f, RefImage * const planes[3]);

G_END_DECLS

#endif /* GCVT_COMMON_FORMATS_H */
