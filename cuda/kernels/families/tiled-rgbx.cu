/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `tiled`, the kernels of the RGBA family with three channels filtered and the fourth byte copied (tiled.cuh). */
#include "kernels/families/tiled-kernels.cuh"

GCV_TILED_ADAPTIVE_INSTANCE (rgbx8);
GCV_TILED_WIDTH_INSTANCES (rgbx8);
