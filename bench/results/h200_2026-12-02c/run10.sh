#!/usr/bin/env bash
# Device call 10 (session 19): the batched cuda_mma_fused (branch batch-mma, merged): its GPU
# sweep against cpu_ref (single and batched cases), memcheck and racecheck, auto's caches, the
# tracker's GPU tests; the bench of batches of 48 / 192 / 768 windows (16 / 64 / 256 targets x 3
# scales) against the DP4A kernels; many targets with the kernel forced.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run10
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t sweep 90 build/tests/test_kernel_sweep
t memcheck_fused 90 compute-sanitizer --tool memcheck build/tests/test_kernel_sweep --gtest_filter='Registry/KernelSweep.*/cuda_mma_fused*'
t racecheck_fused 90 compute-sanitizer --tool racecheck build/tests/test_kernel_sweep --gtest_filter='Registry/KernelSweep.*/cuda_mma_fused*'
t kernel_caches 60 build/tests/test_kernel_caches
t fused_batch 60 build/tests/test_mma_fused_batch
t tracker 60 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
for b in 48 192 768; do
  t bench_batch$b 60 build/app/corrtrack bench --kernels cuda_mma_fused,cuda_mma_fused_w4,cuda_dp4a_ilp,cuda_dp4a \
    --sizes 1920x1080 --templates 16,24,32,40,64 --modes window --batch $b --runs 20 --csv $E/batch$b.csv
  grep -E "^cuda" $E/bench_batch$b.txt | sed "s/^/batch $b /" >> $E/summary.txt
done
for k in cuda_mma_fused cuda_mma_fused_w4 auto; do
  EXTRAS=0 COUNTS="64 256 1024" KERNEL=$k E=$E/$k bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/$k /" >> $E/summary.txt
done
E=$E/stats COUNTS=256 KERNEL=cuda_mma_fused bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | grep "_stats" >> $E/summary.txt
cp $E/summary.txt "$OUT/run10_summary.txt"; cp $E/batch*.csv "$OUT/"; tar -C /tmp -czf "$OUT/run10.tar.gz" run10
cat $E/summary.txt
