#!/usr/bin/env bash
# Device call 3 (session 24): run2 again with the bands only where they pay: a launch whose maps
# are all at most kPeakSplitFloats (16384) takes one block a map and the second kernel alone
# (run2: bands made 6400-float maps slower, 8.8 -> 14.1 us, and 40000-float ones faster, 23.4
# -> 15.5). The same checks and timings as run1 and run2.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run3
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
t gpu_search 60 build/tests/test_gpu_search
t memcheck_peaks 90 compute-sanitizer --tool memcheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t initcheck_peaks 90 compute-sanitizer --tool initcheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t racecheck_peaks 90 compute-sanitizer --tool racecheck build/tests/test_gpu_search --gtest_filter='DeviceSearchGpu.*'
t tracker 120 build/tests/test_tracker
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t memcheck_graphs 120 compute-sanitizer --tool memcheck build/tests/test_tracker --gtest_filter='*GraphReplayed*'
ev() {  # NAME GRAPHS
  timeout 100 env CORRTRACK_GPU_GRAPHS=$2 build/app/corrtrack eval .gpu/data --kernel auto --json $E/$1.json > $E/$1.txt 2>&1
  echo "$1 [graphs $2]: rc $? $(tail -3 $E/$1.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
ev off_1 0; ev on_1 1; ev off_2 0; ev on_2 1
if diff <(awk '{print $1,$2,$3,$4,$6}' $E/off_1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/on_1.txt | grep -v '^corrtrack') >/dev/null
then echo "same AUC/P@20/lost: graphs off vs on"; else echo "DIFFERENT: graphs off vs on"; fi >> $E/summary.txt
for g in 0 1; do
  CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=$g timeout 60 build/app/corrtrack eval .gpu/data --sequences vot_ball1,tld_panda --kernel auto > $E/stats_eval_$g.txt 2>&1
  grep -h "gpu search" $E/stats_eval_$g.txt | sed "s/^/eval stats graphs $g: /" >> $E/summary.txt
done
EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_off CORRTRACK_GPU_GRAPHS=0 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/off /' >> $E/summary.txt
EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_on CORRTRACK_GPU_GRAPHS=1 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/on /' >> $E/summary.txt
CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=0 EXTRAS=0 COUNTS="1 256" E=$E/s_off bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/stats off /' >> $E/summary.txt
cp $E/summary.txt "$OUT/run3_summary.txt"; tar -C /tmp -czf "$OUT/run3.tar.gz" run3
cp $E/summary.txt "$OUT/run3_summary.txt"
cat $E/summary.txt
