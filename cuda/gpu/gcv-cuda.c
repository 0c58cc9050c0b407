/* The CUDA backend: engines, per-slot streams and buffers, uploads and
 * downloads, and the launch of the chosen kernel family.
 *
 * Each slot (a frame in flight) owns a stream, an event and its device
 * buffers: the padded input frame (the halo made on the device), the
 * separable intermediate, the output frame where the output is not written
 * in place (host frames, or a sample step), and the statistics' records
 * (gcv-cuda-stats.c). Buffers are sized when the plan or its filter's halo
 * grows, or made the first time a frame needs them, never per frame.
 * Frames of different slots overlap: upload, compute and download run on
 * the slot's own stream. */
#include "gcv-private.h"
#include "gcv-cuda-context.h"
#include "gcv-cuda-device.h"
#include "gcv-cuda-stats.h"
#include "kernels/gcv-kernels.h"
#include "dispatch/gcv-dispatch.h"
#include "dispatch/gcv-tuning.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PITCH_ALIGN 256

typedef struct {
  gint device;
  gpointer context;             /* the application's CUcontext, or NULL for
                                 * the device's primary context */
  GcvCudaDevice props;          /* what the launchers size tiles with */
  GcvDeviceInfo info;           /* what the dispatcher decides with */
  GcvTuningTable *table;        /* measured choices, or NULL */
  const gchar *table_source;    /* "tuning-file", "cache" or "shipped" */
  gchar *description;
} CudaEngine;

typedef struct {
  cudaStream_t stream;
  cudaEvent_t done;
  void *d_pad, *d_raw, *d_tmp, *d_out;
  float *d_taps, *h_taps;       /* large kernels: taps in device memory */
  /* bytes each of the above holds */
  gsize pad_size, raw_size, tmp_size, out_size, taps_size;
  guint taps_serial;            /* which filter d_taps holds */
  void *h_in, *h_out;           /* pinned staging for pageable frames */
  gsize h_in_size, h_out_size;
  /* where a staged output goes once the frame is done */
  guint8 *copy_to;
  gsize copy_stride;
  GcvCudaSlotStats stats;
} Slot;

/* The buffers of a slot, as slot_ensure() makes them. */
enum {
  BUF_INPUT = 1 << 0,           /* padded input, and the 8-bit frame an
                                 * unpack reads */
  BUF_TMP = 1 << 1,
  BUF_OUT = 1 << 2,
  BUF_TAPS = 1 << 3,
};

typedef struct {
  CudaEngine *engine;
  GcvPlan *plan;
  Slot *slots;
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
  size_t tiled_smem;            /* tiled, adaptive: its shared memory */
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
static cudaError_t
enter (const CudaEngine * e)
{
  return e->context ? gcv_cuda_context_use (e->context) :
      cudaSetDevice (e->device);
}

static gpointer
cuda_engine_new (gint device_id, gpointer context, GError ** error)
{
  CudaEngine *e;
  struct cudaDeviceProp prop;
  gint dev;

  gcv_cuda_fault_read ();
  if (context) {
    /* the device is the context's */
    if (!CHECK (gcv_cuda_context_use (context), OP_OTHER)
        || !CHECK (cudaGetDevice (&dev), OP_OTHER))
      return NULL;
    if (!gcv_cuda_device_usable (dev)) {
      g_set_error (error, GCV_ERROR, GCV_ERROR_NO_DEVICE, "the CUDA "
          "context's device %d is older than compute capability 8.0", dev);
      return NULL;
    }
  } else if (!gcv_cuda_find_device (device_id, &dev, error)
      || !CHECK (cudaSetDevice (dev), OP_OTHER)) {
    return NULL;
  }
  if (!CHECK (cudaGetDeviceProperties (&prop, dev), OP_OTHER))
    return NULL;
  e = g_new0 (CudaEngine, 1);
  e->device = dev;
  e->context = context;
  e->props.sm_count = prop.multiProcessorCount;
  e->props.smem_per_block_optin = prop.sharedMemPerBlockOptin;
  e->props.smem_per_sm = prop.sharedMemPerMultiprocessor;
  e->props.regs_per_sm = prop.regsPerMultiprocessor;
  gcv_cuda_device_info (&e->info, &prop, dev);
  e->table = gcv_tuning_find (NULL, prop.name, &e->table_source, NULL);
  e->description = g_strdup_printf ("cuda:%d %s", dev, prop.name);
  return e;
}

static gboolean
cuda_set_tuning_file (gpointer engine, const gchar * path, GError ** error)
{
  CudaEngine *e = engine;
  const gchar *source = NULL;
  GcvTuningTable *t = NULL;

  /* "": no table at all, the heuristic alone */
  if (!path || *path) {
    t = gcv_tuning_find (path, e->info.name, &source, error);
    if (!t && path)
      return FALSE;
  }
  gcv_tuning_table_free (e->table);
  e->table = t;
  e->table_source = source;
  return TRUE;
}

static gint
cuda_engine_device (gpointer engine)
{
  return ((CudaEngine *) engine)->device;
}

static const gchar *
cuda_engine_describe (gpointer engine)
{
  return ((CudaEngine *) engine)->description;
}

static void
cuda_engine_free (gpointer engine)
{
  CudaEngine *e = engine;
  gcv_tuning_table_free (e->table);
  g_free (e->info.name);
  g_free (e->description);
  g_free (e);
}

static gpointer
cuda_host_alloc (gpointer engine, gsize size, GError ** error)
{
  return gcv_pinned_alloc (size, error);
}

static void
cuda_host_free (gpointer engine, gpointer mem)
{
  gcv_pinned_free (mem);
}

/* --- plans --------------------------------------------------------------- */

static gsize
round_pitch (gsize bytes)
{
  return (bytes + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
}

static gboolean
is_pinned (const void *p)
{
  struct cudaPointerAttributes attr;
  if (cudaPointerGetAttributes (&attr, p) != cudaSuccess) {
    cudaGetLastError ();        /* clear it: not an error for us */
    return FALSE;
  }
  return attr.type == cudaMemoryTypeHost;
}

/* Formats to kernel element and epilogue. 8-bit input is filtered from its
 * bytes unless a constant border value is no byte value; then the frame is
 * unpacked to floats first. */
static void
choose_formats (CudaPlan * cp, const GcvPlan * plan)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  gboolean rgba = gcv_format_channels (g->in_format) == 4;
  gboolean byte_border = f->border != GCV_BORDER_CONSTANT
      || (f->border_value >= 0.0f && f->border_value <= 255.0f
      && f->border_value == floorf (f->border_value));

  cp->unpack = g->in_format != GCV_FORMAT_GRAY32F
      && (!byte_border || g_getenv ("GPUCONVOLVE_CUDA_UNPACK"));
  if (rgba) {
    cp->pix = cp->unpack ? GCV_PIX_F32X4 : GCV_PIX_U8X4;
    cp->out = f->filter_alpha ? GCV_OUT_U8X4 : GCV_OUT_U8X4_KEEP_ALPHA;
    cp->out_scale = 1.0f;
  } else {
    cp->pix = g->in_format == GCV_FORMAT_GRAY8 && !cp->unpack ? GCV_PIX_U8 :
        GCV_PIX_F32;
    cp->out = g->out_format == GCV_FORMAT_GRAY8 ? GCV_OUT_U8 : GCV_OUT_F32;
    cp->out_scale = g->in_format == g->out_format ? 1.0f :
        g->out_format == GCV_FORMAT_GRAY8 ? 255.0f : 1.0f / 255.0f;
  }
}

/* A stream-ordered free: no device-wide synchronisation, and the slot's
 * frames in flight keep what they use. */
static void
free_async (void **p, gsize * size, cudaStream_t stream)
{
  if (*p)
    cudaFreeAsync (*p, stream);
  *p = NULL;
  *size = 0;
}

static void
slot_free_buffers (Slot * s)
{
  free_async (&s->d_pad, &s->pad_size, s->stream);
  free_async (&s->d_raw, &s->raw_size, s->stream);
  free_async (&s->d_tmp, &s->tmp_size, s->stream);
  free_async (&s->d_out, &s->out_size, s->stream);
  free_async ((void **) &s->d_taps, &s->taps_size, s->stream);
  if (s->h_taps)
    cudaFreeHost (s->h_taps);
  s->h_taps = NULL;
}

/* *p holds at least `bytes` (0: none needed), made anew on the slot's
 * stream where it held less; `zero`: filled with zeros once. */
static gboolean
ensure_device (void **p, gsize * size, gsize bytes, gboolean zero,
    cudaStream_t stream, GError ** error)
{
  if (*size >= bytes)
    return TRUE;
  free_async (p, size, stream);
  if (!CHECK (cudaMallocAsync (p, bytes, stream), OP_ALLOC)) {
    *p = NULL;
    return FALSE;
  }
  if (zero && !CHECK (cudaMemsetAsync (*p, 0, bytes, stream), OP_OTHER))
    return FALSE;
  *size = bytes;
  return TRUE;
}

/* Makes the buffers of `s` in `what` (BUF_*) that hold less than frames of
 * the filter need now, on the slot's stream: usable by its frames in
 * stream order, from other streams once that is synchronised. */
static gboolean
slot_ensure (CudaPlan * cp, Slot * s, guint what, GError ** error)
{
  /* zeroed once: the slack past each padded row is read by vector loads
   * (never used) and must not be uninitialised memory */
  if ((what & BUF_INPUT) && (!ensure_device (&s->d_pad, &s->pad_size,
              cp->pad_bytes, TRUE, s->stream, error)
          || !ensure_device (&s->d_raw, &s->raw_size, cp->raw_bytes, FALSE,
              s->stream, error)))
    return FALSE;
  if ((what & BUF_TMP) && !ensure_device (&s->d_tmp, &s->tmp_size,
          cp->tmp_bytes, FALSE, s->stream, error))
    return FALSE;
  if ((what & BUF_OUT) && !ensure_device (&s->d_out, &s->out_size,
          cp->out_bytes, FALSE, s->stream, error))
    return FALSE;
  if ((what & BUF_TAPS) && s->taps_size < cp->taps_bytes) {
    if (s->h_taps)
      cudaFreeHost (s->h_taps);
    s->h_taps = NULL;
    if (!ensure_device ((void **) &s->d_taps, &s->taps_size, cp->taps_bytes,
            FALSE, s->stream, error)
        || !CHECK (cudaHostAlloc ((void **) &s->h_taps, cp->taps_bytes,
                cudaHostAllocDefault), OP_ALLOC)) {
      free_async ((void **) &s->d_taps, &s->taps_size, s->stream);
      s->h_taps = NULL;
      return FALSE;
    }
    s->taps_serial = 0;
  }
  return TRUE;
}

static gboolean
slot_has (const CudaPlan * cp, const Slot * s, guint what)
{
  return (!(what & BUF_INPUT) || (s->pad_size >= cp->pad_bytes
          && s->raw_size >= cp->raw_bytes))
      && (!(what & BUF_TMP) || s->tmp_size >= cp->tmp_bytes)
      && (!(what & BUF_OUT) || s->out_size >= cp->out_bytes)
      && (!(what & BUF_TAPS) || s->taps_size >= cp->taps_bytes);
}

/* Waits for every frame in flight (their events; no device-wide sync). */
static gboolean
wait_all (CudaPlan * cp, GError ** error)
{
  for (guint i = 0; i < cp->n_slots; i++)
    if (!CHECK (cudaEventSynchronize (cp->slots[i].done), OP_OTHER))
      return FALSE;
  return TRUE;
}

/* The identity between equal 8-bit formats: a device frame's bytes are
 * the output's (GRAY32F is not copied: the kernels write -0 as +0). */
static gboolean
copies_only (const GcvPlan * plan)
{
  const GcvGeometry *g = &plan->geometry;
  return plan->filter->identity && g->in_format == g->out_format
      && g->in_format != GCV_FORMAT_GRAY32F;
}

/* What frames of the filter need of the slot buffers, and every slot's
 * buffers that are needed whatever the frame (not the output, which host
 * frames and sample steps alone need, nor the input of a plan that copies
 * device frames) made when they hold less: at plan set-up, again only
 * when the halo grows. */
static gboolean
ensure_buffers (CudaPlan * cp, const GcvPlan * plan, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  gsize px = gcv_cuda_pixel_size (cp->pix);
  gsize tpx = gcv_cuda_separable_tmp_pixel (cp->pix);
  /* only the two-pass separable kernels have an intermediate */
  const GcvVariant *v = &plan->choice.variant;
  guint eager;

  /* 4 pixels of slack per row, so vector loads may run past the width */
  cp->pad_pitch = round_pitch ((g->width + cp->kw - 1 + 4) * px);
  cp->pad_bytes = cp->pad_pitch * (g->height + f->kh - 1);
  cp->raw_pitch = round_pitch (g->width *
      gcv_format_pixel_size (g->in_format));
  cp->raw_bytes = cp->unpack ? cp->raw_pitch * g->height : 0;
  cp->tmp_pitch = round_pitch (g->width * tpx);
  cp->tmp_bytes = v->family == GCV_FAMILY_SEPARABLE && v->two_pass ?
      cp->tmp_pitch * (g->height + f->kh - 1) : 0;
  cp->out_pitch = round_pitch (g->width *
      gcv_format_pixel_size (g->out_format));
  cp->out_bytes = cp->out_pitch * g->height;
  cp->taps_bytes = (gsize) cp->kw * f->kh > GCV_CUDA_PARAM_TAPS ?
      sizeof (gfloat) * cp->n_taps : 0;
  cp->copy_only = copies_only (plan);

  eager = BUF_TMP | BUF_TAPS | (cp->copy_only ? 0 : BUF_INPUT);
  for (guint i = 0; i < cp->n_slots; i++)
    if (!slot_has (cp, &cp->slots[i], eager))
      goto remake;
  return TRUE;                  /* big enough */

remake:
  /* the frames in flight use the buffers about to be remade */
  if (!wait_all (cp, error))
    return FALSE;
  for (guint i = 0; i < cp->n_slots; i++)
    if (!slot_ensure (cp, &cp->slots[i], eager, error))
      return FALSE;
  /* stream-ordered allocations: make them usable from any stream */
  for (guint i = 0; i < cp->n_slots; i++)
    if (!CHECK (cudaStreamSynchronize (cp->slots[i].stream), OP_OTHER))
      return FALSE;
  return TRUE;
}

static GcvCudaConv
conv_args (CudaPlan * cp, const GcvPlan * plan, Slot * s)
{
  const GcvFilter *f = plan->filter;
  GcvCudaConv c;

  memset (&c, 0, sizeof (c));
  c.in = cp->pix;
  c.out = cp->out;
  c.src = s->d_pad;
  c.src_pitch = cp->pad_pitch;
  c.dst = s->d_out;
  c.dst_pitch = cp->out_pitch;
  c.width = plan->geometry.width;
  c.height = plan->geometry.height;
  c.kw = cp->kw;
  c.kh = f->kh;
  c.ax = f->ax;
  c.ay = f->ay;
  c.footprint_kw = f->kw;
  /* only float frames hold NaN or Inf (docs/filters.md, non-finite input);
   * 8-bit frames unpacked to floats do not */
  c.check_finite = plan->geometry.in_format == GCV_FORMAT_GRAY32F;
  c.bias = f->bias;
  c.out_scale = cp->out_scale;
  c.taps = s->d_taps;
  c.host_taps = cp->run_taps ? cp->run_taps : f->taps;
  c.magnitude_sign = f->taps_y ? f->magnitude_sign : 0.0f;
  c.stream = s->stream;
  gcv_cuda_stats_args (&s->stats, &c);
  return c;
}

/* The narrowest width with an unrolled tiled kernel that holds kw, or 0. */
static guint
unrolled_width (guint kw)
{
  static const guint widths[] = {
#define WIDTH(K) K,
    GCV_TILED_WIDTHS (WIDTH)
#undef WIDTH
  };

  for (guint i = 0; i < G_N_ELEMENTS (widths); i++)
    if (widths[i] >= kw)
      return widths[i];
  return 0;
}

/* The device runs the filter's own kernel (CudaPlan.kw), a gradient
 * magnitude's two sets of taps one after the other. */
static void
run_filter_kernel (CudaPlan * cp, const GcvFilter * f)
{
  const gsize n = (gsize) f->kw * f->kh;

  g_clear_pointer (&cp->run_taps, g_free);
  cp->kw = f->kw;
  cp->n_taps = n;
  if (f->taps_y) {
    cp->run_taps = g_new (gfloat, 2 * n);
    memcpy (cp->run_taps, f->taps, sizeof (gfloat) * n);
    memcpy (cp->run_taps + n, f->taps_y, sizeof (gfloat) * n);
    cp->n_taps = 2 * n;
  }
}

/* Sets the kernel the device runs for this choice (CudaPlan.kw). A
 * magnitude is never widened: tiled has its unrolled kernels at their
 * own widths only. */
static void
set_run_kernel (CudaPlan * cp, const GcvFilter * f, const GcvVariant * v)
{
  guint w = unrolled_width (f->kw);

  run_filter_kernel (cp, f);
  if (v->family != GCV_FAMILY_TILED || v->adaptive || f->kw == 1 || w == 0
      || w == f->kw || f->taps_y)
    return;
  cp->run_taps = g_new0 (gfloat, (gsize) w * f->kh);
  for (guint y = 0; y < f->kh; y++)
    memcpy (cp->run_taps + (gsize) y * w, f->taps + (gsize) y * f->kw,
        sizeof (gfloat) * f->kw);
  cp->kw = w;
  cp->n_taps = (gsize) w * f->kh;
}

/* What each family reports it can run for this filter on this device. */
static void
family_limits (CudaPlan * cp, const GcvCudaConv * c, GcvFamilyLimits * l)
{
  const GcvCudaDevice *dev = &cp->engine->props;
  /* tiled's unrolled kernels run any width up to the widest instance,
   * but for a magnitude (its widths, tiled.cu) */
  GcvCudaConv wide = *c;
  guint w = unrolled_width (c->kw);

  if (c->kw > 1 && w && c->magnitude_sign == 0.0f)
    wide.kw = w;
  memset (l, 0, sizeof (*l));
  for (gint rows = 1; rows <= 8; rows *= 2)
    if (gcv_cuda_tiled_width_smem (&wide, rows, dev) > 0)
      l->unrolled_rows |= 1u << rows;
  /* the fused kernels have 4 rows only */
  if (gcv_cuda_separable_fused_bytes (c, 4, dev) > 0)
    l->fused_rows = 1u << 4;
  l->taps_in_memory = wide.kw * wide.kh > GCV_CUDA_PARAM_TAPS;
  l->unrolled_kw = wide.kw;
  l->adaptive_rows = gcv_cuda_tiled_choose (c, dev, &cp->tiled_smem);
  if (c->kw == 1 && l->adaptive_rows == 0)
    l->adaptive_rows = 1;       /* the column pass needs no tile */
  l->register_fits = gcv_cuda_register_supports (c);
}

/* Sets up the FFT family's transforms and kernel spectrum. They stay while
 * the frame, kernel size, channels and padding do, and the spectrum while
 * the taps do, so a bias or border change remakes neither. Frames in
 * flight use both: they finish before either changes. FALSE with `error`
 * for a CUDA failure; a set-up that cannot be made (too large for the
 * device, say) leaves cp->fft NULL and says why in `why`. */
static gboolean
ensure_fft (CudaPlan * cp, const GcvPlan * plan, const GcvCudaConv * c,
    const GcvVariant * v, gchar * why, gsize why_len, GError ** error)
{
  const GcvFilter *f = plan->filter;
  int channels = gcv_format_channels (plan->geometry.in_format) == 1 ? 1 :
      f->filter_alpha ? 4 : 3;
  int setup[7] = { c->width, c->height, (int) f->kw, (int) f->kh, channels,
    v->fft_prime, v->fft_tile
  };
  gboolean same_setup = cp->fft
      && memcmp (setup, cp->fft_setup, sizeof (setup)) == 0;

  if (same_setup && memcmp (cp->fft_taps, f->taps,
          sizeof (gfloat) * f->kw * f->kh) == 0)
    return TRUE;
  if (cp->fft && !wait_all (cp, error))
    return FALSE;
  g_clear_pointer (&cp->fft_taps, g_free);
  if (!same_setup) {
    cudaStream_t *streams = g_newa (cudaStream_t, cp->n_slots);
    for (guint i = 0; i < cp->n_slots; i++)
      streams[i] = cp->slots[i].stream;
    g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
    cp->fft = gcv_cuda_fft_new (c->width, c->height, f->kw, f->kh, channels,
        v->fft_prime, v->fft_tile, cp->n_slots, streams, why, why_len);
    memcpy (cp->fft_setup, setup, sizeof (setup));
  }
  if (cp->fft && !gcv_cuda_fft_set_filter (cp->fft, f->taps, f->kw, f->kh,
          why, why_len))
    g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
  if (cp->fft)
    cp->fft_taps = g_memdup2 (f->taps, sizeof (gfloat) * f->kw * f->kh);
  return TRUE;
}

/* A kernel one tap wide runs as one pass down the columns (column.cu) in
 * the tiled and the separable family: their tiles and row passes would only
 * add memory traffic to a filter that is a copy with a few taps. */
static gboolean
column_pass (const GcvFilter * f, const GcvVariant * v)
{
  return f->kw == 1 && !f->taps_y && (v->family == GCV_FAMILY_TILED
      || v->family == GCV_FAMILY_SEPARABLE);
}

static gint
sign (gfloat v)
{
  return (v > 0.0f) - (v < 0.0f);
}

/* Whether the separable paths give the NaN and infinities of a frame what
 * K gives them (docs/filters.md): column[j] * row[i] of the sign of K's
 * tap, zero where it is zero. A kernel rank 1 only within the tolerance
 * may have a tiny tap where its factors give 0, which would turn an
 * infinity under it into NaN. Only GRAY32F frames hold either. */
static gboolean
factors_fit_input (const GcvPlan * plan)
{
  const GcvFilter *f = plan->filter;

  if (!f->rank1 || plan->geometry.in_format != GCV_FORMAT_GRAY32F)
    return TRUE;
  for (guint j = 0; j < f->kh; j++)
    for (guint i = 0; i < f->kw; i++)
      if (sign (f->column[j]) * sign (f->row[i])
          != sign (f->taps[(gsize) j * f->kw + i]))
        return FALSE;
  return TRUE;
}

/* The dispatcher chooses (gcv_dispatch_choose()); this fills in what the
 * families report, makes the FFT set-up a choice of FFT needs, and writes
 * the description. */
static gboolean
choose_variant (CudaPlan * cp, GcvPlan * plan, GError ** error)
{
  const GcvFilter *f = plan->filter;
  CudaEngine *e = cp->engine;
  GcvCudaConv c;
  /* factors that do not fit the input: the kernel runs as 2D */
  const gboolean fit = factors_fit_input (plan);
  GcvDispatchKey key = {.format = plan->geometry.in_format,.kw = f->kw,
    .kh = f->kh,.separable = f->use_separable && fit,
    .width = plan->geometry.width,.height = plan->geometry.height,
    .separable_only = f->separable_only,.magnitude = f->taps_y != NULL
  };
  GcvFamilyLimits limits;
  GcvVariant forced;
  GcvChoice *choice = &plan->choice;
  const GcvVariant *v = &choice->variant;
  gchar *source, *params, *name;
  char fft_error[256] = "";

  if (plan->forced_variant
      && !gcv_variant_parse (plan->forced_variant, &forced, error))
    return FALSE;       /* checked when it was set: cannot happen */
  run_filter_kernel (cp, f);
  c = conv_args (cp, plan, &cp->slots[0]);
  family_limits (cp, &c, &limits);
  gcv_dispatch_choose (&key, &e->info, &limits, e->table, plan->requested,
      plan->forced_variant ? &forced : NULL, f->rank1 && fit, choice);
  if (!fit && (choice->fallback == GCV_FALLBACK_NOT_RANK1
          || (f->separable_only && choice->fallback == GCV_FALLBACK_NONE)))
    choice->fallback = GCV_FALLBACK_FACTOR_SIGNS;
  if (v->family == GCV_FAMILY_FFT) {
    if (!ensure_fft (cp, plan, &c, v, fft_error, sizeof (fft_error), error))
      return FALSE;
    if (!cp->fft)
      gcv_dispatch_fall_back (choice, GCV_FALLBACK_FFT_SETUP, &key, &limits);
  }
  if (v->family != GCV_FAMILY_FFT && cp->fft) {
    if (!wait_all (cp, error))
      return FALSE;
    g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
    g_clear_pointer (&cp->fft_taps, g_free);
  }
  /* after any fall-back: the FFT's may hand over to tiled */
  set_run_kernel (cp, f, v);

  name = gcv_variant_to_string (v);
  if (column_pass (f, v)) {
    params = g_strdup ("column pass");
  } else if (v->family == GCV_FAMILY_TILED && cp->kw != f->kw) {
    params = g_strdup_printf ("ty=%d unrolled %u wide", v->rows, cp->kw);
  } else if (v->family == GCV_FAMILY_TILED) {
    params = g_strdup_printf ("ty=%d %s", v->rows, v->adaptive ? "adaptive" :
        "unrolled");
  } else if (v->family == GCV_FAMILY_FFT && v->fft_tile) {
    int nx, ny, tiles;
    gcv_cuda_fft_size (cp->fft, &nx, &ny, &tiles);
    params = g_strdup_printf ("tile=%d, %d tiles", nx, tiles);
  } else if (v->family == GCV_FAMILY_FFT) {
    int nx, ny, tiles;
    gcv_cuda_fft_size (cp->fft, &nx, &ny, &tiles);
    params = g_strdup_printf ("p=%d %dx%d", v->fft_prime, nx, ny);
  } else {
    params = g_strdup (strchr (name, ' ') ? strchr (name, ' ') + 1 : "");
  }
  source = choice->source == GCV_SOURCE_TABLE ?
      g_strdup_printf ("table: %s", e->table_source) :
      g_strdup (gcv_choice_source_nick (choice->source));
  gcv_plan_set_description (plan, v->family, "%s%s(%s)%s%s%s%s%s", params,
      *params ? " " : "", source, choice->fallback ? " (" : "",
      gcv_fallback_reason (choice->fallback), choice->fallback ? ")" : "",
      *fft_error ? ": " : "", fft_error);
  g_free (source);
  g_free (params);
  g_free (name);
  return TRUE;
}

static gboolean
cuda_plan_set_filter (gpointer state, GcvPlan * plan, GError ** error)
{
  CudaPlan *cp = state;

  gcv_cuda_fault_read ();
  if (!CHECK (enter (cp->engine), OP_OTHER))
    return FALSE;
  /* Frames in flight keep their taps (passed with each launch) and their
   * buffers, unless these are remade: an FFT set-up is (choose_variant
   * waits for those), and so are slot buffers too small for the new halo
   * (ensure_buffers waits for those). */
  choose_formats (cp, plan);
  if (!choose_variant (cp, plan, error))
    return FALSE;
  cp->filter_serial++;
  return ensure_buffers (cp, plan, error);
}

static void
cuda_plan_free (gpointer state)
{
  CudaPlan *cp = state;

  enter (cp->engine);
  g_clear_pointer (&cp->fft, gcv_cuda_fft_free);
  g_free (cp->fft_taps);
  g_free (cp->run_taps);
  for (guint i = 0; i < cp->n_slots; i++) {
    Slot *s = &cp->slots[i];
    if (s->stream) {
      cudaStreamSynchronize (s->stream);
      slot_free_buffers (s);
      gcv_cuda_stats_free (&s->stats, s->stream);
      cudaStreamSynchronize (s->stream);
      cudaStreamDestroy (s->stream);
    }
    if (s->done)
      cudaEventDestroy (s->done);
    if (s->h_in)
      cudaFreeHost (s->h_in);
    if (s->h_out)
      cudaFreeHost (s->h_out);
  }
  g_free (cp->slots);
  g_free (cp);
}

static gpointer
cuda_plan_new (gpointer engine, GcvPlan * plan, GError ** error)
{
  CudaPlan *cp = g_new0 (CudaPlan, 1);

  cp->engine = engine;
  cp->plan = plan;
  cp->n_slots = plan->n_slots;
  cp->slots = g_new0 (Slot, cp->n_slots);
  if (!CHECK (enter (cp->engine), OP_OTHER))
    goto fail;
  for (guint i = 0; i < cp->n_slots; i++) {
    Slot *s = &cp->slots[i];
    if (!CHECK (cudaStreamCreateWithFlags (&s->stream,
                cudaStreamNonBlocking), OP_OTHER)
        || !CHECK (cudaEventCreateWithFlags (&s->done,
                cudaEventDisableTiming | cudaEventBlockingSync), OP_OTHER))
      goto fail;
  }
  if (!cuda_plan_set_filter (cp, plan, error))
    goto fail;
  return cp;

fail:
  cuda_plan_free (cp);
  return NULL;
}

/* A pinned staging buffer of at least `need` bytes, grown (rarely) as
 * frames grow. */
static gboolean
ensure_staging (void **buf, gsize * size, gsize need, GError ** error)
{
  if (*size >= need)
    return TRUE;
  if (*buf)
    cudaFreeHost (*buf);
  *buf = NULL;
  *size = 0;
  if (!CHECK (cudaHostAlloc (buf, need, cudaHostAllocDefault), OP_ALLOC))
    return FALSE;
  *size = need;
  return TRUE;
}

/* Host frame rows into pinned staging (when pageable), or as they are. */
static const void *
stage_input (Slot * s, const GcvImage * src, gsize row, guint h, gsize * pitch,
    GError ** error)
{
  gsize need = row * h;

  if (is_pinned (src->data)) {
    *pitch = src->stride;
    return src->data;
  }
  if (!ensure_staging (&s->h_in, &s->h_in_size, need, error))
    return NULL;
  for (guint y = 0; y < h; y++)
    memcpy ((guint8 *) s->h_in + y * row,
        (const guint8 *) src->data + y * src->stride, row);
  *pitch = row;
  return s->h_in;
}

static gboolean
upload (CudaPlan * cp, const GcvPlan * plan, Slot * s, const GcvImage * src,
    guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  const GcvFilter *f = plan->filter;
  gsize row = (gsize) g->width * gcv_format_pixel_size (g->in_format);
  guint8 *interior = (guint8 *) s->d_pad + f->ay * cp->pad_pitch
      + f->ax * gcv_cuda_pixel_size (cp->pix);
  void *target = cp->unpack ? s->d_raw : interior;
  gsize target_pitch = cp->unpack ? cp->raw_pitch : cp->pad_pitch;

  if (src->on_device && step > 1) {
    if (!CHECK (gcv_cuda_copy_samples (target, target_pitch, 1, src->data,
                src->stride, step, g->width, g->height, s->stream),
            OP_LAUNCH))
      return FALSE;
  } else if (src->on_device) {
    if (src->data != target
        && !CHECK (cudaMemcpy2DAsync (target, target_pitch, src->data,
                src->stride, row, g->height, cudaMemcpyDeviceToDevice,
                s->stream), OP_COPY))
      return FALSE;
  } else {
    gsize pitch;
    const void *host = stage_input (s, src, row, g->height, &pitch, error);
    if (!host || !CHECK (cudaMemcpy2DAsync (target, target_pitch, host, pitch,
                row, g->height, cudaMemcpyHostToDevice, s->stream), OP_COPY))
      return FALSE;
  }
  if (cp->unpack
      && !CHECK (gcv_cuda_unpack (cp->pix, s->d_raw, cp->raw_pitch, interior,
              cp->pad_pitch, g->width, g->height, s->stream), OP_LAUNCH))
    return FALSE;
  return TRUE;
}

static gboolean
compute (CudaPlan * cp, const GcvPlan * plan, guint slot, const GcvImage * dst,
    guint step, GError ** error)
{
  const GcvFilter *f = plan->filter;
  const GcvVariant *v = &plan->choice.variant;
  Slot *s = &cp->slots[slot];
  GcvCudaConv c = conv_args (cp, plan, s);

  /* device output is written in place, unless every other byte (then
   * download() scatters it); host output and that need the slot's */
  if (dst->on_device && step <= 1) {
    c.dst = dst->data;
    c.dst_pitch = dst->stride;
  } else if (!slot_ensure (cp, s, BUF_OUT, error)) {
    return FALSE;
  } else {
    c.dst = s->d_out;
  }
  if (s->d_taps && s->taps_serial != cp->filter_serial) {
    gsize bytes = sizeof (gfloat) * cp->n_taps;
    memcpy (s->h_taps, c.host_taps, bytes);
    if (!CHECK (cudaMemcpyAsync (s->d_taps, s->h_taps, bytes,
                cudaMemcpyHostToDevice, s->stream), OP_COPY))
      return FALSE;
    s->taps_serial = cp->filter_serial;
  }
  if (!CHECK (gcv_cuda_fill_border (cp->pix, s->d_pad, cp->pad_pitch,
              c.width, c.height, c.kw, f->kh, f->ax, f->ay, f->border,
              f->border_value, s->stream), OP_LAUNCH))
    return FALSE;
  if (column_pass (f, v))
    return CHECK (gcv_cuda_column (&c), OP_LAUNCH);
  switch (v->family) {
    case GCV_FAMILY_TILED:
      if (!v->adaptive)
        return CHECK (gcv_cuda_tiled_width (&c, v->rows), OP_LAUNCH);
      return CHECK (gcv_cuda_tiled (&c, v->rows, cp->tiled_smem), OP_LAUNCH);
    case GCV_FAMILY_REGISTER:
      return CHECK (gcv_cuda_register (&c, v->lane_outputs, v->block),
          OP_LAUNCH);
    case GCV_FAMILY_SEPARABLE:
      if (!v->two_pass)
        return CHECK (gcv_cuda_separable_fused (&c, f->row, f->column,
                v->rows, &cp->engine->props), OP_LAUNCH);
      return CHECK (gcv_cuda_separable (&c, f->row, f->column, s->d_tmp,
              cp->tmp_pitch, &cp->engine->props), OP_LAUNCH);
    case GCV_FAMILY_FFT:{
      char err[256];
      if (!gcv_cuda_fft_run (cp->fft, slot, &c, err, sizeof (err))) {
        g_set_error (error, GCV_ERROR, GCV_ERROR_DEVICE, "%s", err);
        return FALSE;
      }
      return gcv_cuda_check (cudaSuccess, OP_LAUNCH, "fft", error);
    }
    default:
      return CHECK (gcv_cuda_direct (&c), OP_LAUNCH);
  }
}

static gboolean
download (CudaPlan * cp, const GcvPlan * plan, Slot * s, const GcvImage * dst,
    guint step, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  gsize row = (gsize) g->width * gcv_format_pixel_size (g->out_format);
  gsize need = row * g->height;

  s->copy_to = NULL;
  if (dst->on_device && step > 1)
    return CHECK (gcv_cuda_copy_samples (dst->data, dst->stride, step,
            s->d_out, cp->out_pitch, 1, g->width, g->height, s->stream),
        OP_LAUNCH);
  if (dst->on_device)
    return TRUE;
  if (is_pinned (dst->data))
    return CHECK (cudaMemcpy2DAsync (dst->data, dst->stride, s->d_out,
            cp->out_pitch, row, g->height, cudaMemcpyDeviceToHost,
            s->stream), OP_COPY);
  if (!ensure_staging (&s->h_out, &s->h_out_size, need, error))
    return FALSE;
  s->copy_to = dst->data;
  s->copy_stride = dst->stride;
  return CHECK (cudaMemcpy2DAsync (s->h_out, row, s->d_out, cp->out_pitch,
          row, g->height, cudaMemcpyDeviceToHost, s->stream), OP_COPY);
}

/* A copy-only plan's device frame: its bytes into the output, with no
 * padded input or kernel (NV12's U and V with planes=luma). Sample steps
 * are GRAY8's only. */
static gboolean
copy_device (const GcvPlan * plan, Slot * s, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps, GError ** error)
{
  const GcvGeometry *g = &plan->geometry;
  gsize row = (gsize) g->width * gcv_format_pixel_size (g->in_format);

  s->copy_to = NULL;
  if (steps->src > 1 || steps->dst > 1)
    return CHECK (gcv_cuda_copy_samples (dst->data, dst->stride,
            MAX (steps->dst, 1), src->data, src->stride, MAX (steps->src, 1),
            g->width, g->height, s->stream), OP_LAUNCH);
  return src->data == dst->data
      || CHECK (cudaMemcpy2DAsync (dst->data, dst->stride, src->data,
          src->stride, row, g->height, cudaMemcpyDeviceToDevice, s->stream),
      OP_COPY);
}

static gboolean
cuda_submit (gpointer state, GcvPlan * plan, guint slot, const GcvImage * src,
    const GcvImage * dst, const GcvSteps * steps, GError ** error)
{
  CudaPlan *cp = state;
  Slot *s = &cp->slots[slot];

  if (!CHECK (enter (cp->engine), OP_OTHER))
    return FALSE;
  if (cp->copy_only && src->on_device && dst->on_device && !s->stats.on)
    return copy_device (plan, s, src, dst, steps, error)
        && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
  /* the input buffers of a copy-only plan are made for the first frame
   * that is filtered */
  return slot_ensure (cp, s, BUF_INPUT, error)
      && upload (cp, plan, s, src, steps->src, error)
      && compute (cp, plan, slot, dst, steps->dst, error)
      && download (cp, plan, s, dst, steps->dst, error)
      && CHECK (cudaEventRecord (s->done, s->stream), OP_OTHER);
}

static gboolean
cuda_wait (gpointer state, GcvPlan * plan, guint slot, GError ** error)
{
  CudaPlan *cp = state;
  Slot *s = &cp->slots[slot];
  const GcvGeometry *g = &plan->geometry;

  if (!CHECK (enter (cp->engine), OP_OTHER)
      || !CHECK (cudaEventSynchronize (s->done), OP_OTHER))
    return FALSE;
  if (s->copy_to) {
    gsize row = (gsize) g->width * gcv_format_pixel_size (g->out_format);
    for (guint y = 0; y < g->height; y++)
      memcpy (s->copy_to + y * s->copy_stride,
          (const guint8 *) s->h_out + y * row, row);
    s->copy_to = NULL;
  }
  return TRUE;
}

static gpointer
cuda_get_stream (gpointer state, guint slot)
{
  return ((CudaPlan *) state)->slots[slot].stream;
}

static gboolean
cuda_get_device_input (gpointer state, guint slot, GcvImage * img)
{
  CudaPlan *cp = state;
  Slot *s = &cp->slots[slot];
  const GcvFilter *f = cp->plan->filter;
  GError *err = NULL, **error = &err;

  /* a copy-only plan makes its input buffers when asked (usable from any
   * stream, as ensure_buffers() leaves them) */
  if (!slot_has (cp, s, BUF_INPUT)
      && (!CHECK (enter (cp->engine), OP_OTHER)
          || !slot_ensure (cp, s, BUF_INPUT, error)
          || !CHECK (cudaStreamSynchronize (s->stream), OP_OTHER))) {
    g_warning ("no device input for slot %u: %s", slot, err->message);
    g_error_free (err);
    return FALSE;
  }
  /* the frame lands where upload() would put it */
  if (cp->unpack) {
    img->data = s->d_raw;
    img->stride = cp->raw_pitch;
  } else {
    img->data = (guint8 *) s->d_pad + f->ay * cp->pad_pitch
        + f->ax * gcv_cuda_pixel_size (cp->pix);
    img->stride = cp->pad_pitch;
  }
  img->on_device = TRUE;
  return TRUE;
}

static gboolean
cuda_set_frame_options (gpointer state, GcvPlan * plan, guint slot,
    const GcvFrameOptions * options, GError ** error)
{
  CudaPlan *cp = state;
  Slot *s = &cp->slots[slot];

  return CHECK (enter (cp->engine), OP_OTHER)
      && gcv_cuda_stats_begin (&s->stats, options,
      gcv_filtered_channels (plan->geometry.in_format,
          plan->filter->filter_alpha), s->stream, error);
}

static void
cuda_get_frame_stats (gpointer state, GcvPlan * plan, guint slot,
    GcvFrameStats * stats)
{
  CudaPlan *cp = state;

  gcv_cuda_stats_end (&cp->slots[slot].stats, plan->geometry.width,
      plan->geometry.height, stats);
}

static const GcvBackend cuda_backend = {
  .name = "cuda",
  .available = gcv_cuda_available,
  .engine_new = cuda_engine_new,
  .engine_describe = cuda_engine_describe,
  .engine_device = cuda_engine_device,
  .engine_free = cuda_engine_free,
  .plan_new = cuda_plan_new,
  .plan_set_filter = cuda_plan_set_filter,
  .submit = cuda_submit,
  .wait = cuda_wait,
  .plan_free = cuda_plan_free,
  .get_cuda_stream = cuda_get_stream,
  .get_device_input = cuda_get_device_input,
  .set_tuning_file = cuda_set_tuning_file,
  .host_alloc = cuda_host_alloc,
  .host_free = cuda_host_free,
  .set_frame_options = cuda_set_frame_options,
  .get_frame_stats = cuda_get_frame_stats,
};

const GcvBackend *
gcv_cuda_backend_get (void)
{
  return &cuda_backend;
}
