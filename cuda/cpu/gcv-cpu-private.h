/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the files of the CPU backend share: what a filter and a geometry
 * come to (Setup, set up by gcv-cpu-setup.c), the workers' scratch, the
 * engine and plan (gcv-cpu.c), a frame's job (run by gcv-cpu-band.c), and
 * the row loops and conversions the bands call. Internal to the engine
 * library: nothing here is exported. */
#ifndef GCV_CPU_PRIVATE_H
#define GCV_CPU_PRIVATE_H

#include "gcv-private.h"
#include "gcv-backend.h"
#include "gcv-format.h"
#include "gcv-regions.h"
#include "dispatch/gcv-choice.h"
#include "gcv-cpu-pool.h"
#include "gcv-cpu-stats.h"

G_BEGIN_DECLS

/* The fixed-point column sums start from 0.5 (8.8) to round the output. */
#define FIXED_ROUND 128

typedef struct {
  GcvCpuPool *pool;
  gchar *description;
  gint interrupted;             /* atomic: gcv_engine_interrupt() */
} CpuEngine;

/* Where a tap of the direct path reads: a row of the kh + 1 that two
 * output rows read, and a column. */
typedef struct {
  guint row;
  guint offset;                 /* samples from the row's first */
} Tap;

/* The direct path's taps for output rows y and y + 1 from input rows
 * y - ay .. y - ay + kh, in row order: the first n_first from row 0 (row
 * y's alone), the last n_last from row kh (row y + 1's alone), the others
 * read by both. weights0[t] is K[row][i] for row y (t < n_taps - n_last),
 * weights1[t] is K[row - 1][i] for row y + 1 (t >= n_first). No output
 * multiplies a sample outside its own footprint: a NaN or an infinity
 * there would reach it through a zero weight. A gradient magnitude has
 * the same of its y derivative in weights0_y and weights1_y (else NULL). */
typedef struct {
  guint n_taps, n_first, n_last;
  Tap *taps;
  gfloat *weights0, *weights1;
  gfloat *weights0_y, *weights1_y;
} TapSet;

/* What a filter and a geometry come to; replaced as a whole, so a filter
 * that cannot be set up leaves the previous one working. */
typedef struct _Setup Setup;
struct _Setup {
  gboolean separable;
  gboolean fixed;               /* the 16-bit fixed-point path */
  guint kw, kh, ax, ay;
  guint channels;               /* samples per pixel: 1, 3 (RGB, BGR) or 4
                                 * (RGBA family) */
  gsize sample;                 /* bytes per sample: float, or 16-bit */
  gboolean keep_alpha;          /* the 4th byte passes through */
  GcvBorder border;
  gfloat border_value;          /* input units */
  guint16 border_fixed;         /* the same in 8.8 fixed point */
  gfloat bias;                  /* output units */
  gfloat magnitude_sign;        /* a gradient magnitude (direct path) */
  /* float taps in output units (the format conversion's 255 or 1/255
   * folded in) */
  gfloat *row, *column;         /* separable */
  /* direct: taps that are zero for both rows left out, for rows of
   * finite samples; where float input meets a kernel with zero taps, also
   * every tap of the footprint, for rows with a NaN or an infinity, where
   * a zero tap makes NaN */
  TapSet sparse, full;
  gboolean check_finite;        /* kept rows are checked, `full` exists */
  /* fixed point: samples are 8.8 (x * 256), taps 0.16, each product's
   * fraction dropped; the sums start from these to centre those losses
   * (and, in the column pass, to round) */
  guint16 *row_fixed, *column_fixed;
  guint16 row_start, column_start;
  guint strip;                  /* output columns per strip */
  guint band;                   /* output rows per task, at most */
  gint *xmap;                   /* padded column -> source x, -1: constant */
  /* per-worker scratch */
  gsize line_bytes;             /* one input row of a strip, padded */
  guint ring;                   /* rows a strip keeps: kh, or kh + 1 direct */
  gsize kept_row_bytes;         /* one of them */
  gsize out_bytes;              /* an output row of a strip */
  gsize ptr_slots;
  gsize scratch_bytes;          /* for this path and `exact`'s */
  Setup *exact;                 /* fixed point: the float separable path,
                                 * run for statistics only */
};

typedef struct {
  gpointer mem;                 /* as allocated */
  guint8 *line;                 /* separable: the input row being filtered */
  guint8 *kept;                 /* `ring` rows of kept_row_bytes */
  guint8 *out[2];               /* output rows of the strip */
  gconstpointer *ptr;           /* the taps' sources for one output row */
  gconstpointer *rows;          /* the kept rows by slot */
  gconstpointer *window;        /* the kept rows by kernel row */
  guint8 *finite;               /* direct, float input: kept row by slot
                                 * holds no NaN or infinity */
} Scratch;

/* A task of a frame: output rows y0 .. y1 - 1, columns x0 .. x1 - 1,
 * filtered, or copied from the input outside a frame's regions. */
typedef struct {
  guint x0, x1, y0, y1;
  gboolean copy;
} CpuTask;

typedef struct {
  CpuEngine *engine;
  Setup *setup;
  GArray *tasks;                /* CpuTask: the frame's, kept */
  GcvRegionSplit split;         /* the frame's regions, kept */
  Scratch *scratch;             /* one per worker */
  gsize scratch_bytes;          /* each worker's, as allocated */
  GcvFrameOptions *options;     /* per slot, from set_frame_options */
  GcvFrameStats *results;       /* per slot */
  GcvCpuStats stats;            /* the frame being measured */
} CpuPlan;

typedef struct {
  const CpuPlan *cp;
  const GcvPlan *plan;
  const GcvImage *src, *dst;
  const CpuTask *tasks;
  const GcvCpuStats *stats;     /* NULL: the frame is not measured */
  const GcvRegionSplit *holes;  /* a merged cut, whose holes each row
                                 * gets back from the input; else NULL */
  gint stopped;                 /* atomic: a band stopped short, interrupted */
} Job;

/* --- gcv-cpu-setup.c: set-up and scratch --------------------------------- */

Setup *gcv_cpu_setup_new (const GcvPlan * plan, guint workers,
    GcvChoice * choice, GError ** error);
void gcv_cpu_setup_free (Setup * s);
Scratch *gcv_cpu_scratch_new (const Setup * s, gsize bytes, guint n,
    GError ** error);
void gcv_cpu_scratch_layout (Scratch * sc, guint n, const Setup * s);
void gcv_cpu_scratch_free (Scratch * sc, guint n);

/* --- gcv-cpu-band.c: one band of output rows (a GcvCpuTaskFunc on a Job) */

void gcv_cpu_run_band (gpointer job, guint task, guint worker);

/* --- gcv-cpu-rows.c: row loops -------------------------------------------- */

/* out[x] = bias + sum_t w[t] * src[t][x] for x < n. */
void gcv_cpu_fir (gfloat * out, const gconstpointer * src, const gfloat * w,
    guint nt, gfloat bias, gsize n);
/* Two output rows from taps that mostly read the same samples: out0 from
 * taps t < nt - last (weights w0), out1 from taps t >= first (w1). */
void gcv_cpu_fir2 (gfloat * out0, gfloat * out1, const gconstpointer * src,
    const gfloat * w0, const gfloat * w1, guint first, guint nt, guint last,
    gfloat bias, gsize n);
/* out[x] = start + sum_t hi16(src[t][x] * k[t]) for x < n (8.8 samples,
 * 0.16 taps). */
void gcv_cpu_fir_fixed (guint16 * out, const gconstpointer * src,
    const guint16 * k, guint nt, guint16 start, gsize n);
/* Whether n floats are all finite. */
gboolean gcv_cpu_all_finite (const gfloat * v, gsize n);

/* --- gcv-cpu-convert.c: samples in and out -------------------------------- */

/* Bytes to floats, and to 8.8 fixed point. */
void gcv_cpu_widen (gfloat * out, const guint8 * p, gsize n);
void gcv_cpu_widen_fixed (guint16 * out, const guint8 * p, gsize n);
/* Floats (output units), or 8.8 fixed point with the rounding added, to
 * bytes, the fourth byte of each pixel from `alpha` where it is given. */
void gcv_cpu_narrow (guint8 * q, const gfloat * v, const guint8 * alpha,
    gsize n);
void gcv_cpu_narrow_fixed (guint8 * q, const guint16 * v,
    const guint8 * alpha, gsize n);
/* n 16-bit little-endian samples (any alignment) shifted right by
 * `shift`, to floats; and floats (output units) rounded, saturated to
 * 0..max and shifted left by `shift`, to such samples. */
void gcv_cpu_widen_u16 (gfloat * out, const guint8 * p, gsize n,
    guint shift);
void gcv_cpu_narrow_u16 (guint8 * q, const gfloat * v, gsize n, gfloat max,
    guint shift);
/* The 16-bit formats' shift: P010's 10 bits sit in the high bits. */
static inline guint
gcv_cpu_u16_shift (GcvFormat format)
{
  return format == GCV_FORMAT_P010_PLANE ? 6 : 0;
}

G_END_DECLS

#endif /* GCV_CPU_PRIVATE_H */
