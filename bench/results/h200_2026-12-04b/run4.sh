#!/usr/bin/env bash
# Device call 4 (session 25): cuda_wgmma rewritten for n = 32 (m64n32k32: a warp's 16 m rows are
# 4 output rows x 4 chunks of 32, so one wgmma is 16 rows x 128 outputs of a warpgroup), B in
# chunks of 16 template rows by bulk copy; variants _d2 (two groups in flight) and _w4 (one
# warpgroup). The sweep against cpu_ref, the sanitizers on cuda_wgmma, the GPU tracker tests
# (every kernel tracks), the bench, and an ncu source-level profile of the 64x64 case.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run4
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t sweep_wg 150 build/tests/test_kernel_sweep --gtest_filter='*cuda_wgmma*'
grep -m8 -E "Failure|mismatch|Expected|Which is|exception" $E/sweep_wg.txt >> $E/summary.txt
for tool in memcheck racecheck initcheck; do
  t ${tool}_wg 150 compute-sanitizer --tool $tool build/tests/test_kernel_sweep --gtest_filter='*/cuda_wgmma'
done
t tracker 120 build/tests/test_tracker
t kernel_caches 60 build/tests/test_kernel_caches
cp $E/summary.txt "$OUT/run4_summary.txt"
k=cuda_wgmma,cuda_wgmma_d2,cuda_wgmma_w4,cuda_mma_fused,cuda_mma,cuda_fft,cuda_dp4a_ilp
t bench_1080p 100 build/app/corrtrack bench --kernels $k --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/wgmma_1080p.csv
t bench_4k 60 build/app/corrtrack bench --kernels $k --sizes 3840x2160 --templates 64 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/wgmma_4k.csv
grep -hE "^cuda|^kernel" $E/bench_1080p.txt $E/bench_4k.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run4_summary.txt"
timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section SourceCounters -k regex:corr_wgmma_kernel --launch-skip 4 --launch-count 1 -o $E/wg64 \
  build/app/corrtrack bench --kernels cuda_wgmma --sizes 1920x1080 --templates 64 --modes full --runs 5 > $E/ncu_wg64.txt 2>&1
echo "ncu_wg64: rc $?" >> $E/summary.txt
ncu -i $E/wg64.ncu-rep > $E/ncu_wg64_details.txt 2>&1
ncu -i $E/wg64.ncu-rep --page source --csv --print-source sass > $E/wg64_source.csv 2>&1
grep -E "Duration|Throughput|Eligible|Issued Warp|Achieved Occupancy|Theoretical Occupancy|Block Limit|No Eligible" $E/ncu_wg64_details.txt | tr -s ' ' >> $E/summary.txt
cp $E/summary.txt "$OUT/run4_summary.txt"; tar -C /tmp -czf "$OUT/run4.tar.gz" run4
cat $E/summary.txt
