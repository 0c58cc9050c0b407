#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Frames/s of whole pipelines at 1080p and 4K:
#   videotestsrc ! RGBA caps ! fakesink                           (the source alone)
#   videotestsrc ! RGBA caps ! gpuconvolve ! fakesink             (this element)
#   videotestsrc ! RGBA caps ! videoconvert ! gaussianblur ! fakesink  (CPU peer;
#                                                  gaussianblur takes AYUV)
# and the ratios. The time is gst-launch-1.0's "Execution ended after".
#
# Usage: bench/pipelines.sh [FRAMES_1080P] [FRAMES_4K]
# Environment: GPUCONVOLVE_PROPS (default "filter=gaussian size=5 backend=cuda"),
# BLUR_FRAMES (frames for gaussianblur, default 30: it is slow), PATTERN
# (videotestsrc pattern, default smpte). The plugin is found through
# GST_PLUGIN_PATH.
set -euo pipefail

frames_1080=${1:-300}
frames_4k=${2:-120}
props=${GPUCONVOLVE_PROPS:-filter=gaussian size=5 backend=cuda}
blur_frames=${BLUR_FRAMES:-30}
pattern=${PATTERN:-smpte}

if ! gst-inspect-1.0 gpuconvolve >/dev/null 2>&1; then
  echo "gpuconvolve not found: set GST_PLUGIN_PATH to the build's gst/ folder" >&2
  exit 1
fi

# Seconds a pipeline ran (PLAYING to EOS), from gst-launch-1.0's own report.
run_seconds() {
  local out t
  if ! out=$(gst-launch-1.0 "$@" 2>&1); then
    echo "pipeline failed: $*" >&2
    echo "$out" >&2
    return 1
  fi
  t=$(printf '%s\n' "$out" | sed -n 's/.*Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\).*/\1 \2 \3/p' | tail -1)
  if [ -z "$t" ]; then
    echo "no execution time in the output of: $*" >&2
    echo "$out" >&2
    return 1
  fi
  echo "$t" | awk '{ printf "%.6f\n", $1 * 3600 + $2 * 60 + $3 }'
}

fps() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.2f", (t > 0) ? n / t : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'; }

printf '%-6s %-40s %7s %9s %10s\n' "size" "pipeline" "frames" "frames/s" "vs source"
for size in 1920x1080 3840x2160; do
  w=${size%x*}
  h=${size#*x}
  n=$frames_1080
  [ "$w" -gt 1920 ] && n=$frames_4k
  nb=$(( blur_frames < n ? blur_frames : n ))
  caps="video/x-raw,format=RGBA,width=$w,height=$h,framerate=30/1"
  label=$([ "$w" -gt 1920 ] && echo 4K || echo 1080p)

  t_src=$(run_seconds videotestsrc num-buffers="$n" pattern="$pattern" ! "$caps" ! fakesink sync=false)
  f_src=$(fps "$n" "$t_src")
  printf '%-6s %-40s %7s %9s %10s\n' "$label" "videotestsrc ! fakesink" "$n" "$f_src" "1.000"

  # shellcheck disable=SC2086
  t_gpu=$(run_seconds videotestsrc num-buffers="$n" pattern="$pattern" ! "$caps" ! gpuconvolve $props ! fakesink sync=false)
  f_gpu=$(fps "$n" "$t_gpu")
  printf '%-6s %-40s %7s %9s %10s\n' "$label" "... ! gpuconvolve ! fakesink" "$n" "$f_gpu" "$(ratio "$f_gpu" "$f_src")"

  t_blur=$(run_seconds videotestsrc num-buffers="$nb" pattern="$pattern" ! "$caps" ! videoconvert ! video/x-raw,format=AYUV ! gaussianblur ! fakesink sync=false)
  f_blur=$(fps "$nb" "$t_blur")
  printf '%-6s %-40s %7s %9s %10s\n' "$label" "... ! videoconvert ! gaussianblur ! ..." "$nb" "$f_blur" "$(ratio "$f_blur" "$f_src")"
  printf '%-6s gpuconvolve / gaussianblur: %sx\n' "$label" "$(ratio "$f_gpu" "$f_blur")"
done
echo "gpuconvolve properties: $props"
