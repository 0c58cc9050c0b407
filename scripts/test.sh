#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what is missing, configures build/ when needed, builds, and runs
# every test suite. Exits non-zero when the build or a test fails.
# Extra arguments go to `meson test` (for example --suite examples).
# GPUCONVOLVE_BUILD_DIR names another build directory (CI builds GStreamer
# 1.26's in build-126).
set -euo pipefail
cd "$(dirname "$0")/.."

builddir=${GPUCONVOLVE_BUILD_DIR:-build}
scripts/deps.sh
scripts/build.sh "$builddir" -Dtests=enabled -Dfault-injection=true
meson test -C "$builddir" --print-errorlogs "$@"
