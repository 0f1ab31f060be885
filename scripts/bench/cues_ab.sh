#!/usr/bin/env bash
# The cues' cost on the GPU (issue 27/30): `corrtrack track` on a 1080p random texture panning
# 3 px a frame, NVDEC, kernel auto, with 1, 256 and 1024 boxes of 40x40, the colour and
# look-alike cues on (defaults) and off. Run on the GPU host from the repository root after
# `STEPS=ffmpeg bash scripts/gpu_check.sh` (it needs /tmp/ffmpeg and the unpacked build/).
# The run of 2026-12-04 is bench/results/h200_2026-12-04e/cues_ab.txt.
set -u
export LD_LIBRARY_PATH=/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:/usr/local/nvidia/lib64
B=build/app/corrtrack
python3 - 300 <<'PY' | /tmp/ffmpeg/bin/ffmpeg -nostdin -loglevel error -y -f rawvideo -pix_fmt gray -s 1920x1080 -r 30 -i - -c:v libx264 -preset veryfast -pix_fmt yuv420p /tmp/pan.mp4
import sys
import numpy as np
rng = np.random.default_rng(5)
small = rng.integers(0, 256, (360, 680)).astype(np.float32)
tex = np.repeat(np.repeat(small, 4, 0), 4, 1)
tex = (tex[:-2, :-2] + tex[1:-1, 1:-1] + tex[2:, 2:]) / 3
tex = tex.astype(np.uint8)
for t in range(int(sys.argv[1])):
    k = t % 400 if t % 400 < 200 else 400 - t % 400
    x, y = 3 * k, k
    sys.stdout.buffer.write(np.ascontiguousarray(tex[y:y + 1080, x:x + 1920]).tobytes())
PY
for n in 1 256 1024; do
  boxes=()
  if [ $n = 1 ]; then boxes=(--box 900,500,40,40); else
  for ((i=0;i<n;i++)); do c=$((i % 32)); r=$((i / 32)); boxes+=(--box "$((300 + c * 40)),$((200 + r * 20)),40,40"); done; fi
  for cues in on off; do
    extra=(); [ $cues = off ] && extra=(--colour 0 --distractor-weight 0)
    echo "== $n targets, cues $cues"
    CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 $B track /tmp/pan.mp4 "${boxes[@]}" --decode nvdec --kernel auto "${extra[@]}" 2>&1 | grep -iE "wall time|host cues|us/frame:|lost\)|error|refused|flat" | head -6
  done
done
