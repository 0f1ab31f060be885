#!/usr/bin/env bash
# Device call 13 (session 21): main's GPU tests after session 20 (template_stats unified with
# the CPU's, GpuSearch::group_end, auto's single small-problem check, test_tracker's launch
# count for cuda_shared), the kernel sweep and a batch memcheck; many targets (1-1024); and
# 32 streams of a 1080p30 H.264 clip in one process: full speed (nvdec, auto) against the
# decode-only ceiling, and paced live with auto's new pixel-rate share (--nvdec-rate, default
# 2400 Mpixel/s: all 32 on NVDEC) against the old split (8 on NVDEC, 24 on the CPU, given here
# by --nvdec-rate 500) in the same call.
set -uo pipefail
cd "$(dirname "$0")/../../.." || exit 1
E=/tmp/run13
. bench/results/device_preamble.sh  # FFmpeg, libraries, $E/summary.txt, t()
for b in kernel_caches tracker gpu_search cuda_integral cuda_peak mma_box_sums mma_fused_batch gpu_context pipeline streams; do
  t $b 90 build/tests/test_$b
done
t policy 60 build/tests/test_policy --gtest_filter='Policy.CpuAndGpu*'
t sweep 120 build/tests/test_kernel_sweep
t memcheck_batch 90 compute-sanitizer --tool memcheck build/tests/test_mma_fused_batch
EXTRAS=0 E=$E/targets bash bench/results/h200_2026-12-02c/targets.sh >> $E/summary.txt 2>&1
/tmp/ffmpeg/bin/ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=12 -c:v libx264 \
  -preset veryfast -pix_fmt yuv420p /tmp/e2e-1080p.mp4
st() {  # NAME LIMIT bench-flags...
  local name=$1 lim=$2; shift 2
  timeout "$lim" build/app/corrtrack bench --e2e /tmp/e2e-1080p.mp4 --e2e-repeats 1 "$@" --json $E/$name.json > $E/$name.txt 2>&1
  echo "$name: rc $? $(grep -E '^e2e-1080p' $E/$name.txt | tail -2 | tr -s ' ' | tr '\n' '|')" >> $E/summary.txt
}
st rt_auto 60 --e2e-decode auto --streams 32 --realtime --e2e-frames 150
st rt_auto_old_split 60 --e2e-decode auto --streams 32 --realtime --e2e-frames 150 --nvdec-rate 500
st rt_nvdec 60 --e2e-decode nvdec --streams 32 --realtime --e2e-frames 150
st full 100 --e2e-decode nvdec,auto --streams 32 --e2e-frames 300
cp $E/summary.txt "$OUT/run13_summary.txt"; tar -C /tmp -czf "$OUT/run13.tar.gz" run13
cat $E/summary.txt
