/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The NPP peer. CUDA 13's NPP has only the _Ctx entry points: the stream
 * context is filled in here from the device's properties. */
#include "npp-peer.h"
#include "common.h"

#include <nppcore.h>
#include <nppi_filtering_functions.h>
#include <stdlib.h>
#include <string.h>

static const char *
npp_name (NppStatus s)
{
  switch (s) {
    case NPP_NO_ERROR: return "NPP_NO_ERROR";
    case NPP_NOT_SUPPORTED_MODE_ERROR: return "NPP_NOT_SUPPORTED_MODE_ERROR";
    case NPP_INVALID_DEVICE_POINTER_ERROR:
      return "NPP_INVALID_DEVICE_POINTER_ERROR";
    case NPP_NOT_SUFFICIENT_COMPUTE_CAPABILITY:
      return "NPP_NOT_SUFFICIENT_COMPUTE_CAPABILITY";
    case NPP_CUDA_KERNEL_EXECUTION_ERROR:
      return "NPP_CUDA_KERNEL_EXECUTION_ERROR";
    case NPP_STREAM_CTX_ERROR: return "NPP_STREAM_CTX_ERROR";
    case NPP_ALIGNMENT_ERROR: return "NPP_ALIGNMENT_ERROR";
    case NPP_NOT_EVEN_STEP_ERROR: return "NPP_NOT_EVEN_STEP_ERROR";
    case NPP_STRIDE_ERROR: return "NPP_STRIDE_ERROR";
    case NPP_ANCHOR_ERROR: return "NPP_ANCHOR_ERROR";
    case NPP_MASK_SIZE_ERROR: return "NPP_MASK_SIZE_ERROR";
    case NPP_STEP_ERROR: return "NPP_STEP_ERROR";
    case NPP_DATA_TYPE_ERROR: return "NPP_DATA_TYPE_ERROR";
    case NPP_MEMORY_ALLOCATION_ERR: return "NPP_MEMORY_ALLOCATION_ERR";
    case NPP_NULL_POINTER_ERROR: return "NPP_NULL_POINTER_ERROR";
    case NPP_RANGE_ERROR: return "NPP_RANGE_ERROR";
    case NPP_SIZE_ERROR: return "NPP_SIZE_ERROR";
    case NPP_BAD_ARGUMENT_ERROR: return "NPP_BAD_ARGUMENT_ERROR";
    case NPP_NO_MEMORY_ERROR: return "NPP_NO_MEMORY_ERROR";
    case NPP_NOT_IMPLEMENTED_ERROR: return "NPP_NOT_IMPLEMENTED_ERROR";
    case NPP_ERROR: return "NPP_ERROR";
    default: return s > 0 ? "an NPP warning" : "an NPP error";
  }
}

/* Errors exit; warnings (positive codes) are printed. The call is named by
 * run(), which makes every NPP call of a frame. */
static void
check_npp (NppStatus s, const char *call, const char *file, int line)
{
  if (s == NPP_NO_ERROR)
    return;
  fflush (stdout);
  fprintf (stderr, "%s:%d: %s %s: %s (%d)\n", file, line, call,
      s < 0 ? "failed" : "warned", npp_name (s), (int) s);
  if (s < 0)
    exit (1);
}

typedef enum { KIND_2D_F32, KIND_SEP_F32, KIND_2D_U8X4 } Kind;

struct _BenchNppPeer {
  Kind kind;
  NppStreamContext ctx;
  NppiSize size, ksize;
  NppiPoint anchor;
  Npp32f *d_taps, *d_row, *d_column;    /* device memory, reversed */
  Npp32f *d_tmp;                /* separable: row pass output */
  size_t tmp_pitch;
  gchar *description;
};

gboolean
bench_npp_built (void)
{
  return TRUE;
}

gchar *
bench_npp_describe_library (void)
{
  const NppLibraryVersion *v = nppGetLibVersion ();
  return g_strdup_printf ("NPP %d.%d.%d", v->major, v->minor, v->build);
}

static void
fill_context (NppStreamContext * ctx, cudaStream_t stream)
{
  struct cudaDeviceProp prop;

  memset (ctx, 0, sizeof (*ctx));
  ctx->hStream = stream;
  BENCH_CUDA (cudaGetDevice (&ctx->nCudaDeviceId));
  BENCH_CUDA (cudaGetDeviceProperties (&prop, ctx->nCudaDeviceId));
  ctx->nMultiProcessorCount = prop.multiProcessorCount;
  ctx->nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  ctx->nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  ctx->nSharedMemPerBlock = prop.sharedMemPerBlock;
  BENCH_CUDA (cudaDeviceGetAttribute (&ctx->nCudaDevAttrComputeCapabilityMajor,
          cudaDevAttrComputeCapabilityMajor, ctx->nCudaDeviceId));
  BENCH_CUDA (cudaDeviceGetAttribute (&ctx->nCudaDevAttrComputeCapabilityMinor,
          cudaDevAttrComputeCapabilityMinor, ctx->nCudaDeviceId));
  BENCH_CUDA (cudaStreamGetFlags (stream, &ctx->nStreamFlags));
}

/* `n` taps to device memory, reversed unless told otherwise; ready when
 * this returns. */
static Npp32f *
upload_taps (const gfloat * taps, guint n, gboolean reversed,
    cudaStream_t stream)
{
  Npp32f *h = g_new (Npp32f, n), *d;

  for (guint i = 0; i < n; i++)
    h[i] = taps[reversed ? n - 1 - i : i];
  BENCH_CUDA (cudaMalloc ((void **) &d, sizeof (Npp32f) * n));
  BENCH_CUDA (cudaMemcpyAsync (d, h, sizeof (Npp32f) * n,
          cudaMemcpyHostToDevice, stream));
  BENCH_CUDA (cudaStreamSynchronize (stream));
  g_free (h);
  return d;
}

static NppStatus
run (BenchNppPeer * p, const void *src, size_t src_pitch, void *dst,
    size_t dst_pitch, const char **call)
{
  const NppiPoint origin = { 0, 0 };
  NppStatus s;

  switch (p->kind) {
    case KIND_2D_F32:
      *call = "nppiFilterBorder_32f_C1R_Ctx";
      return nppiFilterBorder_32f_C1R_Ctx ((const Npp32f *) src,
          (Npp32s) src_pitch, p->size, origin, (Npp32f *) dst,
          (Npp32s) dst_pitch, p->size, p->d_taps, p->ksize, p->anchor,
          NPP_BORDER_REPLICATE, p->ctx);
    case KIND_SEP_F32:
      *call = "nppiFilterRowBorder_32f_C1R_Ctx";
      s = nppiFilterRowBorder_32f_C1R_Ctx ((const Npp32f *) src,
          (Npp32s) src_pitch, p->size, origin, p->d_tmp,
          (Npp32s) p->tmp_pitch, p->size, p->d_row, p->ksize.width,
          p->anchor.x, NPP_BORDER_REPLICATE, p->ctx);
      if (s < 0)
        return s;
      *call = "nppiFilterColumnBorder_32f_C1R_Ctx";
      return nppiFilterColumnBorder_32f_C1R_Ctx (p->d_tmp,
          (Npp32s) p->tmp_pitch, p->size, origin, (Npp32f *) dst,
          (Npp32s) dst_pitch, p->size, p->d_column, p->ksize.height,
          p->anchor.y, NPP_BORDER_REPLICATE, p->ctx);
    default:
      *call = "nppiFilterBorder32f_8u_C4R_Ctx";
      return nppiFilterBorder32f_8u_C4R_Ctx ((const Npp8u *) src,
          (int) src_pitch, p->size, origin, (Npp8u *) dst, (int) dst_pitch,
          p->size, p->d_taps, p->ksize, p->anchor, NPP_BORDER_REPLICATE,
          p->ctx);
  }
}

BenchNppPeer *
bench_npp_peer_new (GcvFormat format, guint width, guint height,
    const GcvFilter * filter, gboolean separable, gboolean reversed,
    cudaStream_t stream, GError ** error)
{
  GcvFilterTaps taps, *f = &taps;
  BenchNppPeer *p;
  const char *why = NULL, *call = NULL;
  void *probe_in, *probe_out;
  size_t in_pitch, out_pitch;
  gsize px = gcv_format_pixel_size (format);
  NppStatus s;

  gcv_filter_get_taps (filter, &taps);
  if (f->border != GCV_BORDER_REPLICATE)
    why = "NPP has only the replicate border";
  else if (f->ax * 2 + 1 != f->kw || f->ay * 2 + 1 != f->kh)
    why = "NPP peer runs centred anchors of odd kernels only";
  else if (f->bias != 0.0f)
    why = "NPP filters have no bias";
  else if (format != GCV_FORMAT_GRAY32F && !(gcv_format_pixel_size (format)
          == 4 && format != GCV_FORMAT_GRAY8))
    why = "NPP peer runs GRAY32F and RGBA-family frames";
  else if (separable && (format != GCV_FORMAT_GRAY32F || !f->rank1))
    why = "NPP separable peer runs rank-1 GRAY32F filters only";
  else if (!separable && format == GCV_FORMAT_GRAY32F && !f->taps)
    why = "no taps";
  if (why) {
    g_set_error_literal (error, BENCH_NPP_ERROR, 0, why);
    return NULL;
  }

  p = g_new0 (BenchNppPeer, 1);
  p->kind = format != GCV_FORMAT_GRAY32F ? KIND_2D_U8X4 : separable ?
      KIND_SEP_F32 : KIND_2D_F32;
  fill_context (&p->ctx, stream);
  p->size.width = width;
  p->size.height = height;
  p->ksize.width = f->kw;
  p->ksize.height = f->kh;
  p->anchor.x = f->ax;
  p->anchor.y = f->ay;
  if (p->kind == KIND_SEP_F32) {
    p->d_row = upload_taps (f->row, f->kw, reversed, stream);
    p->d_column = upload_taps (f->column, f->kh, reversed, stream);
    BENCH_CUDA (cudaMallocPitch ((void **) &p->d_tmp, &p->tmp_pitch,
            sizeof (Npp32f) * width, height));
  } else {
    p->d_taps = upload_taps (f->taps, f->kw * f->kh, reversed, stream);
  }

  /* A first, untimed call: a filter NPP refuses is reported, not fatal. */
  BENCH_CUDA (cudaMallocPitch (&probe_in, &in_pitch, px * width, height));
  BENCH_CUDA (cudaMallocPitch (&probe_out, &out_pitch, px * width, height));
  BENCH_CUDA (cudaMemset2DAsync (probe_in, in_pitch, 0, px * width, height,
          stream));
  s = run (p, probe_in, in_pitch, probe_out, out_pitch, &call);
  BENCH_CUDA (cudaStreamSynchronize (stream));
  BENCH_CUDA (cudaFree (probe_in));
  BENCH_CUDA (cudaFree (probe_out));
  if (s < 0) {
    g_set_error (error, BENCH_NPP_ERROR, 0, "%s returned %s (%d)", call,
        npp_name (s), (int) s);
    bench_npp_peer_free (p);
    return NULL;
  }

  p->description = g_strdup_printf ("%s%s",
      p->kind == KIND_2D_F32 ? "nppiFilterBorder_32f_C1R" :
      p->kind == KIND_SEP_F32 ?
      "nppiFilterRowBorder_32f_C1R+nppiFilterColumnBorder_32f_C1R" :
      "nppiFilterBorder32f_8u_C4R (filters alpha too)",
      reversed ? "" : " taps not reversed");
  return p;
}

void
bench_npp_peer_enqueue (BenchNppPeer * p, const void *src, size_t src_pitch,
    void *dst, size_t dst_pitch)
{
  const char *call = NULL;
  NppStatus s = run (p, src, src_pitch, dst, dst_pitch, &call);
  check_npp (s, call, __FILE__, __LINE__);
}

const char *
bench_npp_peer_describe (BenchNppPeer * p)
{
  return p->description;
}

gboolean
bench_npp_peer_filters_alpha (BenchNppPeer * p)
{
  return p->kind == KIND_2D_U8X4;
}

void
bench_npp_peer_free (BenchNppPeer * p)
{
  if (!p)
    return;
  BENCH_CUDA (cudaStreamSynchronize (p->ctx.hStream));
  if (p->d_taps)
    BENCH_CUDA (cudaFree (p->d_taps));
  if (p->d_row)
    BENCH_CUDA (cudaFree (p->d_row));
  if (p->d_column)
    BENCH_CUDA (cudaFree (p->d_column));
  if (p->d_tmp)
    BENCH_CUDA (cudaFree (p->d_tmp));
  g_free (p->description);
  g_free (p);
}
