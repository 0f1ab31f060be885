#!/usr/bin/env bash
# The colour cue on NVDEC frames (issue 27): a GPU tracker with at most --cue-targets targets
# has each NVDEC frame's luma and chroma brought to the host (FrameSession::with_host_colour),
# so that it tracks a colour source as the CPU does. This times one target on NVDEC with the
# defaults against --colour 0 (no download), on the bundled sample (colour, 768x576) and the
# 1080p panning texture of lib.sh's pan_clip, and checks the sample's last box on NVDEC
# against software decoding. Run on the GPU host from the repository root; it sources
# scripts/bench/lib.sh (FFmpeg, the library path, the clip):
#   bash scripts/bench/colour_nvdec.sh | tee $OUT/colour_nvdec.txt
set -u
E=${E:-/tmp/colour_nvdec}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
B=$CORRTRACK
pan=$(pan_clip 300)
SB=$(grep -v "^#" assets/sample.box)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() {  # label clip box extra...
  local label=$1 clip=$2 box=$3; shift 3
  local csv=/tmp/colour_nvdec_$label.csv
  timeout 60 $B track "$clip" --box "$box" --csv "$csv" "$@" > /tmp/colour_nvdec_$label.txt 2>&1
  echo "$label rc=$? $(grep -E 'wall time' /tmp/colour_nvdec_$label.txt | tr -s ' ') last: $(tail -1 "$csv" | cut -d, -f1,4-7)"
}
for rep in 1 2; do
  run "sample_nvdec_$rep" assets/sample.mp4 "$SB" --decode nvdec
  run "sample_nvdec_colour0_$rep" assets/sample.mp4 "$SB" --decode nvdec --colour 0
  run "pan_nvdec_$rep" "$pan" 900,500,40,40 --decode nvdec
  run "pan_nvdec_colour0_$rep" "$pan" 900,500,40,40 --decode nvdec --colour 0
done
run sample_sw assets/sample.mp4 "$SB" --decode sw
run sample_cpu assets/sample.mp4 "$SB" --kernel cpu_fast
for a in sw cpu; do
  if cmp -s <(cut -d, -f1-7 /tmp/colour_nvdec_sample_nvdec_1.csv) <(cut -d, -f1-7 /tmp/colour_nvdec_sample_$a.csv); then
    echo "sample boxes: nvdec == $a"
  else
    echo "sample boxes: nvdec != $a ($(diff <(cut -d, -f1-7 /tmp/colour_nvdec_sample_nvdec_1.csv) <(cut -d, -f1-7 /tmp/colour_nvdec_sample_$a.csv) | grep -c '^<') lines)"
  fi
done
