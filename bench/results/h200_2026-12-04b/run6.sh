#!/usr/bin/env bash
# Device call 6 (session 25): where the tensor-core kernels overtake cuda_dp4a_ilp for one
# template, for auto's untimed rule (problems under 2^31 MACs go to cuda_dp4a_ilp untimed; run5
# showed auto at 54 / 142 us on 1080p 16x16 / 32x32 full frames where cuda_mma_fused takes
# 26 / 36). Full frames from 160x120 to 1080p and the tracker's search windows, 16 to 64.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run6
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t bench 150 build/app/corrtrack bench --kernels cuda_dp4a_ilp,cuda_mma_fused,cuda_mma_fused_w4,cuda_wgmma \
  --sizes 160x120,320x240,480x360,640x480,1280x720,1920x1080 --templates 16,32,48x24,64 --modes full,window --runs 30 \
  --ratio-to cuda_dp4a_ilp --csv $E/crossover.csv
grep -hE "^cuda|^kernel" $E/bench.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/run6_summary.txt"; cp $E/crossover.csv "$OUT/"
cat $E/summary.txt
