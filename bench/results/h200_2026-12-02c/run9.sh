#!/usr/bin/env bash
# Device call 9 (session 19): lazy template statistics and the AVX2 blend (commits e52534e,
# 0b8227a): the GPU tests again, then 256 and 1024 targets with kernel auto, cuda_dp4a (one
# output column per thread) and cuda_dp4a_ilp (8): which batched DP4A shape suits small maps.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run9
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
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
