#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Device memory that gpuconvolve adds to each decoded 1080p H.264 stream,
# beyond decode alone: N streams in one process,
#
#   decode     filesrc ! qtdemux ! h264parse ! nvh264dec
#                ! video/x-raw(memory:CUDAMemory) ! fakesink
#   <config>   ... nvh264dec ! video/x-raw(memory:CUDAMemory)
#                ! gpuconvolve <properties> ! <caps> ! fakesink
#
# with the device's used memory (nvidia-smi) sampled while they play, its
# highest value less the value before the process started; the per-stream
# cost is (config - decode) / N, also in 1080p NV12 frames (3,110,400
# bytes). The clips are long enough that every stream is still decoding
# when the samples are taken.
#
# Usage: bench/stream-memory.sh [N...]      (default 8 32)
# Environment: FRAMES (default 600), CLIP_DIR (default
# $TMPDIR/gpuconvolve-clips), GPU (the device index for nvidia-smi and
# CUDA_VISIBLE_DEVICES, default 0), QUEUE_DEPTH (default 2).
set -euo pipefail

counts=${*:-8 32}
frames=${FRAMES:-600}
clip_dir=${CLIP_DIR:-${TMPDIR:-/tmp}/gpuconvolve-clips}
gpu=${GPU:-0}
depth=${QUEUE_DEPTH:-2}
nv12=3110400

die() { echo "stream-memory: $*" >&2; exit 1; }
for tool in gst-launch-1.0 nvidia-smi awk; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
done
export CUDA_VISIBLE_DEVICES=$gpu

mkdir -p "$clip_dir"
clip=$clip_dir/memory-1920x1080-${frames}f.mp4
if [ ! -s "$clip" ]; then
  gst-launch-1.0 -q videotestsrc num-buffers="$frames" pattern=smpte \
      horizontal-speed=4 ! video/x-raw,format=I420,width=1920,height=1080,framerate=30/1 \
    ! x264enc speed-preset=ultrafast tune=zerolatency bitrate=8000 \
    ! h264parse ! mp4mux ! filesink location="$clip.part" >/dev/null \
    && mv "$clip.part" "$clip" || die "could not encode $clip"
fi

used() {
  nvidia-smi --id="$gpu" --query-gpu=memory.used --format=csv,noheader,nounits \
    | tr -d ' '
}

# run N TAIL: the device memory (MiB) the process added at its highest
run() {
  local n=$1 tail=$2 line="" base peak pid m
  for _ in $(seq "$n"); do
    line+=" filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
    line+=" ! video/x-raw(memory:CUDAMemory) $tail ! fakesink sync=true"
  done
  base=$(used)
  # sync=true plays at the clips' rate, so the streams stay up while the
  # samples are taken
  # shellcheck disable=SC2086
  gst-launch-1.0 -q $line >/dev/null 2>&1 &
  pid=$!
  peak=$base
  while kill -0 "$pid" 2>/dev/null; do
    m=$(used)
    [ "$m" -gt "$peak" ] && peak=$m
    sleep 0.5
  done
  wait "$pid" || die "a pipeline of $n streams failed: $tail"
  echo $((peak - base))
}

configs=(
  "gaussian 9, NV12 out|! gpuconvolve filter=gaussian size=9 queue-depth=$depth ! video/x-raw(memory:CUDAMemory),format=NV12"
  "gaussian 9 planes=all|! gpuconvolve filter=gaussian size=9 planes=all queue-depth=$depth ! video/x-raw(memory:CUDAMemory),format=NV12"
  "sobel statistics, GRAY8 out|! gpuconvolve filter=sobel size=3 scale=0.00392156862745098 statistics=true queue-depth=$depth ! video/x-raw(memory:CUDAMemory),format=GRAY8"
)

printf '%-30s %4s %12s %14s %14s\n' config N "MiB (all)" "MiB / stream" "NV12 frames"
for n in $counts; do
  decode=$(run "$n" "")
  printf '%-30s %4d %12d %14s %14s\n' "decode alone" "$n" "$decode" - -
  for c in "${configs[@]}"; do
    name=${c%%|*}
    m=$(run "$n" "${c#*|}")
    awk -v name="$name" -v n="$n" -v m="$m" -v d="$decode" -v f="$nv12" 'BEGIN {
      per = (m - d) / n
      printf "%-30s %4d %12d %14.1f %14.1f\n", name, n, m, per, per * 1048576 / f }'
  done
done
