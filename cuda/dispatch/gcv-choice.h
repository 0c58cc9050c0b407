/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record of what runs for a plan: the backend, the family with every
 * parameter, and each decision the backends used to make on their own
 * after the dispatcher (the column pass, the width tiled's unrolled
 * kernels run at, the GRAY32F guards, a fall-back and its reason, the CPU
 * backend's path). The dispatcher settles it in one call
 * (gcv_dispatch_choose() on CUDA, gcv_dispatch_choose_cpu() on the CPU,
 * gcv-dispatch.h); the backend leaves it in GcvPlan.choice from its
 * plan_new and plan_set_filter (gcv-backend.h); the tools read it
 * (gcv-tools.h); gcv_choice_describe() alone writes it as text, which is
 * what active-algorithm shows and gcv_plan_describe() returns
 * (docs/properties.md, docs/tuning.md). */
#ifndef GCV_CHOICE_H
#define GCV_CHOICE_H

#include "gcv-variant.h"

G_BEGIN_DECLS

/* Where a CUDA choice came from. */
typedef enum {
  GCV_SOURCE_HEURISTIC,
  GCV_SOURCE_TABLE,
  GCV_SOURCE_REQUESTED,         /* the algorithm property */
  GCV_SOURCE_FORCED,            /* a variant forced (gcv-tools.h) */
} GcvChoiceSource;

/* Why the family asked for (or picked) does not run. */
typedef enum {
  GCV_FALLBACK_NONE,
  GCV_FALLBACK_NOT_RANK1,       /* separable, kernel not rank 1: tiled */
  GCV_FALLBACK_REGISTER_SIZE,   /* no register instance: tiled */
  GCV_FALLBACK_FFT_SETUP,       /* the transforms could not be made: tiled;
                                 * the reason in `detail` */
  GCV_FALLBACK_TILE_TOO_LARGE,  /* no tile fits shared memory: direct */
  GCV_FALLBACK_FACTOR_SIGNS,    /* separable, GRAY32F, factors whose zeros
                                 * and signs are not K's: 2D */
  GCV_FALLBACK_MAGNITUDE,       /* register or fft asked for a gradient
                                 * magnitude, which they do not run: tiled */
  GCV_FALLBACK_CUDA_ONLY,       /* CPU backend: a family it does not have
                                 * (tiled, register, fft) was asked for */
} GcvFallback;

/* The CPU backend's paths (cuda/cpu/). */
typedef enum {
  GCV_CPU_PATH_NONE,            /* not the CPU backend */
  GCV_CPU_PATH_DIRECT,          /* every tap of the footprint, floats */
  GCV_CPU_PATH_SEPARABLE,       /* a row pass, then a column pass, floats */
  GCV_CPU_PATH_FIXED_POINT,     /* separable in 16-bit fixed point: 8-bit
                                 * blurs whose error bound holds */
  GCV_CPU_PATH_MAGNITUDE,       /* direct, a gradient magnitude's two
                                 * kernels in one sweep */
} GcvCpuPath;

/* Room for a fall-back's reason as CUDA or cuFFT give it. */
#define GCV_CHOICE_DETAIL 256

typedef struct {
  GcvBackendKind backend;       /* GCV_BACKEND_CPU or GCV_BACKEND_CUDA */
  GcvFamily requested;          /* the algorithm asked for */
  GcvVariant variant;           /* the family that runs; on CUDA every
                                 * parameter settled */
  GcvChoiceSource source;       /* CUDA: where the family came from */
  const gchar *table_source;    /* GCV_SOURCE_TABLE: "tuning-file",
                                 * "cache" or "shipped" */
  GcvFallback fallback;         /* why what was asked or picked does not
                                 * run (GCV_FALLBACK_NONE: it runs) */
  gchar detail[GCV_CHOICE_DETAIL];      /* GCV_FALLBACK_FFT_SETUP: why,
                                         * else "" */
  gboolean check_finite;        /* GRAY32F input, the one format that holds
                                 * NaN and Inf: the kernels that read past a
                                 * footprint (widened taps, FFT) check for
                                 * them (docs/filters.md) */
  /* CUDA */
  guint kw;                     /* the filter's width */
  guint run_kw;                 /* the width of the kernel the device runs:
                                 * kw, or for tiled's unrolled kernels the
                                 * next instance's, the taps widened by
                                 * zeros on the right */
  gboolean column_pass;         /* one tap wide on tiled or separable: one
                                 * pass down the columns (column.cu) */
  gint fft_nx, fft_ny;          /* fft: the transform size */
  gint fft_tiles;               /* fft: overlap-save tiles per channel, or 1
                                 * for the whole frame */
  /* CPU */
  GcvCpuPath cpu_path;
  guint threads;                /* workers a frame's bands run on */
} GcvChoice;

/* What runs, as text: "<family> [<parameters>] (<source>)[ (<reason>)]
 * [: <detail>]" on CUDA, "<family>[ (<reason>)]" on the CPU. Free with
 * g_free(). */
gchar *gcv_choice_describe (const GcvChoice * choice);
/* NV12 and I420: the Y plane's record, then the U and V planes' (NULL: the
 * frame has none, its output is grey), filtered or copied. */
gchar *gcv_choice_describe_planes (const GcvChoice * luma,
    const GcvChoice * chroma, gboolean chroma_filtered);
const gchar *gcv_choice_source_nick (GcvChoiceSource source);
/* "" for GCV_FALLBACK_NONE; as CUDA writes it */
const gchar *gcv_fallback_reason (GcvFallback fallback);

G_END_DECLS

#endif /* GCV_CHOICE_H */
