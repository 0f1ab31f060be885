#!/usr/bin/env bash
# The cues' cost on the GPU (issue 27/30): `corrtrack track` on a 1080p random texture panning
# 3 px a frame, NVDEC, kernel auto, with 1, 256 and 1024 boxes of 40x40, the colour and
# look-alike cues on (defaults) and off. Run on the GPU host from the repository root; it
# sources scripts/bench/lib.sh (FFmpeg, the unpacked build, the library path, the clip).
# The run of 2026-12-04 is bench/results/h200_2026-12-04e/cues_ab.txt.
set -u
E=${E:-/tmp/cues_ab}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=$CORRTRACK
pan=$(pan_clip 300)
for n in 1 256 1024; do
  boxes=()
  if [ $n = 1 ]; then boxes=(--box 900,500,40,40); else
  for ((i=0;i<n;i++)); do c=$((i % 32)); r=$((i / 32)); boxes+=(--box "$((300 + c * 40)),$((200 + r * 20)),40,40"); done; fi
  for cues in on off; do
    extra=(); [ $cues = off ] && extra=(--colour 0 --distractor-weight 0)
    echo "== $n targets, cues $cues"
    CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 $B track "$pan" "${boxes[@]}" --decode nvdec --kernel auto "${extra[@]}" 2>&1 | grep -iE "wall time|host cues|us/frame:|lost\)|error|refused|flat" | head -6
  done
done
