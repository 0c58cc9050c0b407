#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configures the build directory when it is not configured yet, then builds.
# Usage: scripts/build.sh [BUILD_DIR] [extra meson setup options...]
# GPUCONVOLVE_MESON_OPTIONS adds options to `meson setup`, for example
# GPUCONVOLVE_MESON_OPTIONS=-Dcuda=disabled.
set -euo pipefail
cd "$(dirname "$0")/.."

builddir=${1:-build}
shift || true

# The CUDA toolkit's default place is not on PATH on a stock install; meson
# finds nvcc (and so builds the CUDA backend) through PATH.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
fi

if [ ! -f "$builddir/build.ninja" ]; then
  # shellcheck disable=SC2086
  meson setup "$builddir" ${GPUCONVOLVE_MESON_OPTIONS:-} "$@"
fi
meson compile -C "$builddir"
