#!/usr/bin/env bash
# Device call 7 (session 25): auto's untimed rule after run6: one template larger than 16x16,
# or a problem of 2^26 MACs and more, goes to cuda_mma_fused (sm_80+) instead of
# cuda_dp4a_ilp. The sweep (auto included), auto's cache test, the GPU tracker, search, context
# and policy tests, the eval on the carried sequences with --kernel auto (the tracker's boxes
# must not move), the issue's bench with auto, and 3-window batches (a single target's scales,
# left on cuda_dp4a_ilp) for the record.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run7
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t kernel_caches 60 build/tests/test_kernel_caches
grep -m5 -E "Failure|Expected|Which is|actual" $E/kernel_caches.txt >> $E/summary.txt
t sweep 150 build/tests/test_kernel_sweep
t tracker 120 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t gpu_context 60 build/tests/test_gpu_context
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
cp $E/summary.txt "$OUT/run7_summary.txt"
timeout 150 build/app/corrtrack eval .gpu/data --kernel auto --json $E/eval_auto.json > $E/eval_auto.txt 2>&1
echo "eval_auto: rc $? $(tail -3 $E/eval_auto.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
k=auto,cuda_mma_fused,cuda_wgmma,cuda_mma,cuda_fft,cuda_dp4a_ilp
t bench_1080p 100 build/app/corrtrack bench --kernels $k --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/auto_1080p.csv
t bench_4k 60 build/app/corrtrack bench --kernels $k --sizes 3840x2160 --templates 64 --modes full --runs 30 \
  --ratio-to cuda_mma_fused --csv $E/auto_4k.csv
t batch3 60 build/app/corrtrack bench --kernels cuda_dp4a_ilp,cuda_mma_fused,cuda_mma_fused_w4 --sizes 1920x1080 \
  --templates 16,32,40,64 --modes window --batch 3 --runs 30 --csv $E/batch3.csv
grep -hE "^cuda|^auto|^kernel" $E/bench_1080p.txt $E/bench_4k.txt $E/batch3.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run7_summary.txt"; tar -C /tmp -czf "$OUT/run7.tar.gz" run7
cat $E/summary.txt
