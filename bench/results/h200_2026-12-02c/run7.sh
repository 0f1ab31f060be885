#!/usr/bin/env bash
# Device call 7 (session 19): where the time of many targets goes, and issue 11's profiles.
# 1. `corrtrack track` with 256 and 1024 targets on the swaying-texture clip (run5's), NVDEC and
#    software decode, under gperftools' CPU profiler (LD_PRELOAD of .gpu/prof/libprofiler.so.0;
#    the profiles are read back on the build machine with google-pprof against the same binary),
#    and with CORRTRACK_GPU_SEARCH_STATS=1.
# 2. ncu (--clock-control none) of cuda_mma_fused on the five issue-11 cases and of the batched
#    correlation of 256 targets.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
rm -rf build
STEPS="ffmpeg libs" T_TOTAL=200 bash scripts/gpu_check.sh > /tmp/gpu_check_ffmpeg.txt 2>&1 || tail -20 /tmp/gpu_check_ffmpeg.txt
export LD_LIBRARY_PATH="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
src=$(grep '^CMAKE_HOME_DIRECTORY' build/CMakeCache.txt | cut -d= -f2); [ -e "$src" ] || { mkdir -p "$(dirname "$src")"; ln -s "$PWD" "$src"; }
E=/tmp/run7; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader; git log -1 --format=%h 2>/dev/null; } > $E/summary.txt
clip=/tmp/sway1080_600.mp4
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
ls -la $clip >> $E/summary.txt
boxes() {
  local n=$1 cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40"; done
}
targets() {  # NAME N DECODE [env...]
  local name=$1 n=$2 dec=$3; shift 3
  timeout 100 env "$@" build/app/corrtrack track $clip $(boxes $n) --decode $dec --kernel auto > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E 'frames  |wall time|correlate|latency|gpu search' $E/$name.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
P=$PWD/.gpu/prof
targets t256_nvdec 256 nvdec
targets t256_sw 256 sw
targets t256_nvdec_stats 256 nvdec CORRTRACK_GPU_SEARCH_STATS=1
targets t256_sw_stats 256 sw CORRTRACK_GPU_SEARCH_STATS=1
targets t256_prof 256 nvdec LD_PRELOAD=$P/libprofiler.so.0 CPUPROFILE=$E/t256.prof CPUPROFILE_FREQUENCY=4000 LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH
targets t1024_prof 1024 nvdec LD_PRELOAD=$P/libprofiler.so.0 CPUPROFILE=$E/t1024.prof CPUPROFILE_FREQUENCY=4000 LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH
ls -la $E/*.prof >> $E/summary.txt 2>&1
# ncu: one launch of each issue-11 case (after warm-up), then the 256-target batch kernel.
N="ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
for c in 1920x1080:16 1920x1080:32 1920x1080:64 1920x1080:128 3840x2160:64; do
  s=${c%%:*}; tp=${c##*:}
  timeout 60 $N -k regex:corr_mma_fused --launch-skip 4 --launch-count 1 build/app/corrtrack bench --kernels cuda_mma_fused \
    --sizes $s --templates $tp --modes full --runs 3 > $E/ncu_fused_${s}_$tp.txt 2>&1
  echo "ncu fused $s $tp: rc $? $(grep -E 'Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per' $E/ncu_fused_${s}_$tp.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
done
timeout 90 $N -k regex:corr_dp4a --launch-skip 200 --launch-count 1 build/app/corrtrack track $clip $(boxes 256) --decode nvdec --kernel auto --frames 120 > $E/ncu_t256.txt 2>&1
echo "ncu t256: rc $? $(grep -E 'Duration|Grid Size|Block Size|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy' $E/ncu_t256.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
cp $E/summary.txt "$OUT/run7_summary.txt"; tar -C /tmp -czf "$OUT/run7.tar.gz" run7
cat $E/summary.txt
