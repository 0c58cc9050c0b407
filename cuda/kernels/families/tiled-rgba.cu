/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`, the kernels of the RGBA family with all four channels filtered (tiled.cuh). */
#include "kernels/families/tiled-kernels.cuh"

GCV_TILED_ADAPTIVE_INSTANCE (uchar4);
GCV_TILED_WIDTH_INSTANCES (uchar4);
