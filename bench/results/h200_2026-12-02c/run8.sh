#!/usr/bin/env bash
# Device call 8 (session 19): the host-side fixes for many targets (vectorized template blend,
# one-pass template statistics, the template prefix over the whole GPU): the GPU tests that
# use the template prefix (test_cuda_integral, the kernel sweep's dp4a/fft/jpdc cases, test_tracker,
# test_gpu_search), then run7's many-target cases and profile.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2); [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
E=/tmp/run8; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; } > $E/summary.txt
t() {  # NAME LIMIT CMD...
  local name=$1 lim=$2; shift 2
  timeout "$lim" "$@" > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY' $E/$name.txt | sort | uniq -c | tr -s ' ' | tr '\n' '|' | cut -c1-300)" >> $E/summary.txt
}
t integral 60 build/tests/test_cuda_integral
t sweep 90 build/tests/test_kernel_sweep
t memcheck_batch 90 compute-sanitizer --tool memcheck build/tests/test_kernel_sweep --gtest_filter='*Batched*cuda_dp4a*:*Batched*cuda_fft*'
t tracker 60 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
E=$E/targets bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1
cp $E/summary.txt "$OUT/run8_summary.txt"; tar -C /tmp -czf "$OUT/run8.tar.gz" run8
cat $E/summary.txt
