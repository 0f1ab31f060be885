#!/usr/bin/env bash
# Device call 9 (session 19): lazy template statistics and the AVX2 blend (commits e52534e,
# 0b8227a): the GPU tests again, then 256 and 1024 targets with kernel auto, cuda_dp4a (one
# output column per thread) and cuda_dp4a_ilp (8): which batched DP4A shape suits small maps.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2); [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
E=/tmp/run9; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; } > $E/summary.txt
t() {  # NAME LIMIT CMD...
  local name=$1 lim=$2; shift 2
  timeout "$lim" "$@" > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY' $E/$name.txt | sort | uniq -c | tr -s ' ' | tr '\n' '|' | cut -c1-300)" >> $E/summary.txt
}
t sweep 90 build/tests/test_kernel_sweep
t tracker 60 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t cpu_kernels 60 build/tests/test_cpu_kernels
for k in auto cuda_dp4a cuda_dp4a_ilp; do
  EXTRAS=0 COUNTS="256 1024" KERNEL=$k E=$E/$k bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/$k /" >> $E/summary.txt
done
E=$E/stats COUNTS=256 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | grep -v "^t256:" >> $E/summary.txt
cp $E/summary.txt "$OUT/run9_summary.txt"; tar -C /tmp -czf "$OUT/run9.tar.gz" run9
cat $E/summary.txt
