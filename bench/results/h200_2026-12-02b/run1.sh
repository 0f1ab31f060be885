#!/usr/bin/env bash
# Device call 1 of session 18 (2026-12-02): every test binary and the sanitizers on main, the
# tracker eval per kernel on 12 sequences (CPU/GPU parity), the GPU search's host-time split,
# and many targets on one 1080p H.264 clip (NVDEC, kernel auto).
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
T_TOTAL=${T_TOTAL:-300} T_TESTS=170 STEPS="${STEPS1:-ffmpeg smi libs tests sanitizer}" bash scripts/gpu_check.sh
lib="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
export LD_LIBRARY_PATH="$lib"
E=/tmp/evals; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; } > $E/summary.txt
ev() {  # NAME KERNEL [flags...]
  local name=$1 k=$2; shift 2
  timeout 100 build/app/corrtrack eval .gpu/data --kernel "$k" "$@" --json $E/$name.json > $E/$name.txt 2>&1
  echo "$name [$k $*]: $(grep -E '^mean' $E/$name.txt | tr -s ' ')" >> $E/summary.txt
}
export CORRTRACK_GPU_SEARCH_STATS=1; ev stats_auto auto; unset CORRTRACK_GPU_SEARCH_STATS
ev auto_1 auto; ev ilp_1 cuda_dp4a_ilp; ev auto_2 auto; ev ilp_2 cuda_dp4a_ilp
ev dp4a_1 cuda_dp4a; ev mma_1 cuda_mma
ev cpu cpu_fast
for p in "auto_1 cpu" "ilp_1 cpu"; do
  set -- $p
  if diff <(awk '{print $1,$2,$3,$4,$6}' $E/$1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/$2.txt | grep -v '^corrtrack') >/dev/null
  then echo "same AUC/P@20/lost: $1 vs $2"; else echo "DIFFERENT: $1 vs $2"; fi
done >> $E/summary.txt
grep -h "gpu search" $E/stats_auto.txt >> $E/summary.txt
# Many targets: a 1080p H.264 clip (testsrc2, x264 veryfast, 300 frames), 40x40 boxes on a grid.
clip=/tmp/t1080.mp4
[ -f $clip ] || timeout 60 /tmp/ffmpeg/bin/ffmpeg -v error -f lavfi -i testsrc2=size=1920x1080:rate=30 -frames:v 300 \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p $clip
for n in 1 16 64 256 1024; do
  boxes=(); cols=32; rows=$(( (n + cols - 1) / cols )); [ $n -lt 32 ] && cols=$n && rows=1
  for ((i = 0; i < n; i++)); do
    x=$(( 20 + (i % cols) * (1880 / cols) )); y=$(( 20 + (i / cols) * (1040 / (rows > 0 ? rows : 1)) ))
    boxes+=(--box "$x,$y,40,40")
  done
  for dec in nvdec; do
    timeout 90 build/app/corrtrack track $clip "${boxes[@]}" --decode $dec --kernel auto > $E/targets_${n}_$dec.txt 2>&1
    echo "targets $n $dec: rc $? $(grep -E 'wall time|correlate|latency' $E/targets_${n}_$dec.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
  done
done
CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 build/app/corrtrack track $clip "${boxes[@]}" --decode nvdec --kernel auto > $E/targets_stats.txt 2>&1
grep -h "gpu search" $E/targets_stats.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/eval_summary.txt"
tar -C /tmp -czf "$OUT/evals.tar.gz" evals
cat $E/summary.txt
