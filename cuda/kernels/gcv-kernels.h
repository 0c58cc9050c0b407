/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch seam between the CUDA backend's host code (cuda/gpu/) and the
 * kernels (families/, passes/). Plain C, so both sides include it. */
#ifndef GCV_KERNELS_H
#define GCV_KERNELS_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element type of the padded device input frame. 8-bit formats are filtered
 * straight from their bytes; the float kinds serve GRAY32F and, after an
 * unpack pass, 8-bit frames whose constant border value bytes cannot hold. */
typedef enum {
  GCV_PIX_U8,                   /* GRAY8 */
  GCV_PIX_U8X4,                 /* RGBA family */
  GCV_PIX_F32,                  /* GRAY32F, or unpacked GRAY8 */
  GCV_PIX_F32X4,                /* unpacked RGBA family */
} GcvPixel;

/* What the convolution writes. */
typedef enum {
  GCV_OUT_U8,                   /* saturate(round(v)) */
  GCV_OUT_F32,                  /* v */
  GCV_OUT_U8X4_KEEP_ALPHA,      /* colours filtered, 4th byte copied */
  GCV_OUT_U8X4,                 /* all four filtered */
} GcvOut;

#define GCV_CUDA_PARAM_TAPS 1024        /* taps passed in the constant bank */

/* Per-frame statistics (docs/statistics.md), as the kernels leave them: one
 * channel's sums, the count above the threshold, and its extremes as keys,
 * (ordered bits of the value << 32) | the place, y * width + x: the largest
 * key wins, so the smallest value's key is complemented and the largest's
 * place is, and ties go to the place first in row order. A key of 0: no
 * sample that is not NaN. */
typedef struct {
  double sum, sum_squares;
  unsigned long long above;
  unsigned long long min_key, max_key;
} GcvCudaChannelStats;

/* Records the warps of a frame's output kernel add into (one per warp,
 * the warps spread over them), and the samples they have counted; the warp
 * whose samples complete the frame sums the records into the result and
 * zeroes them for the next frame. All zero between frames. */
#define GCV_CUDA_STATS_PARTS 64
#define GCV_CUDA_STATS_CHANNELS 4

/* A frame's statistics, in page-locked host memory the kernel writes:
 * `samples` is written last, the frame's total once it is done. */
typedef struct {
  GcvCudaChannelStats channel[GCV_CUDA_STATS_CHANNELS];
  unsigned int samples;
  unsigned int total;           /* the host's: the source of the state's
                                 * total, copied when it changes */
} GcvCudaStatsResult;

typedef struct {
  GcvCudaChannelStats part[GCV_CUDA_STATS_PARTS][GCV_CUDA_STATS_CHANNELS];
  unsigned int samples;
  GcvCudaStatsResult *result;   /* set once: where the frames' go */
  /* The samples of a frame, which its last group counts to: width x
   * height, or with privacy regions the filtered area, which several
   * launches (a rectangle each) share. Set by the host before the frame. */
  unsigned int total;
} GcvCudaStatsState;

/* One convolution: padded input to output, both pitched device memory. */
typedef struct {
  GcvPixel in;
  GcvOut out;
  const void *src;              /* padded frame: row 0 is the top of the halo */
  size_t src_pitch;
  void *dst;
  size_t dst_pitch;
  int width, height;            /* output size */
  int kw, kh, ax, ay;
  float bias;
  float out_scale;              /* out = (sum + bias) * out_scale, then format */
  const float *taps;            /* kh*kw in device memory (large kernels) */
  const float *host_taps;       /* the same on the host (param path) */
  cudaStream_t stream;
  int footprint_kw;             /* the filter's own width: kw, or less where
                                 * tiled's unrolled kernels run it widened by
                                 * zero taps on the right */
  int check_finite;             /* GRAY32F: samples may be NaN or infinite,
                                 * so the kernels that read samples outside
                                 * an output's footprint (widened tiled, FFT)
                                 * keep those from reaching it */
  /* A gradient magnitude: 1 or -1, the sign of sign * sqrt (gx^2 + gy^2),
   * the sum the epilogue takes; taps and host_taps then hold gy's kh x kw
   * taps after gx's. 0: none. Only direct and tiled run magnitudes; the
   * other launchers refuse them. */
  float magnitude_sign;
  /* Statistics: the largest float <= the threshold (so that |v| > it is
   * |v| > the threshold), and the frame's records (NULL: none). */
  float stats_threshold;
  GcvCudaStatsState *stats;
  /* The places of the statistics' extremes are in the frame's samples:
   * output (x, y) is at stats_origin + y * stats_stride + x, where
   * stats_stride is the frame's width and stats_origin the place of
   * output (0, 0): 0 for a whole frame, a rectangle's corner where the
   * launch filters a rectangle of it (privacy regions). */
  unsigned int stats_origin, stats_stride;
  /* The kernels take this by value: past 128 bytes the compiler addresses
   * it in memory, and the kernels' code changes (gcv-kernels-common.cuh). */
} GcvCudaConv;

/* Device facts the launchers size their tiles with. */
typedef struct {
  int sm_count;
  size_t smem_per_block_optin;  /* largest dynamic shared memory per block */
  size_t smem_per_sm;
  int regs_per_sm;
} GcvCudaDevice;

size_t gcv_cuda_pixel_size (GcvPixel pix);

/* border.cu: fills the halo around the interior (ax, ay)..(ax+w, ay+h) of a
 * padded frame of (w + kw - 1) x (h + kh - 1) pixels. */
cudaError_t gcv_cuda_fill_border (GcvPixel pix, void *pad, size_t pitch,
    int width, int height, int kw, int kh, int ax, int ay, int border,
    float value, cudaStream_t stream);
/* border.cu: 8-bit frame (U8 or U8X4) to floats (F32 or F32X4). */
cudaError_t gcv_cuda_unpack (GcvPixel to, const void *raw, size_t raw_pitch,
    void *dst, size_t dst_pitch, int width, int height, cudaStream_t stream);

/* border.cu: bytes `src_step` apart to bytes `dst_step` apart (one
 * channel of interleaved samples to a packed plane, or back). */
cudaError_t gcv_cuda_copy_samples (void *dst, size_t dst_pitch, int dst_step,
    const void *src, size_t src_pitch, int src_step, int width, int height,
    cudaStream_t stream);

/* border.cu: `n` rectangles (at most GCV_CUDA_COPY_RECTS) copied, one
 * launch for all of them, each from its own source to its own
 * destination (the pointers are its first samples), `size` bytes a
 * sample, samples `src_step` and `dst_step` bytes apart. */
#define GCV_CUDA_COPY_RECTS 48
typedef struct {
  const void *src;
  void *dst;
  size_t src_pitch, dst_pitch;
  int src_step, dst_step, size;
  int width, height;            /* samples, rows */
} GcvCudaCopy;
cudaError_t gcv_cuda_copy_rects (const GcvCudaCopy * rects, int n,
    cudaStream_t stream);

/* separable-rects.cu: the separable filter (`row` kw taps, `column` kh,
 * each at most GCV_CUDA_RECT_TAPS) on `n` rectangles of one frame (at
 * most GCV_CUDA_FILTER_RECTS), one launch for all: `c` as for the whole
 * frame (one channel of bytes in and out, no statistics), each
 * rectangle's outputs read from c->src and written to c->dst where they
 * lie in the frame. The same launch copies `m` rectangles (at most
 * GCV_CUDA_RECTS_COPIES) as gcv_cuda_copy_rects() does, on c->stream. */
#define GCV_CUDA_FILTER_RECTS 64
#define GCV_CUDA_RECT_TAPS 63
#define GCV_CUDA_RECTS_COPIES 24
typedef struct {
  int x, y, width, height;
} GcvCudaRect;
cudaError_t gcv_cuda_separable_rects (const GcvCudaConv * c,
    const float *row, const float *column, const GcvCudaRect * rects, int n,
    const GcvCudaCopy * copies, int m);

/* direct.cu: one thread per output, everything from global memory. */
cudaError_t gcv_cuda_direct (const GcvCudaConv * c);

/* tiled.cu: shared-memory tiles, ty outputs per thread in y. Returns the
 * largest ty (1, 2, 4, 8) whose tile fits the device with 2 blocks per SM,
 * or 0 when none fits. */
int gcv_cuda_tiled_choose (const GcvCudaConv * c, const GcvCudaDevice * dev,
    size_t * smem);
cudaError_t gcv_cuda_tiled (const GcvCudaConv * c, int ty, size_t smem);
/* tiled.cu, per-width kernels (kernel widths in GCV_TILED_WIDTHS, any
 * height; not F32X4): 4 outputs across and ty down per thread (2 and 4,
 * and 1 for the RGBA family, 8 for one channel: tiled-kernels.cuh);
 * kw is the instance's width, footprint_kw the filter's (less where it is
 * widened by zero taps). The shared memory they need (0: no instance, or
 * too much for the device), and the launch. The padded frame's rows must
 * have 3 pixels of slack. */
#define GCV_TILED_WIDTHS(X) X(3) X(5) X(7) X(9) X(11) X(13) X(15) X(17) \
  X(21) X(25) X(27) X(31) X(43)
size_t gcv_cuda_tiled_width_smem (const GcvCudaConv * c, int ty,
    const GcvCudaDevice * dev);
cudaError_t gcv_cuda_tiled_width (const GcvCudaConv * c, int ty);

/* column.cu: kernels one tap wide (kw == 1), one pass down the columns;
 * the taps are c->host_taps. */
cudaError_t gcv_cuda_column (const GcvCudaConv * c);

/* register.cu: register cache and warp shuffle, p_rows (4 or 8) outputs per
 * lane, `block` threads (a multiple of 32) per block. */
#define GCV_REGISTER_MAX_KH 16
int gcv_cuda_register_supports (const GcvCudaConv * c);
int gcv_cuda_register_specialised (const GcvCudaConv * c);
cudaError_t gcv_cuda_register (const GcvCudaConv * c, int p_rows, int block);

/* separable.cu: row pass into tmp (float or float4, width x (height+kh-1)),
 * then column pass to the output. */
size_t gcv_cuda_separable_tmp_pixel (GcvPixel in);
/* separable.cu, fused per-size kernels for square sizes in
 * GCV_SEPARABLE_SIZES, ty (4; the variant's rows) outputs down per
 * thread: the shared memory they need (0: no instance, or too much for the
 * device), and the launch. */
#define GCV_SEPARABLE_SIZES(X) X(3) X(5) X(7) X(9) X(11) X(13) X(15) X(17) \
  X(21) X(25) X(31) X(43) X(63)
size_t gcv_cuda_separable_fused_bytes (const GcvCudaConv * c, int ty,
    const GcvCudaDevice * dev);
cudaError_t gcv_cuda_separable_fused (const GcvCudaConv * c, const float *row,
    const float *column, int ty, const GcvCudaDevice * dev);
cudaError_t gcv_cuda_separable (const GcvCudaConv * c, const float *row,
    const float *column, void *tmp, size_t tmp_pitch,
    const GcvCudaDevice * dev);

/* fft.cu: cuFFT correlation over the padded frame, `channels` planes (1,
 * 3 or 4) of the whole frame, or of overlap-save tiles `tile` pixels on a
 * side (at least the kernel) where `tile` > 0, in one batched plan, buffers
 * and plans per slot. Whole-frame transform sizes have no prime factor
 * above max_prime (2, 3, 5 or 7). Errors are written into err. */
typedef struct _GcvCudaFft GcvCudaFft;
GcvCudaFft *gcv_cuda_fft_new (int width, int height, int kw, int kh,
    int channels, int max_prime, int tile, int n_slots,
    cudaStream_t * streams, char *err, size_t err_len);
/* the transform size, and the tiles per channel (1 for the frame) */
void gcv_cuda_fft_size (const GcvCudaFft * f, int *nx, int *ny, int *tiles);
int gcv_cuda_fft_set_filter (GcvCudaFft * f, const float *taps, int kw,
    int kh, char *err, size_t err_len);
int gcv_cuda_fft_run (GcvCudaFft * f, int slot, const GcvCudaConv * c,
    char *err, size_t err_len);
void gcv_cuda_fft_free (GcvCudaFft * f);

#ifdef __cplusplus
}
#endif

#endif /* GCV_KERNELS_H */
