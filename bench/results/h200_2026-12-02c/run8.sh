#!/usr/bin/env bash
# Device call 8 (session 19): the host-side fixes for many targets (vectorized template blend,
# one-pass template statistics, the template prefix over the whole GPU): the GPU tests that
# use the template prefix (test_cuda_integral, the kernel sweep's dp4a/fft/jpdc cases, test_tracker,
# test_gpu_search), then run7's many-target cases and profile.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run8
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t integral 60 build/tests/test_cuda_integral
t sweep 90 build/tests/test_kernel_sweep
t memcheck_batch 90 compute-sanitizer --tool memcheck build/tests/test_kernel_sweep --gtest_filter='*Batched*cuda_dp4a*:*Batched*cuda_fft*'
t tracker 60 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
E=$E/targets bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1
cp $E/summary.txt "$OUT/run8_summary.txt"; tar -C /tmp -czf "$OUT/run8.tar.gz" run8
cat $E/summary.txt
