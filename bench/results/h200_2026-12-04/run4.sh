#!/usr/bin/env bash
# Device call 4 (session 24): where a 256-target frame's GPU time goes (run3: "sampling" 149 of
# 276 us a frame, on the critical path: the host waits 149 us). nsys's kernel and copy summary
# of `track` with 256 targets (when the host has nsys), and ncu's duration of 60 launches in
# order after warm-up (every kernel of about two frames); then 256 and 1024 targets three
# times each (graphs off, the default) for the spread between runs on one machine.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run4
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
EXTRAS=0 COUNTS="1" E=$E/warm bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1  # makes the clip
clip=/tmp/sway1080_600.mp4
boxes() {
  local n=$1 cols=32; [ $n -lt 32 ] && cols=$n; local rows=$(( (n + cols - 1) / cols ))
  for ((i = 0; i < n; i++)); do echo --box "$(( 220 + (i % cols) * (1440 / cols) )),$(( 140 + (i / cols) * (760 / rows) )),40,40"; done
}
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile -o $E/t256 --force-overwrite true --trace cuda build/app/corrtrack track $clip $(boxes 256) --decode nvdec --kernel auto --frames 300 > $E/nsys_run.txt 2>&1
  timeout 120 $NSYS stats --report cuda_gpu_kern_sum --report cuda_gpu_mem_time_sum --format csv $E/t256.nsys-rep > $E/nsys_stats.txt 2>&1
  echo "nsys: $NSYS rc $?" >> $E/summary.txt; head -40 $E/nsys_stats.txt | cut -c1-300 >> $E/summary.txt
else echo "no nsys" >> $E/summary.txt; fi
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size --launch-skip 1000 --launch-count 60 \
  build/app/corrtrack track $clip $(boxes 256) --decode nvdec --kernel auto --frames 300 > $E/ncu_t256.txt 2>&1
echo "ncu t256: rc $?" >> $E/summary.txt
grep -E '^  [A-Za-z_].*\(|gpu__time_duration|launch__grid_size' $E/ncu_t256.txt | sed -E 's/\(int, int, int\)//; s/ +/ /g' | cut -c1-160 >> $E/summary.txt
for r in 1 2 3; do EXTRAS=0 COUNTS="256 1024" E=$E/t_$r bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed "s/^/rep $r /" >> $E/summary.txt; done
cp $E/summary.txt "$OUT/run4_summary.txt"; tar -C /tmp -czf "$OUT/run4.tar.gz" run4
cat $E/summary.txt
