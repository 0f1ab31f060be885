#!/usr/bin/env bash
# Many targets on the swaying-texture clip (run5's clip, made here): `corrtrack track` with N
# boxes of 40x40 on a grid, kernel auto (or KERNEL), NVDEC unless DECODE; with the GPU search's
# host-time split and gperftools' CPU profile (.gpu/prof) for 256 and 1024 unless EXTRAS=0.
# Writes under $E.
cd "$(dirname "$0")/../../.." || exit 1
E=${E:-/tmp/targets}; mkdir -p $E
clip=/tmp/sway1080_600.mp4
[ -f $clip ] || python3 - <<'PY' | timeout 120 /tmp/ffmpeg/bin/ffmpeg -v error -f rawvideo -pix_fmt gray -s 1920x1080 -r 30 -i - -c:v libx264 -preset veryfast -pix_fmt yuv420p -y $clip
import sys, numpy as np, cv2
rng = np.random.default_rng(5)
tex = cv2.resize(rng.integers(0, 256, (350, 600), dtype=np.uint8), (2400, 1400), interpolation=cv2.INTER_CUBIC)
tex = cv2.add(tex, rng.integers(0, 24, tex.shape, dtype=np.uint8))
for t in range(600):
    x = int(round(240 + 200 * np.sin(2 * np.pi * t / 150)))
    y = int(round(160 + 120 * np.sin(2 * np.pi * t / 200)))
    sys.stdout.buffer.write(np.ascontiguousarray(tex[y:y + 1080, x:x + 1920]).tobytes())
PY
boxes() {
  local n=$1 cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40"; done
}
targets() {  # NAME N [env...]
  local name=$1 n=$2; shift 2
  timeout 100 env "$@" build/app/corrtrack track $clip $(boxes $n) --decode ${DECODE:-nvdec} --kernel ${KERNEL:-auto} ${FLAGS:-} > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E 'frames  |wall time|correlate|latency|gpu search' $E/$name.txt | tr -s ' ' | tr '\n' '|')"
}
P=$PWD/.gpu/prof
for n in ${COUNTS:-1 16 64 256 1024}; do targets t$n $n; done
[ "${EXTRAS:-1}" = 1 ] || exit 0  # EXTRAS=0: the counts only
targets t256_stats 256 CORRTRACK_GPU_SEARCH_STATS=1
targets t1024_stats 1024 CORRTRACK_GPU_SEARCH_STATS=1
[ -d $P ] && targets t256_prof 256 LD_PRELOAD=$P/libprofiler.so.0 CPUPROFILE=$E/t256.prof LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH
[ -d $P ] && targets t1024_prof 1024 LD_PRELOAD=$P/libprofiler.so.0 CPUPROFILE=$E/t1024.prof LD_LIBRARY_PATH=$P:$LD_LIBRARY_PATH
true
