#!/usr/bin/env bash
# Device call 3 (session 22): where `track` with CORRTRACK_GPU_SEARCH_STATS=1 and
# CORRTRACK_GPU_GRAPHS=1 crashed in run2 (rc 139): a native backtrace (segv_trace.c), gdb's if
# the host has gdb, and the same run with software decode.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run3
. bench/results/device_preamble.sh
gcc -shared -fPIC -O1 bench/results/h200_2026-12-03/segv_trace.c -o /tmp/segv_trace.so
/tmp/ffmpeg/bin/ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=4 -c:v libx264 -preset veryfast -pix_fmt yuv420p /tmp/c.mp4
run() {  # NAME track-flags...
  local name=$1; shift
  timeout 60 env CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=1 LD_PRELOAD=/tmp/segv_trace.so build/app/corrtrack track /tmp/c.mp4 --box 940,500,40,40 "$@" > $E/$name.txt 2>&1
  echo "$name: rc $?" >> $E/summary.txt; tail -40 $E/$name.txt >> $E/summary.txt
}
run nvdec_auto --decode nvdec --kernel auto
run sw_auto --decode sw --kernel auto
run nvdec_ilp --decode nvdec --kernel cuda_dp4a_ilp
if command -v gdb >/dev/null; then
  CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=1 timeout 90 gdb -batch -ex run -ex bt --args build/app/corrtrack track /tmp/c.mp4 --box 940,500,40,40 --decode nvdec > $E/gdb.txt 2>&1
  tail -40 $E/gdb.txt >> $E/summary.txt
else echo "no gdb" >> $E/summary.txt; fi
cp $E/summary.txt "$OUT/run3_summary.txt"
cat $E/summary.txt
