#!/usr/bin/env bash
# Profiles and traces on the GPU host: where a kernel's or a frame's time goes, and why a run
# crashed. Each writes $E/NAME.txt (and reports) and a few lines into $E/summary.txt.
#
#   E=/tmp/run7 bash scripts/bench/profile.sh ncu NAME [options] -- CORRTRACK-ARGS...
#   E=/tmp/run4 bash scripts/bench/profile.sh nsys NAME -- CORRTRACK-ARGS...
#   E=/tmp/run1 bash scripts/bench/profile.sh sass
#   E=/tmp/run1 bash scripts/bench/profile.sh graphcost
#   E=/tmp/run3 bash scripts/bench/profile.sh segv NAME -- CORRTRACK-ARGS...
#   E=/tmp/run5 bash scripts/bench/profile.sh cpu NAME -- CORRTRACK-ARGS...
#
# CORRTRACK-ARGS are build/app/corrtrack's, where `@sway` becomes the 600-frame clip of
# targets.sh, `@boxes:N` its N grid boxes and `@testsrc:S` a testsrc2 clip of S seconds.
# ncu options: --sections full|stalls|durations (default full: SpeedOfLight,
# MemoryWorkloadAnalysis, ComputeWorkloadAnalysis, Occupancy, LaunchStats, WarpStateStats,
# SchedulerStats; stalls: SpeedOfLight, Occupancy, WarpStateStats, SchedulerStats,
# ComputeWorkloadAnalysis; durations: the metrics gpu__time_duration.sum, launch__grid_size,
# launch__block_size of every launch), --source (adds SourceCounters and keeps the report
# $E/NAME.ncu-rep with its per-instruction CSV), --kernel REGEX, --skip N (launches, default 4),
# --count N (default 1), --limit S (default 120); always --clock-control none. nsys: the CUDA
# trace, then the kernel and copy summaries (when the host has nsys). sass: the Hopper
# instructions (IGMMA, UBLKCP, SYNCS, WARPGROUP) counted in the build's corrtrack. graphcost:
# bench/results/h200_2026-12-03/graphcost.cu (the host cost of the ways to replay a CUDA
# graph) built with nvcc and run. segv: the run under bench/results/h200_2026-12-03/
# segv_trace.c (a native backtrace on SIGSEGV) and under gdb where the host has it. cpu: the
# host's time, sampled 1000 times a second by gperftools' profiler (Debian's libprofiler.so.0
# and libunwind.so.8 carried in .gpu/prof, a git-ignored folder) into $E/NAME.prof; read it
# back on the VM with `google-pprof --text build/app/corrtrack NAME.prof`. Sources
# scripts/bench/lib.sh.
#
# How the dated runs in bench/results/ called it:
#   h200_2026-12-02c run7  ncu fused_WxH_T --skip 4 --kernel corr_mma_fused -- bench --kernels cuda_mma_fused --sizes WxH
#                          --templates T --modes full --runs 3 (1080p 16/32/64/128, 4K 64); ncu t256 --kernel corr_dp4a
#                          --skip 200 -- track @sway @boxes:256 --decode nvdec --kernel auto --frames 120
#   h200_2026-12-03 run1   graphcost (three times)
#                   run3, run4  segv nvdec_auto / sw_auto / nvdec_ilp -- track @testsrc:4 --box 940,500,40,40
#                          --decode nvdec|sw --kernel auto|cuda_dp4a_ilp, with CORRTRACK_GPU_SEARCH_STATS=1
#                          CORRTRACK_GPU_GRAPHS=1 in the environment
#   h200_2026-12-04 run4   nsys t256 -- track @sway @boxes:256 --decode nvdec --kernel auto --frames 300; ncu t256
#                          --sections durations --skip 1000 --count 60 -- (the same)
#                   run5, run6  ncu t256 --sections durations --skip 1000 --count 30 -- (the same)
#                   run7   ncu sample_patches / template_scan / band_sidelobes --kernel K --skip 300 --count 2 -- (the same)
#                   run8, run9  ncu t256 --sections durations --skip 1000 --count 16 -- (the same)
#   h200_2026-12-04b run1, run2  sass; ncu wg64 --sections stalls --kernel corr_wgmma_kernel -- bench --kernels cuda_wgmma
#                          --sizes 1920x1080 --templates 64 --modes full --runs 5 (run2 also wg16, templates 16)
#                    run3, run4  ncu wg64 --sections stalls --source (the same)
#                    run5  ncu 1920x1080_16 / _32 / _128, 3840x2160_64 --sections stalls (the same, those cases)
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: E=DIR $0 ncu|nsys|sass|graphcost|segv|cpu [NAME] [options] [-- CORRTRACK-ARGS...]" >&2; exit 2; }
mode=$1 name=${2:-$1}
[ $# -ge 2 ] && shift 2 || shift 1
E=${E:-/tmp/profile}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
sections=full source=0 kernel="" skip=4 count=1 limit=120
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --sections) sections=$2; shift ;;
    --source) source=1 ;;
    --kernel) kernel=$2; shift ;;
    --skip) skip=$2; shift ;;
    --count) count=$2; shift ;;
    --limit) limit=$2; shift ;;
    *) echo "profile.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "${1:-}" = -- ] && shift
args=()
for a in "$@"; do
  case $a in
    @sway) args+=("$(sway_clip 600)") ;;
    @boxes:*) mapfile -t b < <(grid_boxes "${a#@boxes:}" | tr ' ' '\n'); args+=("${b[@]}") ;;
    @testsrc:*) args+=("$(testsrc_clip "${a#@testsrc:}")") ;;
    *) args+=("$a") ;;
  esac
done
keys='Duration|Grid Size|Block Size|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Eligible|Issued Warp|Achieved Occupancy|Theoretical Occupancy|Block Limit|No Eligible'
case $mode in
  ncu)
    case $sections in
      full) what=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy
                  --section LaunchStats --section WarpStateStats --section SchedulerStats) ;;
      stalls) what=(--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats
                    --section ComputeWorkloadAnalysis) ;;
      durations) what=(--metrics gpu__time_duration.sum,launch__grid_size,launch__block_size) ;;
      *) echo "profile.sh: --sections full, stalls or durations" >&2; exit 2 ;;
    esac
    [ "$source" = 1 ] && what+=(--section SourceCounters -o "$E/$name")
    timeout "$limit" ncu --clock-control none "${what[@]}" ${kernel:+-k "regex:$kernel"} --launch-skip "$skip" \
      --launch-count "$count" "$CORRTRACK" "${args[@]}" > "$E/$name.txt" 2>&1
    echo "ncu $name: rc $?" >> "$E/summary.txt"
    if [ "$source" = 1 ]; then
      ncu -i "$E/$name.ncu-rep" > "$E/${name}_details.txt" 2>&1
      ncu -i "$E/$name.ncu-rep" --page source --csv --print-source sass > "$E/${name}_source.csv" 2>&1
      grep -E "$keys" "$E/${name}_details.txt" | tr -s ' ' >> "$E/summary.txt"
    elif [ "$sections" = durations ]; then
      grep -E '^  [A-Za-z_].*\(|gpu__time_duration' "$E/$name.txt" \
        | sed -E 's/^  (void )?(corrtrack::<unnamed>::)?([A-Za-z0-9_]+).*/\3/; s/ +/ /g' | paste -sd' \n' >> "$E/summary.txt"
    else
      grep -E "$keys" "$E/$name.txt" | tr -s ' ' >> "$E/summary.txt"
    fi
    ;;
  nsys)
    NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
    if [ -z "$NSYS" ]; then echo "no nsys" >> "$E/summary.txt"; else
      timeout "$limit" "$NSYS" profile -o "$E/$name" --force-overwrite true --trace cuda "$CORRTRACK" "${args[@]}" > "$E/${name}_run.txt" 2>&1
      timeout "$limit" "$NSYS" stats --report cuda_gpu_kern_sum --report cuda_gpu_mem_time_sum --format csv "$E/$name.nsys-rep" \
        > "$E/$name.txt" 2>&1
      echo "nsys $name: rc $?" >> "$E/summary.txt"; head -40 "$E/$name.txt" | cut -c1-300 >> "$E/summary.txt"
    fi
    ;;
  sass)
    cuobjdump -sass "$CORRTRACK" 2>/dev/null | grep -oE "IGMMA[A-Z0-9._]*|UBLKCP[A-Z0-9._]*|SYNCS[A-Z0-9._]*|WARPGROUP[A-Z0-9._]*" \
      | sort | uniq -c > "$E/sass.txt"
    sed 's/^/sass /' "$E/sass.txt" >> "$E/summary.txt"
    ;;
  graphcost)
    nvcc -arch=sm_90 -O2 bench/results/h200_2026-12-03/graphcost.cu -o /tmp/graphcost \
      && for i in 1 2 3; do /tmp/graphcost; done > "$E/graphcost.txt" 2>&1
    cat "$E/graphcost.txt" >> "$E/summary.txt"
    ;;
  segv)
    gcc -shared -fPIC -O1 bench/results/h200_2026-12-03/segv_trace.c -o /tmp/segv_trace.so
    timeout "$limit" env LD_PRELOAD=/tmp/segv_trace.so "$CORRTRACK" "${args[@]}" > "$E/$name.txt" 2>&1
    echo "$name: rc $?" >> "$E/summary.txt"; tail -40 "$E/$name.txt" >> "$E/summary.txt"
    if command -v gdb >/dev/null; then
      timeout "$limit" gdb -batch -ex run -ex bt --args "$CORRTRACK" "${args[@]}" > "$E/${name}_gdb.txt" 2>&1
      tail -40 "$E/${name}_gdb.txt" >> "$E/summary.txt"
    else echo "no gdb" >> "$E/summary.txt"; fi
    ;;
  cpu)
    prof="$PWD/.gpu/prof/libprofiler.so.0"
    if [ ! -f "$prof" ]; then echo "no .gpu/prof/libprofiler.so.0 (carry .gpu/prof)" >> "$E/summary.txt"; else
      timeout "$limit" env LD_PRELOAD="$prof" LD_LIBRARY_PATH="$PWD/.gpu/prof:${LD_LIBRARY_PATH:-}" CPUPROFILE="$E/$name.prof" \
        CPUPROFILE_FREQUENCY=1000 "$CORRTRACK" "${args[@]}" > "$E/$name.txt" 2>&1
      echo "cpu $name: rc $?, $(stat -c %s "$E/$name.prof" 2>/dev/null || echo 0) bytes of profile" >> "$E/summary.txt"
      grep -E 'wall time|gpu search us/frame' "$E/$name.txt" | sed "s/^/$name: /" >> "$E/summary.txt"
    fi
    ;;
  *) echo "profile.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac
cat "$E/summary.txt"
