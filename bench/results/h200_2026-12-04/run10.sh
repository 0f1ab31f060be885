#!/usr/bin/env bash
# Device call 10 (session 24): run9's sampler with its two area loops folded into one lambda
# (no change in arithmetic). Checks: the GPU search tests (the bit-for-bit sampler test among
# them) and the GPU tracker tests; one 256-target run.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run10
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t gpu_search 60 build/tests/test_gpu_search
t tracker 120 build/tests/test_tracker
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
EXTRAS=0 COUNTS="256" E=$E/t bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1
cp $E/summary.txt "$OUT/run10_summary.txt"
cat $E/summary.txt
