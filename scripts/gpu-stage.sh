#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Packs what a GPU host runs from a build directory (the engine library,
# the plugin, the test and benchmark programs) into .gpurun/BUILD.tar.xz,
# leaving objects and build files behind, so it travels small: the test and
# benchmark programs each hold the kernels (they link the engine's internal
# static library), which one xz dictionary stores once.
#   scripts/gpu-stage.sh [BUILD]      then: scripts/gpu-host.sh -b .gpurun/BUILD
# (gpu-host.sh unpacks the archive on first use). A build made in the
# Debian 13 root (GStreamer 1.26) is packed the same way and run with
# Debian 13's runtime:
#   scripts/gpu-stage.sh build-126    then: scripts/gpu-host.sh -r run126 -b .gpurun/build-126
# The Debian 13 runtime leaves out libraries a 1.26 build links (the
# analytics library the plugin reads detections with, and the controller
# library of the test harness): a build whose plugin links the analytics
# library takes them from the Debian 13 root (GPUCONVOLVE_TRIXIE, default
# ../shared/gpuhost/trixie.sh) into runtime-libs/, which gpu-host.sh -r
# run126 puts on the library path.
set -eu
build=${1:-build-gpu}
name=$(basename "$build")
rm -rf "$build/runtime-libs"
if readelf -d "$build"/gst/libgstgpuconvolve.so 2>/dev/null \
    | grep -q 'libgstanalytics-1.0'; then
  trixie=${GPUCONVOLVE_TRIXIE:-../shared/gpuhost/trixie.sh}
  [ -f "$trixie" ] || {
    echo "gpu-stage.sh: $build links GStreamer's analytics library; its" \
      "runtime libraries come from the Debian 13 root: set GPUCONVOLVE_TRIXIE" \
      "to trixie.sh (not found: $trixie)" >&2
    exit 1
  }
  mkdir -p "$build/runtime-libs"
  sh "$trixie" run sh -c \
    "cp -L /usr/lib/x86_64-linux-gnu/libgstanalytics-1.0.so.0 \
        /usr/lib/x86_64-linux-gnu/libgstcontroller-1.0.so.0 /src/$build/runtime-libs/"
fi
# (the last staged archive stays until this one is whole)
mkdir -p .gpurun
rm -rf ".gpurun/$name"
tar -C "$build" -cf - --exclude='*.p' --exclude='meson-*' --exclude='*.a' \
    --exclude='*.o' --exclude='*.ninja' --exclude='.ninja_*' \
    --exclude='compile_commands.json' --transform="s,^\\.,$name," . |
  xz -9 -T1 >".gpurun/$name.tar.xz.part"
mv -f ".gpurun/$name.tar.xz.part" ".gpurun/$name.tar.xz"
du -sh ".gpurun/$name.tar.xz"
