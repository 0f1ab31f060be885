#!/usr/bin/env bash
# Which tracker option costs the GPU path its rate (issue 30): `corrtrack track` on the 1080p
# texture panning 3 px a frame (lib.sh's pan_clip), NVDEC, kernel auto, with
# 256 and with 1 boxes of 40x40, the defaults twice against the cues off, then each option off
# alone (--filter 0, --colour 0, --distractor-weight 0, --colour-extent 0),
# CORRTRACK_GPU_SEARCH_STATS=1.
# Run on the GPU host from the repository root; it sources scripts/bench/lib.sh (FFmpeg, the
# library path, the clip).
#   bash scripts/bench/options_ab.sh | tee $OUT/options_ab.txt
set -u
E=${E:-/tmp/options_ab}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=$CORRTRACK
pan=$(pan_clip 300)
ls -la "$pan"
run() {  # n extra...
  local n=$1; shift
  local boxes=()
  if [ "$n" = 1 ]; then boxes=(--box "900,500,40,40"); else
  for ((i=0;i<n;i++)); do c=$((i % 32)); r=$((i / 32)); boxes+=(--box "$((300 + c * 40)),$((200 + r * 20)),40,40"); done; fi
  echo "== $n targets: $*"
  CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 $B track "$pan" "${boxes[@]}" --decode nvdec --kernel auto "$@" 2>&1 | grep -iE "wall time|host cues|us/frame:|error" | head -4
}
for _ in 1 2; do
run 256
run 256 --colour 0 --distractor-weight 0
done
run 256 --colour 0
run 256 --distractor-weight 0
run 256 --colour-extent 0
run 256 --colour 0 --distractor-weight 0 --colour-extent 0
run 1
run 1 --filter 0
run 1 --colour 0
run 1 --distractor-weight 0
run 1 --colour-extent 0
run 1 --colour 0 --distractor-weight 0
run 1 --filter 0 --colour 0 --distractor-weight 0
