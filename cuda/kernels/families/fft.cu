/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `fft`: correlation through cuFFT. The padded device frame already
 * holds the border, so every border mode works here too (FFT convolutions
 * usually zero-pad). Per frame: the padded frame's channels go into real
 * planes, R2C, multiply by the conjugate filter spectrum (made once per
 * filter), C2R, and each plane's valid window goes to the output. All
 * planes run as one batched plan.
 *
 * The planes are either the whole frame, at a cuFFT-friendly size (2^a 3^b
 * 5^c 7^d, at least the padded size, so the valid outputs never wrap), or
 * overlap-save tiles (Podlozhnyuk, "FFT-based 2D convolution", NVIDIA
 * 2007): T x T planes, T a power of two, read from the padded frame
 * (T - kw + 1) apart across and (T - kh + 1) down, each giving that many
 * valid outputs. Small power-of-two transforms stay in shared memory and
 * cost a smaller log factor than one frame-sized transform. (Batches of
 * tiles small enough for the L2 cache to hold what passes between the
 * steps were slower: docs/performance.md.)
 *
 * A NaN or Inf anywhere in a plane spreads over all of that plane's
 * outputs, not only those whose footprint holds it. For GRAY32F the pack
 * marks the tiles (or the frame) whose window holds one, and the unpack
 * sums those tiles' outputs over their footprints instead, as the direct
 * family does; the rest of the frame keeps the transform's outputs. */
#include "kernels/gcv-kernels-common.cuh"

#include <cufft.h>
#include <stdio.h>

using namespace gcv;

struct _GcvCudaFft {
  int nx, ny, channels, n_slots;
  int kw, kh;
  int vx, vy;                   /* valid outputs of a plane, across and down */
  int tiles_x, tiles_y;         /* planes per channel: 1 x 1 for the frame */
  cudaStream_t *streams;        /* per slot; buffers are stream-ordered */
  float *taps;                  /* kh x kw, for the spectrum */
  cufftHandle *r2c, *c2r;       /* per slot: a plan's work area is its own */
  float **real;                 /* per slot: tiles x channels x ny x nx */
  cufftComplex **spec;          /* per slot: tiles x channels x ny x
                                 * (nx/2+1) */
  cufftComplex *filter;         /* ny x (nx/2+1): conj(FFT(K)) / (nx ny) */
  /* Per slot, a word per tile (GRAY32F): the number of the last frame
   * whose window of that tile held a NaN or Inf. Numbering the slot's
   * frames spares a reset per frame; a number met again after 2^32 frames
   * only makes a tile's outputs be summed directly, which is never
   * wrong. */
  unsigned **marks;
  unsigned *frame;              /* per slot: the number of its last frame */
};

namespace {

const char *
cufft_name (cufftResult r)
{
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    default: return "cuFFT error";
  }
}

#define FFT_TRY(call) do {                                              \
    cufftResult r_ = (call);                                            \
    if (r_ != CUFFT_SUCCESS) {                                          \
      snprintf (err, err_len, "%s failed: %s", #call, cufft_name (r_)); \
      return 0;                                                         \
    }                                                                   \
  } while (0)

#define CUDA_TRY(call) do {                                             \
    cudaError_t e_ = (call);                                            \
    if (e_ != cudaSuccess) {                                            \
      snprintf (err, err_len, "%s failed: %s", #call,                   \
          cudaGetErrorString (e_));                                     \
      return 0;                                                         \
    }                                                                   \
  } while (0)

/* The smallest n' >= n whose prime factors are all <= max_prime (2, 3, 5
 * or 7): cuFFT's fast sizes; fewer primes mean larger but simpler sizes. */
int
friendly (int n, int max_prime)
{
  for (int m = n;; m++) {
    int r = m;
    for (int f = 2; f <= max_prime; f++)
      while (r % f == 0)
        r /= f;
    if (r == 1)
      return m;
  }
}

__device__ __forceinline__ float channel (unsigned char v, int) { return v; }
__device__ __forceinline__ float channel (float v, int) { return v; }
__device__ __forceinline__ float channel (uchar4 v, int c)
{
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}
__device__ __forceinline__ float channel (rgbx8 v, int c)
{
  return c == 0 ? v.x : c == 1 ? v.y : v.z;
}
__device__ __forceinline__ float channel (float4 v, int c)
{
  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;
}

/* A grid dimension of at most 65535 blocks; the kernels stride past it. */
static inline unsigned
grid_limit (int n)
{
  return n < 65535 ? n : 65535;
}

/* Where the planes lie in the padded frame: plane b * channels + c holds
 * channel c of tile b, the window at (tx * vx, ty * vy) for b = ty *
 * tiles_x + tx. */
struct Tiling {
  int nx, ny, vx, vy, tiles_x, tiles;
};

/* padded frame -> zero-extended real planes, four points across a thread
 * (one vector store where the planes' rows allow); blockIdx.z strides over
 * the tiles. With `marks` (GRAY32F), a tile whose window holds a NaN or
 * Inf gets this frame's number. */
template <typename In>
__global__ void
pack_kernel (GcvCudaConv p, float *real, Tiling t, int channels,
    unsigned *marks, unsigned frame)
{
  const int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int pw = p.width + p.kw - 1, ph = p.height + p.kh - 1;
  if (x >= t.nx || y >= t.ny)
    return;
  for (int b = blockIdx.z; b < t.tiles; b += gridDim.z) {
    const int px = (b % t.tiles_x) * t.vx + x;
    const int py = (b / t.tiles_x) * t.vy + y;
    const In *row = row_ptr<In> (p.src, p.src_pitch, py);
    In v[4];
#pragma unroll
    for (int q = 0; q < 4; q++)
      v[q] = py < ph && px + q < pw ? ldg (row + px + q) : In ();
    /* points outside the padded frame are 0: only its samples count */
    if constexpr (std::is_same<In, float>::value)
      if (marks && !(isfinite (v[0]) && isfinite (v[1]) && isfinite (v[2])
              && isfinite (v[3])))
        atomicExch (marks + b, frame);
    for (int c = 0; c < channels; c++) {
      float *dst = real + (((size_t) b * channels + c) * t.ny + y) * t.nx + x;
      if ((t.nx & 3) == 0) {
        *(float4 *) dst = make_float4 (channel (v[0], c), channel (v[1], c),
            channel (v[2], c), channel (v[3], c));
      } else {
#pragma unroll
        for (int q = 0; q < 4; q++)
          if (x + q < t.nx)
            dst[q] = channel (v[q], c);
      }
    }
  }
}

/* every plane's spectrum times the filter's; blockIdx.y strides over the
 * planes */
__global__ void
multiply_kernel (cufftComplex * spec, const cufftComplex * filter, size_t n,
    int planes)
{
  size_t k = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n)
    return;
  const cufftComplex f = filter[k];
  for (int plane = blockIdx.y; plane < planes; plane += gridDim.y) {
    cufftComplex *s = spec + plane * n + k;
    *s = make_cuFloatComplex (s->x * f.x - s->y * f.y,
        s->x * f.y + s->y * f.x);
  }
}

/* the kernel at the origin of an ny x nx plane */
__global__ void
place_kernel (float *plane, const float *taps, int kw, int kh, int nx, int ny)
{
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny)
    plane[(size_t) y * nx + x] = x < kw && y < kh ? taps[y * kw + x] : 0.0f;
}

/* spectrum -> conj(spectrum) / (nx ny): correlation, inverse scale folded */
__global__ void
conjugate_kernel (cufftComplex * s, size_t n, float scale)
{
  size_t k = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n)
    s[k] = make_cuFloatComplex (s[k].x * scale, -s[k].y * scale);
}

/* unpack_kernel's work: the tiles of this thread's points, in row order. */
template <typename In, typename S>
__device__ __forceinline__ void
unpack_tiles (const GcvCudaConv & p, const float *real, const Tiling & t,
    int channels, const unsigned *marks, unsigned frame,
    const GlobalTaps & taps, int lx, int ly, S & st)
{
  typedef typename AccOf<In>::T Acc;
  for (int b = blockIdx.z; b < t.tiles; b += gridDim.z) {
    const int x = (b % t.tiles_x) * t.vx + lx;
    const int y = (b / t.tiles_x) * t.vy + ly;
    if (x >= p.width || y >= p.height)
      continue;
    if constexpr (std::is_same<In, float>::value) {
      if (marks && marks[b] == frame) {         /* uniform in the block */
        /* rolled: rare, and unrolled it cost the copy below registers */
#pragma unroll 1
        for (int q = 0; q < 4; q++) {
          if (lx + q >= t.vx || x + q >= p.width)
            break;
          store<In> (p, x + q, y, footprint_sum<In, true> (p, x + q, y,
                  taps), In (), st);
        }
        continue;
      }
    }
    float v[4][4] = { };        /* [channel][point] */
    for (int c = 0; c < channels; c++) {
      const float *src = real + (((size_t) b * channels + c) * t.ny + ly)
          * t.nx + lx;
      if ((t.nx & 3) == 0) {
        const float4 f = *(const float4 *) src;
        v[c][0] = f.x;
        v[c][1] = f.y;
        v[c][2] = f.z;
        v[c][3] = f.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; q++)
          v[c][q] = lx + q < t.nx ? src[q] : 0.0f;
      }
    }
#pragma unroll
    for (int q = 0; q < 4; q++) {
      if (lx + q >= t.vx || x + q >= p.width)
        break;
      Acc acc;
      if constexpr (sizeof (Acc) == sizeof (float4))
        acc = make_float4 (v[0][q], v[1][q], v[2][q], v[3][q]);
      else if constexpr (sizeof (Acc) == sizeof (float3))
        acc = make_float3 (v[0][q], v[1][q], v[2][q]);
      else
        acc = v[0][q];
      store<In> (p, x + q, y, acc, centre_of<In> (p, x + q, y), st);
    }
  }
}

/* the tiles' valid windows to the output, four points across a thread;
 * blockIdx.z strides over the tiles. A tile that `marks` gives this
 * frame's number (a NaN or Inf in its window) has its outputs summed
 * over their footprints instead, with `taps`. */
template <typename In, bool STATS>
__global__ void
unpack_kernel (GcvCudaConv p, const float *real, Tiling t, int channels,
    const unsigned *marks, unsigned frame, GlobalTaps taps)
{
  typedef typename AccOf<In>::T Acc;
  const int lx = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  const int ly = blockIdx.y * blockDim.y + threadIdx.y;
  if (lx >= t.vx || ly >= t.vy)
    return;
  typename StatsFor<Acc, STATS>::T st;
  unpack_tiles<In> (p, real, t, channels, marks, frame, taps, lx, ly, st);
  st.flush (p);
}

template <typename In>
struct FftPass {
  static cudaError_t launch (const GcvCudaConv & c, GcvCudaFft * f, int slot,
      bool pack)
  {
    dim3 block (32, 8);
    const Tiling t = { f->nx, f->ny, f->vx, f->vy, f->tiles_x,
      f->tiles_x * f->tiles_y
    };
    /* only GRAY32F frames are checked: 8-bit ones hold no NaN or Inf */
    unsigned *marks = c.check_finite && std::is_same<In, float>::value ?
        f->marks[slot] : NULL;
    if (pack)
      pack_kernel<In> <<<dim3 (div_up (t.nx, 128), div_up (t.ny, 8),
          grid_limit (t.tiles)), block, 0, c.stream>>> (c, f->real[slot], t,
          f->channels, marks, f->frame[slot]);
    else if (c.stats)
      unpack_kernel<In, true> <<<dim3 (div_up (t.vx, 128), div_up (t.vy, 8),
          grid_limit (t.tiles)), block, 0, c.stream>>> (c, f->real[slot], t,
          f->channels, marks, f->frame[slot], global_taps (f->taps));
    else
      unpack_kernel<In, false> <<<dim3 (div_up (t.vx, 128), div_up (t.vy,
                  8), grid_limit (t.tiles)), block, 0, c.stream>>> (c,
          f->real[slot], t, f->channels, marks, f->frame[slot],
          global_taps (f->taps));
    return cudaGetLastError ();
  }
};

}  /* namespace */

extern "C" void
gcv_cuda_fft_free (GcvCudaFft * f)
{
  if (!f)
    return;
  for (int s = 0; s < f->n_slots; s++) {
    if (f->r2c[s])
      cufftDestroy (f->r2c[s]);
    if (f->c2r[s])
      cufftDestroy (f->c2r[s]);
    if (f->real[s])
      cudaFreeAsync (f->real[s], f->streams[s]);
    if (f->spec[s])
      cudaFreeAsync (f->spec[s], f->streams[s]);
    if (f->marks[s])
      cudaFreeAsync (f->marks[s], f->streams[s]);
  }
  if (f->filter)
    cudaFreeAsync (f->filter, f->streams[0]);
  if (f->taps)
    cudaFreeAsync (f->taps, f->streams[0]);
  delete[] f->streams;
  delete[] f->r2c;
  delete[] f->c2r;
  delete[] f->real;
  delete[] f->spec;
  delete[] f->marks;
  delete[] f->frame;
  delete f;
}

static int
fft_setup (GcvCudaFft * f, int kw, int kh, char *err, size_t err_len)
{
  cudaStream_t *streams = f->streams;
  int n[2] = { f->ny, f->nx };
  int planes = f->tiles_x * f->tiles_y * f->channels;
  size_t real = (size_t) planes * f->ny * f->nx * sizeof (float);
  size_t spec = (size_t) planes * f->ny * (f->nx / 2 + 1)
      * sizeof (cufftComplex);
  size_t marks = (size_t) f->tiles_x * f->tiles_y * sizeof (unsigned);

  CUDA_TRY (cudaMallocAsync ((void **) &f->filter, (size_t) f->ny
          * (f->nx / 2 + 1) * sizeof (cufftComplex), streams[0]));
  CUDA_TRY (cudaMallocAsync ((void **) &f->taps, sizeof (float) * kw * kh,
          streams[0]));
  for (int s = 0; s < f->n_slots; s++) {
    CUDA_TRY (cudaMallocAsync ((void **) &f->real[s], real, streams[s]));
    CUDA_TRY (cudaMallocAsync ((void **) &f->spec[s], spec, streams[s]));
    /* no frame is numbered 0 */
    CUDA_TRY (cudaMallocAsync ((void **) &f->marks[s], marks, streams[s]));
    CUDA_TRY (cudaMemsetAsync (f->marks[s], 0, marks, streams[s]));
    FFT_TRY (cufftPlanMany (&f->r2c[s], 2, n, NULL, 1, 0, NULL, 1, 0,
            CUFFT_R2C, planes));
    FFT_TRY (cufftPlanMany (&f->c2r[s], 2, n, NULL, 1, 0, NULL, 1, 0,
            CUFFT_C2R, planes));
    FFT_TRY (cufftSetStream (f->r2c[s], streams[s]));
    FFT_TRY (cufftSetStream (f->c2r[s], streams[s]));
  }
  return 1;
}

/* Plane size and the windows, for the frame (tile 0) or tiles (the
 * dispatcher makes them at least twice the kernel). */
static void
fft_tiling (GcvCudaFft * f, int width, int height, int kw, int kh,
    int max_prime, int tile)
{
  if (tile > 0) {
    f->nx = f->ny = tile;
    f->vx = f->nx - kw + 1;
    f->vy = f->ny - kh + 1;
  } else {
    f->nx = friendly (width + kw - 1, max_prime);
    f->ny = friendly (height + kh - 1, max_prime);
    f->vx = width;
    f->vy = height;
  }
  f->tiles_x = div_up (width, f->vx);
  f->tiles_y = div_up (height, f->vy);
}

extern "C" GcvCudaFft *
gcv_cuda_fft_new (int width, int height, int kw, int kh, int channels,
    int max_prime, int tile, int n_slots, cudaStream_t * streams, char *err,
    size_t err_len)
{
  if (tile > 0 && (tile < kw || tile < kh)) {
    snprintf (err, err_len, "fft tiles of %d are smaller than the %dx%d "
        "kernel", tile, kw, kh);
    return NULL;
  }
  GcvCudaFft *f = new GcvCudaFft ();
  f->channels = channels;
  f->kw = kw;
  f->kh = kh;
  fft_tiling (f, width, height, kw, kh, max_prime, tile);
  f->n_slots = n_slots;
  f->streams = new cudaStream_t[n_slots];
  for (int s = 0; s < n_slots; s++)
    f->streams[s] = streams[s];
  f->r2c = new cufftHandle[n_slots] ();
  f->c2r = new cufftHandle[n_slots] ();
  f->real = new float *[n_slots] ();
  f->spec = new cufftComplex *[n_slots] ();
  f->marks = new unsigned *[n_slots] ();
  f->frame = new unsigned[n_slots] ();
  if (!fft_setup (f, kw, kh, err, err_len)) {
    gcv_cuda_fft_free (f);
    return NULL;
  }
  return f;
}

extern "C" void
gcv_cuda_fft_size (const GcvCudaFft * f, int *nx, int *ny, int *tiles)
{
  *nx = f->nx;
  *ny = f->ny;
  *tiles = f->tiles_x * f->tiles_y;
}

/* The filter spectrum, made through slot 0's buffers on its stream and
 * waited for, so every slot can use it. `taps` (kh x kw) is host memory;
 * no frame may be in flight. */
extern "C" int
gcv_cuda_fft_set_filter (GcvCudaFft * f, const float *taps, int kw, int kh,
    char *err, size_t err_len)
{
  size_t n = (size_t) f->ny * (f->nx / 2 + 1);
  cudaStream_t stream = f->streams[0];
  cufftHandle plan;
  int dims[2] = { f->ny, f->nx };

  CUDA_TRY (cudaMemcpyAsync (f->taps, taps, sizeof (float) * kw * kh,
          cudaMemcpyHostToDevice, stream));
  place_kernel<<<dim3 (div_up (f->nx, 32), div_up (f->ny, 8)), dim3 (32, 8),
      0, stream>>> (f->real[0], f->taps, kw, kh, f->nx, f->ny);
  CUDA_TRY (cudaGetLastError ());
  FFT_TRY (cufftPlanMany (&plan, 2, dims, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C,
          1));
  cufftResult r = cufftSetStream (plan, stream);
  if (r == CUFFT_SUCCESS)
    r = cufftExecR2C (plan, f->real[0], f->filter);
  cufftDestroy (plan);
  if (r != CUFFT_SUCCESS) {
    snprintf (err, err_len, "cufftExecR2C (filter) failed: %s",
        cufft_name (r));
    return 0;
  }
  conjugate_kernel<<<div_up ((unsigned) n, 256), 256, 0, stream>>> (f->filter,
      n, 1.0f / ((float) f->nx * f->ny));
  CUDA_TRY (cudaGetLastError ());
  CUDA_TRY (cudaStreamSynchronize (stream));
  return 1;
}

extern "C" int
gcv_cuda_fft_run (GcvCudaFft * f, int slot, const GcvCudaConv * c, char *err,
    size_t err_len)
{
  size_t n = (size_t) f->ny * (f->nx / 2 + 1);
  const int planes = f->tiles_x * f->tiles_y * f->channels;

  if (is_magnitude (*c)) {
    snprintf (err, err_len, "fft has no gradient magnitudes");
    return 0;
  }
  /* the marked tiles' outputs are summed with the set-up's taps */
  if (c->kw != f->kw || c->kh != f->kh) {
    snprintf (err, err_len, "fft set up for a %dx%d kernel, run with %dx%d",
        f->kw, f->kh, c->kw, c->kh);
    return 0;
  }
  if (++f->frame[slot] == 0)
    f->frame[slot] = 1;
  CUDA_TRY (GCV_DISPATCH_PIXEL (FftPass, *c, *c, f, slot, true));
  FFT_TRY (cufftExecR2C (f->r2c[slot], f->real[slot], f->spec[slot]));
  multiply_kernel<<<dim3 (div_up ((unsigned) n, 256), grid_limit (planes)),
      256, 0, c->stream>>> (f->spec[slot], f->filter, n, planes);
  CUDA_TRY (cudaGetLastError ());
  FFT_TRY (cufftExecC2R (f->c2r[slot], f->spec[slot], f->real[slot]));
  CUDA_TRY (GCV_DISPATCH_PIXEL (FftPass, *c, *c, f, slot, false));
  return 1;
}
