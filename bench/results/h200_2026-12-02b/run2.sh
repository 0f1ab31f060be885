#!/usr/bin/env bash
# Device call 2 of session 18: test_gpu_search, many targets on a panning-texture 1080p H.264
# clip (NVDEC, kernel auto; 1 to 1024 targets of 40x40), and the tracker eval (auto and
# cuda_dp4a_ilp, alternating) on the 12 sequences.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || { tail -20 /tmp/gpu_check_ffmpeg.txt; }
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
E=/tmp/run2; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; } > $E/summary.txt
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2); [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
timeout 60 build/tests/test_gpu_search > $E/test_gpu_search.txt 2>&1; echo "test_gpu_search: rc $? $(grep -E 'PASSED|FAILED|within' $E/test_gpu_search.txt | tr '\n' '|')" >> $E/summary.txt
clip=/tmp/pan1080.mp4
if [ ! -f $clip ]; then
python3 - <<'PY' | timeout 120 /tmp/ffmpeg/bin/ffmpeg -v error -f rawvideo -pix_fmt gray -s 1920x1080 -r 30 -i - -c:v libx264 -preset veryfast -pix_fmt yuv420p -y $clip
import sys, numpy as np, cv2
rng = np.random.default_rng(5)
tex = cv2.resize(rng.integers(0, 256, (350, 600), dtype=np.uint8), (2400, 1400), interpolation=cv2.INTER_CUBIC)
tex = cv2.add(tex, rng.integers(0, 24, tex.shape, dtype=np.uint8))
for t in range(300):
    x, y = 40 + 2 * t % 400, 30 + t % 280
    sys.stdout.buffer.write(np.ascontiguousarray(tex[y:y + 1080, x:x + 1920]).tobytes())
PY
fi
ls -la $clip >> $E/summary.txt
for n in 1 16 64 256 1024; do
  boxes=(); cols=32; [ $n -lt 32 ] && cols=$n; rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do
    boxes+=(--box "$(( 20 + (i % cols) * (1860 / cols) )),$(( 20 + (i / cols) * (1000 / rows) )),40,40")
  done
  timeout 100 build/app/corrtrack track $clip "${boxes[@]}" --decode nvdec --kernel auto > $E/targets_$n.txt 2>&1
  echo "targets $n: rc $? $(grep -E 'frames|wall time|correlate|latency' $E/targets_$n.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
  if [ $n = 256 ]; then
    CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 build/app/corrtrack track $clip "${boxes[@]}" --decode nvdec --kernel auto > $E/targets_stats.txt 2>&1
    grep -h "gpu search" $E/targets_stats.txt >> $E/summary.txt
  fi
done
ev() {  # NAME KERNEL
  timeout 100 build/app/corrtrack eval .gpu/data --kernel "$2" --json $E/$1.json > $E/$1.txt 2>&1
  echo "$1 [$2]: $(grep -E '^mean' $E/$1.txt | tr -s ' ')" >> $E/summary.txt
}
for r in 1 2 3; do ev auto_$r auto; ev ilp_$r cuda_dp4a_ilp; done
cp $E/summary.txt "$OUT/summary.txt"; tar -C /tmp -czf "$OUT/run2.tar.gz" run2
cat $E/summary.txt
