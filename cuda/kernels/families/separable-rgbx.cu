/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `separable`, the kernels of the RGBA family with three channels
 * filtered and the fourth byte copied (separable.cuh). */
#include "kernels/families/separable-kernels.cuh"

GCV_SEPARABLE_TWO_PASS_INSTANCE (rgbx8);
GCV_SEPARABLE_FUSED_INSTANCES (rgbx8);
