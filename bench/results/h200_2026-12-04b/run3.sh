#!/usr/bin/env bash
# Device call 3 (session 25): cuda_wgmma with the dynamic shared limit raised to the opt-in
# limit less the kernel's static shared memory (runs 1-2 asked for the whole opt-in limit and
# were refused for every case past 48 KiB), plus the _d2 variant (two wgmma groups in flight).
# The sweep against cpu_ref for the three shapes, memcheck / racecheck / initcheck on
# cuda_wgmma, the issue's bench, and an ncu source-level profile of the 64x64 case.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run3
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t sweep_wg 150 build/tests/test_kernel_sweep --gtest_filter='*cuda_wgmma*'
grep -m8 -E "Failure|mismatch|Expected|Which is|exception" $E/sweep_wg.txt >> $E/summary.txt
for tool in memcheck racecheck initcheck; do
  t ${tool}_wg 150 compute-sanitizer --tool $tool build/tests/test_kernel_sweep --gtest_filter='*/cuda_wgmma'
done
cp $E/summary.txt "$OUT/run3_summary.txt"
k=cuda_wgmma,cuda_wgmma_d2,cuda_wgmma_r8,cuda_mma_fused,cuda_mma,cuda_fft,cuda_dp4a_ilp
t bench_1080p 100 build/app/corrtrack bench --kernels $k --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/wgmma_1080p.csv
t bench_4k 60 build/app/corrtrack bench --kernels $k --sizes 3840x2160 --templates 64 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/wgmma_4k.csv
grep -hE "^cuda|^kernel" $E/bench_1080p.txt $E/bench_4k.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run3_summary.txt"
timeout 120 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section SourceCounters -k regex:corr_wgmma_kernel --launch-skip 4 --launch-count 1 -o $E/wg64 \
  build/app/corrtrack bench --kernels cuda_wgmma --sizes 1920x1080 --templates 64 --modes full --runs 5 > $E/ncu_wg64.txt 2>&1
echo "ncu_wg64: rc $?" >> $E/summary.txt
ncu -i $E/wg64.ncu-rep > $E/ncu_wg64_details.txt 2>&1
ncu -i $E/wg64.ncu-rep --page source --csv --print-source sass > $E/wg64_source.csv 2>&1
grep -E "Duration|Throughput|Eligible|Issued Warp|Achieved Occupancy|Theoretical Occupancy|Block Limit|No Eligible" $E/ncu_wg64_details.txt | tr -s ' ' >> $E/summary.txt
cp $E/summary.txt "$OUT/run3_summary.txt"; tar -C /tmp -czf "$OUT/run3.tar.gz" run3
cat $E/summary.txt
