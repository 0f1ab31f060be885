#!/usr/bin/env bash
# Device call 7 (session 24): run6's two steps were slower (sampling 56 -> 64 us, the scan 24
# -> 28) and are reverted: this is run5's code. Its checks again (the GPU tests, the new ones
# under the sanitizers), ncu's full sections for the three kernels that lead a 256-target
# frame (search-patch sampling, the template scan, the ranked peaks), to name their limiter,
# then 1, 16, 256 and 1024 targets three times and eval twice.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run7
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t gpu_search 60 build/tests/test_gpu_search
t cuda_integral 60 build/tests/test_cuda_integral
t memcheck_search 120 compute-sanitizer --tool memcheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t racecheck_prefix 60 compute-sanitizer --tool racecheck build/tests/test_cuda_integral --gtest_filter='*TemplatePrefix*'
t tracker 120 build/tests/test_tracker
t fused_batch 60 build/tests/test_mma_fused_batch
EXTRAS=0 COUNTS="1" E=$E/warm bash bench/results/h200_2026-12-02c/targets.sh > /dev/null 2>&1  # makes the clip
clip=/tmp/sway1080_600.mp4
boxes() {
  local n=$1 cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40"; done
}
N="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
for k in sample_patches template_scan band_sidelobes; do
  timeout 100 $N -k regex:$k --launch-skip 300 --launch-count 2 build/app/corrtrack track $clip $(boxes 256) --decode nvdec --kernel auto --frames 300 > $E/ncu_$k.txt 2>&1
  echo "ncu $k: rc $?" >> $E/summary.txt
  grep -E 'Duration|Grid Size|Registers Per|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Theoretical Occupancy|Block Limit|Issued Ipc|No Eligible|Warp Cycles Per Issued|One or More Eligible' $E/ncu_$k.txt | tr -s ' ' | tr '\n' '|' | cut -c1-3000 >> $E/summary.txt; echo >> $E/summary.txt
  grep -iE 'stall|bottleneck|limit' $E/ncu_$k.txt | grep -v '^ *-' | tr -s ' ' | head -12 | cut -c1-300 >> $E/summary.txt
done
for r in 1 2 3; do EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_$r bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/rep $r /" >> $E/summary.txt; done
for r in 1 2; do
  timeout 100 build/app/corrtrack eval .gpu/data --kernel auto --json $E/eval_$r.json > $E/eval_$r.txt 2>&1
  echo "eval_$r: rc $? $(tail -3 $E/eval_$r.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
done
cp $E/summary.txt "$OUT/run7_summary.txt"; tar -C /tmp -czf "$OUT/run7.tar.gz" run7
cat $E/summary.txt
