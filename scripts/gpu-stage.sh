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
set -eu
build=${1:-build-gpu}
name=$(basename "$build")
mkdir -p .gpurun
rm -rf ".gpurun/$name" ".gpurun/$name.tar.xz"
tar -C "$build" -cf - --exclude='*.p' --exclude='meson-*' --exclude='*.a' \
    --exclude='*.o' --exclude='*.ninja' --exclude='.ninja_*' \
    --exclude='compile_commands.json' --transform="s,^\\.,$name," . |
  xz -9 -T1 >".gpurun/$name.tar.xz"
du -sh ".gpurun/$name.tar.xz"
