#!/usr/bin/env bash
# Device call 1 of 2026-12-02 (session 17), main 5ecc106: every test binary, then the tracker eval per
# kernel on 12 sequences, with and without the gradient channel (CPU/GPU parity on real data).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
T_TOTAL=${T_TOTAL:-330} T_TESTS=200 STEPS="ffmpeg smi libs tests" bash scripts/gpu_check.sh
lib="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
E=/tmp/evals; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; } > $E/summary.txt
ev() {  # NAME KERNEL [flags...]
  local name=$1 k=$2; shift 2
  timeout 100 env LD_LIBRARY_PATH="$lib" build/app/corrtrack eval .gpu/data --kernel "$k" "$@" --json $E/$name.json > $E/$name.txt 2>&1
  echo "$name [$k $*]: $(grep -E '^mean' $E/$name.txt | tr -s ' ')" >> $E/summary.txt
}
export CORRTRACK_GPU_SEARCH_STATS=1; ev stats_auto auto; unset CORRTRACK_GPU_SEARCH_STATS
ev auto_1 auto; ev ilp_1 cuda_dp4a_ilp; ev auto_2 auto; ev ilp_2 cuda_dp4a_ilp
ev cpu cpu_fast
ev grad_auto auto --gradient 0.15
for p in "auto_1 cpu" "ilp_1 cpu"; do
  set -- $p
  if diff <(awk '{print $1,$2,$3,$4,$6}' $E/$1.txt | grep -v '^corrtrack') <(awk '{print $1,$2,$3,$4,$6}' $E/$2.txt | grep -v '^corrtrack') >/dev/null
  then echo "same AUC/P@20/lost: $1 vs $2"; else echo "DIFFERENT: $1 vs $2"; diff <(awk '{print $1,$2,$3,$4,$6}' $E/$1.txt) <(awk '{print $1,$2,$3,$4,$6}' $E/$2.txt); fi
done >> $E/summary.txt
grep -h "gpu search" $E/stats_auto.txt >> $E/summary.txt
cp $E/summary.txt "$OUT/eval_summary.txt"
tar -C /tmp -czf "$OUT/evals.tar.gz" evals
cat $E/summary.txt
