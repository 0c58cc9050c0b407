#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the GPU work of gpuconvolve on a machine with an NVIDIA GPU and no
# GStreamer development files: the test suites on the CUDA backend (every
# kernel family), compute-sanitizer over them, and the benchmarks. The build
# comes from a machine with the toolchain:
#
#   meson setup build-gpu -Dcuda=enabled -Dcuda-archs=90 -Dcuda-ptx=false \
#       -Dfault-injection=true [-Dnpp-root=DIR]
#   ninja -C build-gpu
#
# and a GStreamer runtime unpacked into .gpuhost/ (see docs/building.md).
#
#   scripts/gpu-host.sh [-b BUILD] [-o OUT] [-r RUNNER] [-g RUNTIME] STEP...
#
# A build made in the Debian 13 root (GStreamer 1.26) runs with Debian 13's
# C library: -r run126 prefixes every program with that runner (RUNNER in
# the environment does the same), takes the runtime from .gpuhost-1.26/
# (packed by ../shared/gpuhost/trixie.sh gpuhost; unpacked on first use),
# and puts gst-launch-1.0 and gst-inspect-1.0 of that runtime first on PATH
# for the scripts the steps run (bench/*.sh). -g names another runtime
# folder (one with env.sh).
#
# JOBS bounds the parallel jobs (default: 8, the most CUDA contexts the
# suites use at once, or the CPU count if lower); each test program's own
# threads (GPUCONVOLVE_TEST_THREADS) are the CPU count divided by JOBS.
# FAMILIES and TESTS pick kernel families and test programs, TEST_LIMIT and
# SANITIZE_LIMIT are each job's seconds; the tests step runs the programs
# in quick mode (GPUCONVOLVE_TEST_QUICK=1) unless QUICK=0, and each program's
# tests in one process (CK_FORK=no) unless FORK=1.
#
# Steps: info, tests, sanitize, bench-quick, bench, element-bench, pipelines,
# pipelines-gpu, stream-sharing, tune, check-dispatch, soak. Logs go to OUT (default
# out/gpu); the exit code is non-zero when a step failed.
set -uo pipefail

build=build-gpu
out=${OUT:-out}/gpu
runner=${RUNNER:-}
runtime=
while getopts "b:o:r:g:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    o) out=$OPTARG ;;
    r) runner=$OPTARG ;;
    g) runtime=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
root=$(pwd)
# unpack DIR ARCHIVE WHAT: ARCHIVE into DIR unless WHAT is there, under a
# lock, so that invocations side by side (one a GPU) neither unpack at
# once nor take a half-unpacked one
unpack() {
  (
    flock 9 || exit 1
    [ -e "$3" ] || tar -C "$1" -xJf "$2"
  ) 9>"$1/.unpack.lock"
}
# a build staged by gpu-stage.sh travels packed
if [ -f "$build.tar.xz" ]; then
  unpack "$(dirname "$build")" "$build.tar.xz" "$build" || exit 1
fi
mkdir -p "$out"

# the GStreamer runtime: .gpuhost/, or 1.26's for run126
if [ -z "$runtime" ]; then
  case $runner in
    run126 | */run126) runtime=.gpuhost-1.26 ;;
    *) runtime=.gpuhost ;;
  esac
fi
# (1.26's packs its root as gpuhost.tar.xz, 1.22's as root.tar.xz, which
# its env.sh would unpack without a lock)
for archive in gpuhost.tar.xz root.tar.xz; do
  if [ -f "$runtime/$archive" ]; then
    unpack "$runtime" "$runtime/$archive" "$runtime/root" || exit 1
  fi
done
if [ -f "$runtime/env.sh" ]; then
  . "$runtime/env.sh"
elif [ -n "$runner" ]; then
  echo "gpu-host.sh: no $runtime/env.sh for -r $runner" >&2
  exit 2
fi
if [ -n "$runner" ]; then
  command -v "$runner" >/dev/null 2>&1 || {
    echo "gpu-host.sh: runner $runner not found (it comes with $runtime)" >&2
    exit 2
  }
  # gst-launch-1.0 and gst-inspect-1.0 by name, as the bench scripts call
  # them, are the runtime's, through the runner
  wrappers=${TMPDIR:-/tmp}/gpuconvolve-runner-$$
  mkdir -p "$wrappers"
  for tool in gst-launch-1.0 gst-inspect-1.0; do
    target=$root/$runtime/root/usr/bin/$tool
    [ -x "$target" ] || target=$(command -v "$tool") || continue
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$runner" "$target" \
      >"$wrappers/$tool"
    chmod +x "$wrappers/$tool"
  done
  export PATH=$wrappers:$PATH
  trap 'rm -rf "$wrappers"' EXIT
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# what the runtime lacks and gpu-stage.sh packed with the build
if [ -n "$runner" ] && [ -d "$build/runtime-libs" ]; then
  LD_LIBRARY_PATH=$root/$build/runtime-libs:$LD_LIBRARY_PATH
fi
export GST_PLUGIN_PATH_1_0=$root/$build/gst GST_PLUGIN_PATH=$root/$build/gst
# one registry per runtime: a 1.22 and a 1.26 run in one session
export GST_REGISTRY_1_0=${TMPDIR:-/tmp}/gpuconvolve-registry-$(basename "$runtime").bin
export GST_PRESET_PATH=$root/presets
export GPUCONVOLVE_TUNING_PATH=$root/presets/tuning
xdg=${TMPDIR:-/tmp}/gpuconvolve-xdg
export XDG_DATA_HOME=$xdg/data XDG_CONFIG_HOME=$xdg/config XDG_CACHE_HOME=$xdg/cache
# GST_CHECKS (test function names, comma-separated) narrows every program run
export GST_CHECKS=${GST_CHECKS:-} GST_CHECKS_IGNORE=${GST_CHECKS_IGNORE:-}

families=${FAMILIES:-"auto direct tiled register separable fft"}
status=0
summary=$out/summary.txt
: >"$summary"

note() { echo "$*" | tee -a "$summary"; }

# run NAME TIMEOUT COMMAND...: logs to OUT/NAME.log, notes the result; a
# program of the build goes through the runner (the host's tools, such as
# compute-sanitizer and ncu, put $runner before the program they start)
run() {
  local name=$1 limit=$2 rc
  shift 2
  case $1 in
    "$build"/*) [ -n "$runner" ] && set -- "$runner" "$@" ;;
  esac
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  case $rc in
    0) note "PASS $name ($((SECONDS - t0)) s)" ;;
    77) note "SKIP $name: $(grep -m1 SKIP "$out/$name.log")" ;;
    *) note "FAIL $name (exit $rc, $((SECONDS - t0)) s)"; status=1 ;;
  esac
  return $rc
}

# the test programs; TESTS="test-a test-b" picks some. The longest ones
# (SLOW_TESTS) come first, so that no long job starts last and runs alone.
tests_of() {
  local slow=" ${SLOW_TESTS:-test-cuda-memory test-compute test-cuda-failure test-stress} " t
  if [ -n "${TESTS:-}" ]; then
    printf "$build/tests/%s\n" $TESTS
  else
    find "$build/tests" -maxdepth 1 -name 'test-*' -type f -perm -u+x | sort
  fi | while read -r t; do
    case $slow in
      *" $(basename "$t") "*) echo "0 $t" ;;
      *) echo "1 $t" ;;
    esac
  done | sort -s -k1,1n | cut -d' ' -f2-
}

step_info() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
      --format=csv | tee -a "$summary"
  nvcc --version | tail -1 | tee -a "$summary"
  ls /usr/local/cuda/lib64 | grep -E '^libnpp(c|if)\.so' | tee -a "$summary"
}

# The plugin registry is scanned once, before the parallel jobs: dozens of
# processes scanning at once (nvcodec probes the GPU while it loads) made
# every test start take a minute.
scan_registry() {
  [ -n "${registry_ready:-}" ] && return
  gst-inspect-1.0 gpuconvolve >"$out/registry-scan.log" 2>&1 \
    || note "FAIL registry scan (see registry-scan.log)"
  export GST_REGISTRY_UPDATE=no
  registry_ready=1
}

# at most JOBS jobs at once (8 by default: the driver makes CUDA contexts
# one at a time, so more processes at once only wait longer for theirs;
# fewer where there are fewer CPUs)
max_jobs=${JOBS:-$(( $(nproc) < 8 ? $(nproc) : 8 ))}
# the CPUs shared among the jobs: a test program's threads (its reference
# frames, tests/common.c)
export GPUCONVOLVE_TEST_THREADS=${GPUCONVOLVE_TEST_THREADS:-$(( ($(nproc) + max_jobs - 1) / max_jobs ))}
throttle() {
  while [ "$(jobs -pr | wc -l)" -ge "$max_jobs" ]; do wait -n; done
}

# every test program on the CUDA backend, once per family; the summary
# ends with the step's wall time
step_tests() {
  local t0=$SECONDS
  scan_registry
  for t in $(tests_of); do
    for f in $families; do
      throttle
      name=tests-$(basename "$t")-$f
      (
        export GPUCONVOLVE_TEST_BACKEND=cuda GPUCONVOLVE_TEST_ALGORITHM=$f
        if [ "${QUICK:-1}" != 0 ]; then
          export GPUCONVOLVE_TEST_QUICK=1
        else
          unset GPUCONVOLVE_TEST_QUICK
        fi
        case $t in *test-stream) export GST_TRACERS=leaks ;; esac
        # one process a program, not one a test: each process makes a
        # CUDA context, which the driver makes one at a time (0.2 s each
        # on an H200, over 1,300 of them for the suite); test-cuda-failure
        # needs a process per case, and FORK=1 gives every test its own
        case $t in
          *test-cuda-failure) ;;
          *) [ "${FORK:-0}" = 1 ] || export CK_FORK=no ;;
        esac
        run "$name" "${TEST_LIMIT:-600}" "$t"
      ) &
    done
  done
  wait_all
  note "tests: $((SECONDS - t0)) s, $max_jobs jobs at once," \
      "GPUCONVOLVE_TEST_THREADS=$GPUCONVOLVE_TEST_THREADS"
}

# waits for every job; any failure shows in the summary and the status
wait_all() {
  local p
  for p in $(jobs -pr); do wait "$p"; done
  grep -q "^FAIL" "$summary" && status=1
}

# compute-sanitizer over the computing tests on the CUDA backend: memcheck
# and racecheck with every family forced, initcheck and synccheck with the
# dispatcher's choice
step_sanitize() {
  local jobs=()
  for f in auto tiled register separable fft direct; do
    jobs+=("memcheck $f test-compute" "racecheck $f test-compute")
  done
  for tool in memcheck racecheck initcheck synccheck; do
    jobs+=("$tool auto test-inflight")
  done
  jobs+=("initcheck auto test-compute" "synccheck auto test-compute")
  # NV12/I420 planes and CUDA memory in and out (nvcodec's elements)
  jobs+=("memcheck auto test-planar" "memcheck tiled test-planar"
    "memcheck auto test-cuda-memory")
  # SANITIZE_JOBS="tool family program;..." runs those alone
  if [ -n "${SANITIZE_JOBS:-}" ]; then
    IFS=';' read -r -a jobs <<<"$SANITIZE_JOBS"
  fi
  scan_registry
  for j in "${jobs[@]}"; do
    set -- $j
    throttle
    (
      export GPUCONVOLVE_TEST_BACKEND=cuda GPUCONVOLVE_TEST_ALGORITHM=$2
      export CK_TIMEOUT_MULTIPLIER=10     # instrumented kernels are slow
      run "sanitize-$1-$2-$3" "${SANITIZE_LIMIT:-480}" compute-sanitizer \
          --tool "$1" --error-exitcode 3 --target-processes all \
          $runner "$build/tests/$3"
    ) &
  done
  wait_all
  grep -H "ERROR SUMMARY\|RACECHECK SUMMARY" "$out"/sanitize-*.log \
      | sed 's|.*/||' | tee -a "$summary"
}

step_bench_quick() {
  run bench-quick 300 "$build/bench/gpuconvolve-bench" --quick \
      --check-element --csv="$out/bench-quick.csv"
}

step_bench() {
  run bench 560 "$build/bench/gpuconvolve-bench" --csv="$out/bench.csv"
  tail -n 80 "$out/bench.log"
}

step_element_bench() {
  run element-bench 560 "$build/bench/gpuconvolve-element-bench" \
      --csv="$out/element-bench.csv"
  tail -n 40 "$out/element-bench.log"
}

step_pipelines() {
  run pipelines 400 bench/pipelines.sh 300 120
  cat "$out/pipelines.log"
}

# H.264 decoded by nvh264dec into gpuconvolve, in CUDA memory and through
# the host, against the decoder alone (clips made with x264enc, kept in
# $TMPDIR/gpuconvolve-clips)
step_pipelines_gpu() {
  run pipelines-gpu 480 bench/pipelines-gpu.sh 1000 400
  cat "$out/pipelines-gpu.log"
}

# eight decoded streams on one GPU with CUDA stream sharing and without:
# CPU seconds per 1,000 frames and gpuconvolve's per-frame latency; the
# rows of every run with the same OUT make one table (1.22, then 1.26)
step_stream_sharing() {
  export CSV=$out/stream-sharing.csv
  run stream-sharing 590 bench/stream-sharing.sh
  cat "$out/stream-sharing.log"
}

step_tune() {
  run tune 590 "$build/bench/gpuconvolve-tune" --output="$out/tuning.tbl" \
      --budget-seconds=${TUNE_BUDGET:-480}
  tail -n 20 "$out/tune.log"
}

step_check_dispatch() {
  run check-dispatch 560 "$build/bench/gpuconvolve-bench" --check-dispatch \
      --tuning-file="$out/tuning.tbl" --csv="$out/check-dispatch.csv"
  tail -n 30 "$out/check-dispatch.log"
}

# 8-bit RGBA filtered from its bytes (uchar4 loaded and widened in
# registers) against unpacked to float4 planes first
step_unpack() {
  run unpack-direct 300 "$build/bench/gpuconvolve-bench" --formats=RGBA \
      --kernels=3,5,9,17 --forms=2d --families=tiled,auto --peers=none \
      --csv="$out/unpack-direct.csv"
  GPUCONVOLVE_CUDA_UNPACK=1 run unpack-float4 300 \
      "$build/bench/gpuconvolve-bench" --formats=RGBA --kernels=3,5,9,17 \
      --forms=2d --families=tiled,auto --peers=none \
      --csv="$out/unpack-float4.csv"
  grep -h "engine:" "$out"/unpack-direct.log "$out"/unpack-float4.log \
      | tee -a "$summary"
}

# Nsight Compute's speed-of-light for the kernels behind the rows that miss
# their targets: which of compute and memory limits each
step_profile() {
  local k
  for k in "3 2d tiled tiled_width" "5 2d tiled tiled_width" \
      "9 2d tiled tiled_width" "9 sep separable stream_kernel|tile_kernel" \
      "31 sep separable stream_kernel|tile_kernel" "31 2d fft fft|pack|multiply"; do
    set -- $k
    run "profile-$1-$2-$3" 300 ncu --section SpeedOfLight \
        --section Occupancy -k "regex:$4" --launch-skip 2 --launch-count 4 \
        $runner "$build/bench/gpuconvolve-bench" --formats=GRAY32F --kernels="$1" \
        --forms="$2" --families="$3" --peers=none --runs=3 --warmup=1 \
        --csv=
    grep -E "^  [a-zA-Z_].*\(|Memory Throughput|Compute \(SM\) Throughput|DRAM Throughput|Duration|Achieved Occupancy|Registers Per" \
        "$out/profile-$1-$2-$3.log" | head -60 >>"$summary"
  done
}

step_soak() {
  run soak 600 "$build/tests/soak" --frames=100000 --backend=cuda \
      --csv="$out/soak.csv"
  tail -n 20 "$out/soak.log"
}

for s in "$@"; do
  fn=step_${s//-/_}
  if ! declare -f "$fn" >/dev/null; then
    echo "unknown step $s" >&2
    exit 2
  fi
  note "== $s"
  $fn
done
echo "== summary" && cat "$summary"
exit $status
