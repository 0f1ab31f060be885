# Sourced from the repository root by the bench scripts that run on the GPU host
# (options_ab.sh, colour_nvdec.sh): builds FFmpeg (skipped when built), exports the library
# path, sets B to the binary and makes /tmp/pan.mp4 (cues_ab.sh's 1080p texture panning 3 px a
# frame) when it is missing.
STEPS=ffmpeg bash scripts/gpu_check.sh > /dev/null 2>&1
export LD_LIBRARY_PATH=/tmp/ffmpeg/lib:$PWD/.gpu/lib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:/usr/local/nvidia/lib64
B=build/app/corrtrack
if [ ! -s /tmp/pan.mp4 ]; then
  sed -n '/^python3 - 300/,/^PY$/p' scripts/bench/cues_ab.sh > /tmp/mkpan.sh
  bash /tmp/mkpan.sh
fi
