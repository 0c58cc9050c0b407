/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --check-element: small frames through the engine's device path (as the
 * benchmark runs it) and through the gpuconvolve element (backend=cuda),
 * compared with each other and with a double-precision reference. */
#ifndef BENCH_CHECK_ELEMENT_H
#define BENCH_CHECK_ELEMENT_H

#include <glib.h>

G_BEGIN_DECLS

/* Prints one line per case; returns the number of failed cases. Needs
 * gst_init() and the plugin on GST_PLUGIN_PATH. */
guint bench_check_element (gint device_id, guint32 seed);

G_END_DECLS

#endif /* BENCH_CHECK_ELEMENT_H */
