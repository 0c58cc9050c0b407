#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whether two builds give the same bytes for the same inputs: the
# edge-energy analysis (the default job of gpuconvolve-batch) on a few
# clips, and gpuconvolve's frames for a set of formats, filters, borders
# and privacy regions, in system memory and, where nvcodec's cudaupload is
# found, in CUDA memory. Each case runs once with each build, uninstalled
# (its own plugin, presets and tuning tables, and a registry of its own),
# and its outputs are compared byte for byte.
#
# Usage: bench/same-output.sh OLD_BUILD NEW_BUILD
#   OLD_BUILD, NEW_BUILD  build directories (examples built), each in its
#                         source tree (presets/ beside it)
# Environment: BACKEND (the element's backend, default auto: CUDA where a
# device is usable), OUT (default out/same-output: clips and outputs),
# FRAMES (default 8 a pipeline, 30 a clip).
# The clips are VP8 where vp8enc is found, else H.264 (x264enc; the GPU
# host's runtime has no vp8enc). A clip neither build decodes gives no
# output (a CSV header alone), never "same".
# Prints a line a case, "same" or "DIFFERENT" (with the differing bytes,
# or which build gave no output: a case a build cannot run, such as
# privacy regions in CUDA memory before the CUDA backend had them, shows
# so); exits 1 when any case differs or fails to run, 0 when all are the
# same.
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD" >&2; exit 2; }
backend=${BACKEND:-auto}
frames=${FRAMES:-8}
out=${OUT:-out/same-output}
for b in "$1" "$2"; do
  [ -x "$b/examples/edge-energy" ] && [ -d "$b/gst" ] && [ -d "$b/../presets" ] \
    || { echo "same-output: $b is no build directory with examples/ and gst/" >&2; exit 2; }
done
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
[ "$old" != "$new" ] || { echo "same-output: OLD_BUILD and NEW_BUILD are one directory" >&2; exit 2; }
mkdir -p "$out" || exit 2
cd "$out" || exit 2

# with BUILD CMD...: CMD with BUILD's plugin, presets and tuning tables
with() {
  local b=$1 tag
  shift
  tag=$([ "$b" = "$old" ] && echo old || echo new)
  env GST_PLUGIN_PATH="$b/gst" GST_PLUGIN_PATH_1_0="$b/gst" \
    GST_REGISTRY="$PWD/registry-$tag.bin" GST_REGISTRY_1_0="$PWD/registry-$tag.bin" \
    GST_PRESET_PATH="$b/../presets" GPUCONVOLVE_TUNING_PATH="$b/../presets/tuning" "$@"
}

cases=0
differ=0
# verdict NAME FILE_OLD FILE_NEW
verdict() {
  cases=$((cases + 1))
  if [ ! -s "$2" ] || [ ! -s "$3" ]; then
    echo "DIFFERENT: $1: no output from $([ -s "$2" ] || echo "old ")$([ -s "$3" ] || echo new)"
    differ=$((differ + 1))
  elif cmp -s "$2" "$3"; then
    echo "same: $1 ($(stat -c %s "$3") bytes)"
  else
    echo "DIFFERENT: $1: $(cmp -l "$2" "$3" 2>/dev/null | wc -l) of $(stat -c %s "$3") bytes"
    differ=$((differ + 1))
  fi
}

# the clips in VP8 where vp8enc is found, else in H.264 (the GPU host's
# runtime has x264enc and no vp8enc; there nvh264dec decodes them)
if gst-inspect-1.0 vp8enc >/dev/null 2>&1; then
  encode="vp8enc ! webmmux" ext=webm
else
  encode="x264enc ! h264parse ! mp4mux" ext=mp4
fi
for p in smpte ball gamut snow; do
  clip=clip-$p.$ext
  [ -s "$clip" ] || gst-launch-1.0 -q videotestsrc pattern="$p" \
      num-buffers="${FRAMES:-30}" \
    ! video/x-raw,width=1280,height=720,framerate=30/1 ! $encode \
    ! filesink location="$clip" </dev/null \
    || { echo "same-output: could not make $clip" >&2; exit 2; }
  for b in "$old" "$new"; do
    csv=$([ "$b" = "$old" ] && echo old || echo new)-$p.csv
    with "$b" "$b/examples/edge-energy" --backend="$backend" \
      "$clip" >"$csv" 2>/dev/null
    # a header alone (the clip not decoded) is no output
    [ "$(wc -l <"$csv")" -gt 1 ] || : >"$csv"
  done
  verdict "edge-energy $clip" "old-$p.csv" "new-$p.csv"
done

# frames: caps | gpuconvolve's properties; 1283x721, so that rows are
# padded and the frame crosses tiles unevenly
memories=(system)
gst-inspect-1.0 cudaupload >/dev/null 2>&1 && memories+=(cuda)
i=0
while IFS='|' read -r caps props; do
  for memory in "${memories[@]}"; do
    i=$((i + 1))
    if [ "$memory" = cuda ]; then
      head="! cudaupload ! video/x-raw(memory:CUDAMemory),$caps !"
      tail="! video/x-raw(memory:CUDAMemory) ! cudadownload !"
    else
      head="!" tail="!"
    fi
    for b in "$old" "$new"; do
      # (word splitting of the properties is wanted: several of them)
      # shellcheck disable=SC2086
      with "$b" gst-launch-1.0 -q videotestsrc pattern=ball num-buffers="$frames" \
        ! "video/x-raw,$caps,width=1283,height=721,framerate=30/1" $head \
        gpuconvolve backend="$backend" $props $tail \
        filesink location="$([ "$b" = "$old" ] && echo old || echo new)-$i.raw" \
        </dev/null >/dev/null 2>&1
    done
    verdict "$caps $props ($memory memory)" "old-$i.raw" "new-$i.raw"
    rm -f "old-$i.raw" "new-$i.raw"
  done
done <<'EOF'
format=NV12|filter=gaussian size=9
format=NV12|filter=gaussian size=31 planes=all
format=I420|filter=sharpen size=5 planes=all
format=RGBA|filter=sobel-x size=3
format=BGRx|filter=gaussian size=7 border=reflect101
format=RGBA|filter=emboss size=3 alpha=filter
format=GRAY8|filter=laplacian size=5 border=constant
format=GRAY8|filter=box size=15 border=reflect
format=GRAY8|filter=gaussian size=5 border=wrap
format=NV12|filter=gaussian size=31 regions="<<100,100,200,200>,<600,300,200,200>>" region-mode=inside
format=RGBA|filter=gaussian size=9 regions="<<100,100,200,200>>" region-mode=outside
EOF
echo "same-output: $cases cases, $differ different (backend=$backend; $old against $new)"
[ "$differ" -eq 0 ]
