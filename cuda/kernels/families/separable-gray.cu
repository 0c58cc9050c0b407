/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable`, the kernels of one-channel frames: GRAY8 and GRAY32F
 * (separable.cuh). */
#include "kernels/families/separable-kernels.cuh"

GCV_SEPARABLE_TWO_PASS_INSTANCE (unsigned char);
GCV_SEPARABLE_FUSED_INSTANCES (unsigned char);
GCV_SEPARABLE_TWO_PASS_INSTANCE (float);
GCV_SEPARABLE_FUSED_INSTANCES (float);
