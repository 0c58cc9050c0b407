/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The gpuconvolve plugin. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/gst.h>

#include "gstgpuconvolve.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  return GST_ELEMENT_REGISTER (gpuconvolve, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, gpuconvolve,
    "Convolution of video frames on NVIDIA GPUs, with a CPU fallback",
    plugin_init, PACKAGE_VERSION, "LGPL", PACKAGE_NAME, PACKAGE_ORIGIN)
