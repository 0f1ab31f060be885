#!/usr/bin/env bash
# Device call 5 of session 18: many targets on a 600-frame 1080p H.264 clip of a texture
# swaying back and forth (up to 8 px a frame; NVDEC; targets of 40x40 inside the part that stays
# in view): kernel auto for 1 to 1024 targets, cuda_dp4a_ilp and cuda_mma at 256, the GPU
# search's host-time split (CORRTRACK_GPU_SEARCH_STATS=1) at 256 and 1024, 256 targets paced
# live (--realtime, 150 frames); then EXTRA, a
# script of further checks, when set.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2); [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
E=/tmp/run5; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; } > $E/summary.txt
timeout 60 build/tests/test_gpu_search > $E/test_gpu_search.txt 2>&1; echo "test_gpu_search: rc $? $(grep -E 'PASSED|FAILED|within' $E/test_gpu_search.txt | tr '\n' '|')" >> $E/summary.txt
clip=/tmp/sway1080_600.mp4
if [ ! -f $clip ]; then
python3 - <<'PY' | timeout 120 /tmp/ffmpeg/bin/ffmpeg -v error -f rawvideo -pix_fmt gray -s 1920x1080 -r 30 -i - -c:v libx264 -preset veryfast -pix_fmt yuv420p -y $clip
import sys, numpy as np, cv2
rng = np.random.default_rng(5)
tex = cv2.resize(rng.integers(0, 256, (350, 600), dtype=np.uint8), (2400, 1400), interpolation=cv2.INTER_CUBIC)
tex = cv2.add(tex, rng.integers(0, 24, tex.shape, dtype=np.uint8))
for t in range(600):
    x = int(round(240 + 200 * np.sin(2 * np.pi * t / 150)))
    y = int(round(160 + 120 * np.sin(2 * np.pi * t / 200)))
    sys.stdout.buffer.write(np.ascontiguousarray(tex[y:y + 1080, x:x + 1920]).tobytes())
PY
fi
ls -la $clip >> $E/summary.txt
targets() {  # N KERNEL [env...]
  local n=$1 k=$2; shift 2
  local boxes=() cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do
    boxes+=(--box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40")
  done
  local f=$E/targets_${n}_$k${1:+_$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)}.txt
  local flags=(); [ "${REALTIME:-0}" = 1 ] && flags=(--realtime --frames 150)
  timeout 100 env "$@" build/app/corrtrack track $clip "${boxes[@]}" --decode nvdec --kernel $k "${flags[@]}" > $f 2>&1
  echo "targets $n $k $*: rc $? $(grep -E 'frames  |wall time|correlate|latency|gpu search' $f | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
for n in 1 16 64 256 1024; do targets $n auto; done
targets 256 cuda_dp4a_ilp; targets 256 cuda_mma
targets 256 auto CORRTRACK_GPU_SEARCH_STATS=1; targets 1024 auto CORRTRACK_GPU_SEARCH_STATS=1
# Live pacing (30 fps, 150 frames): latency from decode start to the boxes, at 256 targets.
REALTIME=1 targets 256 auto REALTIME_RUN=1
[ -n "${EXTRA:-}" ] && { timeout 360 bash "$EXTRA" > $E/extra.txt 2>&1; echo "extra: rc $?" >> $E/summary.txt; tail -60 $E/extra.txt >> $E/summary.txt; }
cp $E/summary.txt "$OUT/run5_summary.txt"; tar -C /tmp -czf "$OUT/run5.tar.gz" run5
cat $E/summary.txt
