#!/usr/bin/env bash
# cuda_mma_fused_h2 (the sum table in two parts of 16 rows, four blocks an SM at 64x64)
# against cuda_mma_fused on a GPU: the kernel sweep of both against cpu_ref, racecheck and
# memcheck on _h2's sweep cases (its extra barriers), and the bench at 1080p 16/32/64/128, 4K
# 64x64 and the tracker's batch of 768 40x40 windows, then ncu of both at 1080p 64x64. Sources scripts/bench/lib.sh (on the GPU
# host it builds FFmpeg and unpacks the carried build first).
#
#   E=/tmp/parts bash scripts/bench/fused_parts.sh      # $OUT/fused_parts.tar.gz with $OUT set
E=${E:-/tmp/fused_parts}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here="$(dirname "${BASH_SOURCE[0]}")"
# (h100_2026-12-05g call 2 ran these as parts_sweep / parts_racecheck / parts_memcheck.)
BENCH_KEEP=1 LIMIT=150 TESTS="kernel_sweep@*KernelSweep*cuda_mma_fused*" \
  SANITIZE="racecheck@kernel_sweep@*KernelSweep*cuda_mma_fused_h2* memcheck@kernel_sweep@*KernelSweep*cuda_mma_fused_h2*" \
  bash "$here/gpu_tests.sh" >/dev/null
k=cuda_mma_fused,cuda_mma_fused_h2
BENCH_KEEP=1 bash "$here/kernels.sh" fused_1080p 100 --kernels "$k" --sizes 1920x1080 --templates 16,32,64,128 \
  --modes full --runs 30 --ratio-to cuda_mma_fused >/dev/null
BENCH_KEEP=1 bash "$here/kernels.sh" fused_4k 100 --kernels "$k" --sizes 3840x2160 --templates 64 --modes full \
  --runs 30 --ratio-to cuda_mma_fused >/dev/null
BENCH_KEEP=1 bash "$here/kernels.sh" fused_batch768 100 --kernels "$k" --sizes 1920x1080 --templates 40 \
  --modes window --batch 768 --runs 20 --ratio-to cuda_mma_fused >/dev/null
# ncu at 1080p 64x64, the case the parts are for (PARTS_NCU=0 leaves it out).
if [ "${PARTS_NCU:-1}" = 1 ]; then
  for kk in cuda_mma_fused:corr_mma_fused_kernel cuda_mma_fused_h2:corr_mma_fused_four_kernel; do
    BENCH_KEEP=1 bash "$here/profile.sh" ncu "ncu_${kk%%:*}_64" --kernel "${kk#*:}" --limit 90 -- bench \
      --kernels "${kk%%:*}" --sizes 1920x1080 --templates 64 --modes full --runs 3 >/dev/null
  done
fi
cat "$E/summary.txt"
finish fused_parts
