/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `register`, the kernels of the RGBA family: four channels
 * filtered, and three with the fourth byte copied (register.cuh). */
#include "kernels/families/register-kernels.cuh"

GCV_REGISTER_INSTANCE (uchar4);
GCV_REGISTER_INSTANCE (rgbx8);
