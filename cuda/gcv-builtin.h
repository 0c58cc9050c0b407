/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in filters of the `filter` property (gcv-builtin.c); their
 * definitions are in docs/filters.md. */
#ifndef GCV_BUILTIN_H
#define GCV_BUILTIN_H

#include "gcv.h"

G_BEGIN_DECLS

void gcv_builtin_get_size (GcvBuiltin filter, guint size, guint * kw,
    guint * kh);
guint gcv_builtin_min_size (GcvBuiltin filter);
/* kh*kw doubles, row-major; size must be >= gcv_builtin_min_size(). A
 * magnitude filter gives its x derivative. */
gdouble *gcv_builtin_generate (GcvBuiltin filter, guint size, gdouble sigma,
    guint * kw, guint * kh);
/* Gradient magnitudes (sobel, scharr): TRUE, with the built-ins of their x
 * and y derivatives. */
gboolean gcv_builtin_magnitude (GcvBuiltin filter, GcvBuiltin * x,
    GcvBuiltin * y);

G_END_DECLS

#endif /* GCV_BUILTIN_H */
