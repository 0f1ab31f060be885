#!/usr/bin/env bash
# Device call for branch gpu-graph (issue 9, GPU update fps): tests + initcheck of the new
# build, then eval A/B: the old binary (main cf77ff3) against the new one, per switch.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
H=.gpu-h2
mkdir -p .gpu
[ -e .gpu/carry ] || ln -s "$PWD/$H/carry" .gpu/carry
[ -e .gpu/data ] || ln -s "$PWD/$H/data" .gpu/data
T_TOTAL=${T_TOTAL:-300} T_TESTS=120 T_INITCHECK=${T_INITCHECK:-80} STEPS="${STEPS:-ffmpeg smi libs tests}" bash scripts/gpu_check.sh
lib="/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib"
xz -dc $H/old/corrtrack.xz > /tmp/corrtrack_old && chmod +x /tmp/corrtrack_old
E=/tmp/evals; rm -rf $E; mkdir -p $E
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv; } > $E/summary.txt
ev() {  # NAME BINARY KERNEL [VAR=VALUE...]
  local name=$1 bin=$2 k=$3; shift 3
  timeout 90 env LD_LIBRARY_PATH="$lib" "$@" "$bin" eval .gpu/data --kernel "$k" --json $E/$name.json > $E/$name.txt 2>&1
  echo "$name [$*]: $(grep -E '^mean' $E/$name.txt | tr -s ' ') $(grep -c 'gpu search' $E/$name.txt)" >> $E/summary.txt
}
NEW=$PWD/build/app/corrtrack; OLD=/tmp/corrtrack_old
for r in 1 2 3; do
  ev old_auto_$r $OLD auto
  ev new_auto_$r $NEW auto CORRTRACK_GPU_SEARCH_STATS=1
done
for r in 1 2; do
  ev old_ilp_$r $OLD cuda_dp4a_ilp
  ev new_ilp_$r $NEW cuda_dp4a_ilp CORRTRACK_GPU_SEARCH_STATS=1
done
ev new_auto_allold $NEW auto CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_EAGER_MAPS=1 CORRTRACK_GPU_COPY_PEAKS=1 CORRTRACK_GPU_FULL_UPLOAD=1
# Boxes: AUC, P@20 and lost per sequence must match the old binary's exactly.
for n in $E/new_*.txt; do
  o=$E/old_auto_1.txt; case $n in *ilp*) o=$E/old_ilp_1.txt ;; esac
  if diff <(grep -v 'gpu search' $o | awk '{print $1,$2,$3,$4,$6}') <(grep -v 'gpu search' $n | awk '{print $1,$2,$3,$4,$6}') >/dev/null; then
    echo "same AUC/P@20/lost as old: $(basename $n)"; else echo "DIFFERENT from old: $(basename $n)"; fi
done >> $E/summary.txt
cp $E/summary.txt "$OUT/eval_summary.txt"
tar -C /tmp -czf "$OUT/evals.tar.gz" evals
cat $OUT/summary.txt $E/summary.txt
