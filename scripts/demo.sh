#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds gpuconvolve and runs it, uninstalled, on a moving test picture.
# Writes out/demo.webm (a 2x2 mosaic: the input and three filters) and
# out/frame-NN.png (two mosaic frames a second), and prints which backend ran.
# With a usable NVIDIA GPU, backend=auto filters on CUDA; otherwise on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

scripts/deps.sh
scripts/build.sh build

export GST_PLUGIN_PATH="$root/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
export GST_PRESET_PATH="$root/presets${GST_PRESET_PATH:+:$GST_PRESET_PATH}"

if ! gst-inspect-1.0 gpuconvolve >/dev/null 2>&1; then
  echo "demo.sh: GStreamer does not find the gpuconvolve element in build/gst" >&2
  exit 1
fi

mkdir -p out
rm -f out/frame-*.png out/demo.webm out/demo.log out/gpuconvolve-debug.log

frames=${DEMO_FRAMES:-90}      # 3 s at 30 frames/s
w=320 h=240
pane="width=$w,height=$h,framerate=30/1"
label=(textoverlay valignment=top halignment=left 'font-desc="Sans Bold 13"'
       shaded-background=true)

# Input: scrolling SMPTE bars with a bouncing ball composited on top.
# The four panes of the mosaic:
#   input                              | gaussian 21x21, sigma 5 (RGBA)
#   @preset=edge-sobel-x: GRAY8 -> GRAY32F -> GRAY8 | custom 3x3 outline kernel (RGBA)
echo "Running gpuconvolve on $frames frames of ${w}x${h} ..."
start=$(date +%s%N)
# The element logs "active algorithm: ..." at INFO level whenever it changes;
# the same text is its active-algorithm property, which -v also prints.
if ! GST_DEBUG=gpuconvolve:4 GST_DEBUG_FILE=out/gpuconvolve-debug.log \
    GST_DEBUG_NO_COLOR=1 gst-launch-1.0 -v -e \
    compositor name=scene background=black \
      ! video/x-raw,format=RGBA,$pane,interlace-mode=progressive ! tee name=t \
    videotestsrc pattern=smpte horizontal-speed=3 num-buffers="$frames" \
      ! video/x-raw,$pane ! scene. \
    videotestsrc pattern=ball background-color=0x00000000 num-buffers="$frames" \
      ! video/x-raw,format=AYUV,$pane ! scene. \
    t. ! queue ! "${label[@]}" 'text="input"' ! mosaic.sink_0 \
    t. ! queue ! gpuconvolve name=blur filter=gaussian size=21 sigma=5 \
      ! "${label[@]}" 'text="filter=gaussian size=21 sigma=5"' ! mosaic.sink_1 \
    t. ! queue ! videoconvert ! video/x-raw,format=GRAY8 \
      ! gpuconvolve name=sobel_x @preset=edge-sobel-x \
      ! video/x-raw,format=GRAY32F \
      ! gpuconvolve name=to_gray8 kernel-width=1 kernel-height=1 \
          'kernel=<0.125>' bias=0.5 \
      ! video/x-raw,format=GRAY8 ! videoconvert \
      ! "${label[@]}" 'text="@preset=edge-sobel-x, via GRAY32F"' \
      ! mosaic.sink_2 \
    t. ! queue ! gpuconvolve name=outline kernel-width=3 kernel-height=3 \
          'kernel=<-1,-1,-1,-1,8,-1,-1,-1,-1>' \
      ! "${label[@]}" 'text="custom kernel: outline"' ! mosaic.sink_3 \
    compositor name=mosaic background=black \
        sink_1::xpos=$w sink_2::ypos=$h sink_3::xpos=$w sink_3::ypos=$h \
      ! videoconvert ! video/x-raw,format=I420,framerate=30/1 ! tee name=o \
    o. ! queue ! videorate ! video/x-raw,framerate=2/1 ! videoconvert ! pngenc \
      ! multifilesink location=out/frame-%02d.png \
    o. ! queue ! vp8enc deadline=1 ! webmmux ! filesink location=out/demo.webm \
    >out/demo.log 2>&1 </dev/null; then
  tail -n 20 out/demo.log >&2
  echo "demo.sh: the pipeline failed; full log in out/demo.log" >&2
  exit 1
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))

echo
echo "Backend and algorithm of each gpuconvolve element:"
sed -n -E 's/.*<([a-z_0-9]+)> active algorithm: (.*)/  \1: \2/p' \
  out/gpuconvolve-debug.log | sort -u
if grep -q 'No usable CUDA device' out/demo.log; then
  echo "  (no usable CUDA device here: $(grep -A3 'No usable CUDA device' out/demo.log \
    | grep -v -E 'WARNING|Additional|gstgpuconvolve.c' | head -n 1))"
fi
echo "Pipeline time: $((ms / 1000)).$(printf %03d $((ms % 1000))) s"
echo
echo "Output:"
echo "  $root/out/demo.webm  ($(stat -c %s out/demo.webm) bytes, $frames frames, 640x480)"
pngs=(out/frame-*.png)
n=${#pngs[@]}
echo "  $root/out/frame-01.png .. frame-$(printf %02d "$n").png  ($n PNG frames, 2 per second)"
echo "  $root/out/demo.log  (gst-launch-1.0 -v output)"
echo "  $root/out/gpuconvolve-debug.log  (GST_DEBUG=gpuconvolve:4)"
