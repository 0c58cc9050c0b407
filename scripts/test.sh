#!/usr/bin/env bash
# Installs what is missing, configures build/ when needed, builds, and runs
# every test suite. Exits non-zero when the build or a test fails.
# Extra arguments go to `meson test` (for example --suite examples).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
scripts/build.sh build -Dtests=enabled -Dfault-injection=true
meson test -C build --print-errorlogs "$@"
