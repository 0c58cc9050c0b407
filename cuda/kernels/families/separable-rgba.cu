/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable`, the kernels of the RGBA family with all four
 * channels filtered, and of four floats (frames unpacked where a constant
 * `border-value` is no byte value: two passes only) (separable.cuh). */
#include "kernels/families/separable-kernels.cuh"

GCV_SEPARABLE_TWO_PASS_INSTANCE (uchar4);
GCV_SEPARABLE_FUSED_INSTANCES (uchar4);
GCV_SEPARABLE_TWO_PASS_INSTANCE (float4);
