#!/usr/bin/env bash
# Device call 1 (session 25): the first run of cuda_wgmma (Hopper wgmma m64n8k32 u8, B by bulk
# copy on mbarriers, cuda_mma_fused's tile and window sums). Its SASS, a short bench (a hang
# would show here first), the sweep against cpu_ref for both shapes, memcheck / racecheck /
# initcheck on them, then the issue's bench against cuda_mma_fused, cuda_mma, cuda_fft and
# cuda_dp4a_ilp, and an ncu profile of the 64x64 case.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run1
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
cuobjdump -sass build/app/corrtrack 2>/dev/null | grep -oE "IGMMA[A-Z0-9._]*|UBLKCP[A-Z0-9._]*|SYNCS[A-Z0-9._]*|WARPGROUP[A-Z0-9._]*" | sort | uniq -c > $E/sass.txt
sed 's/^/sass /' $E/sass.txt >> $E/summary.txt
t quick 40 build/app/corrtrack bench --kernels cuda_wgmma,cuda_mma_fused --sizes 1920x1080 --templates 16,64 --modes full --runs 5
grep -hE "^cuda|^kernel|rror" $E/quick.txt | head -8 >> $E/summary.txt
t sweep_wg 150 build/tests/test_kernel_sweep --gtest_filter='*cuda_wgmma*'
grep -m5 -E "Failure|mismatch|Expected" $E/sweep_wg.txt >> $E/summary.txt
for tool in memcheck racecheck initcheck; do
  t ${tool}_wg 120 compute-sanitizer --tool $tool build/tests/test_kernel_sweep --gtest_filter='*cuda_wgmma/*'
done
cp $E/summary.txt "$OUT/run1_summary.txt"
t bench_1080p 100 build/app/corrtrack bench --kernels cuda_wgmma,cuda_wgmma_r8,cuda_mma_fused,cuda_mma,cuda_fft,cuda_dp4a_ilp \
  --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 --ratio-to cuda_mma_fused --csv $E/wgmma_1080p.csv
t bench_4k 60 build/app/corrtrack bench --kernels cuda_wgmma,cuda_wgmma_r8,cuda_mma_fused,cuda_mma,cuda_fft,cuda_dp4a_ilp \
  --sizes 3840x2160 --templates 64 --modes full --runs 30 --ratio-to cuda_mma_fused --csv $E/wgmma_4k.csv
grep -hE "^cuda|^kernel" $E/bench_1080p.txt $E/bench_4k.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run1_summary.txt"
timeout 90 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  -k regex:corr_wgmma_kernel --launch-skip 4 --launch-count 1 \
  build/app/corrtrack bench --kernels cuda_wgmma --sizes 1920x1080 --templates 64 --modes full --runs 5 > $E/ncu_wg64.txt 2>&1
echo "ncu_wg64: rc $?" >> $E/summary.txt
grep -E "Duration|Throughput|Eligible|Issued Warp|Achieved Occupancy|Theoretical Occupancy|Block Limit|No Eligible" $E/ncu_wg64.txt | tr -s ' ' >> $E/summary.txt
cp $E/summary.txt "$OUT/run1_summary.txt"; tar -C /tmp -czf "$OUT/run1.tar.gz" run1
cat $E/summary.txt
