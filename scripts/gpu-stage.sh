#!/bin/sh
# Copies what a GPU host runs from a build directory (the engine library,
# the plugin, the test and benchmark programs) into .gpurun/BUILD, leaving
# objects and build files behind, so it travels small.
#   scripts/gpu-stage.sh [BUILD]      then: scripts/gpu-host.sh -b .gpurun/BUILD
set -eu
build=${1:-build-gpu}
dest=.gpurun/$build
rm -rf "$dest"
mkdir -p "$dest"
tar -C "$build" -cf - --exclude='*.p' --exclude='meson-*' --exclude='*.a' \
    --exclude='*.o' --exclude='*.ninja' --exclude='.ninja_*' \
    --exclude='compile_commands.json' . | tar -C "$dest" -xf -
du -sh "$dest"
