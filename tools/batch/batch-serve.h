/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpuconvolve-batch-run serve: a warm worker that runs job after job sent
 * on its standard input (batch-serve.c has the protocol). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Runs jobs until its standard input ends; the exit status. Needs
 * gst_init() and batch_log_init(). */
int batch_serve (void);

G_END_DECLS
