#!/usr/bin/env bash
# GPU check: the one script to run on the GPU host (e.g. an H200 with Ubuntu 24.04 and CUDA 13,
# which has no FFmpeg). It uses binaries built elsewhere and, each step with its own log and time
# limit, continuing past failures, runs:
#   1. nvidia-smi (summary + full -q report)
#   2. a check that every shared library the binaries need resolves
#   3. every test binary of the build (gtest XML per binary), test_kernel_sweep first
#   4. compute-sanitizer memcheck and racecheck on test_kernel_sweep (a short gtest filter)
#   5. corrtrack bench, the full default sweep: bench.csv, bench.png, bench.json, bench.txt
# then prints a pass/fail table (also in summary.txt). Worst case about 7.5 minutes.
#
# Usage:
#   scripts/gpu_check.sh [BUILD_DIR [LIB_DIR]]
#       BUILD_DIR  the build folder carried from the build machine (default: $CORRTRACK_BUILD_DIR,
#                  else build)
#       LIB_DIR    shared libraries carried with it (default: $CORRTRACK_GPU_LIBS, else .gpu/lib),
#                  prepended to LD_LIBRARY_PATH for the binaries only. The binaries are built on
#                  Debian 12 against its FFmpeg, FFTW, OpenCV and their dependencies; the GPU host
#                  has none of them.
#   scripts/gpu_check.sh --bundle BUILD_DIR LIB_DIR
#       Run on the build machine: copies into LIB_DIR every library the corrtrack and test
#       binaries load, except the C/C++ runtime (libc, libm, libstdc++, libgcc_s, ld-linux, libz)
#       and the NVIDIA driver/CUDA libraries (the GPU host has its own; cuFFT comes from its
#       CUDA 13). Prints the total size: the device carry limit is 64 MiB.
#
# Environment:
#   OUT                     where everything goes (default: out/gpu_check under the repository)
#   SANITIZER_GTEST_FILTER  gtest filter for the sanitizer runs (default: *KernelSweep*cuda_*;
#                           narrow it, e.g. *KernelSweep*cuda_shared, if the runs time out)
#   BENCH_ARGS              extra arguments for corrtrack bench (e.g. "--runs 50")
#   LINK_SOURCE_DIR=0       do not symlink the build's absolute source path (from its
#                           CMakeCache.txt) to this copy of the repository; by default the link is
#                           made when that path does not exist here, so that tests which read
#                           assets through the baked-in CORRTRACK_SOURCE_DIR find them
#   T_SMI T_TESTS T_TEST_MAX T_MEMCHECK T_RACECHECK T_BENCH
#                           time limits in seconds (defaults 20 130 90 60 60 170); T_TESTS is
#                           shared by all test binaries, T_TEST_MAX caps any one of them
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ------------------------------------------------------------------------------ bundle mode
if [ "${1:-}" = "--bundle" ]; then
  build="${2:?usage: gpu_check.sh --bundle BUILD_DIR LIB_DIR}"
  libdir="${3:?usage: gpu_check.sh --bundle BUILD_DIR LIB_DIR}"
  mkdir -p "$libdir"
  skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libmvec|libdl\.so|libpthread|librt\.so|libresolv|libutil\.so|libstdc\+\+|libgcc_s|libz\.so|libcuda|libnvidia|libcudart|libcufft|libcublas|libcurand|libcusparse|libcusolver|libnpp|libnvjpeg|libnvrtc)'
  bins=("$build/app/corrtrack")
  while IFS= read -r b; do bins+=("$b"); done < <(find "$build/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x 2>/dev/null | sort)
  for b in "${bins[@]}"; do
    [ -x "$b" ] || { echo "bundle: missing $b" >&2; continue; }
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
  done | sort -u | while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    cp -L "$path" "$libdir/$name"
  done
  echo "bundle: $(find "$libdir" -maxdepth 1 -type f | wc -l) libraries, $(du -sh "$libdir" | cut -f1) in $libdir"
  if [ "$(du -sm "$libdir" | cut -f1)" -gt 60 ]; then
    echo "bundle: warning: over the 64 MiB carry limit once the build folder is added" >&2
  fi
  exit 0
fi

# ------------------------------------------------------------------------------ check mode
build="${1:-${CORRTRACK_BUILD_DIR:-build}}"
libdir="${2:-${CORRTRACK_GPU_LIBS:-.gpu/lib}}"
cd "$repo" || exit 1
build="$(cd "$build" 2>/dev/null && pwd)" || { echo "gpu_check: no build folder '${1:-build}'" >&2; exit 2; }
[ -d "$libdir" ] && libdir="$(cd "$libdir" && pwd)"
out="${OUT:-$repo/out/gpu_check}"
mkdir -p "$out/tests"

T_SMI="${T_SMI:-20}"
T_TESTS="${T_TESTS:-130}"
T_TEST_MAX="${T_TEST_MAX:-90}"
T_MEMCHECK="${T_MEMCHECK:-60}"
T_RACECHECK="${T_RACECHECK:-60}"
T_BENCH="${T_BENCH:-170}"
SANITIZER_GTEST_FILTER="${SANITIZER_GTEST_FILTER:-*KernelSweep*cuda_*}"

# The binaries' own library path: carried libraries first, then the host's CUDA libraries.
lib_path="${LD_LIBRARY_PATH:-}"
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && lib_path="$d${lib_path:+:$lib_path}"
done
[ -d "$libdir" ] && lib_path="$libdir${lib_path:+:$lib_path}"
export CORRTRACK_BINARY="$build/app/corrtrack"   # tests that run the CLI look here first

# Tests and the CLI may carry the build machine's absolute source path (CORRTRACK_SOURCE_DIR);
# where that path is free on this host, point it at this copy of the repository.
baked="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)"
if [ "${LINK_SOURCE_DIR:-1}" != 0 ] && [ -n "$baked" ] && [ "$baked" != "$repo" ] && [ ! -e "$baked" ]; then
  if mkdir -p "$(dirname "$baked")" 2>/dev/null && ln -s "$repo" "$baked" 2>/dev/null; then
    echo "gpu_check: linked $baked -> $repo (the build's source path)"
  else
    echo "gpu_check: note: cannot link the build's source path $baked here; tests that read assets by it may fail"
  fi
fi

names=(); results=(); times=(); logs=()
record() {  # name status seconds log
  names+=("$1"); results+=("$2"); times+=("$3"); logs+=("$4")
  printf 'gpu_check: %-26s %-34s %4ss  %s\n' "$1" "$2" "$3" "$4"
}
status_of() {  # exit code -> PASS / TIMEOUT / FAIL (rc)
  case "$1" in
    0) echo PASS ;;
    124|137) echo "TIMEOUT" ;;
    *) echo "FAIL (rc $1)" ;;
  esac
}
# run_step LIMIT LOG CMD...: runs CMD with the binaries' library path, stdout+stderr to LOG.
run_step() {
  local limit="$1" log="$2"; shift 2
  timeout -k 5 "$limit" env LD_LIBRARY_PATH="$lib_path" "$@" >"$log" 2>&1
}

# 1. nvidia-smi
t0=$SECONDS
if command -v nvidia-smi >/dev/null; then
  {
    timeout "$T_SMI" nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.max.sm,clocks.sm,power.limit,temperature.gpu,mig.mode.current --format=csv
    echo
    timeout "$T_SMI" nvidia-smi
  } >"$out/nvidia-smi.txt" 2>&1
  rc=$?
  timeout "$T_SMI" nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
  record nvidia-smi "$(status_of $rc)" $((SECONDS - t0)) nvidia-smi.txt
  head -3 "$out/nvidia-smi.txt"
else
  echo "nvidia-smi not found" >"$out/nvidia-smi.txt"
  record nvidia-smi "FAIL (not found)" 0 nvidia-smi.txt
fi

# 2. shared libraries
t0=$SECONDS
(
  missing=0
  for b in "$build/app/corrtrack" "$build"/tests/test_*; do
    if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
    nf="$(LD_LIBRARY_PATH="$lib_path" ldd "$b" 2>&1 | grep 'not found')"
    if [ -n "$nf" ]; then missing=1; echo "$b:"; echo "$nf"; fi
  done
  [ $missing = 0 ] && echo "all libraries resolve (LD_LIBRARY_PATH=$lib_path)"
  exit $missing
) >"$out/libraries.txt" 2>&1
rc=$?
record libraries "$([ $rc = 0 ] && echo PASS || echo "FAIL (missing, see log)")" $((SECONDS - t0)) libraries.txt

# 3. test binaries, test_kernel_sweep first
tests=()
[ -x "$build/tests/test_kernel_sweep" ] && tests+=("$build/tests/test_kernel_sweep")
while IFS= read -r b; do
  [ "$b" = "$build/tests/test_kernel_sweep" ] || tests+=("$b")
done < <(find "$build/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x 2>/dev/null | sort)
[ ${#tests[@]} = 0 ] && record tests "FAIL (no test binaries in $build/tests)" 0 -
tests_end=$((SECONDS + T_TESTS))
for b in "${tests[@]}"; do
  name="$(basename "$b")"
  left=$((tests_end - SECONDS))
  if [ $left -lt 5 ]; then
    record "$name" "SKIP (test time budget spent)" 0 -
    continue
  fi
  [ $left -gt "$T_TEST_MAX" ] && left=$T_TEST_MAX
  t0=$SECONDS
  run_step "$left" "$out/tests/$name.log" "$b" --gtest_output="xml:$out/tests/$name.xml"
  rc=$?
  st="$(status_of $rc)"
  summary="$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/tests/$name.log" | tr -s ' ' | tr '\n' ' ')"
  record "$name" "$st${summary:+: $summary}" $((SECONDS - t0)) "tests/$name.log"
done

# 4. compute-sanitizer on the kernel sweep
sanitizer="$(command -v compute-sanitizer || true)"
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$c" ] && sanitizer="$c"
done
for tool in memcheck racecheck; do
  limit=$T_MEMCHECK
  [ $tool = racecheck ] && limit=$T_RACECHECK
  log="sanitizer-$tool.log"
  if [ -z "$sanitizer" ]; then
    echo "compute-sanitizer not found" >"$out/$log"
    record "sanitizer $tool" "SKIP (no compute-sanitizer)" 0 "$log"
    continue
  fi
  if [ ! -x "$build/tests/test_kernel_sweep" ]; then
    record "sanitizer $tool" "SKIP (no test_kernel_sweep)" 0 -
    continue
  fi
  t0=$SECONDS
  run_step "$limit" "$out/$log" "$sanitizer" --tool "$tool" --error-exitcode 86 \
    "$build/tests/test_kernel_sweep" --gtest_filter="$SANITIZER_GTEST_FILTER"
  rc=$?
  st="$(status_of $rc)"
  [ $rc = 86 ] && st="FAIL (sanitizer errors)"
  errs="$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$log" | tail -1)"
  record "sanitizer $tool" "$st${errs:+: $errs}" $((SECONDS - t0)) "$log"
done

# 5. bench: the full default sweep. GPU kernels run first; --max-total-seconds leaves time to
#    write the outputs before the step's time limit.
t0=$SECONDS
# shellcheck disable=SC2086  # BENCH_ARGS is a list of words on purpose
timeout -k 5 "$T_BENCH" env LD_LIBRARY_PATH="$lib_path" "$build/app/corrtrack" bench \
  --csv "$out/bench.csv" --plot "$out/bench.png" --json "$out/bench.json" \
  --max-total-seconds $((T_BENCH - 25)) ${BENCH_ARGS:-} >"$out/bench.txt" 2>"$out/bench.log"
rc=$?
st="$(status_of $rc)"
if [ $rc = 1 ] && [ -s "$out/bench.csv" ] && grep -q 'gnuplot not found' "$out/bench.log" &&
   ! grep -q 'failed with an error' "$out/bench.log"; then
  st="PASS (no gnuplot here: plot script saved as bench.gp)"
fi
cases="$(grep -E '^[0-9]+ cases:' "$out/bench.txt" | tail -1)"
record bench "$st${cases:+: $cases}" $((SECONDS - t0)) "bench.txt, bench.log"

# Summary
{
  echo "gpu_check summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), build $build)"
  printf '%-26s %-8s %s\n' step seconds result
  for i in "${!names[@]}"; do
    printf '%-26s %-8s %s   [%s]\n' "${names[$i]}" "${times[$i]}" "${results[$i]}" "${logs[$i]}"
  done
} | tee "$out/summary.txt"
fails=0
for r in "${results[@]}"; do
  case "$r" in PASS*|SKIP*) ;; *) fails=$((fails + 1)) ;; esac
done
echo "gpu_check: $fails step(s) not passed; everything is in $out"
exit $((fails > 0))
