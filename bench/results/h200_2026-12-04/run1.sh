#!/usr/bin/env bash
# Device call 1 (session 24): the ranked-peaks kernel rewritten (a division-free row-major walk,
# the penalty's row and column terms in shared memory, four loads in flight per thread).
# DeviceSearchGpu.RankedPeaksArePenalisedPeaksOnEveryShape against penalised_peak and the GPU
# tracker tests; memcheck of the new test; session 22's run4 (track with stats + graphs +
# NVDEC, which crashed before 87a5058); eval (auto, 11 sequences) with graphs off and on; the
# per-frame GPU split on eval's maps (compare run2 of h200_2026-12-03: peaks 57.2 / 79.4 us);
# 1-1024 targets off/on; the sweep last.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run1
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t gpu_search 60 build/tests/test_gpu_search
t memcheck_peaks 90 compute-sanitizer --tool memcheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t racecheck_peaks 90 compute-sanitizer --tool racecheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t tracker 120 build/tests/test_tracker
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t cuda_peak 60 build/tests/test_cuda_peak
/tmp/ffmpeg/bin/ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=4 -c:v libx264 -preset veryfast -pix_fmt yuv420p /tmp/c.mp4
trk() {  # NAME track-flags...: the run that crashed in 12-03's run2
  local name=$1; shift
  timeout 60 env CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=1 build/app/corrtrack track /tmp/c.mp4 --box 940,500,40,40 "$@" > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E 'frames  |tracking alone|gpu: ' $E/$name.txt | tr -s ' ' | tr '\n' '|' | cut -c1-600)" >> $E/summary.txt
}
trk stats_graphs_nvdec --decode nvdec --kernel auto
trk stats_graphs_sw --decode sw --kernel auto
ev() {  # NAME GRAPHS
  timeout 100 env CORRTRACK_GPU_GRAPHS=$2 build/app/corrtrack eval .gpu/data --kernel auto --json $E/$1.json > $E/$1.txt 2>&1
  echo "$1 [graphs $2]: rc $? $(tail -3 $E/$1.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
ev off_1 0; ev on_1 1
if diff <(awk '{print $1,$2,$3,$4,$6}' $E/off_1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/on_1.txt | grep -v '^corrtrack') >/dev/null
then echo "same AUC/P@20/lost: graphs off vs on"; else echo "DIFFERENT: graphs off vs on"; fi >> $E/summary.txt
for g in 0 1; do
  CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=$g timeout 60 build/app/corrtrack eval .gpu/data --sequences vot_ball1,tld_panda --kernel auto > $E/stats_eval_$g.txt 2>&1
  grep -h "gpu search" $E/stats_eval_$g.txt | sed "s/^/eval stats graphs $g: /" >> $E/summary.txt
done
EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_off CORRTRACK_GPU_GRAPHS=0 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/off /' >> $E/summary.txt
EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_on CORRTRACK_GPU_GRAPHS=1 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/on /' >> $E/summary.txt
CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=0 EXTRAS=0 COUNTS="1 256" E=$E/s_off bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/stats off /' >> $E/summary.txt
cp $E/summary.txt "$OUT/run1_summary.txt"; tar -C /tmp -czf "$OUT/run1.tar.gz" run1
t sweep 110 build/tests/test_kernel_sweep
cp $E/summary.txt "$OUT/run1_summary.txt"
cat $E/summary.txt
