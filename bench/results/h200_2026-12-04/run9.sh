#!/usr/bin/env bash
# Device call 9 (session 24): two steps on run7's code. (1) Template stacks of more than one
# 4096-row tile (many targets) are scanned by CUB's device scan, in place, over the whole GPU
# (one block took 24 us for 30720 rows). (2) The sampler's area path below scale 2 filters
# each source row a block reads once into shared memory, then sums columns, as the host does
# (run7: the taps' integer work is the kernel's cost). Checks: the sampler and prefix tests
# under the sanitizers, the GPU tracker tests, the correlators' batch tests and the sweep;
# then run8's timings.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run9
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t gpu_search 60 build/tests/test_gpu_search
for tool in memcheck racecheck initcheck; do
  t ${tool}_search 120 compute-sanitizer --tool $tool build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
done
t cuda_integral 60 build/tests/test_cuda_integral
t memcheck_prefix 60 compute-sanitizer --tool memcheck build/tests/test_cuda_integral --gtest_filter='*TemplatePrefix*'
t tracker 120 build/tests/test_tracker
t fused_batch 60 build/tests/test_mma_fused_batch
t kernel_caches 60 build/tests/test_kernel_caches
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
EXTRAS=0 COUNTS="1" E=$E/warm bash bench/results/h200_2026-12-02c/targets.sh > /dev/null 2>&1  # makes the clip
clip=/tmp/sway1080_600.mp4
boxes() {
  local n=$1 cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40"; done
}
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 1000 --launch-count 16 \
  build/app/corrtrack track $clip $(boxes 256) --decode nvdec --kernel auto --frames 300 > $E/ncu_t256.txt 2>&1
echo "ncu t256: rc $?" >> $E/summary.txt
grep -E '^  [A-Za-z_].*\(|gpu__time_duration' $E/ncu_t256.txt | sed -E 's/^  (void )?(corrtrack::<unnamed>::)?([A-Za-z0-9_]+).*/\3/; s/ +/ /g' | paste -sd' \n' >> $E/summary.txt
for r in 1 2 3; do EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_$r bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/rep $r /" >> $E/summary.txt; done
CORRTRACK_GPU_SEARCH_STATS=1 EXTRAS=0 COUNTS="1 256" E=$E/s bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/stats /' >> $E/summary.txt
timeout 100 build/app/corrtrack eval .gpu/data --kernel auto --json $E/eval_1.json > $E/eval_1.txt 2>&1
echo "eval_1: rc $? $(tail -3 $E/eval_1.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 build/app/corrtrack eval .gpu/data --sequences vot_ball1,tld_panda --kernel auto > $E/stats_eval.txt 2>&1
grep -h "gpu search" $E/stats_eval.txt | sed "s/^/eval stats: /" >> $E/summary.txt
cp $E/summary.txt "$OUT/run9_summary.txt"; tar -C /tmp -czf "$OUT/run9.tar.gz" run9
t sweep 110 build/tests/test_kernel_sweep
cp $E/summary.txt "$OUT/run9_summary.txt"
cat $E/summary.txt
