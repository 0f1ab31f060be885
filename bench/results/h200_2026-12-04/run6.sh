#!/usr/bin/env bash
# Device call 6 (session 24): run5 again after two more steps on the same kernels. run5's ncu
# at 256 targets: sampling 108 -> 56 us, the template scan 37 -> 24 us. Now the area path
# (scale 1.25-2, where 40-px targets with ~32-px templates sample) weighs a column's taps
# once instead of per pixel (their double divisions), and the scan takes 32 rows a thread
# (tiles of 8192: a quarter of the tiles' fixed costs). Same checks and timings as run5.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run6
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t gpu_search 60 build/tests/test_gpu_search
t cuda_integral 60 build/tests/test_cuda_integral
t memcheck_search 120 compute-sanitizer --tool memcheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t initcheck_search 120 compute-sanitizer --tool initcheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t memcheck_prefix 60 compute-sanitizer --tool memcheck build/tests/test_cuda_integral --gtest_filter='*TemplatePrefix*'
t racecheck_prefix 60 compute-sanitizer --tool racecheck build/tests/test_cuda_integral --gtest_filter='*TemplatePrefix*'
t tracker 120 build/tests/test_tracker
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t fused_batch 60 build/tests/test_mma_fused_batch
t kernel_caches 60 build/tests/test_kernel_caches
EXTRAS=0 COUNTS="1 16" E=$E/t_0 bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1  # also makes the clip
clip=/tmp/sway1080_600.mp4
boxes() {
  local n=$1 cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40"; done
}
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 1000 --launch-count 30 \
  build/app/corrtrack track $clip $(boxes 256) --decode nvdec --kernel auto --frames 300 > $E/ncu_t256.txt 2>&1
echo "ncu t256: rc $?" >> $E/summary.txt
grep -E '^  [A-Za-z_].*\(|gpu__time_duration' $E/ncu_t256.txt | sed -E 's/^  (void )?(corrtrack::<unnamed>::)?([A-Za-z0-9_]+).*/\3/; s/ +/ /g' | paste -sd' \n' >> $E/summary.txt
for r in 1 2 3; do EXTRAS=0 COUNTS="256 1024" E=$E/t_$r bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/rep $r /" >> $E/summary.txt; done
CORRTRACK_GPU_SEARCH_STATS=1 EXTRAS=0 COUNTS="1 256" E=$E/s bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/stats /' >> $E/summary.txt
for r in 1 2; do
  timeout 100 build/app/corrtrack eval .gpu/data --kernel auto --json $E/eval_$r.json > $E/eval_$r.txt 2>&1
  echo "eval_$r: rc $? $(tail -3 $E/eval_$r.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
done
CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 build/app/corrtrack eval .gpu/data --sequences vot_ball1,tld_panda --kernel auto > $E/stats_eval.txt 2>&1
grep -h "gpu search" $E/stats_eval.txt | sed "s/^/eval stats: /" >> $E/summary.txt
cp $E/summary.txt "$OUT/run6_summary.txt"; tar -C /tmp -czf "$OUT/run6.tar.gz" run6
t sweep 110 build/tests/test_kernel_sweep
cp $E/summary.txt "$OUT/run6_summary.txt"
cat $E/summary.txt
