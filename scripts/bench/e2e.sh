#!/usr/bin/env bash
# End to end: decode thread + copy + track, against decoding alone.
#
#   E=/tmp/run13 bash scripts/bench/e2e.sh bench NAME LIMIT [corrtrack bench --e2e flags...]
#   E=/tmp/run12 bash scripts/bench/e2e.sh video NAME INPUT [corrtrack track flags...]
#
# `bench`: `corrtrack bench --e2e CLIP` (CLIP: a 1080p30 testsrc2 H.264 clip of CLIP_SECONDS, default
# 12, made there with the built FFmpeg) with the given flags (--targets, --streams,
# --e2e-decode, --realtime, --e2e-frames, --e2e-repeats ...), JSON in $E/NAME.json, its table
# rows into the summary. `video`: `corrtrack track INPUT --kernel auto` with and without
# `--video` (INPUT: sample = assets/sample.mp4, sway = the 600-frame clip of targets.sh, or a
# path), the wall-time lines into the summary. BENCH_KEEP=1 to add to an existing $E. Sources
# scripts/bench/lib.sh. The routine decode-vs-track table on 1080p and 4K clips is
# scripts/gpu_check.sh STEPS=e2e (2026-11-29's results).
#
# How the dated runs in bench/results/ called it:
#   h200_2026-12-02b extra6  bench e2e_targets 70 --e2e-decode nvdec --targets 1,64,256,1024 --e2e-repeats 1 --e2e-frames 300;
#                            bench e2e_streams 80 --e2e-decode nvdec,auto --streams 32 --e2e-repeats 1 --e2e-frames 300;
#                            bench e2e_streams_rt 30 --e2e-decode auto --streams 32 --realtime --e2e-repeats 1 --e2e-frames 150
#                    extra5  two streams of the sample in one `track` (a GpuContext each): not this script
#   h200_2026-12-02c run12   video sample sample --decode nvdec; video sway1 sway --decode nvdec --box 940,500,40,40
#   h200_2026-12-02d run13   (flags after --e2e-repeats 1) bench rt_auto 60 --e2e-decode auto --streams 32 --realtime
#                            --e2e-frames 150; bench rt_auto_old_split 60 (the same) --nvdec-rate 500; bench rt_nvdec 60
#                            --e2e-decode nvdec --streams 32 --realtime --e2e-frames 150; bench full 100 --e2e-decode
#                            nvdec,auto --streams 32 --e2e-frames 300 (the streams table in docs/results.md)
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: E=DIR $0 bench NAME LIMIT [flags...] | video NAME INPUT [flags...]" >&2; exit 2; }
mode=$1 name=$2 third=$3
shift 3
E=${E:-/tmp/e2e}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case $mode in
  bench)
    clip=$(testsrc_clip "${CLIP_SECONDS:-12}")
    timeout "$third" "$CORRTRACK" bench --e2e "$clip" "$@" --json "$E/$name.json" > "$E/$name.txt" 2>&1
    echo "$name: rc $? $(grep -E "^$(basename "$clip" .mp4)" "$E/$name.txt" | tail -4 | tr -s ' ' | tr '\n' '|')" >> "$E/summary.txt"
    ;;
  video)
    case $third in sample) in=assets/sample.mp4 ;; sway) in=$(sway_clip 600) ;; *) in=$third ;; esac
    timeout "${LIMIT:-60}" "$CORRTRACK" track "$in" "$@" --kernel auto > "$E/$name.txt" 2>&1
    echo "$name: rc $? $(grep -E 'wall time' "$E/$name.txt" | tr -s ' ')" >> "$E/summary.txt"
    timeout "${LIMIT:-60}" "$CORRTRACK" track "$in" "$@" --kernel auto --video "$E/$name.mp4" > "$E/${name}_video.txt" 2>&1
    echo "$name --video: rc $? $(grep -E 'wall time' "$E/${name}_video.txt" | tr -s ' ')" >> "$E/summary.txt"
    ;;
  *) echo "e2e.sh: unknown mode '$mode' (bench or video)" >&2; exit 2 ;;
esac
cat "$E/summary.txt"
