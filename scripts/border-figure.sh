#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Makes docs/img/borders.png, the figure of docs/filters.md's Borders section:
# a photo filtered by gpuconvolve with each border mode, tiled with labels.
#   top row:    K is a single 1 at its top left corner with the anchor at the
#               bottom right, so the picture moves 40 px right and down and
#               the band at the top and left shows what the border mode reads
#               outside the frame;
#   bottom row: a 31x31 box blur.
# The photo is scikit-image's coffee.png (CC0, by Rachel Michetti), taken from
# Debian's python3-skimage package: the installed copy when there is one,
# otherwise the package is downloaded (not installed) and that file unpacked.
# Usage: scripts/border-figure.sh [OUTPUT.png]   (BUILD_DIR=build by default)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
builddir=${BUILD_DIR:-build}
output=${1:-docs/img/borders.png}

scripts/deps.sh
scripts/build.sh "$builddir" >/dev/null
export GST_PLUGIN_PATH="$root/$builddir/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
photo=/usr/lib/python3/dist-packages/skimage/data/coffee.png
if [ ! -f "$photo" ]; then
  if ! (cd "$tmp" && apt-get download python3-skimage) >"$tmp/apt.log" 2>&1; then
    cat "$tmp/apt.log" >&2
    exit 1
  fi
  dpkg-deb --fsys-tarfile "$tmp"/python3-skimage_*.deb \
    | tar -x -C "$tmp" ./usr/lib/python3/dist-packages/skimage/data/coffee.png
  photo=$tmp/usr/lib/python3/dist-packages/skimage/data/coffee.png
fi

w=240 h=160   # one tile
s=40          # shift of the top row
one=1; for ((i = 0; i < s; i++)); do one+=",0"; done
shift_k=("kernel-width=$((s + 1))" "kernel-height=$((s + 1))"
         "row-kernel=<$one>" "column-kernel=<$one>" "anchor-x=$s" "anchor-y=$s")
blur_k=(filter=box size=31)
label=(textoverlay valignment=top halignment=left auto-resize=false "font-desc=Sans Bold 11"
       shaded-background=true)

# gst-launch-1.0 takes the description as separate words and keeps the
# spaces inside each word.
args=(filesrc "location=$photo" ! pngdec ! imagefreeze num-buffers=1
      ! videoconvert ! videoscale
      ! "video/x-raw,format=RGBA,width=$w,height=$h,pixel-aspect-ratio=1/1"
      ! tee name=t)
mosaic=(compositor name=mosaic background=black)
n=0   # tile n is in row n / 6, column n % 6
for row in shift blur; do
  if [ $row = shift ]; then k=("${shift_k[@]}"); else k=("${blur_k[@]}"); fi
  for border in none constant replicate reflect reflect101 wrap; do
    if [ $border = none ]; then
      args+=(t. ! queue ! "${label[@]}" "text=input" ! "mosaic.sink_$n")
    else
      args+=(t. ! queue ! gpuconvolve "${k[@]}" "border=$border"
             ! "${label[@]}" "text=$border" ! "mosaic.sink_$n")
    fi
    mosaic+=("sink_$n::xpos=$(( (n % 6) * w ))" "sink_$n::ypos=$(( (n / 6) * h ))")
    n=$((n + 1))
  done
done
args+=("${mosaic[@]}" ! videoconvert ! pngenc ! filesink "location=$tmp/borders.png")

gst-launch-1.0 -q "${args[@]}"
mkdir -p "$(dirname "$output")"
cp "$tmp/borders.png" "$output"
echo "Wrote $output ($(stat -c %s "$output") bytes)"
