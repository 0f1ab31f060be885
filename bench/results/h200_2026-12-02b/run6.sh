#!/usr/bin/env bash
# Device call 6 of session 18: cuda_mma_fused (sweep against cpu_ref, memcheck, racecheck,
# bench against cuda_mma, cuda_fft, cuda_dp4a_ilp at 1080p 16-128 and 4K 64), the merged
# GpuContext's and tracker's GPU tests, then EXTRA (the e2e bench's targets and streams).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2); [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
E=/tmp/run6; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; } > $E/summary.txt
t() {  # NAME LIMIT CMD...
  local name=$1 lim=$2; shift 2
  timeout "$lim" "$@" > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY|RACECHECK SUMMARY' $E/$name.txt | sort | uniq -c | tr -s ' ' | tr '\n' '|' | cut -c1-300)" >> $E/summary.txt
}
t sweep 60 build/tests/test_kernel_sweep
t memcheck_fused 60 compute-sanitizer --tool memcheck build/tests/test_kernel_sweep --gtest_filter='*cuda_mma_fused*'
t racecheck_fused 60 compute-sanitizer --tool racecheck build/tests/test_kernel_sweep --gtest_filter='*cuda_mma_fused*'
t tracker 60 build/tests/test_tracker
t gpu_context 60 build/tests/test_gpu_context
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t pipeline 60 build/tests/test_pipeline
t bench_1080p 90 build/app/corrtrack bench --kernels cuda_mma_fused,cuda_mma_fused_w4,cuda_mma,cuda_fft,cuda_dp4a_ilp \
  --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 --ratio-to cuda_mma --csv $E/fused_1080p.csv
t bench_4k 60 build/app/corrtrack bench --kernels cuda_mma_fused,cuda_mma_fused_w4,cuda_mma,cuda_fft,cuda_dp4a_ilp \
  --sizes 3840x2160 --templates 64 --modes full --runs 30 --ratio-to cuda_mma --csv $E/fused_4k.csv
grep -hE "^cuda|^kernel" $E/bench_1080p.txt $E/bench_4k.txt >> $E/summary.txt
[ -n "${EXTRA:-}" ] && { timeout 200 bash "$EXTRA" > $E/extra.txt 2>&1; echo "extra: rc $?" >> $E/summary.txt; tail -40 $E/extra.txt >> $E/summary.txt; }
cp $E/summary.txt "$OUT/run6_summary.txt"; tar -C /tmp -czf "$OUT/run6.tar.gz" run6
cat $E/summary.txt
