/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CPU direct path's row loops for gradient magnitudes (filter=sobel,
 * scharr): both derivatives summed in one sweep over the taps. */
#ifndef GCV_CPU_MAGNITUDE_H
#define GCV_CPU_MAGNITUDE_H

#include <glib.h>

G_BEGIN_DECLS

/* out[x] = bias + sign * sqrt (gx^2 + gy^2) for x < n, with gx = sum_t
 * w[t] * src[t][x] and gy the same with u. */
void gcv_cpu_fir_magnitude (gfloat * out, const gconstpointer * src,
    const gfloat * w, const gfloat * u, guint nt, gfloat bias, gfloat sign,
    gsize n);

/* Two output rows, as fir2() in gcv-cpu.c: row 0 from taps t < nt - last
 * (weights w0 and u0), row 1 from taps t >= first (w1 and u1). */
void gcv_cpu_fir2_magnitude (gfloat * out0, gfloat * out1,
    const gconstpointer * src, const gfloat * w0, const gfloat * w1,
    const gfloat * u0, const gfloat * u1, guint first, guint nt, guint last,
    gfloat bias, gfloat sign, gsize n);

G_END_DECLS

#endif /* GCV_CPU_MAGNITUDE_H */
