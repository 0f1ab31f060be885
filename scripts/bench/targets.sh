#!/usr/bin/env bash
# Many targets on one GPU: `corrtrack track` of a 1080p H.264 clip with N boxes of 40x40 on a
# grid, one summary line per run (frames, wall time / fps, correlate, latency and, with
# CORRTRACK_GPU_SEARCH_STATS=1 in the environment, the GPU search's host-time split).
# The numbers of docs/results.md "Many targets on one GPU" come from here.
#
#   E=/tmp/run9 REPEATS=3 COUNTS="1 16 256 1024" bash scripts/bench/targets.sh
#
# COUNTS: target counts (default 1 16 64 256 1024). KERNEL (auto), DECODE (nvdec), FLAGS
# (more track flags, e.g. "--realtime --frames 150"). CLIP: sway (default: the 600-frame
# swaying-texture clip, made there with NumPy and x264), sway300 (its first 300 frames, as in
# session 18's run3), testsrc (a 10 s testsrc2 clip: its moving pattern loses most grid
# targets, which then search the whole frame: no tracking measure), or a path. GRID: "X Y W H"
# the boxes cover (default 220 140 1440 760, the part of the sway clip that stays in view).
# REPEATS: runs per count (outputs t<N>_r<r>; default 1: t<N>). EXTRAS=1 adds, at 256 and
# 1024 targets, a run with the GPU search's host-time split and one under gperftools' CPU
# profiler when .gpu/prof holds libprofiler.so.0 (read back with `google-pprof
# build/app/corrtrack tN.prof`). Lines go to stdout and $E/summary.txt. Sources
# scripts/bench/lib.sh.
#
# How the dated runs in bench/results/ called it (from their own script, gone since; this
# file was bench/results/h200_2026-12-02c/targets.sh):
#   h200_2026-12-02b run1  CLIP=testsrc COUNTS="1 16 64 256 1024" GRID="20 20 1880 1040" (300 frames)
#                    run2  a panning texture (x += 2 px, y += 1 px a frame; no longer made here)
#                          GRID="20 20 1860 1000"; plus CORRTRACK_GPU_SEARCH_STATS=1 at 256
#                    run3  CLIP=sway300, then STATS at 256
#                    run4  COUNTS="1 16 64 256 1024"; KERNEL=cuda_dp4a_ilp and cuda_mma at 256;
#                          CORRTRACK_GPU_SEARCH_STATS=1 at 256 and 1024
#                    run5  as run4, then FLAGS="--realtime --frames 150" COUNTS=256
#   h200_2026-12-02c run7  COUNTS=256 DECODE=nvdec and sw, each also with the stats; EXTRAS-style
#                          profiles at 256 and 1024 (CPUPROFILE_FREQUENCY=4000)
#                    run8  EXTRAS=1 (default counts)
#                    run9  COUNTS="256 1024" with KERNEL=auto, cuda_dp4a, cuda_dp4a_ilp; then EXTRAS=1 COUNTS=256
#                    run10 COUNTS="64 256 1024" with KERNEL=cuda_mma_fused, cuda_mma_fused_w4, auto;
#                          CORRTRACK_GPU_SEARCH_STATS=1 COUNTS=256 KERNEL=cuda_mma_fused
#                    run11 EXTRAS=1; then COUNTS=256 FLAGS="--realtime --frames 150"
#                    run12 default counts; CORRTRACK_GPU_SEARCH_STATS=1 COUNTS=256; COUNTS=256 live as run11
#   h200_2026-12-02d run13 default counts
#   h200_2026-12-03 run2   COUNTS="1 16 256 1024" with CORRTRACK_GPU_GRAPHS=0 and =1; the stats at "1 256" both ways
#                   run4   CORRTRACK_GPU_SEARCH_STATS=1 CORRTRACK_GPU_GRAPHS=1 COUNTS="1 256"
#   h200_2026-12-04 run1-3 as 12-03 run2 (stats with graphs off only)
#                   run4   REPEATS=3 COUNTS="256 1024" (after profile.sh nsys and ncu)
#                   run5, run6  COUNTS="1 16"; REPEATS=3 COUNTS="256 1024"; stats at "1 256"
#                   run7   REPEATS=3 COUNTS="1 16 256 1024"
#                   run8, run9  as run7, then the stats at "1 256" (run9: the table in docs/results.md)
#                   run10  COUNTS=256
#   h200_2026-12-04b run8  REPEATS=3 COUNTS="1 16"
#                    run9  COUNTS=1 with CORRTRACK_AUTO_KERNEL unset, =cuda_dp4a_ilp, =cuda_mma_fused (see eval_ab.sh)
set -uo pipefail
E=${E:-/tmp/targets}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case ${CLIP:-sway} in
  sway) clip=$(sway_clip 600) ;;
  sway300) clip=$(sway_clip 300) ;;
  testsrc) clip=$(testsrc_clip 10) ;;
  *) clip=$CLIP ;;
esac
read -r -a grid <<<"${GRID:-220 140 1440 760}"

targets() {  # NAME N [VAR=VALUE...]
  local name=$1 n=$2 line
  shift 2
  # shellcheck disable=SC2046,SC2086  # the boxes and FLAGS split into words on purpose
  timeout "${LIMIT:-100}" env "$@" "$CORRTRACK" track "$clip" $(grid_boxes "$n" "${grid[@]}") --decode "${DECODE:-nvdec}" \
    --kernel "${KERNEL:-auto}" ${FLAGS:-} > "$E/$name.txt" 2>&1
  line="$name: rc $? $(grep -E 'frames  |wall time|correlate|latency|gpu search' "$E/$name.txt" | tr -s ' ' | tr '\n' '|')"
  echo "$line"
  echo "$line" >> "$E/summary.txt"
}

repeats=${REPEATS:-1}
for ((r = 1; r <= repeats; r++)); do
  for n in ${COUNTS:-1 16 64 256 1024}; do
    if [ "$repeats" = 1 ]; then targets "t$n" "$n"; else targets "t${n}_r$r" "$n"; fi
  done
done
[ "${EXTRAS:-0}" = 1 ] || exit 0
P=$PWD/.gpu/prof
targets t256_stats 256 CORRTRACK_GPU_SEARCH_STATS=1
targets t1024_stats 1024 CORRTRACK_GPU_SEARCH_STATS=1
if [ -d "$P" ]; then
  targets t256_prof 256 LD_PRELOAD="$P/libprofiler.so.0" CPUPROFILE="$E/t256.prof" LD_LIBRARY_PATH="$P:${LD_LIBRARY_PATH:-}"
  targets t1024_prof 1024 LD_PRELOAD="$P/libprofiler.so.0" CPUPROFILE="$E/t1024.prof" LD_LIBRARY_PATH="$P:${LD_LIBRARY_PATH:-}"
fi
true
