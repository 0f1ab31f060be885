#!/usr/bin/env bash
# Device call 11 (session 19): auto sends small batches to cuda_mma_fused_w4: auto's and the
# tracker's GPU tests, many targets (1-1024, with the host-time split at 256 and 1024), 256
# targets paced live (--realtime, 150 frames), and the single-target eval on 12 sequences
# (auto, whose 3-scale batches now take the tensor-core kernel, against cuda_dp4a_ilp, twice).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run11
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t kernel_caches 60 build/tests/test_kernel_caches
t tracker 60 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
E=$E/targets bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | grep -v prof >> $E/summary.txt
EXTRAS=0 COUNTS=256 FLAGS="--realtime --frames 150" E=$E/live bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/live /' >> $E/summary.txt
ev() {  # NAME KERNEL
  timeout 100 build/app/corrtrack eval .gpu/data --kernel "$2" --json $E/$1.json > $E/$1.txt 2>&1
  echo "$1 [$2]: rc $? $(tail -4 $E/$1.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
for r in 1 2; do ev auto_$r auto; ev ilp_$r cuda_dp4a_ilp; done
if diff <(awk '{print $1,$2,$3,$4,$6}' $E/auto_1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/ilp_1.txt | grep -v '^corrtrack') >/dev/null
then echo "same AUC/P@20/lost: auto vs cuda_dp4a_ilp"; else echo "DIFFERENT: auto vs cuda_dp4a_ilp"; fi >> $E/summary.txt
cp $E/summary.txt "$OUT/run11_summary.txt"; tar -C /tmp -czf "$OUT/run11.tar.gz" run11
cat $E/summary.txt
