#!/usr/bin/env bash
# Device call 5 (session 25): run4's code (cuda_wgmma, n = 32) plus the _c8 variant (B in 8-row
# chunks through 4 buffers: copies 3 chunks ahead), as it lands. The whole sweep
# against cpu_ref (every kernel, variants included), the GPU tests of the tracker, context,
# search, policy and auto's caches; the issue's bench with every tensor-core kernel and auto
# (which times the registry's CUDA kernels per shape, cuda_wgmma among them); ncu of
# cuda_wgmma at the other cases (16, 32, 128, 4K 64) beside run4's 64x64 profile.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run5
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t sweep 150 build/tests/test_kernel_sweep
grep -m8 -E "Failure|mismatch|exception" $E/sweep.txt >> $E/summary.txt
t tracker 120 build/tests/test_tracker
t gpu_context 60 build/tests/test_gpu_context
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t kernel_caches 60 build/tests/test_kernel_caches
t wgmma_layout 30 build/tests/test_wgmma_layout
cp $E/summary.txt "$OUT/run5_summary.txt"
k=cuda_wgmma,cuda_wgmma_d2,cuda_wgmma_w4,cuda_wgmma_c8,cuda_mma_fused,cuda_mma_fused_w4,cuda_mma,cuda_fft,cuda_dp4a_ilp,auto
t bench_1080p 150 build/app/corrtrack bench --kernels $k --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/wgmma_1080p.csv
t bench_4k 80 build/app/corrtrack bench --kernels $k --sizes 3840x2160 --templates 64 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/wgmma_4k.csv
grep -hE "^cuda|^auto|^kernel" $E/bench_1080p.txt $E/bench_4k.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run5_summary.txt"
for c in 1920x1080:16 1920x1080:32 1920x1080:128 3840x2160:64; do
  n=${c/:/_}
  timeout 60 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis -k regex:corr_wgmma_kernel --launch-skip 4 --launch-count 1 \
    build/app/corrtrack bench --kernels cuda_wgmma --sizes ${c%:*} --templates ${c#*:} --modes full --runs 5 > $E/ncu_$n.txt 2>&1
  echo "ncu $n: rc $? $(grep -E 'Duration|Compute \(SM\) Throughput|Eligible Warps Per|Achieved Occupancy|Theoretical Occupancy' $E/ncu_$n.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
done
cp $E/summary.txt "$OUT/run5_summary.txt"; tar -C /tmp -czf "$OUT/run5.tar.gz" run5
cat $E/summary.txt
