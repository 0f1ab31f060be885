#!/usr/bin/env bash
# Device call 3 of 2026-12-02: where the GPU search's host time goes (finer stats), and
# main's binary vs the experiment binary on 10 sequences, alternating.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
T_TOTAL=200 STEPS="ffmpeg libs" bash scripts/gpu_check.sh > /tmp/gc.txt 2>&1; tail -3 /tmp/gc.txt
lib="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
E=/tmp/evals; rm -rf $E; mkdir -p $E
ev() {  # NAME BINARY [flags...]
  local name=$1 bin=$2; shift 2
  timeout 100 env LD_LIBRARY_PATH="$lib" $bin eval .gpu/data10 --kernel auto "$@" --json $E/$name.json > $E/$name.txt 2>&1
  echo "$name: $(grep -E '^mean' $E/$name.txt | tr -s ' ')" >> $E/summary.txt
}
tar -C .gpu/exp -xJf .gpu/exp/exp.tar.xz && X=.gpu/exp/exp
CORRTRACK_GPU_SEARCH_STATS=1 ev stats $X/corrtrack
for i in 1 2 3; do ev main_$i build/app/corrtrack; ev exp_$i $X/corrtrack; done
for t in test_policy test_tracker test_safe_io test_kernel_sweep; do (cd build/tests && LD_LIBRARY_PATH="$lib" timeout 120 ../../$X/$t > $E/$t.log 2>&1; echo "$t: $(grep -E "PASSED|FAILED" $E/$t.log | head -3 | tr "\n" " ")" >> $E/summary.txt); done
grep -h "gpu search" $E/stats.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/eval_summary.txt"; tar -C /tmp -czf "$OUT/evals.tar.gz" evals
cat $E/summary.txt
