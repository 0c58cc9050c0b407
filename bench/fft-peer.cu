/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cuFFT reference convolution.
 *
 * The padded frame P(u, v) = in(clamp(u - ax), clamp(v - ay)) fills an
 * nx x ny plane (nx, ny >= frame + kernel - 1, products of 2, 3, 5 and 7).
 * With g(-i mod nx, -j mod ny) = K[j][i], the circular convolution of P and
 * g at (x, y) is sum K[j][i] P(x + i, y + j): the correlation the engine
 * computes, with no wrap-around inside the frame. */
#include "fft-peer.h"
#include "common.h"

#include <cufft.h>
#include <string.h>

static const char *
cufft_name (cufftResult r)
{
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT error";
  }
}

static void
check_cufft (cufftResult r, const char *call, const char *file, int line)
{
  if (r == CUFFT_SUCCESS)
    return;
  fflush (stdout);
  fprintf (stderr, "%s:%d: %s failed: %s (%d)\n", file, line, call,
      cufft_name (r), (int) r);
  exit (1);
}

#define BENCH_CUFFT(call) check_cufft ((call), #call, __FILE__, __LINE__)

struct _BenchFftPeer {
  GcvFormat format;
  int width, height, ax, ay;
  int nx, ny, planes;
  unsigned int multiply_blocks;
  float bias;
  cudaStream_t stream;
  cufftHandle forward, inverse;
  float *real;                  /* planes x ny x nx */
  cufftComplex *spectrum;       /* planes x ny x (nx/2+1) */
  cufftComplex *filter;         /* ny x (nx/2+1), scaled by 1/(nx*ny) */
  gchar *description;
};

/* The smallest n >= min made of 2, 3, 5 and 7 (even when `even`). */
static int
fft_size (int min, gboolean even)
{
  for (int n = MAX (min, 1);; n++) {
    int m = n;
    if (even && (n & 1))
      continue;
    for (int p = 2; p <= 7; p++)
      while (m % p == 0)
        m /= p;
    if (m == 1)
      return n;
  }
}

__device__ static inline int
clampi (int v, int n)
{
  return v < 0 ? 0 : v >= n ? n - 1 : v;
}

__global__ void
pad_f32 (const float *__restrict__ src, size_t pitch, int w, int h, int ax,
    int ay, float *__restrict__ dst, int nx, int ny)
{
  int u = blockIdx.x * blockDim.x + threadIdx.x;
  int v = blockIdx.y * blockDim.y + threadIdx.y;
  if (u >= nx || v >= ny)
    return;
  const float *row = (const float *) ((const char *) src
      + (size_t) clampi (v - ay, h) * pitch);
  dst[(size_t) v * nx + u] = row[clampi (u - ax, w)];
}

__global__ void
pad_u8x4 (const uchar4 * __restrict__ src, size_t pitch, int w, int h, int ax,
    int ay, float *__restrict__ dst, int nx, int ny)
{
  int u = blockIdx.x * blockDim.x + threadIdx.x;
  int v = blockIdx.y * blockDim.y + threadIdx.y;
  if (u >= nx || v >= ny)
    return;
  const uchar4 *row = (const uchar4 *) ((const char *) src
      + (size_t) clampi (v - ay, h) * pitch);
  uchar4 p = row[clampi (u - ax, w)];
  size_t plane = (size_t) nx * ny, i = (size_t) v * nx + u;
  dst[i] = p.x;
  dst[plane + i] = p.y;
  dst[2 * plane + i] = p.z;
}

/* blockIdx.y is the plane */
__global__ void
multiply (cufftComplex * __restrict__ spectrum,
    const cufftComplex * __restrict__ filter, size_t per_plane)
{
  cufftComplex *s = spectrum + blockIdx.y * per_plane;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
      i < per_plane; i += (size_t) gridDim.x * blockDim.x) {
    cufftComplex a = s[i], b = filter[i];
    s[i] = make_cuFloatComplex (a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
  }
}

__global__ void
crop_f32 (const float *__restrict__ real, int nx, float bias,
    float *__restrict__ dst, size_t pitch, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  ((float *) ((char *) dst + (size_t) y * pitch))[x] =
      real[(size_t) y * nx + x] + bias;
}

__device__ static inline unsigned char
to_byte (float v)
{
  /* round to nearest even, saturate; NaN becomes 0 */
  if (!(v > 0.0f))
    return 0;
  return (unsigned char) fminf (rintf (v), 255.0f);
}

__global__ void
crop_u8x4 (const float *__restrict__ real, int nx, int ny, float bias,
    const uchar4 * __restrict__ src, size_t src_pitch,
    uchar4 * __restrict__ dst, size_t dst_pitch, int w, int h)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  size_t plane = (size_t) nx * ny, i = (size_t) y * nx + x;
  uchar4 in = ((const uchar4 *) ((const char *) src + y * src_pitch))[x];
  uchar4 out;
  out.x = to_byte (real[i] + bias);
  out.y = to_byte (real[plane + i] + bias);
  out.z = to_byte (real[2 * plane + i] + bias);
  out.w = in.w;
  ((uchar4 *) ((char *) dst + y * dst_pitch))[x] = out;
}

static dim3
grid_for (int w, int h, dim3 block)
{
  return dim3 ((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
}

BenchFftPeer *
bench_fft_peer_new (GcvFormat format, guint width, guint height,
    const GcvFilter * filter, cudaStream_t stream)
{
  GcvFilterTaps taps, *f = &taps;
  BenchFftPeer *p = g_new0 (BenchFftPeer, 1);
  int n[2], device, sms;
  size_t half, plane;
  float *g, *d_g;
  cufftHandle once;

  gcv_filter_get_taps (filter, &taps);
  if (format != GCV_FORMAT_GRAY32F && gcv_format_pixel_size (format) != 4)
    bench_die ("the cuFFT peer takes GRAY32F and RGBA-family frames");
  p->format = format;
  p->width = width;
  p->height = height;
  p->ax = f->ax;
  p->ay = f->ay;
  p->bias = f->bias;
  p->stream = stream;
  p->planes = format == GCV_FORMAT_GRAY32F ? 1 : 3;
  p->nx = fft_size (width + f->kw - 1, TRUE);
  p->ny = fft_size (height + f->kh - 1, FALSE);
  half = (size_t) p->nx / 2 + 1;
  plane = (size_t) p->ny * half;
  n[0] = p->ny;
  n[1] = p->nx;
  BENCH_CUDA (cudaGetDevice (&device));
  BENCH_CUDA (cudaDeviceGetAttribute (&sms, cudaDevAttrMultiProcessorCount,
          device));
  p->multiply_blocks = (unsigned int) MIN ((plane + 255) / 256,
      (size_t) sms * 16);

  BENCH_CUDA (cudaMalloc ((void **) &p->real,
          sizeof (float) * p->planes * p->ny * p->nx));
  BENCH_CUDA (cudaMalloc ((void **) &p->spectrum,
          sizeof (cufftComplex) * p->planes * plane));
  BENCH_CUDA (cudaMalloc ((void **) &p->filter, sizeof (cufftComplex) * plane));
  BENCH_CUFFT (cufftPlanMany (&p->forward, 2, n, NULL, 1, 0, NULL, 1, 0,
          CUFFT_R2C, p->planes));
  BENCH_CUFFT (cufftPlanMany (&p->inverse, 2, n, NULL, 1, 0, NULL, 1, 0,
          CUFFT_C2R, p->planes));
  BENCH_CUFFT (cufftSetStream (p->forward, stream));
  BENCH_CUFFT (cufftSetStream (p->inverse, stream));

  /* the filter's spectrum, with the 1/(nx*ny) of the inverse folded in */
  g = g_new0 (float, (size_t) p->ny * p->nx);
  for (guint j = 0; j < f->kh; j++)
    for (guint i = 0; i < f->kw; i++) {
      int u = (p->nx - (int) i % p->nx) % p->nx;
      int v = (p->ny - (int) j % p->ny) % p->ny;
      g[(size_t) v * p->nx + u] += f->taps[j * f->kw + i]
          / ((float) p->nx * (float) p->ny);
    }
  BENCH_CUDA (cudaMalloc ((void **) &d_g, sizeof (float) * p->ny * p->nx));
  BENCH_CUDA (cudaMemcpyAsync (d_g, g, sizeof (float) * p->ny * p->nx,
          cudaMemcpyHostToDevice, stream));
  BENCH_CUFFT (cufftPlan2d (&once, p->ny, p->nx, CUFFT_R2C));
  BENCH_CUFFT (cufftSetStream (once, stream));
  BENCH_CUFFT (cufftExecR2C (once, d_g, p->filter));
  BENCH_CUDA (cudaStreamSynchronize (stream));
  BENCH_CUFFT (cufftDestroy (once));
  BENCH_CUDA (cudaFree (d_g));
  g_free (g);

  p->description = g_strdup_printf ("cufft r2c/c2r %dx%d%s", p->nx, p->ny,
      p->planes == 3 ? " x3 planes" : "");
  return p;
}

void
bench_fft_peer_enqueue (BenchFftPeer * p, const void *src, size_t src_pitch,
    void *dst, size_t dst_pitch)
{
  dim3 block (32, 8);
  size_t per_plane = (size_t) p->ny * (p->nx / 2 + 1);

  if (p->planes == 1)
    pad_f32 <<< grid_for (p->nx, p->ny, block), block, 0, p->stream >>> (
        (const float *) src, src_pitch, p->width, p->height, p->ax, p->ay,
        p->real, p->nx, p->ny);
  else
    pad_u8x4 <<< grid_for (p->nx, p->ny, block), block, 0, p->stream >>> (
        (const uchar4 *) src, src_pitch, p->width, p->height, p->ax, p->ay,
        p->real, p->nx, p->ny);
  BENCH_CUDA (cudaGetLastError ());
  BENCH_CUFFT (cufftExecR2C (p->forward, p->real, p->spectrum));

  multiply <<< dim3 (p->multiply_blocks, p->planes), 256, 0, p->stream >>> (
      p->spectrum, p->filter, per_plane);
  BENCH_CUDA (cudaGetLastError ());
  BENCH_CUFFT (cufftExecC2R (p->inverse, p->spectrum, p->real));

  if (p->planes == 1)
    crop_f32 <<< grid_for (p->width, p->height, block), block, 0,
        p->stream >>> (p->real, p->nx, p->bias, (float *) dst, dst_pitch,
        p->width, p->height);
  else
    crop_u8x4 <<< grid_for (p->width, p->height, block), block, 0,
        p->stream >>> (p->real, p->nx, p->ny, p->bias, (const uchar4 *) src,
        src_pitch, (uchar4 *) dst, dst_pitch, p->width, p->height);
  BENCH_CUDA (cudaGetLastError ());
}

const char *
bench_fft_peer_describe (BenchFftPeer * p)
{
  return p->description;
}

void
bench_fft_peer_free (BenchFftPeer * p)
{
  if (!p)
    return;
  BENCH_CUDA (cudaStreamSynchronize (p->stream));
  BENCH_CUFFT (cufftDestroy (p->forward));
  BENCH_CUFFT (cufftDestroy (p->inverse));
  BENCH_CUDA (cudaFree (p->real));
  BENCH_CUDA (cudaFree (p->spectrum));
  BENCH_CUDA (cudaFree (p->filter));
  g_free (p->description);
  g_free (p);
}

gchar *
bench_fft_version (void)
{
  int v = 0;
  BENCH_CUFFT (cufftGetVersion (&v));
  return g_strdup_printf ("cuFFT %d.%d.%d", v / 1000, (v % 1000) / 100,
      v % 100);
}
