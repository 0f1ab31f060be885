#!/usr/bin/env bash
# Kernel timings: one `corrtrack bench` call (CUDA events, median of --runs) into
# $E/NAME.txt and $E/NAME.csv, its rows into $E/summary.txt. The GPU kernel tables of
# docs/results.md come from here; `scripts/gpu_check.sh` STEPS=bench runs the full default
# sweep instead.
#
#   E=/tmp/run10 bash scripts/bench/kernels.sh final_1080p 100 --kernels cuda_wgmma,cuda_mma_fused,auto \
#     --sizes 1920x1080 --templates 16,32,64,128 --modes full --runs 30 --ratio-to cuda_mma_fused
#
# Arguments: NAME LIMIT (seconds) and the bench's flags; --csv $E/NAME.csv is added unless
# given. BENCH_KEEP=1 to add to an existing $E (several tables in one call). Sources
# scripts/bench/lib.sh.
#
# How the dated runs in bench/results/ called it (NAME LIMIT then flags; F = --modes full
# --runs 30; each table at 1080p "--sizes 1920x1080 --templates 16,32,64,128" and at 4K
# "--sizes 3840x2160 --templates 64"):
#   h200_2026-12-02b run6    fused_1080p / fused_4k: --kernels cuda_mma_fused,cuda_mma_fused_w4,cuda_mma,cuda_fft,cuda_dp4a_ilp
#                            F --ratio-to cuda_mma
#                    extra5  roofline: --kernels cuda_mma,cuda_dp4a_ilp,cuda_fft 1080p --modes full --runs 20 --json
#   h200_2026-12-02c run10   batch48 / batch192 / batch768: --kernels cuda_mma_fused,cuda_mma_fused_w4,cuda_dp4a_ilp,cuda_dp4a
#                            --sizes 1920x1080 --templates 16,24,32,40,64 --modes window --batch N --runs 20
#   h200_2026-12-04b run1, run2  quick: --kernels cuda_wgmma,cuda_mma_fused --sizes 1920x1080 --templates 16,64 --modes full --runs 5;
#                            wgmma_1080p / wgmma_4k: --kernels cuda_wgmma,cuda_wgmma_r8,cuda_mma_fused,cuda_mma,cuda_fft,cuda_dp4a_ilp
#                            F --ratio-to cuda_mma_fused
#                    run3    the same with cuda_wgmma_d2 added
#                    run4    --kernels cuda_wgmma,cuda_wgmma_d2,cuda_wgmma_w4,cuda_mma_fused,cuda_mma,cuda_fft,cuda_dp4a_ilp
#                    run5    ... cuda_wgmma_c8, cuda_mma_fused_w4 and auto added
#                    run6    crossover 150: --kernels cuda_dp4a_ilp,cuda_mma_fused,cuda_mma_fused_w4,cuda_wgmma
#                            --sizes 160x120,320x240,480x360,640x480,1280x720,1920x1080 --templates 16,32,48x24,64
#                            --modes full,window --runs 30 --ratio-to cuda_dp4a_ilp
#                    run7    auto_1080p / auto_4k: --kernels auto,cuda_mma_fused,cuda_wgmma,cuda_mma,cuda_fft,cuda_dp4a_ilp
#                            F --ratio-to cuda_mma_fused; batch3: --kernels cuda_dp4a_ilp,cuda_mma_fused,cuda_mma_fused_w4
#                            --sizes 1920x1080 --templates 16,32,40,64 --modes window --batch 3 --runs 30
#                    run10   final_1080p / final_4k: --kernels cuda_wgmma,cuda_mma_fused,cuda_mma_fused_w4,cuda_mma,cuda_fft,
#                            cuda_dp4a_ilp,auto F --ratio-to cuda_mma_fused (the table in docs/results.md)
# The 2026-11-29 tables: scripts/gpu_check.sh STEPS=bench and the commands in those folders' bench.txt.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: E=DIR $0 NAME LIMIT [corrtrack bench flags...]" >&2; exit 2; }
name=$1 limit=$2
shift 2
E=${E:-/tmp/kernels}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
csv=(--csv "$E/$name.csv")
for a in "$@"; do [ "$a" = --csv ] && csv=(); done
t "$name" "$limit" "$CORRTRACK" bench "$@" "${csv[@]}"
grep -hE "^cuda|^cpu|^auto|^kernel|rror" "$E/$name.txt" | sed "s/^/$name /" >> "$E/summary.txt"
cat "$E/summary.txt"
