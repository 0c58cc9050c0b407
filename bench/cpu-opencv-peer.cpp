/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The OpenCV peer of gpuconvolve-cpu-bench (see cpu-opencv-peer.h). The
 * frames are wrapped, not copied, so a call times OpenCV's filter alone. */
#include "cpu-opencv-peer.h"

#include <exception>
#include <string>
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

gboolean
cpu_peer_built (void)
{
  return TRUE;
}

/* The parallel framework, as the build information names it. */
static std::string
parallel_framework (void)
{
  const std::string info = cv::getBuildInformation ();
  const std::string key = "Parallel framework:";
  size_t at = info.find (key), end;

  if (at == std::string::npos)
    return "unknown parallel framework";
  at = info.find_first_not_of (' ', at + key.size ());
  end = info.find ('\n', at);
  return info.substr (at, end == std::string::npos ? end : end - at);
}

gchar *
cpu_peer_describe (void)
{
  return g_strdup_printf ("OpenCV %s (%s, %d threads)", CV_VERSION,
      parallel_framework ().c_str (), cv::getNumThreads ());
}

void
cpu_peer_set_threads (guint n)
{
  cv::setNumThreads ((int) n);
}

static int
cv_type (GcvFormat format)
{
  switch (format) {
    case GCV_FORMAT_GRAY8:
      return CV_8UC1;
    case GCV_FORMAT_GRAY32F:
      return CV_32FC1;
    default:
      return CV_8UC4;
  }
}

/* OpenCV's name for the border; -1 where it has none that matches. */
static int
cv_border (const GcvFilterTaps * f)
{
  switch (f->border) {
    case GCV_BORDER_CONSTANT:
      /* OpenCV's filters pad with 0 */
      return f->border_value == 0.0f ? cv::BORDER_CONSTANT : -1;
    case GCV_BORDER_REPLICATE:
      return cv::BORDER_REPLICATE;
    case GCV_BORDER_REFLECT:
      return cv::BORDER_REFLECT;
    case GCV_BORDER_REFLECT101:
      return cv::BORDER_REFLECT_101;
    default:
      return -1;
  }
}

gboolean
cpu_peer_run (CpuPeerOp op, GcvFormat format, guint width, guint height,
    const void *src, gsize src_stride, void *dst, gsize dst_stride,
    const GcvFilter * filter, guint gaussian_size, gdouble sigma,
    GError ** error)
{
  GcvFilterTaps taps, *f = &taps;
  int border;

  gcv_filter_get_taps (filter, &taps);
  border = cv_border (f);

  if (border < 0) {
    g_set_error (error, CPU_PEER_ERROR, 0, "OpenCV has no %s border",
        gcv_border_nick (f->border));
    return FALSE;
  }
  if (op == CPU_PEER_SEP_FILTER_2D && !f->rank1) {
    g_set_error_literal (error, CPU_PEER_ERROR, 0, "the kernel is not rank 1");
    return FALSE;
  }
  try {
    const cv::Mat in ((int) height, (int) width, cv_type (format),
        const_cast < void *>(src), src_stride);
    cv::Mat out ((int) height, (int) width, cv_type (format), dst,
        dst_stride);
    const cv::Point anchor ((int) f->ax, (int) f->ay);

    switch (op) {
      case CPU_PEER_GAUSSIAN_BLUR:
        cv::GaussianBlur (in, out, cv::Size ((int) gaussian_size,
                (int) gaussian_size), sigma, sigma, border);
        break;
      case CPU_PEER_SEP_FILTER_2D:{
        const cv::Mat kx (1, (int) f->kw, CV_32F,
            const_cast < gfloat * >(f->row));
        const cv::Mat ky ((int) f->kh, 1, CV_32F,
            const_cast < gfloat * >(f->column));
        cv::sepFilter2D (in, out, -1, kx, ky, anchor, f->bias, border);
        break;
      }
      default:{
        const cv::Mat k ((int) f->kh, (int) f->kw, CV_32F,
            const_cast < gfloat * >(f->taps));
        cv::filter2D (in, out, -1, k, anchor, f->bias, border);
        break;
      }
    }
    /* OpenCV reallocates rather than fail when the output does not fit */
    if (out.data != dst) {
      g_set_error_literal (error, CPU_PEER_ERROR, 0,
          "OpenCV wrote to a frame of its own");
      return FALSE;
    }
  }
  catch (const std::exception & e) {
    g_set_error (error, CPU_PEER_ERROR, 0, "OpenCV: %s", e.what ());
    return FALSE;
  }
  return TRUE;
}
