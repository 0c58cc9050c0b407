/* Interface between the CUDA backend (gcv-cuda.c) and the kernel families
 * (*.cu). Plain C, so both sides include it. */
#ifndef GCV_CUDA_H
#define GCV_CUDA_H

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

/* direct.cu: one thread per output, everything from global memory. */
cudaError_t gcv_cuda_direct (const GcvCudaConv * c);

/* tiled.cu: shared-memory tiles, ty outputs per thread in y. Returns the
 * largest ty (1, 2, 4, 8) whose tile fits the device with 2 blocks per SM,
 * or 0 when none fits. */
int gcv_cuda_tiled_choose (const GcvCudaConv * c, const GcvCudaDevice * dev,
    size_t * smem);
cudaError_t gcv_cuda_tiled (const GcvCudaConv * c, int ty, size_t smem);

/* separable.cu: row pass into tmp (float or float4, width x (height+kh-1)),
 * then column pass to the output. */
size_t gcv_cuda_separable_tmp_pixel (GcvPixel in);
cudaError_t gcv_cuda_separable (const GcvCudaConv * c, const float *row,
    const float *column, void *tmp, size_t tmp_pitch,
    const GcvCudaDevice * dev);

#ifdef __cplusplus
}
#endif

#endif /* GCV_CUDA_H */
