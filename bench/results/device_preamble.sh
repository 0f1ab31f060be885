#!/usr/bin/env bash
# Sourced by a device call's script (bench/results/<run folder>/runN.sh) from the repository
# root on the GPU host: builds FFmpeg there and checks the carried libraries (scripts/
# gpu_check.sh's ffmpeg and libs steps, into $OUT), sets LD_LIBRARY_PATH, links the build's
# source path to this copy (the tests' baked-in asset paths), makes $E with the GPU's line in
# $E/summary.txt, and defines t NAME LIMIT CMD..., which runs one command into $E/NAME.txt and
# adds its gtest / compute-sanitizer verdict to the summary. Set E before sourcing.
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2)
[ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
rm -rf "$E"; mkdir -p "$E"
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; } > "$E/summary.txt"
t() {  # NAME LIMIT CMD...
  local name=$1 lim=$2; shift 2
  timeout "$lim" "$@" > "$E/$name.txt" 2>&1
  echo "$name: rc $? $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY|FAILED  ' "$E/$name.txt" | sort | uniq -c | tr -s ' ' | tr '\n' '|' | cut -c1-400)" >> "$E/summary.txt"
}
