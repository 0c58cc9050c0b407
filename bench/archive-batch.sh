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
#   (e) the element alone: as (a), each branch ending in
#       ! video/x-raw(memory:CUDAMemory) ! gpuconvolve backend=cuda
#       filter=gaussian size=9 ! video/x-raw(memory:CUDAMemory) ! fakesink
#       (bench/pipelines-gpu.sh's form): what the filter costs the
#       decoders without the batch
#   sweep: (c) at each --files-per-gpu of SWEEP (the default's is (c))
# (a) and (e) count all the inputs' frames over the slowest GPU's time
# (gst-launch-1.0's "Execution ended after", PLAYING to EOS), and each
# GPU's share over its own time. A batch's frames/s count from its first
# file's start to its last file's end (the report's files_seconds); Ray's
# start-up and the workers' are shown apart, and (c) also from the
# command's start to its exit. Each batch runs with a Ray instance of its
# own, as a user's would. While (c) and (e) run, nvidia-smi lists the
# GPUs' compute processes every second (KEY-apps.log): the end says on
# which GPUs each process held memory, its peak, and whether each
# gst-launch-1.0 and each batch worker (gpuconvolve-batch-run) stayed on
# one GPU. The table at the end gives (b)/(a), (c)/(a), (c)/(b) and
# (e)/(a), (c)'s command time against its files' time, and the worker
# start-ups (one a GPU), against their targets, the sweep's frames/s per
# files per GPU, and the placement.
#
# Environment:
#   FRAMES      frames a clip (default 9000)
#   CLIPS       distinct clips (default 4, at most one a pattern), NAMES
#               names each (default 4)
#   PER_GPU     inputs a GPU instead of NAMES: CLIPS x NAMES = GPUs x PER_GPU,
#               CLIPS lowered to a divisor (PER_GPU=8 on 8 GPUs: 4 x 16)
#   PATTERNS    videotestsrc patterns of the clips (default smpte ball
#               pinwheel gamut), scrolling
#   BITRATE     x264enc kbit/s (default 8000)
#   SWEEP       files per GPU to try besides (c)'s (default "12 6 4 2 1")
#   STEPS       which of a b c e sweep to run (default all)
#   CLIP_DIR    where the clips are kept (default $TMPDIR/gpuconvolve-archive)
#   STEP_TIMEOUT  seconds one measurement may take (default 300)
#   CUDA_VISIBLE_DEVICES  the GPUs to use (default all)
# On the GPU host (scripts/gpu-host.sh's layout): GStreamer from
# .gpuhost/env.sh, Ray from .gpuhost-ray/env.sh (or tools/batch/.venv), the
# plugin and gpuconvolve-batch-run from BUILD (default build-gpu). Exit
# status 0 when every measurement ran (a missed target is a measurement,
# not a failure), 1 otherwise.
set -uo pipefail

build="build-gpu"
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
read -r -a patterns <<<"${PATTERNS:-smpte ball pinwheel gamut}"
bitrate=${BITRATE:-8000}
sweep=${SWEEP:-12 6 4 2 1}
steps=" ${STEPS:-a b c e sweep} "
clip_dir=${CLIP_DIR:-${TMPDIR:-/tmp}/gpuconvolve-archive}
step_timeout=${STEP_TIMEOUT:-300}
status=0

die() { echo "archive-batch: $*" >&2; exit 1; }
# count NAME VALUE: dies unless VALUE is a whole number above 0
count() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a whole number above 0, not '$2'"; }
count FRAMES "$frames"
count CLIPS "$n_clips"
count NAMES "$n_names"
[ "${#patterns[@]}" -ge 1 ] || die "PATTERNS names no pattern"
[ "$n_clips" -le "${#patterns[@]}" ] \
  || die "CLIPS=$n_clips is more than the ${#patterns[@]} PATTERNS (a clip a pattern)"

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
# PER_GPU: gpus x PER_GPU inputs, as CLIPS x NAMES
if [ -n "${PER_GPU:-}" ]; then
  count PER_GPU "$PER_GPU"
  [ -z "${NAMES:-}" ] || die "give PER_GPU or NAMES, not both"
  n_inputs=$((gpus * PER_GPU))
  while ((n_inputs % n_clips)); do n_clips=$((n_clips - 1)); done
  n_names=$((n_inputs / n_clips))
fi
mkdir -p "$out" "$clip_dir"
echo "archive-batch: $gpus GPU(s) (${devices[*]}): $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs)"
# GPU uuid to index, for the placement (nvidia-smi lists processes by uuid)
nvidia-smi --query-gpu=index,uuid --format=csv,noheader >"$out/gpus.csv" 2>/dev/null

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
echo "archive-batch: ${#inputs[@]} inputs ($n_clips clips x $n_names names) of $frames frames ($total frames), clips ready in $((SECONDS - t0)) s"

# ---- measurements ---------------------------------------------------------
declare -A rate seconds note wall starts per_gpu_rate

# per_gpu KEY TAIL...: one gst-launch-1.0 per GPU, each decoding its share
# of the inputs (every gpus-th) in branches of filesrc ! qtdemux !
# h264parse ! nvh264dec ! TAIL, PLAYING to EOS; all the frames over the
# slowest GPU's time, and each GPU's share over its own
per_gpu() {
  local key=$1 g i p t worst=0 log pids=() shares=() per=()
  shift
  for ((g = 0; g < gpus; g++)); do
    local args=()
    for ((i = g; i < ${#inputs[@]}; i += gpus)); do
      args+=(filesrc location="${inputs[i]}" ! qtdemux ! h264parse ! nvh264dec ! "$@")
    done
    shares+=($(( (${#inputs[@]} - g + gpus - 1) / gpus )))
    [ "${shares[g]}" -gt 0 ] || continue
    CUDA_VISIBLE_DEVICES=${devices[g]} timeout "$step_timeout" gst-launch-1.0 "${args[@]}" \
      >"$out/$key-gpu$g.log" 2>&1 &
    pids+=($!)
  done
  # these alone: the placement's sampler runs beside them
  for p in "${pids[@]}"; do wait "$p"; done
  for ((g = 0; g < gpus; g++)); do
    if [ "${shares[g]}" -eq 0 ]; then per+=(-); continue; fi
    log=$out/$key-gpu$g.log
    t=$(sed -n 's/.*Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\).*/\1 \2 \3/p' \
        "$log" | awk '{ print $1 * 3600 + $2 * 60 + $3 }' | tail -1)
    if [ -z "$t" ]; then
      echo "archive-batch: ($key) failed on GPU ${devices[g]}; see $log" >&2
      tail -n 5 "$log" >&2
      return 1
    fi
    per+=("$(awk -v f="$((frames * shares[g]))" -v s="$t" 'BEGIN { printf "%.0f", f / s }')")
    worst=$(awk -v a="$worst" -v b="$t" 'BEGIN { print (b > a) ? b : a }')
  done
  seconds[$key]=$(printf '%.1f' "$worst")
  rate[$key]=$(awk -v f="$total" -v s="$worst" 'BEGIN { printf "%.0f", f / s }')
  per_gpu_rate[$key]="${per[*]}"
  note[$key]="$(( (${#inputs[@]} + gpus - 1) / gpus )) branches per GPU, one gst-launch-1.0 per GPU; per GPU: ${per[*]} frames/s"
}

# ---- placement: which GPUs each process holds memory on -------------------
# apps_start KEY: nvidia-smi's compute processes every second into
# $out/KEY-apps.log (pid, GPU uuid, memory, program: a tab between), until
# apps_stop
sampler=
sampled=()
apps_sample() {
  local pid uuid mib name
  local -A names=()
  while :; do
    while IFS=', ' read -r pid uuid mib _; do
      [[ $pid =~ ^[0-9]+$ ]] || continue
      if [ -z "${names[$pid]:-}" ]; then
        name=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | head -n 1)
        name=${name##*/}
        names[$pid]=${name:-?}
      fi
      printf '%s\t%s\t%s\t%s\n' "$pid" "$uuid" "$mib" "${names[$pid]}"
    done < <(nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader 2>/dev/null)
    sleep 1
  done
}
apps_start() {
  sampled+=("$1")
  apps_sample >"$out/$1-apps.log" &
  sampler=$!
}
apps_stop() {
  [ -n "$sampler" ] || return 0
  kill "$sampler" 2>/dev/null
  wait "$sampler" 2>/dev/null
  sampler=
}
trap apps_stop EXIT
# placement_of KEY...: a line per process of each step's log: its GPUs by
# nvidia-smi's index and the peak MiB on each; a process of ours
# (gst-launch-1.0, gpuconvolve-batch-run) on more than one GPU is marked,
# others are not judged
placement_of() {
  local key
  for key in "$@"; do
    awk -F '\t' -v key="$key" -v map="$out/gpus.csv" '
      BEGIN { while ((getline l < map) > 0) { split(l, f, /, */); gpu[f[2]] = f[1] } }
      {
        pid = $1; g = ($2 in gpu) ? gpu[$2] : $2; mib = $3 + 0
        if (!(pid in name)) { name[pid] = $4; pids[++np] = pid }
        if (!((pid, g) in peak)) {
          peak[pid, g] = mib; n[pid]++
          gpus[pid] = gpus[pid] (n[pid] > 1 ? " " : "") g
        } else if (mib > peak[pid, g]) peak[pid, g] = mib
      }
      END {
        if (np == 0) printf "  (%s) no compute process listed\n", key
        for (i = 1; i <= np; i++) {
          pid = pids[i]; split(gpus[pid], gl, " "); line = ""
          for (j = 1; j <= n[pid]; j++)
            line = line (j > 1 ? ", " : "") "GPU " gl[j] " (peak " peak[pid, gl[j]] " MiB)"
          ours = name[pid] ~ /^(gst-launch-1[.]0|gpuconvolve-batch-run)$/
          mark = !ours ? "  (not judged)" : (n[pid] > 1) ? "  <- more than one GPU" : ""
          printf "  (%s) pid %s %s: %s%s\n", key, pid, name[pid], line, mark
        }
      }' "$out/$key-apps.log"
  done
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
cuda='video/x-raw(memory:CUDAMemory)'
case $steps in *" a "*) measure a "decoders' capacity" per_gpu a "$cuda" ! fakesink ;; esac
case $steps in *" b "*) measure b "batch, decode only" run_batch b --pipeline "$decode_only" ;; esac
case $steps in
  *" c "*)
    apps_start c
    measure c "batch, default job and options" run_batch c
    apps_stop ;;
esac
case $steps in
  *" e "*)
    apps_start e
    measure e "the element alone, gaussian 9" per_gpu e "$cuda" \
      ! gpuconvolve backend=cuda filter=gaussian size=9 ! "$cuda" ! fakesink
    apps_stop ;;
esac
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
# per_gpu_rows KEY: a row per GPU of a per_gpu measurement
per_gpu_rows() {
  local g per
  read -r -a per <<<"${per_gpu_rate[$1]:-}"
  for ((g = 0; g < ${#per[@]}; g++)); do
    printf '%-44s %10s\n' "    GPU ${devices[g]}" "${per[g]}"
  done
}
printf '%-44s %10s %9s\n' "(a) decoders' capacity (gst-launch-1.0)" "${rate[a]:--}" "${seconds[a]:--}"
per_gpu_rows a
printf '%-44s %10s %9s\n' "(b) batch, --pipeline decode only" "${rate[b]:--}" "${seconds[b]:--}"
printf '%-44s %10s %9s\n' "(c) batch, default job and options" "${rate[c]:--}" "${seconds[c]:--}"
if [ -n "${wall[c]:-}" ]; then
  printf '%-44s %10s %9s\n' "(c) as a user waits: command start to exit" \
    "$(awk -v f="$total" -v s="${wall[c]}" 'BEGIN { printf "%.0f", f / s }')" "${wall[c]}"
fi
default_n=$(PYTHONPATH=$root/tools/batch${PYTHONPATH:+:$PYTHONPATH} "$python" -c \
  'from gpuconvolve_batch.shares import FILES_PER_GPU as n; print(n)')
[ -n "${rate[c]:-}" ] && rate[n$default_n]=${rate[c]} seconds[n$default_n]=${seconds[c]}
# shellcheck disable=SC2086 # SWEEP is a list
for n in $(printf '%s\n' $sweep "$default_n" | sort -n | uniq); do
  printf '%-44s %10s %9s\n' "    --files-per-gpu $n$([ "$n" = "$default_n" ] && echo ' (c)')" \
    "${rate[n$n]:--}" "${seconds[n$n]:--}"
done
printf '%-44s %10s %9s\n' "(e) gpuconvolve gaussian 9 (gst-launch-1.0)" "${rate[e]:--}" "${seconds[e]:--}"
per_gpu_rows e
r_ba=$(ratio b a)
r_ca=$(ratio c a)
r_cb=$(ratio c b)
echo "target (b) >= 0.95 x (a): $r_ba, $(verdict "$r_ba" 0.95) (the batch's own cost on decoding alone)"
echo "target (c) >= 0.85 x (a): $r_ca, $(verdict "$r_ca" 0.85)$([ "$gpus" -eq 1 ] && echo ' (one GPU: the target is 0.95)')"
echo "(c) / (b): $r_cb (gpuconvolve's cost on top of decoding)"
echo "(e) / (a): $(ratio e a) (gpuconvolve gaussian 9 on the decoders, without the batch)"
if [ -n "${wall[c]:-}" ]; then
  r_wall=$(awk -v w="${wall[c]}" -v s="${seconds[c]}" 'BEGIN { printf "%.2f", w / s }')
  echo "target (c) command start to exit <= 1.3 x its files' time: $r_wall," \
    "$(awk -v r="$r_wall" 'BEGIN { print (r <= 1.3) ? "MET" : "MISSED" }')"
fi
for key in b c; do
  [ -n "${starts[$key]:-}" ] && echo "worker start-ups ($key): ${starts[$key]}, target one a GPU ($gpus):" \
    "$([ "${starts[$key]}" -eq "$gpus" ] && echo MET || echo MISSED)"
done
if [ "${#sampled[@]}" -gt 0 ]; then
  echo "placement (nvidia-smi's compute processes every second during ${sampled[*]}; GPUs by nvidia-smi's index):"
  lines=$(placement_of "${sampled[@]}")
  printf '%s\n' "$lines"
  judged=$(grep -cE ' (gst-launch-1[.]0|gpuconvolve-batch-run): ' <<<"$lines")
  spread=$(grep -c 'more than one GPU' <<<"$lines")
  if [ "$judged" -eq 0 ]; then
    echo "placement: each process on one GPU: not measured (nvidia-smi listed no gst-launch-1.0 or" \
      "gpuconvolve-batch-run process; in a container without the host's process IDs it lists none)"
  elif [ "$spread" -eq 0 ]; then
    echo "placement: each process on one GPU: MET ($judged processes)"
  else
    echo "placement: each process on one GPU: MISSED ($spread of $judged processes on more than one GPU)"
  fi
fi
echo "logs and reports: $out"
exit $status
