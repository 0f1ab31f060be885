#!/usr/bin/env bash
# FFmpeg's decode throughput on this GPU: a 1080p H.264 clip (testsrc2 through libx264
# ultrafast, 600 frames) decoded with NVDEC (-hwaccel cuda), CUVID (h264_cuvid) and on the CPU,
# each by `ffmpeg -benchmark` into the null muxer. scripts/gpu_check.sh's nvdec step runs it
# (into nvdec.txt, reading its "MODE: 600 frames in X s = N fps" lines).
#
#   scripts/bench/nvdec.sh FFMPEG CLIP
#
# FFMPEG: the ffmpeg program (the minimal build's, with NVDEC and CUVID); CLIP: where to write
# the clip (removed at the end). Prints per mode a "== MODE: ..." line, ffmpeg's bench and
# error lines, then "MODE: 600 frames in X s = N fps" or "MODE: FAILED (rc N)"; exits 0 when
# every mode decoded, 1 when one failed, 2 without FFMPEG, 3 when encoding the clip failed.
set -uo pipefail
ff=${1:?ffmpeg}; clip=${2:?clip path}
[ -x "$ff" ] || { echo "no $ff"; exit 2; }
"$ff" -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=20 \
  -c:v libx264 -preset ultrafast -pix_fmt yuv420p "$clip" || { echo "encoding the clip failed"; exit 3; }
fail=0
for mode in nvdec cuvid cpu; do
  case $mode in
    nvdec) args=(-hwaccel cuda -hwaccel_output_format cuda) ;;
    cuvid) args=(-c:v h264_cuvid) ;;
    cpu)   args=() ;;
  esac
  echo "== $mode: ffmpeg -benchmark ${args[*]} -i 1080p.mp4 (600 frames) -an -f null -"
  r="$("$ff" -nostdin -hide_banner -nostats -benchmark "${args[@]}" -i "$clip" -an -f null - 2>&1)"
  rc=$?
  echo "$r" | grep -E 'bench:|frame=|rror|ail' | tail -n 6
  rt="$(sed -n 's/.*bench: utime=.* rtime=\([0-9.]*\)s.*/\1/p' <<<"$r" | tail -n 1)"
  if [ $rc = 0 ] && [ -n "$rt" ]; then
    echo "$mode: 600 frames in ${rt} s = $(awk -v t="$rt" 'BEGIN { printf "%.0f", 600 / t }') fps"
  else
    echo "$mode: FAILED (rc $rc)"; fail=1
  fi
done
rm -f "$clip"
exit $fail
