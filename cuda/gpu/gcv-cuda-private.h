/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the CUDA backend's host files share: its engine, its plans and
 * their slots, and the functions one file calls in another. Each file
 * calls only those listed before it here (the engine's table names the
 * plan's and the frame's functions):
 *
 * gcv-cuda-stats.c     per-frame statistics, the host's part
 *                      (gcv-cuda-stats.h)
 * gcv-cuda-slots.c     the slots: streams, events and buffers
 * gcv-cuda-fft.c       the FFT family's set-up
 * gcv-cuda-choice.c    what runs for the plan's filter on this device, its
 *                      launch arguments and its launch
 * gcv-cuda-regions.c   a frame's privacy regions: the cut, the launches on
 *                      its filtered rectangles, the copies of the rest
 * gcv-cuda-graph.c     a frame's launches replayed as a CUDA graph
 * gcv-cuda-frame.c     a frame: upload, compute launches, download, wait
 * gcv-cuda-plan.c      a plan: made, set up for each filter, freed
 * gcv-cuda-engine.c    the engine (device or application context, tuning
 *                      table), and the backend's table of functions
 *
 * Frames in flight: each holds a slot, the plan's place for one frame,
 * with its own stream; ticket t runs in slot t % n_slots (gcv-plan.c). */
#ifndef GCV_CUDA_PRIVATE_H
#define GCV_CUDA_PRIVATE_H

#include "gcv-private.h"
#include "gcv-backend.h"
#include "gcv-format.h"
#include "gcv-cuda-context.h"
#include "gcv-cuda-device.h"
#include "gcv-cuda-stats.h"
#include "kernels/gcv-kernels.h"
#include "kernels/gcv-convert.h"
#include "dispatch/gcv-dispatch.h"
#include "dispatch/gcv-tuning.h"

G_BEGIN_DECLS

typedef struct {
  gint device;
  gpointer context;             /* the application's CUcontext, or NULL for
                                 * the device's primary context */
  GcvCudaDevice props;          /* what the launchers size tiles with */
  GcvDeviceInfo info;           /* what the dispatcher decides with */
  GcvTuningTable *table;        /* measured choices, or NULL */
  gchar *description;
} CudaEngine;

/* Where a frame's input or output samples are on the device, `step`
 * bytes apart (gcv-cuda-regions.c). */
typedef struct {
  guint8 *data;
  gsize stride;
  guint step;
} CudaSamples;

/* What a frame's launches are, as far as a graph of them holds
 * (gcv-cuda-graph.c): the filter they run and the buffers they use. */
typedef struct {
  guint64 filter_serial;
  const void *buffers[5];
} CudaGraphKey;

/* What one frame in flight holds: a stream, an event and its buffers. */
typedef struct {
  cudaStream_t stream;
  cudaEvent_t done;
  cudaEvent_t read;             /* recorded once a page-locked host input
                                 * was uploaded from where it lies */
  gboolean reads_host;          /* the frame's upload reads the caller's
                                 * host memory (not staging) */
  gboolean staged;              /* the host input was copied at the submit */
  void *d_pad, *d_raw, *d_tmp, *d_out;
  float *d_taps, *h_taps;       /* large kernels: taps in device memory */
  void *d_atlas;                /* privacy regions filtered side by side
                                 * (gcv-cuda-regions.c) */
  /* bytes each of the above holds */
  gsize pad_size, raw_size, tmp_size, out_size, taps_size, atlas_size;
  guint taps_serial;            /* which filter d_taps holds */
  void *h_in, *h_out;           /* pinned staging for pageable frames */
  gsize h_in_size, h_out_size;
  /* where a staged output goes once the frame is done */
  guint8 *copy_to;
  gsize copy_stride;
  GcvCudaSlotStats stats;
  GcvFrameOptions options;      /* the frame's, its regions read during
                                 * its submit only */
  /* the slot's frames' launches as a graph, and what they are */
  cudaGraphExec_t graph;
  CudaGraphKey graph_key, last_key;
} CudaSlot;

/* The buffers of a slot, as gcv_cuda_slot_ensure() makes them. */
enum {
  BUF_INPUT = 1 << 0,           /* padded input, and the frame an unpack
                                 * or a widening reads (a narrowing's
                                 * output on its way to the host) */
  BUF_TMP = 1 << 1,
  BUF_OUT = 1 << 2,
  BUF_TAPS = 1 << 3,
};

typedef struct {
  CudaEngine *engine;
  GcvPlan *plan;
  CudaSlot *slots;
  guint n_slots;
  /* what frames of the filter need of the slot buffers */
  gsize pad_pitch, raw_pitch, tmp_pitch, out_pitch;
  gsize pad_bytes, raw_bytes, tmp_bytes, out_bytes, taps_bytes;
  /* the identity between equal 8-bit formats: device frames are copied
   * (no padded input, which the slots make only for a frame that needs
   * it) */
  gboolean copy_only;
  /* how frames are filtered, from the filter and geometry */
  GcvPixel pix;
  GcvOut out;
  gfloat out_scale;
  gboolean unpack;              /* 8-bit frames go through floats */
  /* Formats the families have no element for (16-bit words, RGB and
   * BGR): the input widened into the padded frame by a pass, the output
   * narrowed from the kernels' by another (passes/convert.cu). */
  gboolean widen, narrow;
  GcvSample in_sample, out_sample;
  size_t tiled_smem;            /* tiled, adaptive: its shared memory */
  int rect_rows;                /* tiled, adaptive: its rows, for the
                                 * rectangles of a frame with regions where
                                 * the plan runs fft (0: direct) */
  GcvRegionSplit split;         /* the frame's regions, cut (kept) */
  /* its filtered rectangles side by side (gcv-cuda-regions.c); `direct`:
   * their reaches read from the device frame where it lies, with no
   * upload or halo; the frame's input and output */
  gboolean atlas, atlas_direct;
  /* the atlas's rectangles filtered where they lie by one launch instead
   * (the separable family on bytes) */
  gboolean rects;
  CudaSamples region_in, region_out;
  GcvCudaFft *fft;
  int fft_setup[7];             /* width, height, kw, kh, channels, prime,
                                 * tile */
  gfloat *fft_taps;             /* the taps whose spectrum fft holds */
  guint filter_serial;
  /* The kernel the device runs: the filter's, or for tiled's unrolled
   * kernels at a width with no instance, widened to the next instance
   * by zero taps on the right (the same sums for finite input;
   * docs/performance.md, sizes with no precompiled kernel; a block whose
   * tile holds a NaN or Inf sums over the filter's own width instead:
   * tiled.cu). kw is its width; run_taps its kh x kw taps when widened,
   * or a gradient magnitude's gx taps then its gy taps (GcvCudaConv), NULL
   * for the filter's own; n_taps how many. */
  guint kw;
  gfloat *run_taps;
  gsize n_taps;
} CudaPlan;

/* Makes the engine's context current on this thread before its CUDA calls:
 * another may be current (GStreamer's, or another engine's). */
static inline cudaError_t
cuda_enter (const CudaEngine * e)
{
  return e->context ? gcv_cuda_context_use (e->context) :
      cudaSetDevice (e->device);
}

/* gcv-cuda-slots.c */
/* Each slot's stream and event; once each slot's work is done, its
 * buffers, stream and event. */
gboolean gcv_cuda_slots_create (CudaPlan * cp, GError ** error);
void gcv_cuda_slots_free (CudaPlan * cp);
/* Makes the buffers of `s` in `what` (BUF_*) that hold less than frames of
 * the filter need now, on the slot's stream; whether they hold enough. */
gboolean gcv_cuda_slot_ensure (CudaPlan * cp, CudaSlot * s, guint what,
    GError ** error);
gboolean gcv_cuda_slot_has (const CudaPlan * cp, const CudaSlot * s,
    guint what);
/* The slot's atlas holds at least `bytes` (grown, zeroed once). */
gboolean gcv_cuda_slot_ensure_atlas (CudaSlot * s, gsize bytes,
    GError ** error);
/* What frames of the filter need of the slot buffers, and every slot's
 * buffers that every frame needs, made at plan set-up or when the halo
 * grows. */
gboolean gcv_cuda_ensure_buffers (CudaPlan * cp, const GcvPlan * plan,
    GError ** error);
/* Waits for every frame in flight (their events; no device-wide sync). */
gboolean gcv_cuda_wait_all (CudaPlan * cp, GError ** error);

/* gcv-cuda-fft.c: the FFT family's transforms and kernel spectrum. FALSE
 * with `error` for a CUDA failure; a set-up that cannot be made leaves
 * cp->fft NULL and says why in `why`. */
gboolean gcv_cuda_fft_setup_ensure (CudaPlan * cp, const GcvPlan * plan,
    const GcvCudaConv * c, const GcvVariant * v, gchar * why, gsize why_len,
    GError ** error);
/* Frees the set-up (no frame in flight uses it). */
void gcv_cuda_fft_setup_free (CudaPlan * cp);

/* gcv-cuda-choice.c: what runs. The kernel element type, 8-bit unpack,
 * widening and narrowing passes and output epilogue; then the plan's record (GcvPlan.choice), settled by the
 * dispatcher from what the families report, and the kernel the device
 * runs. */
void gcv_cuda_choose_formats (CudaPlan * cp, const GcvPlan * plan);
/* Bytes of an output element as the kernels write it. */
gsize gcv_cuda_out_size (GcvOut out);
gboolean gcv_cuda_choose_variant (CudaPlan * cp, GcvPlan * plan,
    GError ** error);
/* The launch arguments of a frame in slot `s`. */
GcvCudaConv gcv_cuda_conv_args (CudaPlan * cp, const GcvPlan * plan,
    CudaSlot * s);
/* The chosen family on `c`: a whole frame, or (`rect`) a rectangle of it,
 * where fft, which transforms whole frames, gives way to tiled's adaptive
 * kernel (or direct). */
gboolean gcv_cuda_launch (CudaPlan * cp, const GcvPlan * plan, guint slot,
    const GcvCudaConv * c, gboolean rect, GError ** error);
/* Whether the chosen family's vector loads need a rectangle to start on a
 * column that is a multiple of 4 (tiled's unrolled kernels, fused
 * separable). */
gboolean gcv_cuda_rect_aligned (const CudaPlan * cp, const GcvPlan * plan);

/* gcv-cuda-regions.c: a frame's privacy regions (docs/regions.md), the
 * frame's input and output as CudaSamples. */
/* Cuts the frame of slot `s` (its options restrict it) into rectangles,
 * cp->split: the exact cut where statistics are taken or the output is
 * the input (a merged cut's filtered whole would leave no input to copy
 * the holes from); returns the samples filtered. `direct`: `in` is a
 * device frame whose samples the families read as they are, which small
 * rectangles may read where it lies (cp->atlas_direct: no upload or halo
 * then). */
guint64 gcv_cuda_regions_cut (CudaPlan * cp, const GcvPlan * plan,
    CudaSlot * s, const CudaSamples * in, const CudaSamples * out,
    gboolean direct);
/* The chosen family on each filtered rectangle, `c` set for the whole
 * frame, its halo made (or, with the atlas, on the rectangles side by
 * side, the copied area copied by the same launches). */
gboolean gcv_cuda_regions_launch (CudaPlan * cp, const GcvPlan * plan,
    guint slot, const GcvCudaConv * c, GError ** error);
/* The copied area, the input's bytes into the output: before the
 * launches (`before`), the whole frame where the cut has many copied
 * rectangles; after them, the copied rectangles where it has few, or a
 * merged cut's holes; nothing with the atlas, which copies its own. */
gboolean gcv_cuda_regions_copy (CudaPlan * cp, const GcvPlan * plan,
    CudaSlot * s, const CudaSamples * in, const CudaSamples * out,
    gboolean before, GError ** error);

/* gcv-cuda-graph.c: a frame's launches replayed as a CUDA graph */
typedef gboolean (*CudaWork) (gpointer data, GError ** error);
/* Queues `work` (launches only: no allocation, copy or event) on the
 * slot's stream: as the slot's graph where it was captured with `key`;
 * captured into it (and the graph queued) where the slot's frame before
 * had `key` too; else as it is. */
gboolean gcv_cuda_graph_run (CudaSlot * s, const CudaGraphKey * key,
    CudaWork work, gpointer data, GError ** error);

/* gcv-cuda-frame.c: a frame through its slot (GcvBackend's functions) */
gboolean gcv_cuda_submit (gpointer state, GcvPlan * plan, guint slot,
    const GcvImage * src, const GcvImage * dst, const GcvSteps * steps,
    GError ** error);
gboolean gcv_cuda_input_done (gpointer state, GcvPlan * plan, guint slot,
    gboolean wait, gboolean * done, GError ** error);
gboolean gcv_cuda_wait (gpointer state, GcvPlan * plan, guint slot,
    GError ** error);
gboolean gcv_cuda_set_frame_options (gpointer state, GcvPlan * plan,
    guint slot, const GcvFrameOptions * options, GError ** error);
void gcv_cuda_get_frame_stats (gpointer state, GcvPlan * plan, guint slot,
    GcvFrameStats * stats);

/* gcv-cuda-plan.c: a plan (GcvBackend's functions) */
gpointer gcv_cuda_plan_new (gpointer engine, GcvPlan * plan, GError ** error);
gboolean gcv_cuda_plan_set_filter (gpointer state, GcvPlan * plan,
    GError ** error);
void gcv_cuda_plan_free (gpointer state);
gpointer gcv_cuda_get_stream (gpointer state, guint slot);
gboolean gcv_cuda_get_device_input (gpointer state, guint slot,
    GcvImage * img);

G_END_DECLS

#endif /* GCV_CUDA_PRIVATE_H */
