#!/usr/bin/env bash
# run5's EXTRA: the roofline columns of corrtrack bench on the H200, two input streams in one
# process (a GpuContext each), and GpuContext's GPU tests under memcheck.
cd "$(dirname "$0")/../../.." || exit 1
echo "== roofline bench"
timeout 120 build/app/corrtrack bench --kernels cuda_mma,cuda_dp4a_ilp,cuda_fft --sizes 1920x1080 --templates 16,32,64,128 \
  --modes full --runs 20 --json /tmp/run5/roofline.json --csv /tmp/run5/roofline.csv > /tmp/run5/roofline.txt 2>&1
echo "rc $?"; grep -E "^#|cuda_" /tmp/run5/roofline.txt | head -30
echo "== two streams"
timeout 60 build/app/corrtrack track --input assets/sample.mp4 --box 252,218,34,92 --input assets/sample.mp4 --box 252,218,34,92 \
  --csv /tmp/run5/two.csv --json /tmp/run5/two.json > /tmp/run5/two.txt 2>&1
echo "rc $?"; grep -E "streams|sample|all " /tmp/run5/two.txt | head -6; ls /tmp/run5/two.* | head
echo "== memcheck test_gpu_context"
timeout 90 compute-sanitizer --tool memcheck build/tests/test_gpu_context --gtest_filter='GpuContextGpu.*' 2>&1 | grep -E "ERROR SUMMARY|PASSED|FAILED" | head
