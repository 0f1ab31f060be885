#!/usr/bin/env bash
# Device call 8 (session 25): auto's untimed rule widened after run7's 3-window batches: fewer
# than 16 templates larger than 16x16 (a single target's scales) go to cuda_mma_fused on sm_80+
# too. auto's cache test, the GPU tracker / search / context / policy tests, the eval with
# --kernel auto (boxes must not move; run7: AUC 0.632, P@20 0.909, median 14127 fps), and
# tracking alone on the 1080p swaying clip with 1 and 16 40x40 targets (session 24, run9:
# 9366 / 10207 / 8237 and 7279 / 6581 / 6290 fps).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run8
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t kernel_caches 60 build/tests/test_kernel_caches
grep -m5 -E "Failure|Expected|Which is|actual" $E/kernel_caches.txt >> $E/summary.txt
t tracker 120 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t gpu_context 60 build/tests/test_gpu_context
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t frame_session 60 build/tests/test_frame_session
cp $E/summary.txt "$OUT/run8_summary.txt"
timeout 150 build/app/corrtrack eval .gpu/data --kernel auto --json $E/eval_auto.json > $E/eval_auto.txt 2>&1
echo "eval_auto: rc $? $(tail -3 $E/eval_auto.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
for r in 1 2 3; do EXTRAS=0 COUNTS="1 16" E=$E/t_$r bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/rep $r /" >> $E/summary.txt; done
cp $E/summary.txt "$OUT/run8_summary.txt"; tar -C /tmp -czf "$OUT/run8.tar.gz" run8
cat $E/summary.txt
