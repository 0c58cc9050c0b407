/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Device helpers shared by the kernel families: pixel loads, float,
 * float3 and float4 arithmetic, the output epilogue (with the frame's
 * statistics, gcv-kernels-stats.cuh), gradient magnitudes and the ways taps reach a
 * kernel. */
#ifndef GCV_KERNELS_COMMON_CUH
#define GCV_KERNELS_COMMON_CUH

#include "gcv-kernels.h"
#include "gpu/gcv-cuda-context.h"
#include "gcv-kernels-stats.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

#include <mutex>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

namespace gcv {

/* Lets `kernel` take as much dynamic shared memory as the current device
 * allows. The limit is an attribute of the kernel function, shared by every
 * plan in the process: raising it per launch to what that launch needs
 * would let one plan lower it between another's raise and launch. So it is
 * raised once per kernel, device and context, to the device's maximum, and
 * never lowered. */
struct RaisedSmem {
  const void *kernel;
  int device;
  void *context;
};

template <typename K>
static cudaError_t
allow_smem (K kernel)
{
  /* kernels of this translation unit whose limit is raised, per device; a
   * plain array, so that no template of the standard library is exported
   * from the engine */
  static std::mutex lock;
  static RaisedSmem *raised;
  static size_t n_raised, n_alloc;
  cudaFuncAttributes attr;
  int dev, optin;
  cudaError_t err = cudaGetDevice (&dev);
  /* a function's attributes may be the context's, and an application's
   * context (GStreamer's) is not the device's primary one */
  void *ctx = gcv_cuda_context_current ();

  if (err != cudaSuccess)
    return err;
  std::lock_guard<std::mutex> hold (lock);
  for (size_t i = 0; i < n_raised; i++)
    if (raised[i].kernel == (const void *) kernel && raised[i].device == dev
        && raised[i].context == ctx)
      return cudaSuccess;
  if ((err = cudaDeviceGetAttribute (&optin,
              cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess
      || (err = cudaFuncGetAttributes (&attr, kernel)) != cudaSuccess
      || (err = cudaFuncSetAttribute (kernel,
              cudaFuncAttributeMaxDynamicSharedMemorySize,
              optin - (int) attr.sharedSizeBytes)) != cudaSuccess)
    return err;
  if (n_raised == n_alloc) {
    size_t n = n_alloc ? 2 * n_alloc : 64;
    RaisedSmem *grown = (RaisedSmem *) realloc (raised, n * sizeof (*grown));
    if (!grown)
      return cudaSuccess;       /* raised, only not remembered */
    raised = grown;
    n_alloc = n;
  }
  raised[n_raised++] = { (const void *) kernel, dev, ctx };
  return cudaSuccess;
}

/* The RGBA family with its fourth byte copied (alpha=passthrough; the x of
 * RGBx): the bytes of a uchar4, of which three channels are filtered, so a
 * tap costs three conversions and FMAs, not four. GCV_DISPATCH_PIXEL runs
 * uchar4 only where the fourth byte is filtered too. */
struct __align__ (4) rgbx8 {
  unsigned char x, y, z, w;
};

/* The accumulator of an input element: float, float3 for the three
 * colours of rgbx8, float4 for 4 channels. */
template <typename In> struct AccOf { typedef float T; };
template <> struct AccOf<uchar4> { typedef float4 T; };
template <> struct AccOf<rgbx8> { typedef float3 T; };
template <> struct AccOf<float4> { typedef float4 T; };

/* A read-only load of one element (__ldg has no rgbx8 form). */
template <typename In>
__device__ __forceinline__ In ldg (const In * p) { return __ldg (p); }
__device__ __forceinline__ rgbx8 ldg (const rgbx8 * p)
{
  const uchar4 v = __ldg ((const uchar4 *) p);
  return { v.x, v.y, v.z, v.w };
}

__device__ __forceinline__ float to_acc (unsigned char v) { return (float) v; }
__device__ __forceinline__ float to_acc (float v) { return v; }
__device__ __forceinline__ float4 to_acc (uchar4 v)
{
  return make_float4 (v.x, v.y, v.z, v.w);
}
__device__ __forceinline__ float3 to_acc (rgbx8 v)
{
  return make_float3 (v.x, v.y, v.z);
}
__device__ __forceinline__ float4 to_acc (float4 v) { return v; }

__device__ __forceinline__ void zero (float &a) { a = 0.0f; }
__device__ __forceinline__ void zero (float3 &a) { a = make_float3 (0, 0, 0); }
__device__ __forceinline__ void zero (float4 &a) { a = make_float4 (0, 0, 0, 0); }

/* acc += w * v */
__device__ __forceinline__ void fma_acc (float &acc, float w, float v)
{
  acc = fmaf (w, v, acc);
}
__device__ __forceinline__ void fma_acc (float3 &acc, float w, float3 v)
{
  acc.x = fmaf (w, v.x, acc.x);
  acc.y = fmaf (w, v.y, acc.y);
  acc.z = fmaf (w, v.z, acc.z);
}
__device__ __forceinline__ void fma_acc (float4 &acc, float w, float4 v)
{
  acc.x = fmaf (w, v.x, acc.x);
  acc.y = fmaf (w, v.y, acc.y);
  acc.z = fmaf (w, v.z, acc.z);
  acc.w = fmaf (w, v.w, acc.w);
}

template <typename T>
__device__ __forceinline__ const T *row_ptr (const void *base, size_t pitch,
    int y)
{
  return (const T *) ((const char *) base + (size_t) y * pitch);
}

template <typename T>
__device__ __forceinline__ T *row_ptr (void *base, size_t pitch, int y)
{
  return (T *) ((char *) base + (size_t) y * pitch);
}

__device__ __forceinline__ unsigned char to_u8 (float v)
{
  /* saturate, then round to nearest even, as the CPU backend's to_u8():
   * fmaxf returns its other operand when one is NaN, so NaN becomes 0
   * before the conversion sees it; +Inf saturates to 255, -Inf to 0 */
  return (unsigned char) __float2int_rn (fminf (fmaxf (v, 0.0f), 255.0f));
}

__device__ __forceinline__ unsigned char alpha_of (uchar4 v) { return v.w; }
__device__ __forceinline__ unsigned char alpha_of (rgbx8 v) { return v.w; }
__device__ __forceinline__ unsigned char alpha_of (float4 v)
{
  return to_u8 (v.w);
}
__device__ __forceinline__ unsigned char alpha_of (unsigned char v) { return v; }
__device__ __forceinline__ unsigned char alpha_of (float v) { return to_u8 (v); }

/* Writes one output pixel (x, y): its value in the output format (a
 * uniform branch on p.out), measured by `st` first. The input pixel under
 * the anchor supplies a copied alpha. */
template <typename In, typename S>
__device__ __forceinline__ void
store (const GcvCudaConv & p, int x, int y, float acc, In, S & st)
{
  const float v = out_value (p, acc);
  st.add (p, v, x, y);
  if (p.out == GCV_OUT_U8)
    row_ptr<unsigned char> (p.dst, p.dst_pitch, y)[x] = to_u8 (v);
  else
    row_ptr<float> (p.dst, p.dst_pitch, y)[x] = v;
}

/* One RGBA output pixel (x, y) as a little-endian word (R in the low
 * byte): the colours filtered, the fourth byte filtered or copied from
 * `centre`; the values measured by `st` first. (The values are written
 * out again after st.add(), which the compiler merges: without statistics
 * the code is what it was.) */
__device__ __forceinline__ unsigned
pack_rgb (const GcvCudaConv & p, float r, float g, float b)
{
  return to_u8 (out_value (p, r))
      | (unsigned) to_u8 (out_value (p, g)) << 8
      | (unsigned) to_u8 (out_value (p, b)) << 16;
}

template <typename In, typename S>
__device__ __forceinline__ unsigned
pack_u8x4 (const GcvCudaConv & p, float4 acc, In centre, int x, int y,
    S & st)
{
  st.add (p, out_value (p, acc), x, y);
  unsigned a = p.out == GCV_OUT_U8X4 ? to_u8 (out_value (p, acc.w))
      : alpha_of (centre);
  return pack_rgb (p, acc.x, acc.y, acc.z) | a << 24;
}

template <typename In, typename S>
__device__ __forceinline__ unsigned
pack_u8x4 (const GcvCudaConv & p, float3 acc, In centre, int x, int y,
    S & st)
{
  st.add (p, out_value (p, acc), x, y);
  return pack_rgb (p, acc.x, acc.y, acc.z)
      | (unsigned) alpha_of (centre) << 24;
}

template <typename In, typename S>
__device__ __forceinline__ void
store (const GcvCudaConv & p, int x, int y, float4 acc, In centre, S & st)
{
  row_ptr<unsigned> (p.dst, p.dst_pitch, y)[x] =
      pack_u8x4 (p, acc, centre, x, y, st);
}

template <typename In, typename S>
__device__ __forceinline__ void
store (const GcvCudaConv & p, int x, int y, float3 acc, In centre, S & st)
{
  row_ptr<unsigned> (p.dst, p.dst_pitch, y)[x] =
      pack_u8x4 (p, acc, centre, x, y, st);
}

/* A gradient magnitude's sum from its two derivatives' (in place of gx):
 * sign * sqrt (gx^2 + gy^2), NaN where either is (the rule of
 * docs/filters.md; hypotf would give Inf for Inf and NaN). */
__device__ __forceinline__ void magnitude (float &gx, float gy, float sign)
{
  gx = sign * sqrtf (gx * gx + gy * gy);
}
__device__ __forceinline__ void magnitude (float3 &gx, float3 gy, float sign)
{
  magnitude (gx.x, gy.x, sign);
  magnitude (gx.y, gy.y, sign);
  magnitude (gx.z, gy.z, sign);
}
__device__ __forceinline__ void magnitude (float4 &gx, float4 gy, float sign)
{
  magnitude (gx.x, gy.x, sign);
  magnitude (gx.y, gy.y, sign);
  magnitude (gx.z, gy.z, sign);
  magnitude (gx.w, gy.w, sign);
}

/* Four consecutive pixels moved as one vector: 16 bytes for floats and the
 * RGBA family, one 4-byte word for GRAY8, the width of a shared-memory bank
 * or four of them (Chen et al., DAC'17). */
template <typename In> struct Quad;
template <> struct Quad<float> {
  typedef float4 T;
  static __device__ __forceinline__ float get (const T & v, int k)
  {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
};
template <> struct Quad<unsigned char> {
  typedef uchar4 T;
  static __device__ __forceinline__ unsigned char get (const T & v, int k)
  {
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
  }
};
template <> struct Quad<uchar4> {
  typedef uint4 T;
  static __device__ __forceinline__ uchar4 get (const T & v, int k)
  {
    unsigned u = k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
    uchar4 r;
    memcpy (&r, &u, 4);
    return r;
  }
};
template <> struct Quad<rgbx8> {
  typedef uint4 T;
  static __device__ __forceinline__ rgbx8 get (const T & v, int k)
  {
    unsigned u = k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
    rgbx8 r;
    memcpy (&r, &u, 4);
    return r;
  }
};

/* Writes a thread's 4 outputs of row y as one vector where the row has
 * them all and the destination is aligned, else one by one. */
#define GCV_QUAD 4

template <typename In, typename S>
__device__ __forceinline__ void
store_quad (const GcvCudaConv & p, int x, int y,
    const typename AccOf<In>::T (&acc)[GCV_QUAD], const In (&centre)[GCV_QUAD],
    S & st)
{
  const bool f32 = p.out == GCV_OUT_F32;
  const size_t align = (p.out == GCV_OUT_U8) ? 4 : 16;
  /* x is a multiple of 4, so only the row start can be misaligned */
  if (x + GCV_QUAD <= p.width && (((size_t) p.dst | p.dst_pitch) & (align - 1)) == 0) {
    if constexpr (sizeof (acc[0]) == sizeof (float)) {
      /* (an empty unrolled loop changes what the compiler makes of the
       * rest, without statistics too) */
      if constexpr (S::on)
#pragma unroll
        for (int q = 0; q < GCV_QUAD; q++)
          st.add (p, out_value (p, acc[q]), x + q, y);
      if (f32) {
        float4 v;
        v.x = out_value (p, acc[0]);
        v.y = out_value (p, acc[1]);
        v.z = out_value (p, acc[2]);
        v.w = out_value (p, acc[3]);
        *(float4 *) (row_ptr<float> (p.dst, p.dst_pitch, y) + x) = v;
      } else {
        uchar4 v;
        v.x = to_u8 (out_value (p, acc[0]));
        v.y = to_u8 (out_value (p, acc[1]));
        v.z = to_u8 (out_value (p, acc[2]));
        v.w = to_u8 (out_value (p, acc[3]));
        *(uchar4 *) (row_ptr<unsigned char> (p.dst, p.dst_pitch, y) + x) = v;
      }
      return;
    } else {
      unsigned w[GCV_QUAD];
#pragma unroll
      for (int q = 0; q < GCV_QUAD; q++)
        w[q] = pack_u8x4 (p, acc[q], centre[q], x + q, y, st);
      *(uint4 *) (row_ptr<uchar4> (p.dst, p.dst_pitch, y) + x) =
          make_uint4 (w[0], w[1], w[2], w[3]);
      return;
    }
  }
#pragma unroll
  for (int q = 0; q < GCV_QUAD; q++)
    if (x + q < p.width)
      store<In> (p, x + q, y, acc[q], centre[q], st);
}

/* Loads rows y0.. of the padded frame, columns x0.. (sp of them, a multiple
 * of 4) into a shared tile, four pixels a vector. The padded rows have slack
 * past pw, so whole vectors can be read; beyond the frame the tile gets 0. */
template <typename In>
__device__ __forceinline__ void
load_tile_quads (In * tile, int sp, int rows, const GcvCudaConv & p, int x0,
    int y0, int pw, int ph, int thread, int n_threads)
{
  typedef typename Quad<In>::T Vec;
  for (int k = thread; k < rows * (sp / 4); k += n_threads) {
    const int r = k / (sp / 4), c = (k % (sp / 4)) * 4;
    Vec v = { };
    if (y0 + r < ph && x0 + c < pw)
      v = __ldg ((const Vec *) (row_ptr<In> (p.src, p.src_pitch, y0 + r) +
              x0 + c));
    *(Vec *) & tile[r * sp + c] = v;
  }
}

/* byte k of a word as a float, by its bits: byte b under the exponent of
 * 2^23 is the float 2^23 + b, exactly */
__device__ __forceinline__ float byte_float (unsigned word, unsigned k)
{
  return __int_as_float ((int) __byte_perm (word, 0x4B000000u, 0x7440u | k))
      - 8388608.0f;
}

template <typename V>
__device__ __forceinline__ unsigned word_of (V v)
{
  static_assert (sizeof (V) == 4, "four bytes");
  unsigned w;
  memcpy (&w, &v, 4);
  return w;
}

/* Widening in the tile windows. Each thread widens its whole window, so a
 * pixel is widened once per window it is in, and the conversion unit (an
 * eighth of the FMA rate on sm_80..90) bounds the RGBA family there. By its
 * bits (a byte permute and an add) the tiled kernels measured 8-18% faster
 * from 5x5 up (fused separable: within the noise, 10% faster at 31x31);
 * the register and column kernels, which widen each pixel once, 17-34%
 * slower (H200, performance.md), so they keep to_acc. */
template <typename In>
__device__ __forceinline__ typename AccOf<In>::T widen (In v)
{
  return to_acc (v);
}
__device__ __forceinline__ float4 widen (uchar4 v)
{
  const unsigned w = word_of (v);
  return make_float4 (byte_float (w, 0), byte_float (w, 1),
      byte_float (w, 2), byte_float (w, 3));
}
__device__ __forceinline__ float3 widen (rgbx8 v)
{
  const unsigned w = word_of (v);
  return make_float3 (byte_float (w, 0), byte_float (w, 1),
      byte_float (w, 2));
}

/* nv vectors of a tile row from `row` on (16-byte aligned), widened. */
template <typename In, int NV>
__device__ __forceinline__ void
load_window (typename AccOf<In>::T (&win)[NV * 4], const In * row)
{
#pragma unroll
  for (int v = 0; v < NV; v++) {
    const typename Quad<In>::T q = *(const typename Quad<In>::T *) (row + 4 * v);
#pragma unroll
    for (int k = 0; k < 4; k++)
      win[4 * v + k] = widen (Quad<In>::get (q, k));
  }
}

/* A thread's TY x 4 outputs at (x0 + xs, y0 + ys); the pixels under the
 * anchor, for copied alpha, come from the tile (row 0 = padded row y0).
 * The RGBA family's statistics are taken after the stores, a channel at a
 * time (Stats::add_tile()). */
template <typename In, int TY, typename S>
__device__ __forceinline__ void
store_tile_outputs (const GcvCudaConv & p, const In * tile, int sp, int x0,
    int y0, int xs, int ys, const typename AccOf<In>::T (&acc)[TY][GCV_QUAD],
    S & st)
{
  constexpr bool by_channel = S::channels > 1;
  NoStats none;

#pragma unroll
  for (int t = 0; t < TY; t++) {
    const int y = y0 + ys + t;
    if (y >= p.height)
      break;
    In centre[GCV_QUAD];
#pragma unroll
    for (int q = 0; q < GCV_QUAD; q++)
      centre[q] = tile[(ys + t + p.ay) * sp + xs + q + p.ax];
    if (x0 + xs < p.width) {
      if constexpr (by_channel)
        store_quad<In> (p, x0 + xs, y, acc[t], centre, none);
      else
        store_quad<In> (p, x0 + xs, y, acc[t], centre, st);
    }
  }
  if constexpr (by_channel)
    st.add_tile (p, x0 + xs, y0 + ys, acc);
}

/* Output (x, y) summed over its footprint straight from the padded frame:
 * the filter's own width (footprint_kw) of the kw-wide taps, kh rows. The
 * direct family, and outputs that other families would let a NaN or Inf
 * from outside the footprint reach. ROLLED keeps the loops rolled, for a
 * rare path in a kernel whose registers are better spent elsewhere. */
template <typename In, bool ROLLED = false, typename Taps>
__device__ __forceinline__ typename AccOf<In>::T
footprint_sum (const GcvCudaConv & p, int x, int y, const Taps & taps)
{
  typename AccOf<In>::T acc;
  zero (acc);
  if constexpr (ROLLED) {
#pragma unroll 1
    for (int j = 0; j < p.kh; j++) {
      const In *row = row_ptr<In> (p.src, p.src_pitch, y + j) + x;
#pragma unroll 1
      for (int i = 0; i < p.footprint_kw; i++)
        fma_acc (acc, taps[j * p.kw + i], to_acc (ldg (row + i)));
    }
  } else {
    for (int j = 0; j < p.kh; j++) {
      const In *row = row_ptr<In> (p.src, p.src_pitch, y + j) + x;
      for (int i = 0; i < p.footprint_kw; i++)
        fma_acc (acc, taps[j * p.kw + i], to_acc (ldg (row + i)));
    }
  }
  return acc;
}

/* footprint_sum() of a gradient magnitude: both derivatives from each
 * sample of the footprint, read once, then their magnitude. */
template <typename In, typename Taps, typename TapsY>
__device__ __forceinline__ typename AccOf<In>::T
footprint_magnitude (const GcvCudaConv & p, int x, int y, const Taps & taps,
    const TapsY & taps_y)
{
  typename AccOf<In>::T gx, gy;
  zero (gx);
  zero (gy);
  for (int j = 0; j < p.kh; j++) {
    const In *row = row_ptr<In> (p.src, p.src_pitch, y + j) + x;
    for (int i = 0; i < p.footprint_kw; i++) {
      const typename AccOf<In>::T v = to_acc (ldg (row + i));
      fma_acc (gx, taps[j * p.kw + i], v);
      fma_acc (gy, taps_y[j * p.kw + i], v);
    }
  }
  magnitude (gx, gy, p.magnitude_sign);
  return gx;
}

/* The input pixel under the anchor of output (x, y). */
template <typename In>
__device__ __forceinline__ In centre_of (const GcvCudaConv & p, int x, int y)
{
  return ldg (row_ptr<In> (p.src, p.src_pitch, y + p.ay) + x + p.ax);
}

/* Taps in the constant bank, passed by value with the launch; each launch
 * carries its own, so frames in flight keep theirs. */
struct ParamTaps {
  float v[GCV_CUDA_PARAM_TAPS];
  __device__ __forceinline__ float operator[] (int i) const { return v[i]; }
};

/* No second set of taps: the kernel is no gradient magnitude. */
struct NoTaps {
};

/* A gradient magnitude (GcvCudaConv.magnitude_sign), and its gy taps,
 * after gx's on the host and on the device. */
__host__ __device__ __forceinline__ bool is_magnitude (const GcvCudaConv & c)
{
  return c.magnitude_sign != 0.0f;
}
static inline const float *host_taps_y (const GcvCudaConv & c)
{
  return c.host_taps + c.kw * c.kh;
}
static inline const float *taps_y (const GcvCudaConv & c)
{
  return c.taps + c.kw * c.kh;
}

/* Taps in device memory, for kernels larger than the constant-bank copy. */
struct GlobalTaps {
  const float *v;
  __device__ __forceinline__ float operator[] (int i) const
  {
    return __ldg (v + i);
  }
};

static inline ParamTaps
param_taps (const float *host, int n)
{
  ParamTaps t;
  for (int i = 0; i < n && i < GCV_CUDA_PARAM_TAPS; i++)
    t.v[i] = host[i];
  return t;
}

static inline GlobalTaps
global_taps (const float *dev)
{
  GlobalTaps t;
  t.v = dev;
  return t;
}

static inline unsigned
div_up (unsigned a, unsigned b)
{
  return (a + b - 1) / b;
}

}  /* namespace gcv */

/* Calls F<In>::launch (args...) for the input element of `c`. */
#define GCV_DISPATCH_PIXEL(F, c, ...)                                        \
  ([&] () -> cudaError_t {                                                   \
    switch ((c).in) {                                                        \
      case GCV_PIX_U8:                                                       \
        return F<unsigned char>::launch (__VA_ARGS__);                       \
      case GCV_PIX_F32:                                                      \
        return F<float>::launch (__VA_ARGS__);                               \
      case GCV_PIX_U8X4:                                                     \
        if ((c).out == GCV_OUT_U8X4)                                         \
          return F<uchar4>::launch (__VA_ARGS__);                            \
        return F<rgbx8>::launch (__VA_ARGS__);                               \
      default:                                                               \
        return F<float4>::launch (__VA_ARGS__);                              \
    }                                                                        \
  } ())

#endif /* GCV_KERNELS_COMMON_CUH */
