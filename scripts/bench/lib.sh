#!/usr/bin/env bash
# Sourced by the measurement scripts of scripts/bench/ (and by a device call's own few lines):
# what every GPU run of bench/results/ began with, written once.
#
#   E=/tmp/run7 . scripts/bench/lib.sh     # from the repository root
#
# On the GPU host (the default) it builds FFmpeg there and checks the carried libraries
# (scripts/gpu_check.sh's ffmpeg and libs steps, which unpack .gpu/carry into build/; their log
# in /tmp/gpu_check_ffmpeg.txt), exports LD_LIBRARY_PATH, links the build's source path to
# this copy (the tests' baked-in asset paths) and makes $E with the GPU's line in
# $E/summary.txt. BENCH_LOCAL=1 skips the GPU host's part: the local build and system FFmpeg
# (for trying a script here, on the CPU kernels). The GPU host's part runs once per call (a
# marker in /tmp), so several scripts may follow each other in one call; BENCH_KEEP=1 keeps
# an existing $E and its summary (several scripts writing into one folder). Then it defines:
#
#   t NAME LIMIT CMD...       runs CMD into $E/NAME.txt under `timeout LIMIT` and appends
#                             "NAME: rc N <gtest / compute-sanitizer verdicts>" to the summary
#   sway_clip [FRAMES]        prints the path of the 1080p H.264 clip of a random texture
#                             swaying up to 8 px a frame (session 18's; FRAMES 600, or 300),
#                             making it first (NumPy, OpenCV and the built FFmpeg)
#   pan_clip [FRAMES]         prints the path of the 1080p clip of a texture panning 3 px a frame
#                             (cues_ab.sh's, 300 frames by default), making it first
#   testsrc_clip SECONDS      prints the path of a 1080p30 testsrc2 H.264 clip, making it first
#   grid_boxes N [X Y W H]    N `--box` arguments of 40x40 on a grid of up to 32 columns over
#                             the rectangle (default 220 140 1440 760: the part of the sway
#                             clip that stays in view)
#   same_boxes A B            appends whether eval outputs $E/A.txt and $E/B.txt have the same
#                             AUC, P@20 and lost count per sequence
#   summarize NAME PATTERN    appends NAME and the lines of $E/NAME.txt matching PATTERN
#   finish NAME               copies the summary to $OUT/NAME_summary.txt and packs $E into
#                             $OUT/NAME.tar.gz (both skipped without $OUT)
#
# Before this folder (2026-12-01 to 12-04) each call's script repeated these lines; the first
# part was bench/results/device_preamble.sh from session 20 on.
: "${E:?set E, the folder for the files of this run, before sourcing scripts/bench/lib.sh}"
bench_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$bench_root" || exit 1
# Once per carried build: later scripts of the same call find the marker (this tree and the
# carried build's checksum) and keep build/ and FFmpeg; a new carry unpacks afresh.
bench_marker=/tmp/corrtrack_bench_lib_done
bench_stamp="$bench_root $(cksum .gpu/carry/build.tar.xz 2>/dev/null)"
if [ "${BENCH_LOCAL:-0}" != 1 ] && { [ "$(cat "$bench_marker" 2>/dev/null)" != "$bench_stamp" ] || [ ! -x build/app/corrtrack ]; }; then
  rm -rf build
  STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
  src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2)
  [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
  echo "$bench_stamp" > "$bench_marker"
fi
[ "${BENCH_LOCAL:-0}" = 1 ] || export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
FFMPEG=/tmp/ffmpeg/bin/ffmpeg
[ -x "$FFMPEG" ] || FFMPEG=ffmpeg
CORRTRACK="$bench_root/build/app/corrtrack"
if [ "${BENCH_KEEP:-0}" != 1 ] || [ ! -d "$E" ]; then
  rm -rf "$E"; mkdir -p "$E"
  { date -u; command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader 2>&1 | head -1
    git -C "$bench_root" log -1 --format=%h 2>/dev/null; } > "$E/summary.txt"
fi

t() {  # NAME LIMIT CMD...
  local name=$1 lim=$2; shift 2
  timeout "$lim" "$@" > "$E/$name.txt" 2>&1
  echo "$name: rc $? $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY|FAILED  ' "$E/$name.txt" | sort | uniq -c | tr -s ' ' | tr '\n' '|' | cut -c1-400)" >> "$E/summary.txt"
}

sway_clip() {  # [FRAMES]
  local frames=${1:-600} clip
  clip=/tmp/sway1080_$frames.mp4
  [ "$frames" = 300 ] && clip=/tmp/sway1080.mp4  # session 18's name for the 300-frame clip
  [ -f "$clip" ] || python3 - "$frames" <<'PY' | timeout 120 "$FFMPEG" -v error -f rawvideo -pix_fmt gray -s 1920x1080 -r 30 -i - -c:v libx264 -preset veryfast -pix_fmt yuv420p -y "$clip"
import sys, numpy as np, cv2
rng = np.random.default_rng(5)
tex = cv2.resize(rng.integers(0, 256, (350, 600), dtype=np.uint8), (2400, 1400), interpolation=cv2.INTER_CUBIC)
tex = cv2.add(tex, rng.integers(0, 24, tex.shape, dtype=np.uint8))
for t in range(int(sys.argv[1])):
    x = int(round(240 + 200 * np.sin(2 * np.pi * t / 150)))
    y = int(round(160 + 120 * np.sin(2 * np.pi * t / 200)))
    sys.stdout.buffer.write(np.ascontiguousarray(tex[y:y + 1080, x:x + 1920]).tobytes())
PY
  echo "$clip"
}

pan_clip() {  # [FRAMES]: cues_ab.sh's and crowd.sh's random texture panning 3 px a frame across
  # and 1 down, turning back after 200 frames (/tmp/pan.mp4 for 300 frames, as cues_ab.sh names it)
  local frames=${1:-300} clip
  clip=/tmp/pan_$frames.mp4
  [ "$frames" = 300 ] && clip=/tmp/pan.mp4
  [ -s "$clip" ] || python3 - "$frames" <<'PY' | timeout 120 "$FFMPEG" -nostdin -v error -y -f rawvideo -pix_fmt gray -s 1920x1080 -r 30 -i - -c:v libx264 -preset veryfast -pix_fmt yuv420p "$clip"
import sys
import numpy as np
rng = np.random.default_rng(5)
small = rng.integers(0, 256, (360, 680)).astype(np.float32)
tex = np.repeat(np.repeat(small, 4, 0), 4, 1)
tex = (tex[:-2, :-2] + tex[1:-1, 1:-1] + tex[2:, 2:]) / 3
tex = tex.astype(np.uint8)
for t in range(int(sys.argv[1])):
    k = t % 400 if t % 400 < 200 else 400 - t % 400
    x, y = 3 * k, k
    sys.stdout.buffer.write(np.ascontiguousarray(tex[y:y + 1080, x:x + 1920]).tobytes())
PY
  echo "$clip"
}

testsrc_clip() {  # SECONDS
  local clip=/tmp/e2e-1080p_$1s.mp4
  [ -f "$clip" ] || "$FFMPEG" -nostdin -v error -y -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$1" -c:v libx264 \
    -preset veryfast -pix_fmt yuv420p "$clip"
  echo "$clip"
}

grid_boxes() {  # N [X Y W H]
  local n=$1 x0=${2:-220} y0=${3:-140} w=${4:-1440} h=${5:-760} cols=32 i
  [ "$n" -lt 32 ] && cols=$n
  local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( x0 + (i % cols) * (w / cols) )),$(( y0 + (i / cols) * (h / rows) )),40,40"; done
}

same_boxes() {  # A B: eval outputs in $E
  if diff <(awk '{print $1,$2,$3,$4,$6}' "$E/$1.txt" | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' "$E/$2.txt" | grep -v '^corrtrack') >/dev/null
  then echo "same AUC/P@20/lost: $1 vs $2"; else echo "DIFFERENT: $1 vs $2"; fi >> "$E/summary.txt"
}

summarize() {  # NAME PATTERN
  grep -hE "$2" "$E/$1.txt" | tr -s ' ' | sed "s/^/$1: /" | cut -c1-400 >> "$E/summary.txt"
}

finish() {  # NAME
  [ -n "${OUT:-}" ] || return 0
  cp "$E/summary.txt" "$OUT/$1_summary.txt"
  tar -C "$(dirname "$E")" -czf "$OUT/$1.tar.gz" "$(basename "$E")"
}
