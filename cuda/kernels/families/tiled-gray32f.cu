/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`, the kernels of GRAY32F (tiled.cuh). */
#include "kernels/families/tiled-kernels.cuh"

GCV_TILED_ADAPTIVE_INSTANCE (float);
GCV_TILED_WIDTH_INSTANCES (float);
