/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-frame statistics as GStreamer carries them: a custom meta on the
 * output buffer and, where asked, an element message (docs/statistics.md). */
#ifndef __GST_GPU_CONVOLVE_STATS_H__
#define __GST_GPU_CONVOLVE_STATS_H__

#include <gst/gst.h>

#include "gcv.h"

G_BEGIN_DECLS

/* The custom meta's name (gst_buffer_get_custom_meta()) and the name of the
 * structure it holds, which is also the element message's. */
#define GST_GPU_CONVOLVE_STATS_META "GstGpuConvolveStatisticsMeta"
#define GST_GPU_CONVOLVE_STATS_NAME "gpuconvolve-statistics"

/* The names of the channels (or planes) of frames of `format` in the order
 * of their statistics: "R", "G", "B", "A" in memory order, "Y", "U", "V",
 * or "gray" (NULL-terminated). */
const gchar *const *gst_gpu_convolve_stats_channel_names (GcvFormat format);

/* Registers the meta (once per process; from the element's class_init). */
void gst_gpu_convolve_stats_register (void);

/* The statistics of a frame as a structure: per-channel arrays named by
 * `channels` (NULL-terminated, one name per channel of `stats`). */
GstStructure *gst_gpu_convolve_stats_structure (const GcvFrameStats * stats,
    gdouble threshold, const gchar * const *channels);

/* Puts `s` on `buf` in a statistics meta (taking it), replacing one that
 * is there. */
void gst_gpu_convolve_stats_attach (GstBuffer * buf, GstStructure * s);

/* Whether `meta` is a statistics meta (an upstream element's is stale once
 * the frame is filtered again). */
gboolean gst_gpu_convolve_stats_is_meta (GstMeta * meta);

/* An element message with a copy of `s` and the buffer's times, as `level`
 * and `videoanalyse` post theirs. */
GstMessage *gst_gpu_convolve_stats_message (GstElement * element,
    const GstSegment * segment, GstBuffer * buf, const GstStructure * s);

G_END_DECLS

#endif /* __GST_GPU_CONVOLVE_STATS_H__ */
