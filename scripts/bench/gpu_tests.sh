#!/usr/bin/env bash
# GPU test binaries and compute-sanitizer on chosen tests, one verdict line each in
# $E/summary.txt (the part of a device call that checks a change before timing it). For every
# test binary and every sanitizer, `scripts/gpu_check.sh` (STEPS="tests sanitizer") is the
# routine call; this is for a few chosen ones with their own filters.
#
#   E=/tmp/run5 TESTS="gpu_search cuda_integral tracker policy@Policy.CpuAndGpu*" \
#     SANITIZE="memcheck@gpu_search@DeviceSearchGpu.* racecheck@cuda_integral@*TemplatePrefix*" \
#     bash scripts/bench/gpu_tests.sh
#
# TESTS: BIN[@GTEST_FILTER] ... (build/tests/test_BIN; output $E/BIN.txt). SANITIZE:
# TOOL@BIN[@GTEST_FILTER] ... (TOOL memcheck, racecheck or initcheck; $E/TOOL_BIN.txt).
# LIMIT: seconds per binary (default 120). GREP: an extra pattern whose first lines from each
# output go into the summary (e.g. "Failure|mismatch|exception"). Sources scripts/bench/lib.sh
# (the GPU host's FFmpeg and libraries, once per call).
#
# How the dated runs in bench/results/ used it (their scripts, one per call, are gone; each
# call also began with lib.sh's preamble). "policy" is policy@Policy.CpuAndGpu* throughout.
#   h200_2026-12-02b run6   TESTS="kernel_sweep tracker gpu_context gpu_search policy pipeline"
#                           SANITIZE="memcheck@kernel_sweep@*cuda_mma_fused* racecheck@kernel_sweep@*cuda_mma_fused*"
#   h200_2026-12-02c run8   TESTS="cuda_integral kernel_sweep tracker gpu_search policy"
#                           SANITIZE="memcheck@kernel_sweep@*Batched*cuda_dp4a*:*Batched*cuda_fft*"
#                    run9   TESTS="kernel_sweep tracker gpu_search policy cpu_kernels"
#                    run10  TESTS="kernel_sweep kernel_caches mma_fused_batch tracker gpu_search policy"
#                           SANITIZE="memcheck@kernel_sweep@Registry/KernelSweep.*/cuda_mma_fused* racecheck@(same)"
#                    run11, run12  TESTS="kernel_caches tracker gpu_search policy"
#   h200_2026-12-02d run13  TESTS="kernel_caches tracker gpu_search cuda_integral cuda_peak mma_box_sums
#                           mma_fused_batch gpu_context pipeline streams policy kernel_sweep" LIMIT=90
#                           SANITIZE="memcheck@mma_fused_batch"
#   h200_2026-12-03 run2    TESTS="tracker gpu_search kernel_caches policy kernel_sweep" SANITIZE="memcheck@tracker@*GraphReplayed*"
#                   run4    TESTS="tracker@*Graph*:*OnePass*:*DeviceMaps*"
#   h200_2026-12-04 run1    TESTS="gpu_search tracker policy cuda_peak kernel_sweep"
#                           SANITIZE="memcheck@gpu_search@DeviceSearchGpu.* racecheck@gpu_search@DeviceSearchGpu.*"
#                   run2, run3  TESTS="gpu_search tracker policy" SANITIZE="memcheck@gpu_search@DeviceSearchGpu.*
#                           initcheck@gpu_search@DeviceSearchGpu.* racecheck@gpu_search@DeviceSearchGpu.*
#                           memcheck@tracker@*GraphReplayed*"
#                   run5, run6  TESTS="gpu_search cuda_integral tracker policy mma_fused_batch kernel_caches kernel_sweep"
#                           SANITIZE="memcheck@gpu_search@DeviceSearchGpu.* initcheck@gpu_search@DeviceSearchGpu.*
#                           memcheck@cuda_integral@*TemplatePrefix* racecheck@cuda_integral@*TemplatePrefix*"
#                   run7    TESTS="gpu_search cuda_integral tracker mma_fused_batch"
#                           SANITIZE="memcheck@gpu_search@DeviceSearchGpu.* racecheck@cuda_integral@*TemplatePrefix*"
#                   run8    TESTS="gpu_search tracker policy" SANITIZE="{memcheck,racecheck,initcheck}@gpu_search@DeviceSearchGpu.*"
#                   run9    TESTS="gpu_search cuda_integral tracker mma_fused_batch kernel_caches policy kernel_sweep"
#                           SANITIZE="{memcheck,racecheck,initcheck}@gpu_search@DeviceSearchGpu.* memcheck@cuda_integral@*TemplatePrefix*"
#                   run10   TESTS="gpu_search tracker policy"
#   h200_2026-12-04b run1, run2  TESTS="kernel_sweep@*cuda_wgmma*" SANITIZE="{memcheck,racecheck,initcheck}@kernel_sweep@*cuda_wgmma*"
#                           GREP="Failure|mismatch|Expected" (after `profile.sh sass` and a quick kernels.sh)
#                    run3   TESTS="kernel_sweep@*cuda_wgmma*" SANITIZE="{memcheck,racecheck,initcheck}@kernel_sweep@*/cuda_wgmma"
#                    run4   as run3, TESTS adding "tracker kernel_caches"
#                    run5   TESTS="kernel_sweep tracker gpu_context gpu_search policy kernel_caches wgmma_layout"
#                    run7   TESTS="kernel_caches kernel_sweep tracker gpu_search gpu_context policy"
#                    run8   TESTS="kernel_caches tracker gpu_search gpu_context policy frame_session"
#                    run10  TESTS="kernel_sweep@*cuda_mma*:*cuda_wgmma*:*/auto tracker gpu_search kernel_caches"
#                           SANITIZE="{memcheck,racecheck}@kernel_sweep@*/cuda_mma_fused:*/cuda_wgmma"
# ({a,b}@x stands for a@x b@x.) Runs of 2026-11-29 to 2026-12-02 (session 17) and 2026-12-04c
# used scripts/gpu_check.sh alone; their READMEs give its STEPS.
set -uo pipefail
E=${E:-/tmp/gpu_tests}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set -f  # filters are gtest patterns, not file names
limit=${LIMIT:-120}
for spec in ${TESTS:-}; do
  IFS=@ read -r bin filter <<<"$spec"
  t "$bin" "$limit" build/tests/test_$bin ${filter:+--gtest_filter=$filter}
  [ -n "${GREP:-}" ] && grep -m8 -E "$GREP" "$E/$bin.txt" >> "$E/summary.txt"
done
for spec in ${SANITIZE:-}; do
  IFS=@ read -r tool bin filter <<<"$spec"
  t "${tool}_$bin" "$limit" compute-sanitizer --tool "$tool" build/tests/test_$bin ${filter:+--gtest_filter=$filter}
done
cat "$E/summary.txt"
