#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Eight H.264 streams decoded and filtered on one GPU in one process, with
# CUDA stream sharing (GStreamer 1.24 and later) and without it
# (GPUCONVOLVE_NO_STREAM_SHARING=1): the process's CPU seconds per 1,000
# frames, the frames per second of all streams together and gpuconvolve's
# per-frame latency. Each stream is
#
#   filesrc ! qtdemux ! h264parse ! nvh264dec ! video/x-raw(memory:CUDAMemory)
#     ! gpuconvolve filter=gaussian size=9 ! video/x-raw(memory:CUDAMemory)
#     ! fakesink sync=false
#
# so the frame rate is the decoders'. CPU seconds are the process's user +
# system time (bash's `time`) of a run of FRAMES frames a stream less that
# of a run of FRAMES/10, over the frames between them: start-up (CUDA,
# the registry, the decoders) is left out; frames per second the same
# frames over the difference of the two runs' wall-clock times. Latency is a frame's time in
# gpuconvolve on the host, from the moment it starts on the frame (output
# buffer, maps, and the CPU wait for the input's stream where there is one)
# to the moment its result is ready to be pushed, frames in flight
# included: from gpuconvolve's own log lines ("frame N: output buffer and
# maps ... us, submit ... us" and "frame N: waited ... us", GST_DEBUG
# gpuconvolve:6), in a run of its own (the log costs CPU), as the median
# and the 95th percentile over the frames of all eight elements.
# (GStreamer's latency tracer hangs every pipeline on Debian 13's 1.26.2.)
# Each timed run is made REPEAT times, the configurations taking turns; the
# median counts.
#
# One invocation measures the GStreamer found on PATH (gst-launch-1.0,
# gst-inspect-1.0) with the plugin of GST_PLUGIN_PATH; rows go to CSV,
# which is appended to, and the table of every row in it is printed, so
# two invocations (1.22, then 1.26 through run126) give one table:
#
#   scripts/gpu-host.sh -b .gpurun/build-gpu stream-sharing
#   scripts/gpu-host.sh -r run126 -b .gpurun/build-126 stream-sharing
#
# On 1.22 CUDA memory carries no stream and the switch changes nothing; its
# two rows show what the measurement's noise is.
#
# Environment: FRAMES (default 1000), STREAMS (default 8), REPEAT
# (default 3), CLIP_DIR (default $TMPDIR/gpuconvolve-clips, shared with
# bench/pipelines-gpu.sh), CSV (default stream-sharing.csv), ROW_TIMEOUT
# (seconds one run may take, default 180), GPUCONVOLVE_EXTRA (properties
# added to every gpuconvolve, default backend=cuda).
set -euo pipefail

frames=${FRAMES:-1000}
streams=${STREAMS:-8}
repeat=${REPEAT:-3}
clip_dir=${CLIP_DIR:-${TMPDIR:-/tmp}/gpuconvolve-clips}
csv=${CSV:-stream-sharing.csv}
row_timeout=${ROW_TIMEOUT:-180}
extra=${GPUCONVOLVE_EXTRA-backend=cuda}

die() { echo "stream-sharing: $*" >&2; exit 1; }

case $frames$streams$repeat in
  *[!0-9]*) die "FRAMES, STREAMS and REPEAT must be whole numbers" ;;
esac
[ "$frames" -ge 100 ] || die "FRAMES must be 100 or more"
[ "$streams" -ge 1 ] && [ "$repeat" -ge 1 ] || die "STREAMS and REPEAT must be positive"
short=$((frames / 10))

for tool in gst-launch-1.0 gst-inspect-1.0 timeout awk sort; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
done
for e in videotestsrc x264enc h264parse mp4mux qtdemux nvh264dec fakesink \
    gpuconvolve; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || die "no $e element here (nvh264dec: \
an NVIDIA GPU with NVDEC; gpuconvolve: GST_PLUGIN_PATH; x264enc: gst-plugins-ugly)"
done
version=$(gst-launch-1.0 --version | awk 'NR == 1 {print $NF}')

# ---- clips ----------------------------------------------------------------
mkdir -p "$clip_dir" || die "cannot make $clip_dir"

# clip N: a 1080p H.264 clip of N frames (named as bench/pipelines-gpu.sh
# names its clips, so that one made there serves here)
clip() {
  local n=$1 file out
  file=$clip_dir/smpte-1920x1080-${n}f-8000k.mp4
  if [ ! -s "$file" ]; then
    echo "stream-sharing: encoding $n frames into $file" >&2
    out=$(timeout 600 gst-launch-1.0 -q videotestsrc num-buffers="$n" \
        pattern=smpte horizontal-speed=4 \
        ! "video/x-raw,format=I420,width=1920,height=1080,framerate=30/1" \
        ! x264enc speed-preset=ultrafast tune=zerolatency bitrate=8000 \
          key-int-max=60 \
        ! h264parse ! mp4mux ! filesink location="$file.part" 2>&1) \
      && [ -s "$file.part" ] || { echo "$out" >&2; rm -f "$file.part";
        die "could not encode $file"; }
    mv "$file.part" "$file"
  fi
  echo "$file"
}
long_clip=$(clip "$frames")
short_clip=$(clip "$short")

# launch CLIP: the pipeline's description, STREAMS branches
launch() {
  local i
  for ((i = 0; i < streams; i++)); do
    printf '%s ' filesrc location="$1" ! qtdemux ! h264parse ! nvh264dec \
      ! 'video/x-raw(memory:CUDAMemory)' ! gpuconvolve name=f$i $extra \
      filter=gaussian size=9 ! 'video/x-raw(memory:CUDAMemory)' \
      ! fakesink sync=false
  done
}

# run_seconds SHARING CLIP: the run's user + system seconds, then its
# wall-clock seconds
run_seconds() {
  local sharing=$1 clip=$2 t rc
  local -a env=(env)
  [ "$sharing" = on ] || env+=(GPUCONVOLVE_NO_STREAM_SHARING=1)
  TIMEFORMAT='%U %S %R'
  # shellcheck disable=SC2046
  { t=$( { time timeout "$row_timeout" "${env[@]}" gst-launch-1.0 -q \
      $(launch "$clip") >/dev/null 2>"$log.err"; } 2>&1 ); } || rc=$?
  if [ -n "${rc:-}" ]; then
    cat "$log.err" >&2
    die "the pipeline failed ($version, sharing $sharing, exit $rc)"
  fi
  echo "$t" | awk '{printf "%.3f %.3f\n", $1 + $2, $3}'
}

# latencies SHARING: gpuconvolve's per-frame latencies in ms, one a line
latencies() {
  local sharing=$1 trace=$log.trace
  local -a env=(env GST_DEBUG="gpuconvolve:6" GST_DEBUG_FILE="$trace"
    GST_DEBUG_NO_COLOR=1)
  [ "$sharing" = on ] || env+=(GPUCONVOLVE_NO_STREAM_SHARING=1)
  # shellcheck disable=SC2046
  timeout "$row_timeout" "${env[@]}" gst-launch-1.0 -q \
    $(launch "$long_clip") >/dev/null 2>"$log.err" \
    || { cat "$log.err" >&2; die "the logged pipeline failed ($version, sharing $sharing)"; }
  # a frame starts (maps + submit) before its submit line and is ready at
  # its "waited" line; the key is the element and the frame's ticket
  awk '
    function secs(t,  a) { split(t, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
    match($0, /<f[0-9]+> frame [0-9]+: /) {
      split(substr($0, RSTART, RLENGTH), k, /[<> :]+/)
      key = k[2] " " k[4]
      if (match($0, /maps [0-9]+ us, submit [0-9]+ us/)) {
        split(substr($0, RSTART, RLENGTH), m, " ")
        start[key] = secs($1) - (m[2] + m[5]) / 1e6
      } else if (/: waited [0-9]+ us/ && (key in start)) {
        printf "%.3f\n", (secs($1) - start[key]) * 1000
        delete start[key]
      }
    }' "$trace"
  rm -f "$trace"
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }
p95() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int(NR * 0.95 + 0.5) < 1 ? 1 : int(NR * 0.95 + 0.5)]}'; }

log=$(mktemp "${TMPDIR:-/tmp}/stream-sharing.XXXXXX")
trap 'rm -f "$log" "$log".*' EXIT

declare -A long_cpu short_cpu long_wall short_wall
for ((r = 0; r < repeat; r++)); do
  for sharing in on off; do
    t=$(run_seconds "$sharing" "$long_clip")
    read -r c w <<<"$t"
    long_cpu[$sharing]+="$c " long_wall[$sharing]+="$w "
    t=$(run_seconds "$sharing" "$short_clip")
    read -r c w <<<"$t"
    short_cpu[$sharing]+="$c " short_wall[$sharing]+="$w "
  done
done

[ -s "$csv" ] || echo "gstreamer,sharing,streams,frames,cpu_s_per_1000,latency_median_ms,latency_p95_ms,frames_per_s" >"$csv"
n=$(((frames - short) * streams))
for sharing in on off; do
  per_1000=$(awk -v l="$(printf '%s\n' ${long_cpu[$sharing]} | median)" \
    -v s="$(printf '%s\n' ${short_cpu[$sharing]} | median)" -v n=$n \
    'BEGIN {printf "%.3f", (l - s) * 1000 / n}')
  fps=$(awk -v l="$(printf '%s\n' ${long_wall[$sharing]} | median)" \
    -v s="$(printf '%s\n' ${short_wall[$sharing]} | median)" -v n=$n \
    'BEGIN {if (l > s) printf "%.0f", n / (l - s); else print "n/a"}')
  lat=$(latencies "$sharing")
  [ -n "$lat" ] || die "gpuconvolve logged no frames ($version): no latency"
  echo "$version,$sharing,$streams,$frames,$per_1000,$(echo "$lat" | median),$(echo "$lat" | p95),$fps" >>"$csv"
done

# ---- the table ------------------------------------------------------------
echo "$streams streams of 1080p H.264 on one GPU, gaussian 9x9 in CUDA memory;"
echo "CPU: user + system of the process over the frames past start-up; frames/s: the same frames, all streams; latency: a frame's time in gpuconvolve"
awk -F, 'NR == 1 {next} {
  printf "| GStreamer %s | sharing %-3s | %s streams x %s frames | %7.3f CPU s / 1000 frames | %6s frames/s | latency median %7.3f ms, p95 %7.3f ms |\n",
    $1, $2, $3, $4, $5, ($8 == "" ? "n/a" : $8), $6, $7 }' "$csv"
