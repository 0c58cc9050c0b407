#!/usr/bin/env bash
# Tests gpuconvolve-batch on this machine with the CPU backend:
#   - what it checks before Ray starts (tests/test_jobs.py, usage errors);
#   - a Ray cluster of two nodes on loopback addresses, started here: every
#     CSV equals edge-energy run directly on the file, a worker killed
#     mid-run has its file retried, a corrupt file fails alone, --resume
#     skips what is done, a --pipeline job with --property;
#   - the embedded Ray instance (no --address) on one clip.
# Installs Ray through install.sh first; where that cannot be done (no
# network), prints SKIP and exits 77. Ends with "batch: N passed, N failed".
#
# GPUCONVOLVE_EDGE_ENERGY: the edge-energy program (default: build/examples/);
# GPUCONVOLVE_BATCH_VENV: the venv (default tools/batch/.venv);
# KEEP_WORK=1 keeps the clips and outputs and says where.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GPUCONVOLVE_BATCH_VENV=${GPUCONVOLVE_BATCH_VENV:-$here/.venv}
export GPUCONVOLVE_EDGE_ENERGY=${GPUCONVOLVE_EDGE_ENERGY:-$root/build/examples/edge-energy}
venv=$GPUCONVOLVE_BATCH_VENV
batch=$here/gpuconvolve-batch
edge_energy=$GPUCONVOLVE_EDGE_ENERGY

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuconvolve-batch-test.XXXXXX")
cluster_started=0
cleanup() {
  if [ "$cluster_started" = 1 ]; then
    timeout 60 "$venv/bin/ray" stop --force >/dev/null 2>&1
  fi
  if [ "${KEEP_WORK:-}" = 1 ]; then
    echo "kept $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Ray: a venv of its own; without network there is nothing to test.
if ! timeout 600 "$here/install.sh" "$venv" >"$work/install.log" 2>&1 </dev/null; then
  sed 's/^/  install: /' "$work/install.log" | tail -n 5
  echo "SKIP: Ray could not be installed into $venv (no network?); gpuconvolve-batch not tested"
  exit 77
fi

passed=0
failed=0
pass() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
check() {
  local name=$1
  shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}
finish() {
  echo "batch: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

if [ ! -x "$edge_energy" ]; then
  fail "edge-energy is not built at $edge_energy (meson compile -C build)"
  finish
fi
# Uninstalled, as meson test and meson devenv do.
if [ -z "${GST_PLUGIN_PATH:-}${GST_PLUGIN_PATH_1_0:-}" ]; then
  export GST_PLUGIN_PATH=$root/build/gst GST_PRESET_PATH=$root/presets
fi
# No network here, and nothing of this test's Ray outside it: usage stats
# off, token authentication with a token of its own for every node and
# driver, and no cluster address from the caller.
unset RAY_ADDRESS
export RAY_USAGE_STATS_ENABLED=0 RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH=$work/auth_token
"$venv/bin/python" -c 'import secrets; print(secrets.token_hex(32))' >"$RAY_AUTH_TOKEN_PATH"

# json_check REPORT EXPR: EXPR (Python, with r the report and f the files by
# name) is true; prints the report's files when not.
json_check() {
  "$venv/bin/python" - "$1" "$2" <<'EOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
f = {os.path.basename(x["input"]): x for x in r["files"]}
if not eval(sys.argv[2]):
    for x in r["files"]:
        print("  ", {k: x[k] for k in ("input", "status", "attempts", "node", "error")})
    sys.exit(1)
EOF
}
# same_csv OUT_DIR CLIP...: each CSV equals edge-energy run on the clip here.
same_csv() {
  local out=$1 clip name
  shift
  for clip in "$@"; do
    name=$(basename "$clip" .webm)
    "$edge_energy" "$clip" >"$work/direct-$name.csv" 2>/dev/null || return 1
    cmp "$work/direct-$name.csv" "$out/$name.csv" || return 1
  done
}
# run_batch LOG ARGS...: the tool, bounded in time; its status is returned.
run_batch() {
  local log=$1
  shift
  timeout 180 "$batch" "$@" >"$log" 2>&1 </dev/null
  local status=$?
  sed 's/^/  | /' "$log"
  return $status
}

echo "== checks before Ray starts"
check "unit tests of jobs and inputs" \
  "$venv/bin/python" -m unittest discover -q -s "$here/tests"
usage_error() {    # usage_error TEXT ARGS...: exit status 2, TEXT in the message
  local text=$1 status
  shift
  "$batch" "$@" >"$work/usage.log" 2>&1 </dev/null
  status=$?
  sed 's/^/  | /' "$work/usage.log"
  [ "$status" -eq 2 ] && grep -qF -- "$text" "$work/usage.log"
}
touch "$work/a-file"
check "a missing file is named" usage_error "nosuch.webm" -o "$work/u" "$work/nosuch.webm"
check "an empty glob is named" usage_error "$work/none/*.webm" -o "$work/u" "$work/none/*.webm"
check "an output dir that cannot be made is named" \
  usage_error "$work/a-file/out" -o "$work/a-file/out" "$work/a-file"
check "an address where no cluster answers is named" \
  usage_error "127.0.0.2:1" --address 127.0.0.2:1 -o "$work/u" "$work/a-file"
if [ "$(id -u)" -ne 0 ]; then         # root writes anywhere
  mkdir "$work/read-only" && chmod 555 "$work/read-only"
  check "an unwritable output dir is named" \
    usage_error "$work/read-only" -o "$work/read-only" "$work/a-file"
fi

echo "== clips"
clips=$work/clips
mkdir -p "$clips"
for pattern in ball smpte snow circular; do
  timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=15 pattern=$pattern \
    ! video/x-raw,width=160,height=120,framerate=30/1 ! vp8enc ! webmmux \
    ! filesink location="$clips/$pattern.webm" </dev/null || fail "making $pattern.webm"
done
# a WebM header, then no video: the demuxer fails
{ head -c 200 "$clips/ball.webm"; yes corrupt | head -c 20000; } >"$clips/corrupt.webm"
good=("$clips/ball.webm" "$clips/smpte.webm" "$clips/snow.webm" "$clips/circular.webm")
ls -l "$clips" | sed 's/^/  /'

echo "== a Ray cluster of two nodes on 127.0.0.2 and 127.0.0.3"
# Ray turns 127.0.0.1 into the machine's outside address; other loopback
# addresses it keeps. (Ray 2.60's gRPC servers listen on every interface
# whatever the node address; the nodes and the driver talk over loopback.)
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0)); print(s.getsockname()[1])')
cluster_started=1
if ! timeout 90 "$venv/bin/ray" start --head --node-ip-address=127.0.0.2 --port="$port" \
      --num-cpus=1 --num-gpus=0 --include-dashboard=false --disable-usage-stats \
      >"$work/head.log" 2>&1 </dev/null \
   || ! timeout 90 "$venv/bin/ray" start --address="127.0.0.2:$port" \
      --node-ip-address=127.0.0.3 --num-cpus=1 --num-gpus=0 --disable-usage-stats \
      >"$work/worker.log" 2>&1 </dev/null; then
  tail -n 20 "$work/head.log" "$work/worker.log" | sed 's/^/  | /'
  fail "starting the Ray cluster"
  finish
fi
pass "two Ray nodes started"
address=127.0.0.2:$port

echo "== a batch on the cluster; a worker killed on smpte.webm; corrupt.webm"
out=$work/out
GPUCONVOLVE_BATCH_TEST_KILL=smpte.webm \
  run_batch "$work/batch1.log" --address "$address" -o "$out" "$clips/*.webm"
status=$?
check "exit status 1 (one file failed)" [ "$status" -eq 1 ]
check "every CSV equals edge-energy run directly" same_csv "$out" "${good[@]}"
check "the killed worker's file was retried and completed" json_check "$out/report.json" \
  'f["smpte.webm"]["status"] == "done" and f["smpte.webm"]["attempts"] == 2 and "lost" in f["smpte.webm"]["failed_attempts"][0]["error"]'
check "the corrupt file failed alone, its error in the report" json_check "$out/report.json" \
  'f["corrupt.webm"]["status"] == "failed" and f["corrupt.webm"]["attempts"] == 3 and "matroskademux" in f["corrupt.webm"]["error"] and r["totals"]["done"] == 4 and r["totals"]["failed"] == 1'
check "both nodes ran files, on the CPU backend" json_check "$out/report.json" \
  'r["ray"]["nodes"] == 2 and {x["node"]["ip"] for x in r["files"]} == {"127.0.0.2", "127.0.0.3"} and r["ray"]["gpus_per_task"] == 0 and all("on cpu" in a for x in r["files"] if x["status"] == "done" for a in x["algorithms"].values())'
check "frames counted" json_check "$out/report.json" \
  'r["totals"]["frames"] == 60 and all(f[n]["frames"] == 15 for n in f if n != "corrupt.webm")'
check "no temporary file left, no output for the failed file" \
  test -z "$(find "$out" -name '*.part' -o -name 'corrupt.csv')"
check "the summary names each file's node" grep -q "^done  *smpte.webm .*node 127.0.0" "$work/batch1.log"

echo "== --resume"
touch -d '2001-01-01' "$out/ball.csv" "$out/snow.csv" "$out/circular.csv"
rm "$out/smpte.csv"
run_batch "$work/batch2.log" --address "$address" -o "$out" --resume "${good[@]}"
check "exit status 0" [ $? -eq 0 ]
check "only the missing output was made again" json_check "$out/report.json" \
  'r["totals"]["done"] == 1 and r["totals"]["skipped"] == 3 and f["smpte.webm"]["status"] == "done"'
check "the complete outputs were not touched" \
  test -z "$(find "$out" -name '*.csv' -newermt '2002-01-01' ! -name smpte.csv)"
check "the new CSV equals edge-energy's" same_csv "$out" "$clips/smpte.webm"

echo "== a --pipeline job with --property"
run_batch "$work/batch3.log" --address "$address" -o "$work/video" --property filter=gaussian \
  --property size=5 --property sigma=2 "$clips/ball.webm" --pipeline \
  'filesrc location={input} ! decodebin ! videoconvert ! gpuconvolve name=blur ! videoconvert ! vp8enc ! webmmux ! filesink location={output}'
check "exit status 0" [ $? -eq 0 ]
check "the filtered video decodes to 15 frames" \
  test "$("$edge_energy" "$work/video/ball.webm" 2>/dev/null | tail -n +2 | wc -l)" -eq 15
# (videoconvert passes the decoder's I420 on: Y filtered, U and V copied)
check "the element ran separable on the CPU" json_check "$work/video/report.json" \
  'f["ball.webm"]["algorithms"]["blur"].startswith("separable") and " on cpu" in f["ball.webm"]["algorithms"]["blur"]'

echo "== the embedded Ray instance (no --address)"
timeout 60 "$venv/bin/ray" stop --force >/dev/null 2>&1
cluster_started=0
run_batch "$work/batch4.log" -o "$work/local" "$clips/circular.webm"
check "exit status 0" [ $? -eq 0 ]
check "the CSV equals edge-energy's" same_csv "$work/local" "$clips/circular.webm"
check "the report says embedded" json_check "$work/local/report.json" \
  'r["ray"]["address"] == "embedded" and r["totals"]["done"] == 1'

finish
