/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OpenCV peer where OpenCV's development files were not found: the CPU
 * benchmark then times the engine alone. */
#include "cpu-opencv-peer.h"

gboolean
cpu_peer_built (void)
{
  return FALSE;
}

gchar *
cpu_peer_describe (void)
{
  return g_strdup ("OpenCV: not built");
}

void
cpu_peer_set_threads (guint n)
{
}

gboolean
cpu_peer_run (CpuPeerOp op, GcvFormat format, guint width, guint height,
    const void *src, gsize src_stride, void *dst, gsize dst_stride,
    const GcvFilter * filter, guint gaussian_size, gdouble sigma,
    GError ** error)
{
  g_set_error (error, CPU_PEER_ERROR, 0, "OpenCV: not built");
  return FALSE;
}
