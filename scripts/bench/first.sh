#!/usr/bin/env bash
# A 256-target run's first frames (issue 30), each run its own process: `corrtrack bench --e2e
# CLIP --targets 256 --targets-only --e2e-decode nvdec --e2e-repeats 1` on a 1080p testsrc2
# H.264 clip (x264 veryfast, 600 frames, made here), traced (CORRTRACK_TRACE_START=1), four
# times: cold (an empty CORRTRACK_CACHE_DIR), warm (the cache the cold run wrote), sync-nocache
# (the old sync round without the cache: CORRTRACK_AUTO_TIMING=sync, --no-cache) and eager-cold
# (cold in a cache of its own, CUDA_MODULE_LOADING=EAGER); then paced-cold and paced-warm: cold
# in a cache of their own and warm from it, with --realtime --e2e-frames 150 (frames at the
# clip's 30 fps, as a camera gives them: a frame's latency is then its own decode and tracking,
# not the wait behind the frames decoded ahead of it). scripts/gpu_check.sh's first step.
#
#   scripts/bench/first.sh CORRTRACK FFMPEG OUTDIR LIMIT
#
# LIMIT: the step's seconds; each run gets a sixth of them, cut to what is left of them since
# the start (the clip's making counts; at least 1 s). Writes per run OUTDIR/first-RUN.txt (the
# command, its output, "=== RUN: exit N") and first-RUN.json; OUTDIR/first.txt: all of them,
# then the cache the cold run wrote (OUTDIR/first-cache; eager-cold's is first-cache-eager).
# Ends with the line gpu_check records, "first: PASS: RUN first-100 p95 X ms; ..." (FAIL and
# why in place of PASS when a run failed or printed no "first 100 frames" line), and exits 0 on
# PASS, 1 otherwise.
set -uo pipefail
bin=${1:?corrtrack binary}
ff=${2:?ffmpeg}
out=${3:?output folder}
lim=${4:?time limit in seconds}
end=$((SECONDS + lim))
run_limit() {  # a sixth of LIMIT, cut to what is left of it (at least 1)
  local left=$((end - SECONDS - 3))
  [ "$left" -lt $((lim / 6)) ] && { [ "$left" -lt 1 ] && echo 1 || echo "$left"; return; }
  echo $((lim / 6))
}
mkdir -p "$out"
clip="$out/first-1080p.mp4"
cache="$out/first-cache"
rm -rf "$cache" "$cache-eager" "$cache-paced"
# The e2e step's 1080p clip: testsrc2 through x264 veryfast.
"$ff" -nostdin -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=20" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p "$clip"
st=PASS; line=""
: >"$out/first.txt"
for run in cold warm sync-nocache eager-cold paced-cold paced-warm; do
  extra=(); envs=(CORRTRACK_CACHE_DIR="$cache" CORRTRACK_TRACE_START=1)
  [ "$run" = sync-nocache ] && { extra=(--no-cache); envs+=(CORRTRACK_AUTO_TIMING=sync); }
  [ "$run" = eager-cold ] && envs=(CORRTRACK_CACHE_DIR="$cache-eager" CORRTRACK_TRACE_START=1 CUDA_MODULE_LOADING=EAGER)
  case "$run" in paced-*)
    envs=(CORRTRACK_CACHE_DIR="$cache-paced" CORRTRACK_TRACE_START=1)
    extra=(--realtime --e2e-frames 150) ;;
  esac
  {
    echo "=== $run: ${envs[*]} corrtrack bench --e2e first-1080p.mp4 --targets 256 --targets-only ${extra[*]}"
    timeout -k 5 "$(run_limit)" env "${envs[@]}" "$bin" bench \
      --e2e "$clip" --targets 256 --targets-only --e2e-decode nvdec --e2e-repeats 1 "${extra[@]}" \
      --json "$out/first-$run.json" 2>&1
    echo "=== $run: exit $?"
  } >"$out/first-$run.txt"
  cat "$out/first-$run.txt" >>"$out/first.txt"
  grep -q "=== $run: exit 0" "$out/first-$run.txt" || st="FAIL ($run: see first.txt)"
  p95="$(grep -oE 'first 100 frames: p50 / p95 / max [0-9.]+ / [0-9.]+' "$out/first-$run.txt" | awk '{print $NF}')"
  [ -n "$p95" ] || st="FAIL ($run: no first-100 line, see first.txt)"
  line="$line $run first-100 p95 ${p95:-?} ms;"
done
{ echo "=== the cache the cold run wrote"; ls -l "$cache"; cat "$cache"/*.json; } >>"$out/first.txt" 2>&1
rm -f "$clip"
echo "first: $st:$line"
[ "$st" = PASS ]
