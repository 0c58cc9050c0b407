/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* passes/convert.cu's launches: the formats whose samples the kernel
 * families have no element for (16-bit words, three-byte pixels), widened
 * into the padded frame's elements and narrowed back from the output's.
 * Apart from gcv-kernels.h, which the families include: they do not
 * depend on these. Plain C, for both sides. */
#ifndef GCV_CONVERT_H
#define GCV_CONVERT_H

#include "gcv-kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GCV_SAMPLE_U16,               /* a 16-bit little-endian word, the value
                                 * word >> shift (GRAY16_LE: 0, P010's
                                 * planes: 6) */
  GCV_SAMPLE_U8X3,              /* RGB, BGR: three bytes a pixel */
} GcvSample;

/* Samples `src_step` bytes apart (U8X3: 3) to the elements of `to`: U16
 * to F32, U8X3 to U8X4 or F32X4 (the fourth channel 0). */
cudaError_t gcv_cuda_widen (GcvSample sample, const void *src,
    size_t src_pitch, int src_step, int shift, GcvPixel to, void *dst,
    size_t dst_pitch, int width, int height, cudaStream_t stream);
/* Output elements back to samples `dst_step` bytes apart (U8X3: 3): F32
 * rounded to nearest (ties to even), saturated to 0..max (NaN: 0) and
 * shifted left by `shift`; U8X4's first three bytes. */
cudaError_t gcv_cuda_narrow (GcvSample sample, const void *src,
    size_t src_pitch, void *dst, size_t dst_pitch, int dst_step, int shift,
    float max, int width, int height, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GCV_CONVERT_H */
