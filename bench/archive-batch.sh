#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Archive analysis at decode speed: the GPUs' video decoders against
# gpuconvolve-batch on the same files, on a host with NVIDIA GPUs
# (docs/batch.md, "Choosing --files-per-gpu").
#
#   bench/archive-batch.sh [-b BUILD] [-o OUT]
#
# It makes CLIPS distinct 1080p H.264 clips of FRAMES frames with x264enc
# (kept in CLIP_DIR) and links each under NAMES names: CLIPS x NAMES inputs
# (default 4 x 4 = 16). Then, in frames/s over all the inputs:
#   (a) the decoders' capacity: one gst-launch-1.0 per GPU, each decoding
#       its share of the inputs in parallel branches (16 inputs on two
#       GPUs: 8 branches each) of filesrc ! qtdemux ! h264parse ! nvh264dec
#       ! video/x-raw(memory:CUDAMemory) ! fakesink, PLAYING to EOS
#   (b) gpuconvolve-batch --pipeline with that decode-only branch (and the
#       {output} it must write): what the batch itself costs
#   (c) gpuconvolve-batch with its default job (edge-energy on gpuconvolve's
#       statistics) and default options
#   sweep: (c) at each --files-per-gpu of SWEEP (the default's is (c))
# A batch's frames/s count from its first file's start to its last file's
# end (the report's files_seconds); Ray's start-up and the workers' are
# shown apart, and (c) also from the command's start to its exit. Each
# batch runs with a Ray instance of its own, as a user's would. The table
# at the end gives (b)/(a), (c)/(a) and (c)/(b), (c)'s command time against
# its files' time, and the worker start-ups (one a GPU), against their
# targets, and the sweep's frames/s per files per GPU.
#
# Environment:
#   FRAMES      frames a clip (default 9000)
#   CLIPS       distinct clips (default 4), NAMES names each (default 4)
#   PATTERNS    videotestsrc patterns of the clips (default smpte ball
#               pinwheel gamut), scrolling
#   BITRATE     x264enc kbit/s (default 8000)
#   SWEEP       files per GPU to try besides (c)'s (default "12 6 4 2 1")
#   STEPS       which of a b c sweep to run (default all)
#   CLIP_DIR    where the clips are kept (default $TMPDIR/gpuconvolve-archive)
#   STEP_TIMEOUT  seconds one measurement may take (default 300)
#   CUDA_VISIBLE_DEVICES  the GPUs to use (default all)
# On the GPU host (scripts/gpu-host.sh's layout): GStreamer from
# .gpuhost/env.sh, Ray from .gpuhost-ray/env.sh (or tools/batch/.venv), the
# plugin and gpuconvolve-batch-run from BUILD (default build-gpu). Exit
# status 0 when every measurement ran (a missed target is a measurement,
# not a failure), 1 otherwise.
set -uo pipefail

build=build-gpu
out=${OUT:-out}/archive-batch
while getopts "b:o:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    o) out=$OPTARG/archive-batch ;;
    *) exit 2 ;;
  esac
done
root=$(pwd)
frames=${FRAMES:-9000}
n_clips=${CLIPS:-4}
n_names=${NAMES:-4}
patterns=(${PATTERNS:-smpte ball pinwheel gamut})
bitrate=${BITRATE:-8000}
sweep=${SWEEP:-12 6 4 2 1}
steps=" ${STEPS:-a b c sweep} "
clip_dir=${CLIP_DIR:-${TMPDIR:-/tmp}/gpuconvolve-archive}
step_timeout=${STEP_TIMEOUT:-300}
status=0

die() { echo "archive-batch: $*" >&2; exit 1; }

# ---- the environment, as scripts/gpu-host.sh sets it ---------------------
[ -f .gpuhost/env.sh ] && . .gpuhost/env.sh
# Ray: the venv of tools/batch/install.sh where there is one, else the
# GPU host's copy (for its own python3)
if [ ! -x tools/batch/.venv/bin/python ] && [ -f .gpuhost-ray/env.sh ]; then
  . .gpuhost-ray/env.sh
fi
if [ ! -d "$build" ] && [ -f "$build.tar.xz" ]; then
  tar -C "$(dirname "$build")" -xJf "$build.tar.xz" || exit 1
fi
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export GST_PLUGIN_PATH_1_0=$root/$build/gst GST_PLUGIN_PATH=$root/$build/gst
export GST_REGISTRY_1_0=${TMPDIR:-/tmp}/gpuconvolve-registry.bin
export GST_PRESET_PATH=$root/presets GPUCONVOLVE_TUNING_PATH=$root/presets/tuning
export GPUCONVOLVE_BATCH_RUN=$root/$build/tools/batch/gpuconvolve-batch-run
export RAY_USAGE_STATS_ENABLED=0
unset RAY_ADDRESS
[ -x "$GPUCONVOLVE_BATCH_RUN" ] || die "no $GPUCONVOLVE_BATCH_RUN: build the project in $build"
if [ -x tools/batch/.venv/bin/python ]; then
  batch=(tools/batch/gpuconvolve-batch)
  python=tools/batch/.venv/bin/python
else
  export PYTHONPATH=$root/tools/batch${PYTHONPATH:+:$PYTHONPATH}
  batch=(python3 -m gpuconvolve_batch)
  python=python3
fi
"$python" -c 'import ray' 2>/dev/null || die "no Ray for $python (.gpuhost-ray/env.sh, or tools/batch/install.sh)"
for e in videotestsrc x264enc h264parse mp4mux qtdemux nvh264dec fakesink gpuconvolve; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || die "GStreamer element $e is missing"
done
# CUDA_VISIBLE_DEVICES narrows the run to those GPUs (Ray honours it too)
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  IFS=, read -r -a devices <<<"$CUDA_VISIBLE_DEVICES"
else
  mapfile -t devices < <(seq 0 $(( $(nvidia-smi -L 2>/dev/null | grep -c '^GPU') - 1 )))
fi
gpus=${#devices[@]}
[ "$gpus" -ge 1 ] || die "no GPU (nvidia-smi -L)"
mkdir -p "$out" "$clip_dir"
echo "archive-batch: $gpus GPU(s) (${devices[*]}): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"

# ---- the inputs -----------------------------------------------------------
# make_clip PATTERN: the clip's path, encoded once (as bench/pipelines-gpu.sh
# makes its clips: ultrafast + zerolatency, a key frame every 2 s, a
# scrolling picture)
make_clip() {
  local file=$clip_dir/$1-1920x1080-${frames}f-${bitrate}k.mp4
  if [ ! -s "$file" ]; then
    timeout 900 gst-launch-1.0 -q videotestsrc num-buffers="$frames" pattern="$1" \
        horizontal-speed=4 ! "video/x-raw,format=I420,width=1920,height=1080,framerate=30/1" \
      ! x264enc speed-preset=ultrafast tune=zerolatency bitrate="$bitrate" key-int-max=60 \
      ! h264parse ! mp4mux ! filesink location="$file.part" >"$file.log" 2>&1 \
      && mv -f "$file.part" "$file" || { cat "$file.log" >&2; return 1; }
  fi
  echo "$file"
}
t0=$SECONDS
pids=()
for ((c = 0; c < n_clips; c++)); do
  make_clip "${patterns[c % ${#patterns[@]}]}" >/dev/null &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || die "could not make the clips"; done
inputs_dir=$out/inputs
rm -rf "$inputs_dir" && mkdir -p "$inputs_dir"
inputs=()
for ((c = 0; c < n_clips; c++)); do
  clip=$(make_clip "${patterns[c % ${#patterns[@]}]}")
  for ((k = 1; k <= n_names; k++)); do
    ln -f "$clip" "$inputs_dir/clip$c-name$k.mp4" 2>/dev/null \
      || ln -sf "$clip" "$inputs_dir/clip$c-name$k.mp4"
    inputs+=("$inputs_dir/clip$c-name$k.mp4")
  done
done
total=$((frames * ${#inputs[@]}))
echo "archive-batch: ${#inputs[@]} inputs of $frames frames ($total frames), clips ready in $((SECONDS - t0)) s"

# ---- measurements ---------------------------------------------------------
declare -A rate seconds note wall starts

# (a): PLAYING to EOS of each GPU's gst-launch-1.0, the slowest counts
decoders() {
  local g i logs=() t worst=0 branch
  for ((g = 0; g < gpus; g++)); do
    local args=()
    for ((i = g; i < ${#inputs[@]}; i += gpus)); do
      args+=(filesrc location="${inputs[i]}" ! qtdemux ! h264parse ! nvh264dec
             ! "video/x-raw(memory:CUDAMemory)" ! fakesink)
    done
    CUDA_VISIBLE_DEVICES=${devices[g]} timeout "$step_timeout" gst-launch-1.0 "${args[@]}" \
      >"$out/a-gpu$g.log" 2>&1 &
    logs+=("$out/a-gpu$g.log")
  done
  wait
  for branch in "${logs[@]}"; do
    t=$(sed -n 's/.*Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\).*/\1 \2 \3/p' \
        "$branch" | awk '{ print $1 * 3600 + $2 * 60 + $3 }' | tail -1)
    if [ -z "$t" ]; then
      echo "archive-batch: (a) failed; see $branch" >&2
      tail -n 5 "$branch" >&2
      return 1
    fi
    worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
  done
  seconds[a]=$(printf '%.1f' "$worst")
  rate[a]=$(awk -v f="$total" -v s="$worst" 'BEGIN { printf "%.0f", f / s }')
  note[a]="$(( (${#inputs[@]} + gpus - 1) / gpus )) branches per GPU, one gst-launch-1.0 per GPU"
}

# run_batch KEY ARGS...: a batch over the inputs; its frames/s from the report
run_batch() {
  local key=$1 dir=$out/$1 line
  shift
  rm -rf "$dir"
  timeout "$step_timeout" "${batch[@]}" -q -o "$dir" "$@" -- "${inputs[@]}" \
    >"$out/$key.log" 2>&1
  if ! line=$("$python" - "$dir/report.json" "$total" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t, ray = r["totals"], r["ray"]
if t["done"] != t["files"]:
    sys.exit(f"{t['failed']} of {t['files']} files failed")
frames = t["frames"] if t["frames"] is not None else int(sys.argv[2])
algos = sorted({a for f in r["files"] for a in f["algorithms"].values()})
print(f"{frames / t['files_seconds']:.0f} {t['files_seconds']:.1f} {r['seconds']:.1f} "
      f"{t['worker_starts']} "
      f"{t.get('workers', '-')} workers of {t['slots']} files in all, Ray start-up "
      f"{ray['startup_seconds']:.1f} s, workers' up to "
      f"{t['worker_startup_seconds'] or 0:.1f} s, {t['worker_starts']} started, "
      f"command {r['seconds']:.1f} s"
      + (f"; {'; '.join(algos)}" if algos else ""))
EOF
  ); then
    echo "archive-batch: ($key) failed: $line; see $out/$key.log" >&2
    tail -n 5 "$out/$key.log" >&2
    return 1
  fi
  read -r rate[$key] seconds[$key] wall[$key] starts[$key] note[$key] <<<"$line"
}

measure() {     # measure KEY WHAT COMMAND...: runs it, prints its row
  local key=$1 what=$2
  shift 2
  echo "archive-batch: ($key) $what ..."
  if "$@"; then
    printf '  %-8s %8s frames/s  %7s s  %s\n' "($key)" "${rate[$key]}" "${seconds[$key]}" \
      "${note[$key]}"
  else
    status=1
  fi
}

decode_only="filesrc location={input} ! qtdemux ! h264parse ! nvh264dec \
  ! video/x-raw(memory:CUDAMemory) ! fakesink \
  fakesrc num-buffers=1 sizetype=empty ! filesink location={output}"
case $steps in *" a "*) measure a "decoders' capacity" decoders ;; esac
case $steps in *" b "*) measure b "batch, decode only" run_batch b --pipeline "$decode_only" ;; esac
case $steps in *" c "*) measure c "batch, default job and options" run_batch c ;; esac
case $steps in
  *" sweep "*)
    for n in $sweep; do
      measure "n$n" "batch, --files-per-gpu $n" run_batch "n$n" --files-per-gpu "$n"
    done ;;
esac

# ---- the table --------------------------------------------------------------
ratio() { awk -v a="${rate[$1]:-}" -v b="${rate[$2]:-}" \
  'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { if (r == "-") print "not measured";
  else print (r >= t) ? "MET" : "MISSED" }'; }
echo
echo "archive-batch: ${#inputs[@]} inputs x $frames frames of 1080p H.264 on $gpus GPU(s)"
printf '%-44s %10s %9s\n' "measurement" "frames/s" "files s"
printf '%-44s %10s %9s\n' "(a) decoders' capacity (gst-launch-1.0)" "${rate[a]:--}" "${seconds[a]:--}"
printf '%-44s %10s %9s\n' "(b) batch, --pipeline decode only" "${rate[b]:--}" "${seconds[b]:--}"
printf '%-44s %10s %9s\n' "(c) batch, default job and options" "${rate[c]:--}" "${seconds[c]:--}"
if [ -n "${wall[c]:-}" ]; then
  printf '%-44s %10s %9s\n' "(c) as a user waits: command start to exit" \
    "$(awk -v f="$total" -v s="${wall[c]}" 'BEGIN { printf "%.0f", f / s }')" "${wall[c]}"
fi
default_n=$(PYTHONPATH=$root/tools/batch${PYTHONPATH:+:$PYTHONPATH} "$python" -c \
  'from gpuconvolve_batch.shares import FILES_PER_GPU as n; print(n)')
[ -n "${rate[c]:-}" ] && rate[n$default_n]=${rate[c]} seconds[n$default_n]=${seconds[c]}
for n in $(printf '%s\n' $sweep "$default_n" | sort -n | uniq); do
  printf '%-44s %10s %9s\n' "    --files-per-gpu $n$([ "$n" = "$default_n" ] && echo ' (c)')" \
    "${rate[n$n]:--}" "${seconds[n$n]:--}"
done
r_ba=$(ratio b a)
r_ca=$(ratio c a)
r_cb=$(ratio c b)
echo "target (b) >= 0.95 x (a): $r_ba, $(verdict "$r_ba" 0.95) (the batch's own cost on decoding alone)"
echo "target (c) >= 0.85 x (a): $r_ca, $(verdict "$r_ca" 0.85)$([ "$gpus" -eq 1 ] && echo ' (one GPU: the target is 0.95)')"
echo "(c) / (b): $r_cb (gpuconvolve's cost on top of decoding)"
if [ -n "${wall[c]:-}" ]; then
  r_wall=$(awk -v w="${wall[c]}" -v s="${seconds[c]}" 'BEGIN { printf "%.2f", w / s }')
  echo "target (c) command start to exit <= 1.3 x its files' time: $r_wall," \
    "$(awk -v r="$r_wall" 'BEGIN { print (r <= 1.3) ? "MET" : "MISSED" }')"
fi
for key in b c; do
  [ -n "${starts[$key]:-}" ] && echo "worker start-ups ($key): ${starts[$key]}, target one a GPU ($gpus):" \
    "$([ "${starts[$key]}" -eq "$gpus" ] && echo MET || echo MISSED)"
done
echo "logs and reports: $out"
exit $status
