/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`, the kernels of four float channels, the adaptive kernel
 * only: an RGBA-family frame is unpacked to four floats where a constant
 * `border-value` is no byte value (tiled.cuh). */
#include "kernels/families/tiled-kernels.cuh"

GCV_TILED_ADAPTIVE_INSTANCE (float4);
