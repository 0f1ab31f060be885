#!/usr/bin/env bash
# Device call 9 (session 25): run8's tracking rates fell (1 target 7254-8122 fps, eval median
# 10953 against run7's 14127) after a single target's three scale windows moved from
# cuda_dp4a_ilp to cuda_mma_fused; the bench times run() alone, a tracker also sets its
# template every frame. A/B in one call: the same commands with auto as built and with
# CORRTRACK_AUTO_KERNEL=cuda_dp4a_ilp, interleaved.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run9
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
EXTRAS=0 COUNTS="1" E=$E/warm bash bench/results/h200_2026-12-02c/targets.sh > /dev/null 2>&1  # makes the clip
for r in 1 2; do
  for pin in "" cuda_dp4a_ilp cuda_mma_fused; do
    CORRTRACK_AUTO_KERNEL=$pin timeout 100 build/app/corrtrack eval .gpu/data --kernel auto > $E/eval_${r}_${pin:-auto}.txt 2>&1
    echo "eval $r ${pin:-auto}: rc $? $(tail -3 $E/eval_${r}_${pin:-auto}.txt | head -1 | tr -s ' ')" >> $E/summary.txt
    CORRTRACK_AUTO_KERNEL=$pin EXTRAS=0 COUNTS="1" E=$E/t_${r}_${pin:-auto} bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/track $r ${pin:-auto} /" >> $E/summary.txt
  done
done
cp $E/summary.txt "$OUT/run9_summary.txt"
cat $E/summary.txt
