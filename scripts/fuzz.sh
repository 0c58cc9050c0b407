#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds the libFuzzer targets (fuzz/*.c) with clang, AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer in their own build directory, and
# runs each for SECONDS (default 60), as many at once as there are cores.
# Exits non-zero when a target finds something (a crash, a sanitizer report,
# a leak or a broken promise) or does not build.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   GPUCONVOLVE_FUZZ_BUILD   build directory (default build-fuzz)
#   GPUCONVOLVE_FUZZ_RUNS    run this many inputs per target instead of a time
#   GPUCONVOLVE_FUZZ_JOBS    targets run at once (default: the number of cores)
#   GPUCONVOLVE_FUZZ_SEED    libFuzzer's random seed (default: a new one each
#                            run); a fixed seed replays the same inputs
#
# Seeds are read from fuzz/corpus/<target>/ and never written to; new inputs
# go to <build>/fuzz-corpus/<target>/, findings to
# <build>/fuzz-artifacts/<target>-crash-* (copy one into fuzz/corpus/<target>/
# once fixed, as a regression input). Logs: <build>/fuzz-logs/<target>.log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

secs=${1:-60}
shift || true
builddir=${GPUCONVOLVE_FUZZ_BUILD:-build-fuzz}
jobs=${GPUCONVOLVE_FUZZ_JOBS:-$(nproc)}
all_targets=(fuzz-kernel fuzz-caps fuzz-tuning fuzz-preset fuzz-geometry)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

scripts/deps.sh clang libclang-rt-dev || exit 1

if [ ! -f "$builddir/build.ninja" ]; then
  # sanitizers on every target (engine, plugin and fuzzers), coverage for
  # libFuzzer on the code under test; no CUDA, tests or examples
  CC=clang meson setup "$builddir" \
    -Dfuzz=enabled -Dcuda=disabled -Dtests=disabled -Dexamples=false \
    -Dbench=disabled -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    "-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer" \
    || exit 1
fi
meson compile -C "$builddir" "${targets[@]/#/fuzz/}" || exit 1

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export G_SLICE=always-malloc
export G_DEBUG=gc-friendly

mkdir -p "$builddir/fuzz-logs" "$builddir/fuzz-artifacts"
run_one() {
  local t=$1 work="$builddir/fuzz-corpus/$1" log="$builddir/fuzz-logs/$1.log"
  local limit
  mkdir -p "$work"
  if [ -n "${GPUCONVOLVE_FUZZ_RUNS:-}" ]; then
    limit=(-runs="$GPUCONVOLVE_FUZZ_RUNS")
  else
    limit=(-max_total_time="$secs")
  fi
  # fuzz-caps: no leak checks. GLib lets go of its quark table (on purpose,
  # for readers without a lock) each time new field names make it grow,
  # which LeakSanitizer cannot tell from a leak; the element's caps code is
  # leak-checked under valgrind by the test suites.
  local asan=$ASAN_OPTIONS extra=()
  [ -n "${GPUCONVOLVE_FUZZ_SEED:-}" ] && extra+=(-seed="$GPUCONVOLVE_FUZZ_SEED")
  if [ "$t" = fuzz-caps ]; then
    asan="$asan:detect_leaks=0"
    extra+=(-detect_leaks=0)
  fi
  ASAN_OPTIONS=$asan "$builddir/fuzz/$t" "$work" "fuzz/corpus/$t" "${limit[@]}" "${extra[@]}" \
    -max_len=4096 -timeout=20 -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$builddir/fuzz-artifacts/$t-" >"$log" 2>&1
  local rc=$?
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "fuzz: $t: ${execs:-?} inputs, nothing found"
  else
    echo "fuzz: $t: FOUND SOMETHING (exit $rc) after ${execs:-?} inputs; see $log:"
    grep -E "ERROR: |FUZZ FINDING|SUMMARY: |runtime error|Test unit written" "$log" | head -20
  fi
  return $rc
}

failed=0
pids=()
names=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    sleep 1
  done
  run_one "$t" &
  pids+=($!)
  names+=("$t")
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=$((failed + 1))
done

if [ $failed -gt 0 ]; then
  echo "fuzz: $failed of ${#targets[@]} targets found something"
  exit 1
fi
if [ -n "${GPUCONVOLVE_FUZZ_RUNS:-}" ]; then
  each="$GPUCONVOLVE_FUZZ_RUNS inputs"
else
  each="$secs s"
fi
echo "fuzz: ${#targets[@]} targets, $each each, nothing found"
