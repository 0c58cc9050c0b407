#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Tests gpuconvolve-batch on this machine with the CPU backend:
#   - what it checks before Ray starts (tests/test_jobs.py, usage errors:
#     properties, presets and the report's path judged before Ray starts);
#   - a Ray cluster of two nodes on loopback addresses, started here: every
#     CSV equals edge-energy run directly on the file, a slot's process
#     killed mid-run has its file retried, a corrupt file fails alone,
#     --resume skips what is done, a --pipeline job with --property;
#   - warm workers: many short files through two slots, each worker started
#     once; a failing file does not take its worker's next file down; a
#     worker killed mid-file is started again and the file retried;
#     --timeout stops the file's pipeline (the worker goes on) or, where the
#     pipeline does not stop, the worker (started again);
#   - inputs and an output folder with names that once rewrote a pipeline
#     (quotes, a backslash, {output}, newlines, tabs, a leading dash,
#     unicode, a byte that is not UTF-8): each file gives its own output and
#     nothing else is written;
#   - outputs and the report never replace an input, whatever links lie
#     between them, also when the link is made during the batch;
#   - SIGTERM during a batch, SIGTERM to the embedded batch's process
#     group, SIGINT while Ray starts, SIGKILL of the driver: exit status, a
#     true report, no process (worker) and no temporary file left behind;
#   - a full output folder (a tmpfs, where mounting works), an input
#     without video, the report's path (a glob expanded or matched), the
#     output folder under the inputs' glob with --resume;
#   - the embedded Ray instance (no --address) on one clip.
# tests/test_worker.py speaks to the built worker directly: write errors,
# inputs without video, a pipeline that never prerolls.
# Installs Ray through install.sh first; where that cannot be done (no
# network), prints SKIP and exits 77. Ends with "batch: N passed, N failed".
#
# GPUCONVOLVE_EDGE_ENERGY: the edge-energy program (default: build/examples/);
# GPUCONVOLVE_BATCH_RUN: gpuconvolve-batch-run (default: build/tools/batch/);
# GPUCONVOLVE_BATCH_VENV: the venv (default tools/batch/.venv);
# KEEP_WORK=1 keeps the clips and outputs and says where.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export GPUCONVOLVE_BATCH_VENV=${GPUCONVOLVE_BATCH_VENV:-$here/.venv}
export GPUCONVOLVE_EDGE_ENERGY=${GPUCONVOLVE_EDGE_ENERGY:-$root/build/examples/edge-energy}
export GPUCONVOLVE_BATCH_RUN=${GPUCONVOLVE_BATCH_RUN:-$root/build/tools/batch/gpuconvolve-batch-run}
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

for program in "$edge_energy" "$GPUCONVOLVE_BATCH_RUN"; do
  if [ ! -x "$program" ]; then
    fail "$program is not built (meson compile -C build)"
    finish
  fi
done
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
    print("   totals:", r["totals"])
    for w in r.get("workers", []):
        print("   worker:", {k: w[k] for k in ("worker", "files", "actors", "starts", "jobs")})
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
# start_batch LOG ARGS...: the tool in the background, in a session of its
# own (whose id is its pid, $bg) and with SIGINT at its default, as a
# terminal runs it (a script's background jobs ignore SIGINT).
start_batch() {
  local log=$1
  shift
  "$venv/bin/python" -c 'import os, signal, sys
os.setsid()
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$batch" "$@" >"$log" 2>&1 </dev/null &
  bg=$!
}
# wait_batch LOG: waits for $bg (killed after 180 s); its status.
wait_batch() {
  local i status
  for ((i = 0; i < 1800; i++)); do
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$bg" 2>/dev/null
  { wait "$bg"; } 2>/dev/null     # (no "Killed" notice: SIGKILL is tested)
  status=$?
  sed 's/^/  | /' "$1"
  return $status
}
# session_left SID: the processes of that session still running
session_left() {
  ps -eo sid=,pid=,stat=,args= | awk -v s="$1" '$1 == s && $3 !~ /^Z/'
}
# nothing_left SID: the session has no process left within 10 s
nothing_left() {
  local i
  for ((i = 0; i < 100; i++)); do
    [ -z "$(session_left "$1")" ] && return 0
    sleep 0.1
  done
  session_left "$1" | sed 's/^/  left: /'
  return 1
}
# until_true COMMAND...: polls COMMAND for up to 60 s
until_true() {
  local i
  for ((i = 0; i < 600; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
has_part() { find "$1" -maxdepth 1 -name '.*.part' 2>/dev/null | grep -q .; }
no_part() { ! has_part "$1"; }
# tree_state DIR: each file under DIR with its size and checksum, a line
# each (the names escaped)
tree_state() {
  "$venv/bin/python" - "$1" <<'EOF'
import hashlib, os, sys
for top, dirs, names in sorted(os.walk(sys.argv[1])):
    for name in sorted(names):
        path = os.path.join(top, name)
        data = open(path, "rb").read()
        print(ascii(path), len(data), hashlib.sha256(data).hexdigest())
EOF
}
# same_state BEFORE DIR: DIR is as tree_state saw it then
same_state() { tree_state "$2" | cmp -s "$1" -; }
# x_wav: what /tmp/x.wav is (the file the injected pipeline wrote)
x_wav() { stat -c '%i %s %Y' /tmp/x.wav 2>/dev/null || echo none; }
# worker_pids: the warm workers running now (only this test starts them)
worker_pids() {
  ps -eo pid=,args= | awk -v c="$GPUCONVOLVE_BATCH_RUN serve" \
    '{ pid = $1; sub(/^ *[0-9]+ /, ""); if ($0 == c) print pid }'
}
# no_worker_left: every worker has ended, within 10 s
no_worker_left() {
  local i
  for ((i = 0; i < 100; i++)); do
    [ -z "$(worker_pids)" ] && return 0
    sleep 0.1
  done
  ps -o pid=,args= -p "$(worker_pids | paste -sd,)" | sed 's/^/  left: /'
  return 1
}

echo "== checks before Ray starts"
check "unit tests of jobs and inputs" \
  "$venv/bin/python" -m unittest discover -q -s "$here/tests"
usage_error() {    # usage_error TEXT ARGS...: exit status 2, TEXT in the message
  local text=$1 status
  shift
  timeout 60 "$batch" "$@" >"$work/usage.log" 2>&1 </dev/null
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
mkfifo "$work/fifo.webm"
check "a FIFO is not a regular file" \
  usage_error "not a regular file: $work/fifo.webm" -o "$work/u" "$work/fifo.webm"
check "/dev/zero is not a regular file" \
  usage_error "not a regular file: /dev/zero" -o "$work/u" /dev/zero
printf '%s\n' "$work/a-file  " >"$work/spaces.list"
check "a list's line is the whole path, spaces and all" \
  usage_error "no such file: '$work/a-file  '" -o "$work/u" -l "$work/spaces.list"
blur='filesrc location={input} ! decodebin ! videoconvert ! gpuconvolve name=blur ! videoconvert ! vp8enc ! webmmux ! filesink location={output}'
copy='filesrc location={input} ! queue ! filesink location={output}'
check "an unknown preset is refused before Ray starts" \
  usage_error "--preset no-such-preset: gpuconvolve has no such preset" \
  -o "$work/u" "$work/a-file" --pipeline "$blur" --preset no-such-preset
check "a bad value is refused before Ray starts" \
  usage_error "--property size=abc: 'abc' is not a value of 'size'" \
  -o "$work/u" "$work/a-file" --pipeline "$blur" --property size=abc
check "a value out of range is refused" \
  usage_error "--property size=99999: value \"99999\"" \
  -o "$work/u" "$work/a-file" --pipeline "$blur" --property size=99999
check "an unknown property is refused, by the element" \
  usage_error "--property no-such=1: GstGpuConvolve has no property 'no-such'" \
  -o "$work/u" "$work/a-file" --pipeline "$blur" --property no-such=1
check "edge-energy's backend is checked by the element" \
  usage_error "--property backend=gpu: 'gpu' is not a value of 'backend'" \
  -o "$work/u" "$work/a-file" --property backend=gpu
check "{input} in caps is refused" \
  usage_error "{input} and {output} may stand only in the value of an element's string property" \
  -o "$work/u" "$work/a-file" --pipeline \
  'filesrc location={input} ! capsfilter caps=video/x-raw,format={input} ! filesink location={output}'
check "--files-per-gpu 0 is refused" \
  usage_error "--files-per-gpu must be 1 or more" -o "$work/u" "$work/a-file" --files-per-gpu 0
check "--files-per-gpu with --gpus-per-task is refused" \
  usage_error "--files-per-gpu and --gpus-per-task say the same thing" -o "$work/u" \
  "$work/a-file" --files-per-gpu 4 --gpus-per-task 0.25
check "--reduce is edge-energy's" \
  usage_error "--reduce is edge-energy's" -o "$work/u" "$work/a-file" --pipeline "$blur" \
  --reduce host
mkdir "$work/a-dir"
check "a --report that is a directory is refused before Ray starts" \
  usage_error "--report $work/a-dir is a directory" -o "$work/u" "$work/a-file" \
  --report "$work/a-dir"
echo precious >"$work/precious.webm"
check "a --report that is an input is refused" \
  usage_error "is the input $work/precious.webm: the report would replace it" \
  -o "$work/u" "$work/a-file" "$work/precious.webm" --report "$work/precious.webm"
check "... and the input is unchanged" grep -qx precious "$work/precious.webm"
mkdir "$work/vids"
echo a >"$work/vids/a.webm" && echo b >"$work/vids/b.webm"
# (unquoted: the shell makes it --report vids/a.webm vids/b.webm)
check "--report dir/*.webm expanded by the shell is refused, naming the file" \
  usage_error "--report $work/vids/a.webm exists and is not a report of gpuconvolve-batch" \
  -o "$work/u" --report "$work"/vids/*.webm
check "... and the file is unchanged" grep -qx a "$work/vids/a.webm"
check "a --report that an input glob matches is refused" \
  usage_error "--report $work/vids/*.webm is matched by the input glob $work/vids/*.webm" \
  -o "$work/u" --report "$work/vids/*.webm" "$work/vids/*.webm"
# An earlier run's output under the inputs' glob: --resume skips it, and
# takes it for no input (no Ray runs: every output exists).
mkdir -p "$work/under/out"
echo clip >"$work/under/clip.webm" && cp "$work/under/clip.webm" "$work/under/out/clip.webm"
timeout 60 "$batch" -o "$work/under/out" --resume "$work/under/**/*.webm" --pipeline "$copy" \
  >"$work/under.log" 2>&1 </dev/null
check "--resume with the output folder under the input glob: exit status 0" [ $? -eq 0 ]
sed 's/^/  | /' "$work/under.log"
check "... the output skipped, and taken for no input" json_check "$work/under/out/report.json" \
  "[(x['input'], x['status']) for x in r['files']] == [('$work/under/clip.webm', 'skipped')]"

echo "== clips"
clips=$work/clips
mkdir -p "$clips"
for pattern in ball smpte snow circular; do
  timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=15 pattern=$pattern \
    ! video/x-raw,width=160,height=120,framerate=30/1 ! vp8enc ! webmmux \
    ! filesink location="$clips/$pattern.webm" </dev/null || fail "making $pattern.webm"
done
# bytes that are no video: typefind fails. (A WebM header followed by
# garbage would make matroskademux fail, but in about one run in thirty it
# waits instead, with no error: the analysis gives such a file 30 s.)
"$venv/bin/python" -c 'import random, sys; random.seed(1); sys.stdout.buffer.write(random.randbytes(20000))' \
  >"$clips/corrupt.webm"
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
  'f["corrupt.webm"]["status"] == "failed" and f["corrupt.webm"]["attempts"] == 3 and "error from typefind" in f["corrupt.webm"]["error"] and r["totals"]["done"] == 4 and r["totals"]["failed"] == 1'
# (which worker runs which file is the workers' pace: one may take them all)
check "a worker on each node, the files on the CPU backend" json_check "$out/report.json" \
  'r["ray"]["nodes"] == 2 and r["totals"]["workers"] == 2 and sorted(w["node"]["ip"] for w in r["workers"]) == ["127.0.0.2", "127.0.0.3"] and {x["node"]["ip"] for x in r["files"]} <= {"127.0.0.2", "127.0.0.3"} and r["ray"]["gpus_per_task"] == 0 and all("on cpu" in a for x in r["files"] if x["status"] == "done" for a in x["algorithms"].values())'
check "frames counted" json_check "$out/report.json" \
  'r["totals"]["frames"] == 60 and all(f[n]["frames"] == 15 for n in f if n != "corrupt.webm")'
check "no temporary file left, no output for the failed file" \
  test -z "$(find "$out" -name '*.part' -o -name 'corrupt.csv')"
check "the summary names each file's node" grep -q "^done  *smpte.webm .*node 127.0.0" "$work/batch1.log"
check "the report and the summary give the files of each node" eval 'json_check "$out/report.json" "sum(n[\"files\"] for n in r[\"nodes\"]) == 5 and all(n[\"files\"] == n[\"done\"] + n[\"failed\"] for n in r[\"nodes\"])" && grep -q "^gpuconvolve-batch: node 127.0.0.[23] (.*): [0-9]* file(s), " "$work/batch1.log"'
check "the summary gives the worker start-ups" grep -q "^gpuconvolve-batch: 2 worker(s), 3 worker start-ups" "$work/batch1.log"
check "the progress line shows the start-up" grep -q "joining $address" "$work/batch1.log"
# two workers, one per node; the killed worker's actor and process started
# again; the corrupt file's three failures restarted nothing
check "a worker process per node, started again only where its actor was killed" \
  json_check "$out/report.json" \
  'r["totals"]["slots"] == 2 and r["totals"]["worker_starts"] == 3 and sorted(w["actors"] for w in r["workers"]) == [1, 2] and all(len(w["starts"]) == w["actors"] for w in r["workers"])'
check "Ray's start-up apart from the files' time" json_check "$out/report.json" \
  'r["ray"]["startup_seconds"] > 0 and 0 < r["totals"]["files_seconds"] < r["totals"]["seconds"] and all(x["ended"] >= x["started"] for x in r["files"] if x["status"] == "done")'
check "no worker left after the batch" no_worker_left
! grep -q "A worker died" "$work/batch1.log" || fail "Ray's notice of the lost worker was shown"

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

echo "== a full output folder"
# A CSV of about 11 KB into a tmpfs of 8 KB: a write fails part of the
# way. (The worker's own check, without a mount: tests/test_worker.py.)
timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=300 ! video/x-raw,width=32,height=24 \
  ! vp8enc ! webmmux ! filesink location="$work/long.webm" </dev/null
mkdir "$work/full"
if mount -t tmpfs -o size=8k tmpfs "$work/full" 2>/dev/null; then
  run_batch "$work/batch-full.log" --address "$address" -o "$work/full" --retries 0 \
    --report "$work/full.json" "$work/long.webm"
  check "exit status 1" [ $? -eq 1 ]
  check "the file failed with the OS's reason" json_check "$work/full.json" \
    'f["long.webm"]["status"] == "failed" and "cannot write the temporary output: No space left on device" in f["long.webm"]["error"]'
  check "... no output and no temporary file" \
    test -z "$(find "$work/full" -name 'long.csv' -o -name '*.part')"
  umount "$work/full"
else
  echo "  (no tmpfs mount here: the worker's own check only)"
fi

echo "== an input without video"
timeout 60 gst-launch-1.0 -q audiotestsrc num-buffers=20 ! audioconvert ! vorbisenc ! webmmux \
  ! filesink location="$work/audio.webm" </dev/null
run_batch "$work/batch-audio.log" --address "$address" -o "$work/out-audio" --retries 0 \
  "$work/audio.webm"
check "exit status 1" [ $? -eq 1 ]
check "the file fails saying it has no video stream" json_check "$work/out-audio/report.json" \
  "f['audio.webm']['error'] == 'edge-energy failed: no video stream in $work/audio.webm'"

echo "== a --pipeline job with --property"
run_batch "$work/batch3.log" --address "$address" -o "$work/video" --property filter=gaussian \
  --property size=5 --property sigma=2 --property planes=all "$clips/ball.webm" --pipeline "$blur"
check "exit status 0" [ $? -eq 0 ]
check "the filtered video decodes to 15 frames" \
  test "$("$edge_energy" "$work/video/ball.webm" 2>/dev/null | tail -n +2 | wc -l)" -eq 15
# (videoconvert passes the decoder's I420 on: with planes=all, U and V
# filtered too)
check "the element ran separable on the CPU, on every plane" json_check "$work/video/report.json" \
  'f["ball.webm"]["algorithms"]["blur"].startswith("separable; U and V: separable") and " on cpu" in f["ball.webm"]["algorithms"]["blur"]'

echo "== names that once rewrote the pipeline"
# First the batch as it was reported: a clip under a folder whose name
# made a plain glob's batch write /tmp/x.wav and report success.
inject='a" ! fakesink  audiotestsrc num-buffers=1 ! wavenc ! filesink location=/tmp/x.wav  videotestsrc pattern=red num-buffers=3 ! video/x-raw,width=64,height=48 ! identity name="b'
mkdir -p "$work/injected/$inject"
cp "$clips/ball.webm" "$work/injected/$inject/clip.webm"
wav_before=$(x_wav)
run_batch "$work/batch5a.log" --address "$address" -o "$work/injected-out" \
  "$work/injected/**/*.webm" --pipeline "$blur"
check "the folder's clip: exit status 0" [ $? -eq 0 ]
check "... /tmp/x.wav was not written" [ "$(x_wav)" = "$wav_before" ]
check "... the clip's filtered video was" \
  test "$("$edge_energy" "$work/injected-out/clip.webm" 2>/dev/null | tail -n +2 | wc -l)" -eq 15
# Then inputs, and an output folder, named with all that a description
# would read as syntax, that folder among them. Each file must give its
# own output and nothing else may be written. (The edge-energy job also
# reads a list whose line ends with spaces.)
hostile=$work/hostile
mkdir -p "$hostile/$inject" "$hostile/"$'dir "\\ {input}\n\t-\xff'
for name in 'q"uote' 'back\slash' '{output}' '{input}' $'new\nline' $'t\tab' '-dash' 'ünï' \
            $'by\xffte' "$inject/clip" $'dir "\\ {input}\n\t-\xff/inner'; do
  cp "$clips/ball.webm" "$hostile/$name.webm"
done
cp "$clips/snow.webm" "$hostile/trailing  "          # listed, spaces and all
printf '%s\n' "$hostile/trailing  " >"$work/hostile.list"
n_hostile=11
tree_state "$hostile" >"$work/hostile.before"
hostile_out=$work/$'out "\\ {output}\n\t-ü\xff'
run_batch "$work/batch5.log" --address "$address" -o "$hostile_out/video" \
  "$hostile/**/*.webm" --pipeline "$blur"
check "pipeline job: exit status 0" [ $? -eq 0 ]
check "/tmp/x.wav was not written" [ "$(x_wav)" = "$wav_before" ]
run_batch "$work/batch6.log" --address "$address" -o "$hostile_out/csv" \
  "$hostile/**/*.webm" -l "$work/hostile.list"
check "edge-energy job: exit status 0" [ $? -eq 0 ]
check "the inputs and their folders are unchanged" same_state "$work/hostile.before" "$hostile"
# each output is its input's, in the output folder, and nothing else is
outputs_ok() {
  "$venv/bin/python" - "$1" "$2" "$3" "$edge_energy" <<'EOF'
import json, os, subprocess, sys
out, kind, count, edge_energy = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
r = json.load(open(os.path.join(out, "report.json")))
ok = r["totals"]["done"] == count == len(r["files"])
names = {"report.json"}
for f in r["files"]:
    name = os.path.basename(f["input"])
    if kind == "csv":
        name = os.path.splitext(name)[0] + ".csv"
    names.add(name)
    if f["status"] != "done" or f["output"] != os.path.join(out, name):
        print("  not done or elsewhere:", ascii(f["input"]), f["status"], ascii(f["output"]))
        ok = False
        continue
    produced = open(f["output"], "rb").read()
    if kind == "csv":       # as edge-energy writes it for the input
        good = produced == subprocess.run([edge_energy, f["input"]], capture_output=True).stdout
    else:                   # a video of 15 frames
        csv = subprocess.run([edge_energy, f["output"]], capture_output=True).stdout
        good = csv.count(b"\n") == 16
    if not good:
        print("  wrong output:", ascii(f["output"]))
        ok = False
if set(os.listdir(out)) != names:
    print("  other files:", ascii(sorted(set(os.listdir(out)) ^ names)))
    ok = False
sys.exit(not ok)
EOF
}
check "pipeline job: each input's filtered video, and nothing else" \
  outputs_ok "$hostile_out/video" video $n_hostile
check "edge-energy job: each input's CSV, and nothing else" \
  outputs_ok "$hostile_out/csv" csv $((n_hostile + 1))
# (a worker that Ray places late may find the files done by the other)
check "12 short files through two workers: each started once, then warm" \
  json_check "$hostile_out/csv/report.json" \
  'r["totals"]["slots"] == 2 and r["totals"]["worker_starts"] == 2 and all(len(w["starts"]) == 1 and w["actors"] == 1 for w in r["workers"]) and sum(x["worker"]["warm"] for x in r["files"]) == 12 - len({x["worker"]["pid"] for x in r["files"]}) and {x["worker"]["pid"] for x in r["files"]} <= {w["starts"][0]["pid"] for w in r["workers"]}'

echo "== a worker killed mid-file"
killed=$work/out-killed
start_batch "$work/batch13.log" --address "$address" -o "$killed" --retries 1 \
  "$clips/ball.webm" --pipeline "$copy videotestsrc num-buffers=60 ! fakesink sync=true"
until_true has_part "$killed"
victim=$(worker_pids)
[ -n "$victim" ] && kill -KILL $victim
wait_batch "$work/batch13.log"
check "exit status 0" [ $? -eq 0 ]
check "the file was retried and done, by a worker process started again" \
  json_check "$killed/report.json" \
  'f["ball.webm"]["status"] == "done" and f["ball.webm"]["attempts"] == 2 and "killed by signal SIGKILL" in f["ball.webm"]["failed_attempts"][0]["error"] and [(w["actors"], len(w["starts"])) for w in r["workers"]] == [(1, 2)]'
check "... its output whole" cmp -s "$clips/ball.webm" "$killed/ball.webm"
check "... no temporary file, no worker left" eval 'no_part "$killed" && no_worker_left'

echo "== files side by side in one worker process; the process killed under them"
# --cpus-per-task 0.25: four files at once in each node's worker. With
# --retries 0: the attempts that a lost process ended under several files
# do not count; each runs again alone.
side=$work/side
mkdir -p "$side"
for i in 1 2 3 4 5 6; do cp "$clips/ball.webm" "$side/f$i.webm"; done
start_batch "$work/batch16.log" --address "$address" -o "$work/out-side" --retries 0 \
  --cpus-per-task 0.25 "$side"/*.webm \
  --pipeline "$copy videotestsrc num-buffers=40 ! fakesink sync=true"
until_true eval '[ "$(find "$work/out-side" -maxdepth 1 -name ".*.part" 2>/dev/null | wc -l)" -ge 6 ]'
victim=$(worker_pids | head -n 1)
sleep 0.3
[ -n "$victim" ] && kill -KILL $victim
wait_batch "$work/batch16.log"
check "exit status 0" [ $? -eq 0 ]
check "two workers of four files, one process each at first" json_check "$work/out-side/report.json" \
  'r["totals"]["workers"] == 2 and r["totals"]["slots"] == 8 and all(w["files"] == 4 and w["actors"] == 1 for w in r["workers"]) and r["totals"]["worker_starts"] == 3'
check "files side by side in one process" json_check "$work/out-side/report.json" \
  'any(a["worker"]["pid"] == b["worker"]["pid"] and a["started"] < b["ended"] and b["started"] < a["ended"] for a in r["files"] for b in r["files"] if a is not b and a["status"] == b["status"] == "done")'
check "the files of the killed process: retried, uncounted, and done" json_check "$work/out-side/report.json" \
  'len([x for x in r["files"] if x["failed_attempts"] and not x["failed_attempts"][0]["counted"]]) >= 2 and all(x["status"] == "done" and open(x["output"], "rb").read() == open(x["input"], "rb").read() for x in r["files"])'
check "... no temporary file, no worker left" eval 'no_part "$work/out-side" && no_worker_left'

echo "== --timeout, and a file that fails mid-way"
# Each file's pipeline reads it at 10 frames a second (6 s for long.webm,
# 1 s for the others) and, beside it, NAME.side at 5 buffers a second with
# an identity that fails at its fifth: NAME.side is empty, but for
# midway.webm (which fails a second in), and a FIFO for hang.webm, which
# blocks there, past any time limit the job could check.
timed=$work/timed
mkdir -p "$timed"
timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=60 ! video/x-raw,width=64,height=48 \
  ! vp8enc ! webmmux ! filesink location="$timed/long.webm" </dev/null
timeout 60 gst-launch-1.0 -q videotestsrc num-buffers=10 ! video/x-raw,width=64,height=48 \
  ! vp8enc ! webmmux ! filesink location="$timed/hang.webm" </dev/null
for name in midway short1 short2 short3 short4 short5 short6 short7 short8 short9; do
  cp "$timed/hang.webm" "$timed/$name.webm"
done
for f in "$timed"/*.webm; do : >"$f.side"; done
head -c 100000 /dev/zero >"$timed/midway.webm.side"
rm "$timed/hang.webm.side" && mkfifo "$timed/hang.webm.side"
slow_read="$copy filesrc location={input} ! matroskademux ! identity sleep-time=100000 ! fakesink
  filesrc location={input}.side ! identity sleep-time=200000 error-after=5 ! fakesink"
run_batch "$work/batch14.log" --address "$address" -o "$work/out-timed" --retries 0 --timeout 2 \
  "$timed/long.webm" "$timed/hang.webm" "$timed/midway.webm" "$timed"/short?.webm \
  --pipeline "$slow_read"
check "exit status 1 (three files failed)" [ $? -eq 1 ]
# done_by: the workers (their pids) that ran files that were done
done_by='{x["worker"]["pid"] for x in r["files"] if x["status"] == "done"}'
check "a pipeline past --timeout is stopped; its worker runs the next files" \
  json_check "$work/out-timed/report.json" \
  "\"ran past --timeout 2 s (stopped; its worker goes on)\" in f['long.webm']['error'] and f['long.webm']['failed_attempts'][0]['pid'] in $done_by"
check "a file that fails mid-way: its worker runs the next files" \
  json_check "$work/out-timed/report.json" \
  "'error from identity' in f['midway.webm']['error'] and f['midway.webm']['failed_attempts'][0]['pid'] in $done_by"
check "a pipeline that does not stop: its worker is killed, and started again" \
  json_check "$work/out-timed/report.json" \
  '"did not stop at --timeout 2 s" in f["hang.webm"]["error"] and r["totals"]["worker_starts"] == 3 and all(f[f"short{i}.webm"]["status"] == "done" for i in range(1, 10))'
check "... no temporary file, no worker left" eval 'no_part "$work/out-timed" && no_worker_left'

echo "== outputs never replace an input"
mkdir "$work/in"
cp "$clips/ball.webm" "$work/in/a.webm"
tree_state "$work/in" >"$work/in.before"
ln -s in "$work/out-link"
check "an output folder that links to the inputs' is refused" \
  usage_error "is the input $work/in/a.webm (the same file" \
  -o "$work/out-link" "$work/in/a.webm" --pipeline "$copy"
mkdir "$work/out-hard"
ln "$work/in/a.webm" "$work/out-hard/a.webm"
check "an output that is a hard link to its input is refused, with --resume too" \
  usage_error "is the input $work/in/a.webm (the same file" \
  -o "$work/out-hard" "$work/in/a.webm" --pipeline "$copy" --resume
mkdir "$work/out-bind"
if mount --bind "$work/in" "$work/out-bind" 2>/dev/null; then
  check "an output folder that is the inputs' through a bind mount is refused" \
    usage_error "is the input $work/in/a.webm (the same file" \
    -o "$work/out-bind" "$work/in/a.webm" --pipeline "$copy"
  umount "$work/out-bind"
else
  echo "  (no bind mount here: not tested through one)"
fi
# The output becomes the input while the file runs: the worker checks
# again right before it renames its result into place.
rm -rf "$work/out-late"
start_batch "$work/batch7.log" --address "$address" -o "$work/out-late" --retries 0 \
  "$work/in/a.webm" --pipeline "$copy videotestsrc num-buffers=90 ! fakesink sync=true"
until_true has_part "$work/out-late"
ln "$work/in/a.webm" "$work/out-late/a.webm"
wait_batch "$work/batch7.log"
check "a link made during the batch: the file fails (exit status 1)" [ $? -eq 1 ]
check "... saying so" json_check "$work/out-late/report.json" \
  '"is now the input" in f["a.webm"]["error"]'
check "... and the inputs are unchanged" same_state "$work/in.before" "$work/in"
check "... and no temporary file is left" no_part "$work/out-late"

echo "== a report that cannot be written at the end"
start_batch "$work/batch8.log" --address "$address" -o "$work/out-report" \
  "$clips/ball.webm" --pipeline "$copy videotestsrc num-buffers=60 ! fakesink sync=true"
until_true has_part "$work/out-report"
mkdir "$work/out-report/report.json"
wait_batch "$work/batch8.log"
check "exit status 1" [ $? -eq 1 ]
check "... with the output done" cmp -s "$clips/ball.webm" "$work/out-report/ball.webm"
check "... a message, no traceback" \
  grep -q "cannot write the report $work/out-report/report.json" "$work/batch8.log"
check "... and the summary" grep -q "^gpuconvolve-batch: 1 file: 1 done.*; no report" \
  "$work/batch8.log"
! grep -q Traceback "$work/batch8.log" || fail "a traceback"

echo "== SIGTERM during a batch on the cluster"
slow="$copy videotestsrc num-buffers=100000 ! fakesink sync=true"
start_batch "$work/batch9.log" --address "$address" -o "$work/out-term" \
  "$clips/ball.webm" "$clips/smpte.webm" "$clips/snow.webm" --pipeline "$slow"
until_true has_part "$work/out-term"
kill -TERM "$bg"
wait_batch "$work/batch9.log"
check "exit status 143" [ $? -eq 143 ]
check "a short message" grep -q "^gpuconvolve-batch: SIGTERM: stopping" "$work/batch9.log"
check "the report: every file cancelled" json_check "$work/out-term/report.json" \
  'r["totals"]["cancelled"] == 3 and all(x["status"] == "cancelled" for x in r["files"])'
check "no temporary file left" no_part "$work/out-term"
check "no worker left running" no_worker_left
! grep -q Traceback "$work/batch9.log" || fail "a traceback"

echo "== the embedded Ray instance (no --address)"
timeout 60 "$venv/bin/ray" stop --force >/dev/null 2>&1
cluster_started=0
run_batch "$work/batch4.log" -o "$work/local" "$clips/circular.webm"
check "exit status 0" [ $? -eq 0 ]
check "the CSV equals edge-energy's" same_csv "$work/local" "$clips/circular.webm"
check "the report says embedded" json_check "$work/local/report.json" \
  'r["ray"]["address"] == "embedded" and r["totals"]["done"] == 1'
check "no worker left" no_worker_left

echo "== SIGTERM to the batch's process group (the embedded Ray instance)"
# as a scheduler sends it: to every process of the group, which Ray's own
# processes are not in
start_batch "$work/batch15.log" -o "$work/out-group" "$clips/ball.webm" "$clips/smpte.webm" \
  --pipeline "$copy videotestsrc num-buffers=150 ! fakesink sync=true"
until_true has_part "$work/out-group"
kill -TERM -- "-$bg"
wait_batch "$work/batch15.log"
check "exit status 143" [ $? -eq 143 ]
# each file done exactly where its output exists, the others cancelled
check "the report says the truth for every file" json_check "$work/out-group/report.json" \
  'r["totals"]["cancelled"] >= 1 and all(x["status"] in ("done", "cancelled") and (x["status"] == "done") == os.path.exists(x["output"]) for x in r["files"])'
check "no temporary file left" no_part "$work/out-group"
check "no Ray process left" nothing_left "$bg"
! grep -q Traceback "$work/batch15.log" || fail "a traceback"

echo "== Ctrl-C while Ray starts"
start_batch "$work/batch10.log" -o "$work/out-int" "$clips/ball.webm" "$clips/snow.webm"
# as a terminal's Ctrl-C: SIGINT to the whole process group, once Ray's
# first process is up
until_true eval 'session_left "$bg" | grep -q gcs_server'
kill -INT -- "-$bg"
wait_batch "$work/batch10.log"
check "exit status 130" [ $? -eq 130 ]
check "a short message" grep -q "^gpuconvolve-batch: SIGINT: stopping" "$work/batch10.log"
check "the report: every file cancelled" json_check "$work/out-int/report.json" \
  'r["totals"]["cancelled"] == 2 and not r["totals"]["done"]'
check "no Ray process left" nothing_left "$bg"
! grep -q Traceback "$work/batch10.log" || fail "a traceback"

echo "== SIGKILL of the driver, then the same batch again"
start_batch "$work/batch11.log" -o "$work/out-kill" "$clips/ball.webm" --pipeline "$slow"
until_true has_part "$work/out-kill"
# the driver and its slot's process at once, as when the machine goes
# down: nothing gets to remove the temporary file (a slot that Ray stops
# gracefully removes its own)
slot_pid=
for pid in $(worker_pids); do
  [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$bg" ] && slot_pid=$(ps -o ppid= -p "$pid" | tr -d ' ')
done
[ -n "$slot_pid" ] || fail "found the batch's worker and its slot"
kill -KILL "$bg" ${slot_pid:+"$slot_pid"}
wait_batch "$work/batch11.log"
check "the worker died with its slot" no_worker_left
check "its temporary file is left" has_part "$work/out-kill"
run_batch "$work/batch12.log" -o "$work/out-kill" "$clips/ball.webm" --resume --pipeline "$copy"
check "the next run: exit status 0" [ $? -eq 0 ]
check "... it removed the temporary file" no_part "$work/out-kill"
check "... saying so" grep -q "removed 1 temporary output" "$work/batch12.log"
check "... and did the file" cmp -s "$clips/ball.webm" "$work/out-kill/ball.webm"

finish
