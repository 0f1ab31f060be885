#!/usr/bin/env bash
# Device call 2 (session 22): the GPU search replayed as a CUDA graph per pass (captured each
# search, the kept executable updated in place; CORRTRACK_GPU_GRAPHS=0 queues launch by
# launch as before). The host cost of the ways to replay (graphcost.cu); the GPU tests,
# test_tracker's new GraphReplayed... and the sweep (kernels gained capturable()); the
# single-target eval on 11 sequences (auto), graphs off/on alternated; many targets (1-1024)
# off/on; the host-time split at 1 and 256 targets with both.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run2
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
nvcc -arch=sm_90 -O2 bench/results/h200_2026-12-03/graphcost.cu -o /tmp/graphcost && /tmp/graphcost >> $E/summary.txt 2>&1
t tracker 120 build/tests/test_tracker
t gpu_search 60 build/tests/test_gpu_search
t kernel_caches 60 build/tests/test_kernel_caches
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t sweep 120 build/tests/test_kernel_sweep
t memcheck_graphs 120 compute-sanitizer --tool memcheck build/tests/test_tracker --gtest_filter='*GraphReplayed*'
ev() {  # NAME GRAPHS
  timeout 100 env CORRTRACK_GPU_GRAPHS=$2 build/app/corrtrack eval .gpu/data --kernel auto --json $E/$1.json > $E/$1.txt 2>&1
  echo "$1 [graphs $2]: rc $? $(tail -3 $E/$1.txt | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
for r in 1 2; do ev off_$r 0; ev on_$r 1; done
if diff <(awk '{print $1,$2,$3,$4,$6}' $E/off_1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/on_1.txt | grep -v '^corrtrack') >/dev/null
then echo "same AUC/P@20/lost: graphs off vs on"; else echo "DIFFERENT: graphs off vs on"; fi >> $E/summary.txt
CORRTRACK_GPU_SEARCH_STATS=1 timeout 60 env CORRTRACK_GPU_GRAPHS=0 build/app/corrtrack eval .gpu/data --sequences vot_ball1,tld_panda --kernel auto > $E/stats_eval_off.txt 2>&1
CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=1 timeout 60 build/app/corrtrack eval .gpu/data --sequences vot_ball1,tld_panda --kernel auto > $E/stats_eval_on.txt 2>&1
grep -h "gpu search" $E/stats_eval_off.txt | sed 's/^/eval stats off: /' >> $E/summary.txt
grep -h "gpu search" $E/stats_eval_on.txt | sed 's/^/eval stats on: /' >> $E/summary.txt
EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_off CORRTRACK_GPU_GRAPHS=0 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/off /' >> $E/summary.txt
EXTRAS=0 COUNTS="1 16 256 1024" E=$E/t_on CORRTRACK_GPU_GRAPHS=1 bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/on /' >> $E/summary.txt
CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=0 EXTRAS=0 COUNTS="1 256" E=$E/s_off bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/stats off /' >> $E/summary.txt
CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=1 EXTRAS=0 COUNTS="1 256" E=$E/s_on bash bench/results/h200_2026-12-02c/targets.sh 2>&1 | sed 's/^/stats on /' >> $E/summary.txt
cp $E/summary.txt "$OUT/run2_summary.txt"; tar -C /tmp -czf "$OUT/run2.tar.gz" run2
cat $E/summary.txt
