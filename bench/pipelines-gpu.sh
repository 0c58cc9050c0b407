#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Frames/s of H.264 decode (nvh264dec) followed by gpuconvolve, at 1080p and
# 4K, with the decoded frames taken to the host first ("today's path") and
# kept in CUDA memory, against the decoder alone:
#
#   decode alone       filesrc ! qtdemux ! h264parse ! nvh264dec
#                        ! video/x-raw(memory:CUDAMemory) ! fakesink
#   today's path       ... nvh264dec ! cudadownload ! videoconvert
#                        ! video/x-raw,format=RGBA ! gpuconvolve gaussian 9 ! fakesink
#   today, sobel       ... cudadownload ! videoconvert ! video/x-raw,format=GRAY8
#                        ! gpuconvolve sobel-x ! video/x-raw,format=GRAY32F ! fakesink
#   today, 8 threads   today's path with videoconvert n-threads=8
#   cuda gaussian      ... nvh264dec ! video/x-raw(memory:CUDAMemory)
#                        ! gpuconvolve gaussian 9 ! video/x-raw(memory:CUDAMemory) ! fakesink
#   cuda sobel-x       ... nvh264dec ! video/x-raw(memory:CUDAMemory)
#                        ! gpuconvolve sobel-x ! video/x-raw,format=GRAY32F ! fakesink
#   cuda + download    ... cuda gaussian ... ! cudadownload ! fakesink
#   cuda regions       ... nvh264dec ! video/x-raw(memory:CUDAMemory)
#                        ! gpuconvolve gaussian 31, 8 regions of 200x200,
#                        region-mode=inside ! video/x-raw(memory:CUDAMemory) ! fakesink
#   hevc decode alone  filesrc ! qtdemux ! h265parse ! nvh265dec (Main10: P010_10LE)
#                        ! video/x-raw(memory:CUDAMemory) ! fakesink
#   hevc gaussian      ... nvh265dec ! video/x-raw(memory:CUDAMemory),format=P010_10LE
#                        ! gpuconvolve gaussian 9 ! video/x-raw(memory:CUDAMemory) ! fakesink
#   hevc x8            8 of the hevc decode alone, and 8 of hevc gaussian, in one
#                        gst-launch-1.0 (frames/s of all 8 together)
#
# The caps filters around gpuconvolve on the CUDA rows make negotiation fail
# (and the row with it) rather than silently take another memory path. The
# clips are made once with x264enc and kept (CLIP_DIR). Every row runs REPEAT
# times, the rows taking turns, and the median counts; the time is
# gst-launch-1.0's "Execution ended after" (PLAYING to EOS), as in
# bench/pipelines.sh. Then one verdict line per target:
#   cuda gaussian >= 90% of decode alone, and >= 3x today's path
#   cuda sobel-x  >= 80% of decode alone
#   cuda regions  >= 95% of decode alone
#   hevc gaussian >= 95% of hevc decode alone (one stream, and 8 at once)
# The HEVC rows need x265enc, h265parse and nvh265dec; without them they are
# left out with a note (not a failure).
#
# Usage: bench/pipelines-gpu.sh [FRAMES_1080P] [FRAMES_4K]   (default 1000 400)
# Environment:
#   REPEAT       runs of each row (default 3)
#   CLIP_DIR     where the clips are kept (default $TMPDIR/gpuconvolve-clips)
#   PATTERN      videotestsrc pattern of the clips (default smpte, scrolling)
#   BITRATE_1080P, BITRATE_4K   x264enc kbit/s (default 8000, 25000)
#   ROW_TIMEOUT  seconds one pipeline may run (default 120)
#   ROWS         the rows to run, by name (default all: see rows=() below)
#   GPUCONVOLVE_EXTRA  properties added to every gpuconvolve (default backend=cuda)
# The plugin is found through GST_PLUGIN_PATH; nvcodec and x264enc from the
# GStreamer runtime (scripts/gpu-host.sh sources .gpuhost/env.sh, and runs
# this as the step pipelines-gpu). Exit status: 0 when every pipeline ran
# (a MISS is a measurement, not a failure), 1 otherwise.
set -euo pipefail

frames_1080=${1:-1000}
frames_4k=${2:-400}
repeat=${REPEAT:-3}
clip_dir=${CLIP_DIR:-${TMPDIR:-/tmp}/gpuconvolve-clips}
pattern=${PATTERN:-smpte}
bitrate_1080=${BITRATE_1080P:-8000}
bitrate_4k=${BITRATE_4K:-25000}
row_timeout=${ROW_TIMEOUT:-120}
extra=${GPUCONVOLVE_EXTRA-backend=cuda}
t_start=$SECONDS

die() { echo "pipelines-gpu: $*" >&2; exit 1; }

case $frames_1080$frames_4k$repeat in
  *[!0-9]*) die "frame counts and REPEAT must be whole numbers" ;;
esac
if [ "$frames_1080" -lt 1 ] || [ "$frames_4k" -lt 1 ] || [ "$repeat" -lt 1 ]; then
  die "frame counts and REPEAT must be positive"
fi

# ---- what must be there -------------------------------------------------
for tool in gst-launch-1.0 gst-inspect-1.0 timeout awk sort; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH"
done
missing=()
for e in videotestsrc x264enc h264parse mp4mux filesink filesrc qtdemux \
    nvh264dec cudadownload videoconvert capsfilter fakesink gpuconvolve; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || missing+=("$e")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pipelines-gpu: missing GStreamer elements: ${missing[*]}" >&2
  for e in "${missing[@]}"; do
    case $e in
      nvh264dec)
        echo "  nvh264dec: plugin nvcodec (gst-plugins-bad); it registers its decoders only where it finds an NVIDIA GPU with NVDEC and a working driver (libcuda.so.1, libnvcuvid.so.1)" >&2 ;;
      cudadownload)
        echo "  cudadownload: plugin nvcodec (gst-plugins-bad); it registers it only where it finds a CUDA device (libcuda.so.1)" >&2 ;;
      x264enc) echo "  x264enc: plugin x264 (gst-plugins-ugly)" >&2 ;;
      h264parse) echo "  h264parse: plugin videoparsersbad (gst-plugins-bad)" >&2 ;;
      mp4mux | qtdemux) echo "  $e: plugin isomp4 (gst-plugins-good)" >&2 ;;
      gpuconvolve) echo "  gpuconvolve: set GST_PLUGIN_PATH to the build's gst/ folder" >&2 ;;
      *) echo "  $e: gst-plugins-base / core" >&2 ;;
    esac
  done
  echo "  (on the GPU host: . .gpuhost/env.sh, or run scripts/gpu-host.sh pipelines-gpu)" >&2
  exit 1
fi
# (the whole text first: grep -q in a pipe would cut gst-inspect-1.0 short,
# which pipefail reports as a failure)
inspect=$(gst-inspect-1.0 gpuconvolve 2>&1) || die "gst-inspect-1.0 gpuconvolve failed: $inspect"
case $inspect in
  *memory:CUDAMemory*) ;;
  *) die "this gpuconvolve has no memory:CUDAMemory caps: build it with the CUDA backend and GStreamer's CUDA library (gstreamer-cuda-1.0, -Dgst-cuda=enabled)" ;;
esac

# ---- clips ----------------------------------------------------------------
mkdir -p "$clip_dir" || die "cannot make $clip_dir"

# make_clip W H FRAMES KBPS [CODEC]: prints the clip's path, encoding it when
# not cached; CODEC h264 (8-bit, the default) or h265-10 (HEVC Main10)
make_clip() {
  local w=$1 h=$2 n=$3 kbps=$4 codec=${5:-h264} file tmp out
  local raw=I420 enc=(x264enc speed-preset=ultrafast tune=zerolatency
    bitrate="$kbps" key-int-max=60) parse=h264parse
  if [ "$codec" = h265-10 ]; then
    raw=I420_10LE parse=h265parse
    enc=(x265enc speed-preset=ultrafast tune=zerolatency bitrate="$kbps"
      key-int-max=60)
  fi
  file=$clip_dir/${pattern}-${w}x${h}-${n}f-${kbps}k-${codec}.mp4
  if [ -s "$file" ]; then
    echo "$file"
    return 0
  fi
  tmp=$file.part.$$
  echo "pipelines-gpu: encoding $n frames ${w}x${h} ($codec) into $file" >&2
  # ultrafast + zerolatency: quick to make (no B-frames, sliced threads);
  # a key frame every 2 s; a scrolling picture so that P-frames carry data
  if ! out=$(timeout 600 gst-launch-1.0 -q videotestsrc num-buffers="$n" \
      pattern="$pattern" horizontal-speed=4 \
      ! "video/x-raw,format=$raw,width=$w,height=$h,framerate=30/1" \
      ! "${enc[@]}" ! "$parse" ! mp4mux ! filesink location="$tmp" 2>&1) \
      || [ ! -s "$tmp" ]; then
    rm -f "$tmp"
    echo "$out" >&2
    die "could not encode $file"
  fi
  mv -f "$tmp" "$file"
  echo "$file"
}

t0=$SECONDS
clip_1080=$(make_clip 1920 1080 "$frames_1080" "$bitrate_1080")
clip_4k=$(make_clip 3840 2160 "$frames_4k" "$bitrate_4k")
hevc=yes
for e in x265enc h265parse nvh265dec; do
  if ! gst-inspect-1.0 "$e" >/dev/null 2>&1; then
    echo "pipelines-gpu: no $e: the HEVC Main10 rows are left out"
    hevc=
  fi
done
if [ -n "$hevc" ]; then
  hevc_1080=$(make_clip 1920 1080 "$frames_1080" "$bitrate_1080" h265-10)
  hevc_4k=$(make_clip 3840 2160 "$frames_4k" "$bitrate_4k" h265-10)
fi
echo "clips ready ($((SECONDS - t0)) s): $clip_1080, $clip_4k${hevc:+, $hevc_1080, $hevc_4k}"

# ---- timing ---------------------------------------------------------------
# Seconds a pipeline ran (PLAYING to EOS), from gst-launch-1.0's own report.
run_seconds() {
  local out t rc=0
  out=$(timeout "$row_timeout" gst-launch-1.0 "$@" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    if [ "$rc" -eq 124 ]; then
      echo "pipeline timed out after $row_timeout s: gst-launch-1.0 $*" >&2
    else
      echo "pipeline failed (exit $rc): gst-launch-1.0 $*" >&2
    fi
    printf '%s\n' "$out" | tail -n 20 >&2
    return 1
  fi
  t=$(printf '%s\n' "$out" | sed -n 's/.*Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\).*/\1 \2 \3/p' | tail -1)
  if [ -z "$t" ]; then
    echo "no execution time in the output of: gst-launch-1.0 $*" >&2
    printf '%s\n' "$out" | tail -n 20 >&2
    return 1
  fi
  echo "$t" | awk '{ printf "%.6f\n", $1 * 3600 + $2 * 60 + $3 }'
}

fps() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.1f", (t > 0) ? n / t : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b <= 0) print "-"; else printf "%.2f", a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cuda='video/x-raw(memory:CUDAMemory)'
# shellcheck disable=SC2206
gx=(gpuconvolve $extra)
rows=(decode today today-sobel today-8threads cuda-gaussian cuda-sobel
  cuda-download cuda-regions)
[ -n "$hevc" ] && rows+=(hevc-decode hevc-gaussian hevc-decode-x8 hevc-gaussian-x8)
if [ -n "${ROWS:-}" ]; then
  # shellcheck disable=SC2206
  rows=($ROWS)
  # the ratios are against the decoders alone
  case " ${rows[*]} " in *" decode "*) ;; *) rows=(decode "${rows[@]}") ;; esac
  case " ${rows[*]} " in
    *" hevc-"*) case " ${rows[*]} " in *" hevc-decode "*) ;; *) rows+=(hevc-decode) ;; esac ;;
  esac
  case " ${rows[*]} " in
    *" hevc-gaussian-x8 "*) case " ${rows[*]} " in *" hevc-decode-x8 "*) ;; *) rows+=(hevc-decode-x8) ;; esac ;;
  esac
  # without the HEVC elements those rows are left out (said above)
  [ -z "$hevc" ] && mapfile -t rows < <(printf '%s\n' "${rows[@]}" | grep -v '^hevc-')
fi
# eight regions of 200x200 spread over a 1080p frame (they fit a 4K one)
regions='<<100,100,200,200>,<500,100,200,200>,<900,100,200,200>,<1300,100,200,200>,<100,700,200,200>,<500,700,200,200>,<900,700,200,200>,<1300,700,200,200>>'
declare -A label=(
  [decode]="decode alone (nvh264dec, CUDA memory)"
  [today]="today: cudadownload ! videoconvert RGBA ! gaussian 9"
  [today-sobel]="today: ... videoconvert GRAY8 ! sobel-x -> GRAY32F"
  [today-8threads]="today, videoconvert n-threads=8"
  [cuda-gaussian]="NEW: nvh264dec ! gaussian 9 (CUDA in/out)"
  [cuda-sobel]="NEW: nvh264dec ! sobel-x -> GRAY32F (system)"
  [cuda-download]="NEW: nvh264dec ! gaussian 9 ! cudadownload"
  [cuda-regions]="nvh264dec ! gaussian 31, 8 regions inside (CUDA)"
  [hevc-decode]="decode alone (nvh265dec Main10, P010, CUDA)"
  [hevc-gaussian]="nvh265dec ! P010 gaussian 9 (CUDA in/out)"
  [hevc-decode-x8]="8 streams: nvh265dec alone (P010, CUDA)"
  [hevc-gaussian-x8]="8 streams: nvh265dec ! P010 gaussian 9 (CUDA)"
)

# pipeline ROW SIZE: the gst-launch-1.0 arguments of a row, one per line
pipeline() {
  local clip
  if [ "$2" = 1080p ]; then clip=$clip_1080; else clip=$clip_4k; fi
  local head=(filesrc location="$clip" ! qtdemux ! h264parse ! nvh264dec)
  case $1 in
    hevc-*)
      if [ "$2" = 1080p ]; then clip=$hevc_1080; else clip=$hevc_4k; fi
      head=(filesrc location="$clip" ! qtdemux ! h265parse ! nvh265dec) ;;
  esac
  local tail=(fakesink sync=false)
  case $1 in
    decode) printf '%s\n' "${head[@]}" ! "$cuda" ! "${tail[@]}" ;;
    today) printf '%s\n' "${head[@]}" ! cudadownload ! videoconvert \
        ! video/x-raw,format=RGBA ! "${gx[@]}" filter=gaussian size=9 ! "${tail[@]}" ;;
    today-sobel) printf '%s\n' "${head[@]}" ! cudadownload ! videoconvert \
        ! video/x-raw,format=GRAY8 ! "${gx[@]}" filter=sobel-x \
        ! video/x-raw,format=GRAY32F ! "${tail[@]}" ;;
    today-8threads) printf '%s\n' "${head[@]}" ! cudadownload \
        ! videoconvert n-threads=8 ! video/x-raw,format=RGBA \
        ! "${gx[@]}" filter=gaussian size=9 ! "${tail[@]}" ;;
    cuda-gaussian) printf '%s\n' "${head[@]}" ! "$cuda" \
        ! "${gx[@]}" filter=gaussian size=9 ! "$cuda" ! "${tail[@]}" ;;
    cuda-sobel) printf '%s\n' "${head[@]}" ! "$cuda" \
        ! "${gx[@]}" filter=sobel-x ! video/x-raw,format=GRAY32F ! "${tail[@]}" ;;
    cuda-download) printf '%s\n' "${head[@]}" ! "$cuda" \
        ! "${gx[@]}" filter=gaussian size=9 ! "$cuda" ! cudadownload \
        ! "${tail[@]}" ;;
    cuda-regions) printf '%s\n' "${head[@]}" ! "$cuda" \
        ! "${gx[@]}" filter=gaussian size=31 "regions=$regions" \
        region-mode=inside ! "$cuda" ! "${tail[@]}" ;;
    hevc-decode) printf '%s\n' "${head[@]}" ! "$cuda" ! "${tail[@]}" ;;
    hevc-gaussian) printf '%s\n' "${head[@]}" ! "$cuda,format=P010_10LE" \
        ! "${gx[@]}" filter=gaussian size=9 ! "$cuda" ! "${tail[@]}" ;;
    hevc-*-x8)
      # eight branches in one pipeline, each its own decoder
      for ((b = 0; b < 8; b++)); do
        printf '%s\n' "${head[@]}" ! "$cuda,format=P010_10LE"
        [ "$1" = hevc-gaussian-x8 ] && printf '%s\n' ! "${gx[@]}" \
            filter=gaussian size=9 ! "$cuda"
        printf '%s\n' ! "${tail[@]}"
      done ;;
  esac
}

# a command line to paste into a shell
shell_line() {
  local a line=gst-launch-1.0
  for a in "$@"; do
    case $a in
      *[\(\)\ \;\&\|\<\>\$]*) line+=" '$a'" ;;
      *) line+=" $a" ;;
    esac
  done
  echo "$line"
}

declare -A runs=() failed=()
status=0
for size in 1080p 4K; do
  if [ "$size" = 1080p ]; then n=$frames_1080; else n=$frames_4k; fi
  echo "== $size: $n frames, $repeat runs per row"
  for row in "${rows[@]}"; do
    mapfile -t args < <(pipeline "$row" "$size")
    echo "   $row: $(shell_line "${args[@]}")"
  done
  # one warm-up decode (file cache, driver, decoder set-up), not counted;
  # where even that fails, no row of this size can run
  mapfile -t args < <(pipeline decode "$size")
  if ! run_seconds "${args[@]}" >/dev/null; then
    echo "   the decoder alone does not run on the $size clip: skipping $size"
    for row in "${rows[@]}"; do failed[$size/$row]=1; done
    status=1
    continue
  fi
  for ((r = 1; r <= repeat; r++)); do
    for row in "${rows[@]}"; do
      key=$size/$row
      [ -n "${failed[$key]:-}" ] && continue
      mapfile -t args < <(pipeline "$row" "$size")
      if t=$(run_seconds "${args[@]}"); then
        case $row in *-x8) f=$(fps "$((n * 8))" "$t") ;; *) f=$(fps "$n" "$t") ;; esac
        runs[$key]="${runs[$key]:-} $f"
        echo "   run $r $row: $t s, $f frames/s"
      else
        failed[$key]=1
        status=1
        echo "   run $r $row: FAILED (see above)"
      fi
    done
  done
done

# ---- results --------------------------------------------------------------
declare -A med=() range=()
for key in "${!runs[@]}"; do
  [ -n "${failed[$key]:-}" ] && continue
  # shellcheck disable=SC2086
  med[$key]=$(median ${runs[$key]})
  # shellcheck disable=SC2086
  range[$key]=$(printf '%s\n' ${runs[$key]} | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }')
done
# the decoder alone a row is measured against
base_of() {
  case $1 in
    hevc-*-x8) echo hevc-decode-x8 ;;
    hevc-*) echo hevc-decode ;;
    *) echo decode ;;
  esac
}
echo
printf '%-6s %-52s %6s %9s %15s %9s %8s\n' size pipeline frames "frames/s" "min-max" "vs decode" "vs today"
for size in 1080p 4K; do
  n=$([ "$size" = 1080p ] && echo "$frames_1080" || echo "$frames_4k")
  for row in "${rows[@]}"; do
    key=$size/$row
    if [ -z "${med[$key]:-}" ]; then
      printf '%-6s %-52s %6s %9s\n' "$size" "${label[$row]}" "$n" FAILED
    else
      printf '%-6s %-52s %6s %9s %15s %9s %8s\n' "$size" "${label[$row]}" "$n" \
        "${med[$key]}" "${range[$key]}" \
        "$(ratio "${med[$key]}" "${med[$size/$(base_of "$row")]:-}")" \
        "$(ratio "${med[$key]}" "${med[$size/today]:-}")"
    fi
  done
done

# verdict LABEL SIZE ROW BASE MIN: PASS/MISS line for ROW/BASE >= MIN
# (nothing where either row was not run)
verdict() {
  local what=$1 size=$2 row=$3 base=$4 min=$5 v b r
  case " ${rows[*]} " in *" $row "*) ;; *) return ;; esac
  case " ${rows[*]} " in *" $base "*) ;; *) return ;; esac
  v=${med[$size/$row]:-} b=${med[$size/$base]:-}
  if [ -z "$v" ] || [ -z "$b" ]; then
    echo "FAIL  $size $what: not measured (a pipeline failed)"
    return
  fi
  r=$(ratio "$v" "$b")
  if awk -v r="$r" -v m="$min" 'BEGIN { exit !(r >= m) }'; then
    echo "PASS  $size $what: $r"
  else
    echo "MISS  $size $what: $r"
  fi
}

echo
for size in 1080p 4K; do
  verdict "cuda gaussian >= 0.90 x decode alone" "$size" cuda-gaussian decode 0.90
  verdict "cuda gaussian >= 3x today's path" "$size" cuda-gaussian today 3
  verdict "cuda sobel-x GRAY32F >= 0.80 x decode alone" "$size" cuda-sobel decode 0.80
  verdict "cuda regions (8 inside, gaussian 31) >= 0.95 x decode alone" "$size" cuda-regions decode 0.95
  verdict "hevc P010 gaussian >= 0.95 x hevc decode alone" "$size" hevc-gaussian hevc-decode 0.95
  verdict "8 streams hevc P010 gaussian >= 0.95 x 8 decoders alone" "$size" hevc-gaussian-x8 hevc-decode-x8 0.95
  r=$(ratio "${med[$size/cuda-sobel]:-}" "${med[$size/today-sobel]:-}")
  [ "$r" = - ] && r="not measured" || r=${r}x
  echo "info  $size cuda sobel-x against today's sobel-x path: $r"
done
echo
echo "frames/s: median of $repeat runs (min-max); clips: $pattern, x264enc ultrafast zerolatency, ${bitrate_1080}/${bitrate_4k} kbit/s, key frame every 60; gpuconvolve: ${extra:-(defaults)}"
echo "total $((SECONDS - t_start)) s"
exit $status
