#!/usr/bin/env bash
# Device call 10 (session 25): stage_tile (the tensor-core kernels' frame-tile staging) loads
# 4 words a thread before storing them (run4's profile: the stores' waits on their own loads
# were 11% of cuda_wgmma's samples). The tensor kernels' sweep, memcheck / racecheck on the
# fused ones, the tracker and search tests, and the issue's bench for the README.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run10
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t sweep_mma 150 build/tests/test_kernel_sweep --gtest_filter='*cuda_mma*:*cuda_wgmma*:*/auto'
grep -m8 -E "Failure|mismatch|exception" $E/sweep_mma.txt >> $E/summary.txt
for tool in memcheck racecheck; do
  t ${tool}_fused 150 compute-sanitizer --tool $tool build/tests/test_kernel_sweep --gtest_filter='*/cuda_mma_fused:*/cuda_wgmma'
done
t tracker 120 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t kernel_caches 60 build/tests/test_kernel_caches
cp $E/summary.txt "$OUT/run10_summary.txt"
k=cuda_wgmma,cuda_mma_fused,cuda_mma_fused_w4,cuda_mma,cuda_fft,cuda_dp4a_ilp,auto
t bench_1080p 100 build/app/corrtrack bench --kernels $k --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/final_1080p.csv
t bench_4k 60 build/app/corrtrack bench --kernels $k --sizes 3840x2160 --templates 64 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/final_4k.csv
grep -hE "^cuda|^auto|^kernel" $E/bench_1080p.txt $E/bench_4k.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run10_summary.txt"; cp $E/final_1080p.csv $E/final_4k.csv "$OUT/"
cat $E/summary.txt
