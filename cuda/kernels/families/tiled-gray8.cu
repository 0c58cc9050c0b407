/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`, the kernels of GRAY8 (one byte a pixel) (tiled.cuh). */
#include "kernels/families/tiled-kernels.cuh"

GCV_TILED_ADAPTIVE_INSTANCE (unsigned char);
GCV_TILED_WIDTH_INSTANCES (unsigned char);
