#!/usr/bin/env bash
# Device call 12 (session 19): run11 again after (1) auto sends only batches of 16+ windows to
# cuda_mma_fused_w4 (a single target's 3 scales stay on cuda_dp4a_ilp) and (2) the GPU search
# lays a target's scales side by side in one atlas row (one stacked template per target, not
# per scale): auto's and the tracker's GPU tests, many targets (1-1024, host-time split at 256
# and 1024), 256 live, and the single-target eval on 12 sequences (auto against cuda_dp4a_ilp,
# once); end to end with and without --video (the sample, and the 1080p clip).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run12
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t kernel_caches 60 build/tests/test_kernel_caches
t tracker 60 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
EXTRAS=0 E=$E/targets bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1
CORRTRACK_GPU_SEARCH_STATS=1 EXTRAS=0 COUNTS=256 E=$E/stats bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/stats /" >> $E/summary.txt
EXTRAS=0 COUNTS=256 FLAGS="--realtime --frames 150" E=$E/live bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/live /' >> $E/summary.txt
vid() {  # NAME INPUT [flags...]: end to end with and without --video
  local name=$1 in=$2; shift 2
  timeout 60 build/app/corrtrack track $in "$@" --kernel auto > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E 'wall time' $E/$name.txt | tr -s ' ')" >> $E/summary.txt
  timeout 60 build/app/corrtrack track $in "$@" --kernel auto --video $E/$name.mp4 > $E/${name}_video.txt 2>&1
  echo "${name} --video: rc $? $(grep -E 'wall time' $E/${name}_video.txt | tr -s ' ')" >> $E/summary.txt
}
vid sample assets/sample.mp4 --decode nvdec
vid sway1 /tmp/sway1080_600.mp4 --decode nvdec --box 940,500,40,40
ev() {  # NAME KERNEL
  timeout 100 build/app/corrtrack eval .gpu/data --kernel "$2" --json $E/$1.json > $E/$1.txt 2>&1
  echo "$1 [$2]: rc $? $(tail -4 $E/$1.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
for r in 1; do ev auto_$r auto; ev ilp_$r cuda_dp4a_ilp; done
if diff <(awk '{print $1,$2,$3,$4,$6}' $E/auto_1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/ilp_1.txt | grep -v '^corrtrack') >/dev/null
then echo "same AUC/P@20/lost: auto vs cuda_dp4a_ilp"; else echo "DIFFERENT: auto vs cuda_dp4a_ilp"; fi >> $E/summary.txt
cp $E/summary.txt "$OUT/run12_summary.txt"; tar -C /tmp -czf "$OUT/run12.tar.gz" run12
cat $E/summary.txt
