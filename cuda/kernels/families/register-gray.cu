/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Family `register`, the kernels of one-channel frames: GRAY8 and GRAY32F
 * (register.cuh). */
#include "kernels/families/register-kernels.cuh"

GCV_REGISTER_INSTANCE (unsigned char);
GCV_REGISTER_INSTANCE (float);
