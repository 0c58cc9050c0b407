/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve engine: 2D and separable convolution of video frames.
 *
 * The public C API of the engine that sits under the GStreamer element:
 * what an application that filters frames needs. It depends on GLib only.
 * gcv-interop.h adds device frames, streams and page-locked memory.
 *
 * Usage:
 *   GcvFilter *f = gcv_filter_new (&desc, &err);       // validate, normalise
 *   GcvEngine *e = gcv_engine_new (GCV_BACKEND_AUTO, -1, &err);
 *   GcvPlan *p = gcv_plan_new (e, &geometry, f, GCV_FAMILY_AUTO, 2, &err);
 *   gcv_plan_submit (p, &src, &dst, &ticket, &err);    // may run asynchronously
 *   gcv_plan_wait (p, ticket, &err);                   // dst is ready
 *
 * What is computed (correlation, as OpenCV filter2D):
 *   out(x, y) = bias + scale * sum_{j<kh, i<kw} K[j][i] * in(x + i - ax, y + j - ay)
 * with the border mode deciding what in() is outside the frame.
 */
#ifndef GCV_H
#define GCV_H

#include <glib.h>

G_BEGIN_DECLS

/* The library exports what gcv.h and gcv-interop.h declare, and nothing
 * else: it is built with hidden visibility. */
#define GCV_API __attribute__ ((visibility ("default")))

#define GCV_MAX_KERNEL_SIZE 1023
#define GCV_MAX_FRAME_SIZE 32767

typedef enum {
  GCV_FORMAT_RGBA,
  GCV_FORMAT_BGRA,
  GCV_FORMAT_RGBX,
  GCV_FORMAT_BGRX,
  GCV_FORMAT_GRAY8,
  GCV_FORMAT_GRAY32F,
  GCV_FORMAT_NV12,              /* Y plane, then interleaved UV at half size */
  GCV_FORMAT_I420,              /* Y, U and V planes, U and V at half size */
  GCV_FORMAT_GRAY16_LE,         /* 16-bit little-endian grey */
  GCV_FORMAT_RGB,               /* 3 bytes a pixel, no alpha */
  GCV_FORMAT_BGR,
  GCV_FORMAT_P010_10LE,         /* as NV12, 16-bit little-endian samples
                                 * holding 10 bits in their high bits */
} GcvFormat;

/* The last format: formats are GCV_FORMAT_RGBA..GCV_FORMAT_LAST. */
#define GCV_FORMAT_LAST GCV_FORMAT_P010_10LE
/* A format's bit in a set of formats (GcvNeeds.formats). */
#define GCV_FORMAT_BIT(format) (1u << (format))

/* NV12, I420 and P010_10LE: which planes are filtered. */
typedef enum {
  GCV_PLANES_LUMA,              /* Y filtered, chroma copied */
  GCV_PLANES_ALL,               /* U and V filtered too, at their own size */
} GcvPlanes;

typedef enum {
  GCV_BORDER_CONSTANT,
  GCV_BORDER_REPLICATE,
  GCV_BORDER_REFLECT,
  GCV_BORDER_REFLECT101,
  GCV_BORDER_WRAP,
} GcvBorder;

typedef enum {
  GCV_BUILTIN_CUSTOM,
  GCV_BUILTIN_BOX,
  GCV_BUILTIN_GAUSSIAN,
  GCV_BUILTIN_SHARPEN,
  GCV_BUILTIN_LAPLACIAN,
  GCV_BUILTIN_SOBEL_X,
  GCV_BUILTIN_SOBEL_Y,
  GCV_BUILTIN_SCHARR_X,
  GCV_BUILTIN_SCHARR_Y,
  GCV_BUILTIN_EMBOSS,
  GCV_BUILTIN_LOG,
  GCV_BUILTIN_DOG,
  GCV_BUILTIN_SOBEL,            /* sqrt (gx^2 + gy^2) of sobel-x and sobel-y */
  GCV_BUILTIN_SCHARR,           /* the same of scharr-x and scharr-y */
} GcvBuiltin;

typedef enum {
  GCV_MODE_CORRELATION,         /* as OpenCV filter2D */
  GCV_MODE_CONVOLUTION,         /* K flipped in both axes, anchor mirrored */
} GcvMode;

typedef enum {
  GCV_ALPHA_PASSTHROUGH,        /* the 4th byte of RGBA-family pixels copied */
  GCV_ALPHA_FILTER,             /* filtered like a colour */
} GcvAlpha;

typedef enum {
  GCV_SEPARABLE_AUTO,
  GCV_SEPARABLE_ALWAYS,
  GCV_SEPARABLE_NEVER,
} GcvSeparableMode;

typedef enum {
  GCV_FAMILY_AUTO,
  GCV_FAMILY_DIRECT,
  GCV_FAMILY_TILED,
  GCV_FAMILY_REGISTER,
  GCV_FAMILY_SEPARABLE,
  GCV_FAMILY_FFT,
} GcvFamily;

typedef enum {
  GCV_BACKEND_AUTO,
  GCV_BACKEND_CUDA,
  GCV_BACKEND_CPU,
} GcvBackendKind;

/* The settings a problem is blamed on; named like the element's properties. */
typedef enum {
  GCV_FIELD_NONE = 0,
  GCV_FIELD_KERNEL = 1 << 0,
  GCV_FIELD_ROW_KERNEL = 1 << 1,
  GCV_FIELD_COLUMN_KERNEL = 1 << 2,
  GCV_FIELD_SIZE = 1 << 3,
  GCV_FIELD_SIGMA = 1 << 4,
  GCV_FIELD_SCALE = 1 << 5,
  GCV_FIELD_BIAS = 1 << 6,
  GCV_FIELD_ANCHOR_X = 1 << 7,
  GCV_FIELD_ANCHOR_Y = 1 << 8,
  GCV_FIELD_BORDER_VALUE = 1 << 9,
  GCV_FIELD_SEPARABLE = 1 << 10,
  GCV_FIELD_ALGORITHM = 1 << 11,
  GCV_FIELD_ANY = ~0,
} GcvField;

#define GCV_ERROR (gcv_error_quark ())
GCV_API GQuark gcv_error_quark (void);

typedef enum {
  GCV_ERROR_SETTINGS,           /* invalid filter description */
  GCV_ERROR_NO_DEVICE,          /* no usable CUDA device */
  GCV_ERROR_DEVICE,             /* a CUDA call failed; message has its error string */
  GCV_ERROR_FRAME,              /* a frame too small for the geometry */
  GCV_ERROR_INTERRUPTED,        /* gcv_engine_interrupt() stopped the frame */
} GcvError;

/* What the user asked for; arrays are borrowed. Field names follow the
 * element's properties. */
typedef struct {
  GcvBuiltin builtin;           /* the `filter` property: a built-in, or custom */
  guint size;                   /* built-in filters' size */
  gdouble sigma;                /* gaussian, sharpen, log, dog */
  const gfloat *kernel;         /* row-major kernel_width * kernel_height, or none */
  guint n_kernel;
  guint kernel_width, kernel_height;
  const gfloat *row_kernel;     /* length kernel_width, or none */
  guint n_row_kernel;
  const gfloat *column_kernel;  /* length kernel_height, or none */
  guint n_column_kernel;
  gboolean normalize;           /* scale additionally divided by sum(K) when != 0 */
  gdouble scale, bias;
  GcvMode mode;
  gint anchor_x, anchor_y;      /* -1: centre */
  GcvBorder border;
  gdouble border_value;
  GcvAlpha alpha;
  GcvPlanes planes;
  GcvSeparableMode separable;
  GcvFamily algorithm;          /* the family asked for (the algorithm
                                 * property); separable needs a rank-1 K */
} GcvFilterDesc;

/* A validated filter, ready to run (opaque). */
typedef struct _GcvFilter GcvFilter;

GCV_API void gcv_filter_desc_init (GcvFilterDesc * desc);
GCV_API gboolean gcv_filter_desc_validate (const GcvFilterDesc * desc, GcvField fields,
    GError ** error);
GCV_API GcvFilter *gcv_filter_new (const GcvFilterDesc * desc, GError ** error);
GCV_API void gcv_filter_free (GcvFilter * filter);
/* One tap of 1 at the anchor and no bias: the output is the input. */
GCV_API gboolean gcv_filter_is_identity (const GcvFilter * filter);

GCV_API const gchar *gcv_builtin_nick (GcvBuiltin filter);
GCV_API const gchar *gcv_border_nick (GcvBorder border);
GCV_API const gchar *gcv_family_nick (GcvFamily family);
GCV_API const gchar *gcv_format_name (GcvFormat format);
GCV_API gboolean gcv_format_from_name (const gchar * name, GcvFormat * format);
/* Bytes per pixel (1 to 4); GRAY32F is 4; NV12, I420 and P010_10LE: of
 * the Y plane (1, 1 and 2). */
GCV_API guint gcv_format_pixel_size (GcvFormat format);
/* Whether a plan may take frames of `in` to frames of `out` (converted
 * after filtering, docs/formats.md): each format to itself; GRAY8 and
 * GRAY16_LE to GRAY32F and back; NV12 and I420 to their luma in GRAY8 or
 * GRAY32F; P010_10LE to its luma in GRAY16_LE or GRAY32F. */
GCV_API gboolean gcv_format_converts_to (GcvFormat in, GcvFormat out);
/* NV12, I420 and P010_10LE: TRUE, with the chroma planes' size (half,
 * rounded up). */
GCV_API gboolean gcv_format_chroma_size (GcvFormat format, guint width,
    guint height, guint * chroma_width, guint * chroma_height);

typedef struct {
  GcvFormat in_format, out_format;
  guint width, height;
} GcvGeometry;

/* A frame: data points to the first byte of the first row (of the Y plane
 * for NV12, I420 and P010_10LE). */
typedef struct {
  gpointer data;
  gsize stride;                 /* bytes between rows, >= width * pixel size */
  gboolean on_device;           /* device pointers (CUDA backend only) */
  /* NV12 and P010_10LE: chroma[0] is the interleaved UV plane; I420:
   * chroma[0] is U and chroma[1] is V. Each has gcv_format_chroma_size()
   * samples (pairs for the UV plane), rows chroma_stride[] bytes apart. */
  gpointer chroma[2];
  gsize chroma_stride[2];
} GcvImage;

typedef struct _GcvEngine GcvEngine;
typedef struct _GcvPlan GcvPlan;

/* Whether a backend can run here (CUDA: a usable device with that id). */
GCV_API gboolean gcv_backend_available (GcvBackendKind kind, gint device_id,
    GError ** error);
/* What a stream needs of the backend that filters it. */
typedef struct {
  guint formats;                /* GCV_FORMAT_BIT() of each format of its
                                 * frames, in and out; 0: not known yet */
  gboolean regions;             /* frames filtered in part (a region_mode
                                 * other than GCV_REGIONS_ALL) */
  gboolean device_memory;       /* frames in device memory (on_device) */
} GcvNeeds;

/* Whether a backend takes streams with these needs, whether or not it can
 * run here (gcv_backend_available()), as its table states: FALSE with a
 * GCV_ERROR_SETTINGS error naming the first need it lacks (a format by
 * name, regions, device memory), or GCV_ERROR_NO_DEVICE where this build
 * has no such backend. In this version both backends take every format
 * and regions; only the CUDA backend takes device memory. Auto takes what
 * either takes. */
GCV_API gboolean gcv_backend_takes (GcvBackendKind kind,
    const GcvNeeds * needs, GError ** error);
/* The one decision of which backend runs a stream. `asked` CUDA or CPU:
 * that backend where it can run here, whatever the needs (what it lacks
 * is refused by name where the stream needs it: gcv_plan_new(),
 * gcv_plan_submit_with()). `asked` auto: CUDA where a device is usable
 * (`device_id`, -1: the default) and it takes the needs, else the CPU
 * where it takes them; `reason` (may be NULL) then says why not CUDA
 * (GCV_ERROR_NO_DEVICE, or GCV_ERROR_SETTINGS naming the need). Returns
 * the backend, or GCV_BACKEND_AUTO where none runs the stream, with
 * `reason` saying why. */
GCV_API GcvBackendKind gcv_backend_choose (GcvBackendKind asked,
    gint device_id, const GcvNeeds * needs, GError ** reason);
/* gcv_backend_takes() of frames of `format` alone, without the error. */
GCV_API gboolean gcv_backend_takes_format (GcvBackendKind kind,
    GcvFormat format);
GCV_API GcvEngine *gcv_engine_new (GcvBackendKind kind, gint device_id,
    GError ** error);
GCV_API GcvBackendKind gcv_engine_get_backend (GcvEngine * engine);
/* The dispatcher's table: this file instead of the cached or shipped table
 * for the device; "" for no table (the heuristic alone); NULL to look for
 * the cached or shipped one again. FALSE (and the previous table kept) when
 * the file cannot be read or parsed. The CPU backend has no dispatcher; it
 * only checks the file. */
GCV_API gboolean gcv_engine_set_tuning_file (GcvEngine * engine, const gchar * path,
    GError ** error);
GCV_API const gchar *gcv_engine_describe (GcvEngine * engine);
GCV_API void gcv_engine_free (GcvEngine * engine);
/* Interrupts the engine's frames, from any thread (for flushes and stops,
 * which need not wait for a frame that takes seconds). While on, a CPU
 * frame in progress stops within a row of its bands, and the submit of
 * every frame of the engine's plans fails with GCV_ERROR_INTERRUPTED: the
 * output is then partly written, and nothing is to be waited for. The
 * plans stay usable; frames run again once it is off. The CUDA backend,
 * whose frames are short, ignores it. */
GCV_API void gcv_engine_interrupt (GcvEngine * engine, gboolean on);

/* A frame submitted to a plan, until it is waited for. */
typedef guint64 GcvTicket;

/* How many frames a plan holds in flight when `wanted` are asked for: the
 * CPU backend runs each frame to its end inside submit (1); CUDA holds as
 * many as asked. */
GCV_API guint gcv_engine_frames_in_flight (GcvEngine * engine, guint wanted);

/* Up to gcv_engine_frames_in_flight (engine, in_flight) frames may be in
 * flight at once. */
GCV_API GcvPlan *gcv_plan_new (GcvEngine * engine, const GcvGeometry * geometry,
    const GcvFilter * filter, GcvFamily family, guint in_flight,
    GError ** error);
/* Swap the filter; frames already submitted keep the old one. */
GCV_API gboolean gcv_plan_set_filter (GcvPlan * plan, const GcvFilter * filter,
    GcvFamily family, GError ** error);
/* Starts filtering src into dst; dst is ready once `ticket` is waited
 * for. Refused (GCV_ERROR_FRAME) while the plan holds as many frames in
 * flight as it can: wait for the oldest first. */
GCV_API gboolean gcv_plan_submit (GcvPlan * plan, const GcvImage * src,
    const GcvImage * dst, GcvTicket * ticket, GError ** error);
/* Waits for a frame; every ticket is waited for once, in any order. */
GCV_API gboolean gcv_plan_wait (GcvPlan * plan, GcvTicket ticket, GError ** error);
/* submit and wait */
GCV_API gboolean gcv_plan_run (GcvPlan * plan, const GcvImage * src,
    const GcvImage * dst, GError ** error);
/* The family the plan runs, with its parameters and where the choice came
 * from, as text. */
GCV_API const gchar *gcv_plan_describe (GcvPlan * plan);
/* Frames the plan holds in flight at most. */
GCV_API guint gcv_plan_get_capacity (GcvPlan * plan);
GCV_API void gcv_plan_free (GcvPlan * plan);

/* Bytes a host frame needs with this stride. */
GCV_API gsize gcv_frame_size (GcvFormat format, guint width, guint height,
    gsize stride);

/* --- per-frame options and statistics (docs/statistics.md) --------------- */

/* Channels (RGBA family, in memory order) or planes (Y, U, V) at most. */
#define GCV_MAX_CHANNELS 4

/* The statistics of one channel or plane of an output frame: its values
 * after scale, bias and conversion, before rounding to an integer format. */
typedef struct {
  guint64 count;                /* samples (of the filtered area) */
  gdouble sum, sum_squares;     /* NaN samples make these NaN */
  gdouble min, max;             /* of the samples that are not NaN; NaN
                                 * when there are none */
  guint min_x, min_y;           /* where min is first met, in row order, in
                                 * the plane's own samples */
  guint max_x, max_y;
  guint64 above;                /* samples with |value| > the threshold */
} GcvChannelStats;

typedef struct {
  guint n_channels;             /* 0 when the frame asked for none */
  GcvChannelStats channel[GCV_MAX_CHANNELS];
} GcvFrameStats;

/* --- privacy regions (docs/regions.md) ----------------------------------- */

/* A rectangle in frame pixels (of the Y plane for NV12, I420 and
 * P010_10LE). Parts outside the frame are ignored; one with no area is
 * ignored. */
typedef struct {
  gint x, y, width, height;
} GcvRect;

/* Where a frame is filtered; elsewhere the output is the input, copied. */
typedef enum {
  GCV_REGIONS_ALL,              /* the whole frame; regions are ignored */
  GCV_REGIONS_INSIDE,           /* the union of the regions only */
  GCV_REGIONS_OUTSIDE,          /* all but the union of the regions */
} GcvRegionMode;

/* Regions a frame may name at most. */
#define GCV_MAX_REGIONS 256

/* What one frame asks for beyond the plan's filter. */
typedef struct {
  gboolean statistics;          /* compute GcvFrameStats for this frame */
  gdouble statistics_threshold; /* for GcvChannelStats.above, >= 0 */
  /* Inside the filtered area each output sample is what filtering the
   * whole frame gives; the statistics measure that area only. Other than
   * GCV_REGIONS_ALL needs the same input and output format, and a backend
   * that takes regions (gcv_backend_takes(): both in this version).
   * `regions` is read during the submit only. */
  GcvRegionMode region_mode;
  const GcvRect *regions;
  guint n_regions;
} GcvFrameOptions;

GCV_API void gcv_frame_options_init (GcvFrameOptions * options);
/* gcv_plan_submit() with options (NULL: none). */
GCV_API gboolean gcv_plan_submit_with (GcvPlan * plan, const GcvImage * src,
    const GcvImage * dst, const GcvFrameOptions * options,
    GcvTicket * ticket, GError ** error);
/* gcv_plan_wait(), filling `stats` (may be NULL) with the frame's
 * statistics: n_channels is 0 when the frame asked for none. */
GCV_API gboolean gcv_plan_wait_stats (GcvPlan * plan, GcvTicket ticket,
    GcvFrameStats * stats, GError ** error);

G_END_DECLS

#endif /* GCV_H */
