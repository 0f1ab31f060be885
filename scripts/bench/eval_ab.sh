#!/usr/bin/env bash
# The tracker's `corrtrack eval` on the carried sequences, A against B: several variants
# (kernel, environment, binary, flags), alternated over REPEATS rounds, with a check that
# chosen pairs track the same boxes (AUC, P@20 and lost count per sequence). Update fps moves
# from one lent machine to the next, so only variants of one call are compared.
#
#   E=/tmp/run2 REPEATS=2 VARIANTS="off auto CORRTRACK_GPU_GRAPHS=0
#   on auto CORRTRACK_GPU_GRAPHS=1" SAME="off_1:on_1" STATS=vot_ball1,tld_panda bash scripts/bench/eval_ab.sh
#
# VARIANTS: one per line, `NAME KERNEL [VAR=VALUE ...] [-- eval flags ...]`; BIN=PATH among the
# assignments runs another binary (e.g. an older build carried beside this one). Each round r
# runs every variant once, in order, into $E/NAME_r.txt / .json (NAME alone when REPEATS=1 and
# NOSUFFIX=1). SAME: pairs A:B of those names to compare. STATS: sequences (comma-separated)
# eval'd once more per variant with CORRTRACK_GPU_SEARCH_STATS=1, the "gpu search" lines into
# the summary. DATA: the sequences (default .gpu/data, hard links from ../shared; see
# notes/GPU_RUNS.md). LIMIT: seconds per eval (default 100). Sources scripts/bench/lib.sh.
#
# How the dated runs in bench/results/ used it (each call's own script is gone):
#   h200_2026-12-01b run   VARIANTS: old auto BIN=/tmp/corrtrack_old | new auto CORRTRACK_GPU_SEARCH_STATS=1,
#                          REPEATS=3; then old/new cuda_dp4a_ilp twice; then new auto with
#                          CORRTRACK_GPU_EAGER_MAPS=1 CORRTRACK_GPU_COPY_PEAKS=1 CORRTRACK_GPU_FULL_UPLOAD=1;
#                          SAME every new_* against old_*_1 (after gpu_check STEPS="ffmpeg smi libs tests")
#   h200_2026-12-01c run1  auto | cuda_dp4a_ilp, REPEATS=2; cpu_fast; auto and cpu_fast with -- --gradient 0.15;
#                          SAME="auto_1:cpu ilp_1:cpu grad_auto:grad_cpu" (after gpu_check STEPS="ffmpeg smi libs tests")
#   h200_2026-12-02 run_tests_eval  as 12-01c run1 with STATS on auto first, no grad_cpu
#                   run_ab  main build/app/corrtrack | exp BIN=.gpu/exp/exp/corrtrack, REPEATS=3, DATA=.gpu/data10,
#                           STATS on exp; then the experiment's test binaries
#   h200_2026-12-02b run1  STATS on auto; auto | cuda_dp4a_ilp, REPEATS=2; cuda_dp4a, cuda_mma, cpu_fast once;
#                          SAME="auto_1:cpu ilp_1:cpu"
#                    run2, run3  auto | cuda_dp4a_ilp, REPEATS=3 (run3 adds cpu_fast, SAME="auto_1:cpu ilp_1:cpu")
#   h200_2026-12-02c run11 auto | cuda_dp4a_ilp, REPEATS=2, SAME="auto_1:ilp_1"; run12 the same, REPEATS=1
#   h200_2026-12-03 run2   off auto CORRTRACK_GPU_GRAPHS=0 | on auto CORRTRACK_GPU_GRAPHS=1, REPEATS=2,
#                          SAME="off_1:on_1", STATS=vot_ball1,tld_panda
#   h200_2026-12-04 run1   as 12-03 run2 with REPEATS=1; run2, run3 with REPEATS=2
#                   run5, run7  auto, REPEATS=2 (run5 with STATS=vot_ball1,tld_panda)
#                   run8, run9  auto once, STATS=vot_ball1,tld_panda
#   h200_2026-12-04b run7, run8  auto once, LIMIT=150
#                    run9  auto | ilp auto CORRTRACK_AUTO_KERNEL=cuda_dp4a_ilp | fused auto
#                          CORRTRACK_AUTO_KERNEL=cuda_mma_fused, REPEATS=2, each round followed by
#                          targets.sh COUNTS=1 with the same pin
# Later runs (2026-12-04c) used scripts/gpu_check.sh STEPS=eval with EVAL_KERNELS / EVAL_ARGS.
set -uo pipefail
E=${E:-/tmp/eval_ab}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set -f
data=${DATA:-.gpu/data}
limit=${LIMIT:-100}

ev() {  # OUTNAME STATS_SEQUENCES VARIANT-LINE...
  local out=$1 seqs=$2 kernel=$4 bin=$CORRTRACK envs=() args=()
  shift 4
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in BIN=*) bin=${1#BIN=} ;; *) envs+=("$1") ;; esac
    shift
  done
  [ "${1:-}" = -- ] && { shift; args=("$@"); }
  if [ -n "$seqs" ]; then
    timeout "$limit" env "${envs[@]}" CORRTRACK_GPU_SEARCH_STATS=1 "$bin" eval "$data" --sequences "$seqs" --kernel "$kernel" \
      "${args[@]}" > "$E/$out.txt" 2>&1
    grep -h "gpu search" "$E/$out.txt" | sed "s/^/$out: /" >> "$E/summary.txt"
  else
    timeout "$limit" env "${envs[@]}" "$bin" eval "$data" --kernel "$kernel" "${args[@]}" --json "$E/$out.json" > "$E/$out.txt" 2>&1
    echo "$out [$kernel ${envs[*]} ${args[*]}]: rc $? $(tail -3 "$E/$out.txt" | tr -s ' ' | tr '\n' '|')" >> "$E/summary.txt"
  fi
}

mapfile -t variants < <(printf '%s\n' "${VARIANTS:-auto auto}" | grep -v '^ *$')
repeats=${REPEATS:-1}
for ((r = 1; r <= repeats; r++)); do
  for v in "${variants[@]}"; do
    read -r -a f <<<"$v"
    out=${f[0]}_$r
    [ "$repeats" = 1 ] && [ "${NOSUFFIX:-0}" = 1 ] && out=${f[0]}
    ev "$out" "" "${f[@]}"
  done
done
for pair in ${SAME:-}; do same_boxes "${pair%%:*}" "${pair#*:}"; done
if [ -n "${STATS:-}" ]; then
  for v in "${variants[@]}"; do
    read -r -a f <<<"$v"
    ev "stats_${f[0]}" "$STATS" "${f[@]}"
  done
fi
cat "$E/summary.txt"
