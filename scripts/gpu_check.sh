#!/usr/bin/env bash
# GPU check: the one script to run on the GPU host (an H200 with Ubuntu 24.04 and CUDA 13, which
# has no FFmpeg, FFTW or OpenCV and no network). It uses binaries built on Debian 12 and the
# bundle of scripts/gpu_bundle.sh, and, each step with its own log and time limit, continuing
# past failures, runs:
#   ffmpeg     scripts/gpu_ffmpeg_build.sh: a minimal FFmpeg 5.1 with Debian's sonames in
#              $FFMPEG_PREFIX (/tmp/ffmpeg), about a minute on 16 cores; skipped when that
#              prefix already holds the same build. Run whenever a later step needs FFmpeg.
#   smi        nvidia-smi (summary + full -q report)
#   libs       every shared library the binaries need resolves, and every symbol (ldd -r)
#   tests      every test binary of the build but test_soak (gtest XML per binary), test_kernel_sweep,
#              test_policy and test_tracker first
#   sanitizer  compute-sanitizer memcheck, racecheck and initcheck, each on the kernels
#              (test_kernel_sweep, SANITIZER_GTEST_FILTER) and on the tracker (test_tracker's
#              and test_pipeline's GPU paths, SANITIZER_TRACKER_FILTER); "memcheck",
#              "racecheck" or "initcheck" alone select one tool
#   soak       test_soak on the GPU tracker (kernel auto): 8 targets x 3 scales for SOAK_FRAMES
#              (90000, an hour at 25 fps); RSS and update time at the start and the end in
#              soak.json and soak.txt (limit T_SOAK, 300 s)
#   bench      corrtrack bench, the full default sweep: bench.csv, bench.png, bench.json, bench.txt
#   eval       corrtrack eval on the sequences in EVAL_DATA (.gpu/data: OTB-style folders carried
#              with the call; the shared data does not travel) once per kernel in EVAL_KERNELS
#              ("auto cuda_dp4a_ilp cpu_fast"): OTB metrics and the tracker's update fps per
#              kernel, and whether the GPU and CPU paths score alike (EVAL_ARGS: more eval
#              options, e.g. "--colour 0 --distractor-weight 0"; the GPU applies both cues
#              through the shared host code, so none are needed for equal scores); eval-<kernel>.json/.txt
#              (limit T_EVAL, 120 s). Only when named in STEPS.
#   nvdec      FFmpeg decode throughput of a 1080p H.264 clip (made with libx264),
#              scripts/bench/nvdec.sh: NVDEC (-hwaccel cuda), CUVID (h264_cuvid) and CPU; nvdec.txt
#   e2e        corrtrack bench --e2e on 1080p and 4K H.264 clips made here (testsrc2, x264
#              veryfast): decode-only vs decode+track, software and NVDEC; e2e.txt, e2e.json
#              (extra flags in E2E_ARGS; limit T_E2E, 150 s)
#   crowd      1024 targets in any layout (issue 30), scripts/bench/crowd.sh: corrtrack bench --e2e
#              --targets 256,1024 --layout grid and 1024 --layout crowded on a testsrc2 and a
#              panning-texture 1080p clip (NVDEC), then the issue's `corrtrack track --box ...`
#              with 1024 crowded boxes with and without the per-frame re-detection limit; fps,
#              lost target-frames and the GPU search's host-time split in crowd.txt (limit
#              T_CROWD, 150 s). Only when named in STEPS.
#   first      a run's first frames, scripts/bench/first.sh: `bench --e2e --targets 256
#              --targets-only` on the 1080p clip, NVDEC, traced (CORRTRACK_TRACE_START=1), 4
#              processes: cold, warm (its cache), the old sync round without cache, cold with
#              CUDA_MODULE_LOADING=EAGER; first.txt (limit T_FIRST, 120 s, a quarter a process).
#              Only when named in STEPS.
#   gui        the GUI's window (scripts/gpu_gui.sh): the carried Xvfb (.gpu/carry/xvfb.tar.xz)
#              with NVIDIA's GL (GLX, else EGL), `corrtrack gui --stats` on the e2e step's
#              1080p and 4K clips (made here when missing) with 1 and 16 targets and NVDEC:
#              loop fps, frame times, GL strings, interop on/off; the A/B full-frame mode
#              (cuda_mma_fused vs cuda_dp4a_ilp); gui/gui.txt, gui/gui.json and 3 screenshots
#              (limit T_GUI, 150 s). Only when named in STEPS.
#   python     scripts/bench/python.sh: the Python package from .gpu/python
#              (scripts/gpu_python_bundle.sh: the module for CPython's stable ABI, 3.12+, and
#              pytest's wheels) on the host's python3 with its PyTorch, CuPy and OpenCV: the
#              pytest suites with CORRTRACK_REQUIRE_GPU=1 (a GPU case that cannot run fails,
#              never skips), then python/benchmarks/binding_overhead.py (the binding's per-call
#              overhead over C++ and corrtrack bench); python.txt, python-tests.xml,
#              python-overhead.txt/.json (limit T_PYTHON, 300 s; the host's Python in GPU_PYTHON,
#              default python3). Only when named in STEPS.
#              PYTHON_DRY_RUN=1 checks the step where there is no GPU (nothing GPU required).
# then prints a pass/fail table (also in summary.txt). The whole run keeps to T_TOTAL (450 s):
# each step's limit is cut to what is left of it.
#
# Usage:
#   scripts/gpu_check.sh [BUILD_DIR [LIB_DIR]]
#       BUILD_DIR  the build folder carried from the build machine (default: $CORRTRACK_BUILD_DIR,
#                  else build). It needs app/corrtrack, tests/test_* and CMakeCache.txt only.
#       LIB_DIR    the carried non-FFmpeg libraries (default: $CORRTRACK_GPU_LIBS, else .gpu/lib;
#                  unpacked from .gpu/carry/deps.tar.xz by the ffmpeg step when absent).
#   scripts/gpu_check.sh --bundle [BUILD_DIR]
#       Run on the build machine: the same as scripts/gpu_bundle.sh [BUILD_DIR].
#
# Environment:
#   STEPS                   the steps to run, in any order (default: all of them:
#                           "ffmpeg smi libs tests sanitizer bench nvdec e2e"), e.g.
#                           STEPS="tests sanitizer bench"; ffmpeg runs anyway when a chosen step
#                           needs it (libs, tests, bench, nvdec)
#   OUT                     where the results go. When set (the device tool's $OUT, which returns
#                           at most 8 files), it gets summary.txt, gpu_check.tar.gz (every log,
#                           gtest XML and result; refreshed after each step, so a killed run
#                           still returns what it did), bench.csv, bench.json, bench.png,
#                           bench.txt and nvdec.txt; the steps write in $GPU_CHECK_WORK
#                           (default /tmp/gpu_check). When unset, everything is written in
#                           out/gpu_check under the repository.
#   FFMPEG_PREFIX           the minimal FFmpeg's prefix (default /tmp/ffmpeg)
#   SANITIZER_GTEST_FILTER  gtest filter for the sanitizer runs (default: *KernelSweep*cuda_*;
#                           narrow it, e.g. *KernelSweep*cuda_shared, if the runs time out)
#   SANITIZER_TRACKER_FILTER  the same for test_tracker and test_pipeline (default: the GPU
#                           tracker and track-loop tests: *MultiTracker*:*SameTrack*:*TrackLoop*)
#   SOAK_FRAMES             frames of the soak step (default 90000)
#   BENCH_ARGS              extra arguments for corrtrack bench (e.g. "--runs 50")
#   LINK_SOURCE_DIR=0       do not symlink the build's absolute source path (from its
#                           CMakeCache.txt) to this copy of the repository; by default the link is
#                           made when that path does not exist here, so that tests which read
#                           assets or run the CLI through the baked-in CORRTRACK_SOURCE_DIR and
#                           CORRTRACK_BINARY find them
#   T_TOTAL T_FFMPEG T_SMI T_TESTS T_TEST_MAX T_MEMCHECK T_RACECHECK T_INITCHECK T_BENCH T_NVDEC
#   T_SOAK T_PYTHON T_GUI   time limits in seconds (defaults 450 240 20 130 90 60 60 60 170 60
#                           300 300 150); each sanitizer tool's limit is shared by its two runs;
#                           T_TESTS is shared by all test binaries, T_TEST_MAX caps any one of
#                           them, T_TOTAL caps the whole run
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ------------------------------------------------------------------------------ bundle mode
if [ "${1:-}" = "--bundle" ]; then
  shift
  exec bash "$repo/scripts/gpu_bundle.sh" "$@"
fi

# ------------------------------------------------------------------------------ check mode
t_begin=$SECONDS
build="${1:-${CORRTRACK_BUILD_DIR:-build}}"
libdir="${2:-${CORRTRACK_GPU_LIBS:-.gpu/lib}}"
cd "$repo" || exit 1
# The build travels packed (scripts/gpu_bundle.sh): unpack it where it is not already.
if [ ! -x "$build/app/corrtrack" ] && [ -s .gpu/carry/build.tar.xz ]; then
  mkdir -p "$build" && { tar -C "$build" -xJf .gpu/carry/build.tar.xz 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/carry/build.tar.xz "$build"; } ||
    { echo "gpu_check: cannot unpack .gpu/carry/build.tar.xz" >&2; exit 2; }
fi
build="$(cd "$build" 2>/dev/null && pwd)" || { echo "gpu_check: no build folder '${1:-build}'" >&2; exit 2; }
case "$libdir" in /*) ;; *) libdir="$repo/$libdir" ;; esac
ffprefix="${FFMPEG_PREFIX:-/tmp/ffmpeg}"

if [ -n "${OUT:-}" ]; then
  final="$OUT"
  out="${GPU_CHECK_WORK:-/tmp/gpu_check}"
  rm -rf "$out"
else
  final=""
  out="$repo/out/gpu_check"
fi
mkdir -p "$out/tests" ${final:+"$final"}

T_TOTAL="${T_TOTAL:-450}"
T_FFMPEG="${T_FFMPEG:-240}"
T_SMI="${T_SMI:-20}"
T_TESTS="${T_TESTS:-130}"
T_TEST_MAX="${T_TEST_MAX:-90}"
T_MEMCHECK="${T_MEMCHECK:-60}"
T_RACECHECK="${T_RACECHECK:-60}"
T_INITCHECK="${T_INITCHECK:-60}"
T_SOAK="${T_SOAK:-300}"
T_BENCH="${T_BENCH:-170}"
T_NVDEC="${T_NVDEC:-60}"
T_E2E="${T_E2E:-150}"
T_CROWD="${T_CROWD:-150}"
T_PYTHON="${T_PYTHON:-300}"
T_EVAL="${T_EVAL:-120}"
T_GUI="${T_GUI:-150}"
SANITIZER_GTEST_FILTER="${SANITIZER_GTEST_FILTER:-*KernelSweep*cuda_*}"
SANITIZER_TRACKER_FILTER="${SANITIZER_TRACKER_FILTER:-*MultiTracker*:*SameTrack*:*TrackLoop*}"
SOAK_FRAMES="${SOAK_FRAMES:-90000}"
STEPS="${STEPS:-ffmpeg smi libs tests sanitizer bench nvdec e2e}"
deadline=$((t_begin + T_TOTAL))

want() {  # STEP...: true if STEPS names any of them
  local s w
  for w in "$@"; do for s in $STEPS; do [ "$s" = "$w" ] && return 0; done; done
  return 1
}
for s in $STEPS; do
  case "$s" in ffmpeg|smi|libs|tests|sanitizer|memcheck|racecheck|initcheck|soak|bench|nvdec|e2e|crowd|first|python|eval|gui) ;;
    *) echo "gpu_check: unknown step '$s' in STEPS (ffmpeg smi libs tests sanitizer memcheck racecheck initcheck soak bench nvdec e2e crowd first python eval gui)" >&2; exit 2 ;;
  esac
done
limit_of() {  # LIMIT: LIMIT cut to what is left of T_TOTAL (at least 1)
  local left=$((deadline - SECONDS - 3))
  [ "$left" -lt "$1" ] && { [ "$left" -lt 1 ] && echo 1 || echo "$left"; return; }
  echo "$1"
}

names=(); results=(); times=(); logs=()
write_summary() {
  {
    echo "gpu_check summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), build $build, ${STEPS})"
    printf '%-26s %-8s %s\n' step seconds result
    for i in "${!names[@]}"; do
      printf '%-26s %-8s %s   [%s]\n' "${names[$i]}" "${times[$i]}" "${results[$i]}" "${logs[$i]}"
    done
    # The overhead table is short and the device tool returns few files: it goes here too.
    if [ -s "$out/python-overhead.txt" ]; then echo; cat "$out/python-overhead.txt"; fi
  } >"$out/summary.txt"
}
publish() {  # copy the results to $OUT (at most 8 files come back from the device tool)
  write_summary
  [ -n "$final" ] || return 0
  local f
  cp -f "$out/summary.txt" "$final/summary.txt"
  for f in bench.csv bench.json bench.txt nvdec.txt e2e.txt e2e.json crowd.txt first.txt; do
    [ -f "$out/$f" ] && cp -f "$out/$f" "$final/$f"
  done
  if [ -d "$out/gui" ]; then  # the table, the summaries and 3 screenshots (8 files come back)
    mkdir -p "$final/gui"
    for f in "$out"/gui/gui.txt "$out"/gui/gui.json "$out"/gui/*.png; do [ -f "$f" ] && cp -f "$f" "$final/gui/"; done
  fi
  tar -C "$out" -czf "$final/gpu_check.tar.gz.tmp" . 2>/dev/null && mv -f "$final/gpu_check.tar.gz.tmp" "$final/gpu_check.tar.gz"
}
record() {  # name status seconds log
  names+=("$1"); results+=("$2"); times+=("$3"); logs+=("$4")
  printf 'gpu_check: %-26s %-34s %4ss  %s\n' "$1" "$2" "$3" "$4"
  publish
}
status_of() {  # exit code -> PASS / TIMEOUT / FAIL (rc)
  case "$1" in
    0) echo PASS ;;
    124|137) echo "TIMEOUT" ;;
    *) echo "FAIL (rc $1)" ;;
  esac
}

# The binaries' library path: the minimal FFmpeg, the carried libraries, the host's CUDA (cuFFT).
lib_path="${LD_LIBRARY_PATH:-}"
cufft_dir=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  if [ -d "$d" ]; then
    lib_path="$d${lib_path:+:$lib_path}"
    [ -z "$cufft_dir" ] && [ -e "$d/libcufft.so.12" ] && cufft_dir="$d"
  fi
done
if [ -z "$cufft_dir" ] && [ "$(ldconfig -p 2>/dev/null | grep -c 'libcufft\.so\.12 ')" = 0 ]; then
  # No CUDA toolkit cuFFT: try the pip wheel's (nvidia-cufft) next to the host's Python.
  for d in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    f="$(find "$d/nvidia" -maxdepth 4 -name 'libcufft.so.12' 2>/dev/null | head -n 1)"
    if [ -n "$f" ]; then lib_path="$(dirname "$f")${lib_path:+:$lib_path}"; break; fi
  done
fi
lib_path="$ffprefix/lib:$libdir${lib_path:+:$lib_path}"
export CORRTRACK_BINARY="$build/app/corrtrack"   # tests that run the CLI look here first
# Should the copy have lost the execute bits, give them back (the .cmake files beside the tests
# must stay non-executable: executables named test_* are what the tests step runs).
for f in "$build/app/corrtrack" "$build"/tests/test_*; do
  case "$f" in *.cmake) continue ;; esac
  [ -f "$f" ] && [ ! -x "$f" ] && head -c 4 "$f" | grep -q 'ELF' && chmod u+x "$f"
done

# Tests may carry the build machine's absolute source path (CORRTRACK_SOURCE_DIR);
# where that path is free on this host, point it at this copy of the repository.
baked="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)"
if [ "${LINK_SOURCE_DIR:-1}" != 0 ] && [ -n "$baked" ] && [ "$baked" != "$repo" ] && [ ! -e "$baked" ]; then
  if mkdir -p "$(dirname "$baked")" 2>/dev/null && ln -s "$repo" "$baked" 2>/dev/null; then
    echo "gpu_check: linked $baked -> $repo (the build's source path)"
  else
    echo "gpu_check: note: cannot link the build's source path $baked here; tests that read assets by it may fail"
  fi
fi
# The baked path leads to this repository, but the binaries were carried into $build: where the
# baked build folder differs from $build and is missing its binaries, tests that run the CLI by
# its baked path still find it through CORRTRACK_BINARY (test_bench) or not at all (run_cli.h).
[ -n "$baked" ] && [ ! -x "$baked/build/app/corrtrack" ] && [ "$build" != "$repo/build" ] &&
  echo "gpu_check: note: tests that run $baked/build/app/corrtrack will not find it (build is $build)"

# run_step LIMIT LOG CMD...: runs CMD with the binaries' library path, stdout+stderr to LOG.
run_step() {
  local limit="$1" log="$2"; shift 2
  timeout -k 5 "$limit" env LD_LIBRARY_PATH="$lib_path" "$@" >"$log" 2>&1
}

# The carried libraries: unpacked from .gpu/carry/deps.tar.xz when only that was carried.
if [ ! -d "$libdir" ] && [ -s "$repo/.gpu/carry/deps.tar.xz" ]; then
  bash "$repo/scripts/gpu_ffmpeg_build.sh" --unpack-only >"$out/unpack.txt" 2>&1 ||
    echo "gpu_check: warning: unpacking .gpu/carry/deps.tar.xz failed: $(tail -n 3 "$out/unpack.txt")" >&2
fi

# ffmpeg: the minimal FFmpeg (needed by the libs, tests, bench and nvdec steps)
if want ffmpeg libs tests sanitizer memcheck racecheck initcheck soak bench nvdec e2e crowd first python eval gui; then
  t0=$SECONDS
  timeout -k 5 "$(limit_of "$T_FFMPEG")" env FFMPEG_PREFIX="$ffprefix" bash "$repo/scripts/gpu_ffmpeg_build.sh" >"$out/ffmpeg-build.txt" 2>&1
  rc=$?
  for f in "${FFMPEG_BUILD:-/tmp/ffmpeg-build}/build.log" "$ffprefix/build.log"; do
    [ -f "$f" ] && { cp -f "$f" "$out/ffmpeg-build.log"; break; }
  done
  st="$(status_of $rc)"
  info="$(grep -E 'built in|already holds' "$out/ffmpeg-build.txt" | tail -n 1 | sed 's/^gpu_ffmpeg_build: //')"
  [ $rc != 0 ] && info="$(grep -E 'error' "$out/ffmpeg-build.txt" | tail -n 1)"
  record "ffmpeg build" "$st${info:+: $info}" $((SECONDS - t0)) ffmpeg-build.txt
fi
[ -d "$libdir" ] || echo "gpu_check: warning: no library folder $libdir" >&2
export LD_LIBRARY_PATH="$lib_path"
echo "gpu_check: LD_LIBRARY_PATH=$lib_path"

# smi: nvidia-smi
if want smi; then
  t0=$SECONDS
  if command -v nvidia-smi >/dev/null; then
    lim="$(limit_of "$T_SMI")"
    {
      timeout "$lim" nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,clocks.max.sm,clocks.sm,power.limit,temperature.gpu,mig.mode.current --format=csv
      echo
      timeout "$lim" nvidia-smi
    } >"$out/nvidia-smi.txt" 2>&1
    rc=$?
    timeout "$lim" nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
    record nvidia-smi "$(status_of $rc)" $((SECONDS - t0)) nvidia-smi.txt
    head -3 "$out/nvidia-smi.txt"
  else
    echo "nvidia-smi not found" >"$out/nvidia-smi.txt"
    record nvidia-smi "FAIL (not found)" 0 nvidia-smi.txt
  fi
fi

# libs: shared libraries and symbols
if want libs; then
  t0=$SECONDS
  (
    missing=0
    for b in "$build/app/corrtrack" "$build"/tests/test_*; do
      if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
      r="$(LD_LIBRARY_PATH="$lib_path" ldd -r "$b" 2>&1)"
      nf="$(grep -E 'not found|undefined symbol' <<<"$r")"
      if [ -n "$nf" ]; then missing=1; echo "$b:"; echo "$nf"; fi
      echo "== $b"; echo "$r"
    done
    [ $missing = 0 ] && echo "all libraries and symbols resolve (LD_LIBRARY_PATH=$lib_path)"
    exit $missing
  ) >"$out/libraries.txt" 2>&1
  rc=$?
  record libraries "$([ $rc = 0 ] && echo PASS || echo "FAIL (missing, see log)")" $((SECONDS - t0)) libraries.txt
fi

# tests: test binaries, test_kernel_sweep first
if want tests; then
  # The kernels and the tracker first; test_soak belongs to the soak step.
  tests=()
  first=(test_kernel_sweep test_policy test_tracker)
  for n in "${first[@]}"; do [ -x "$build/tests/$n" ] && tests+=("$build/tests/$n"); done
  while IFS= read -r b; do
    case " ${first[*]} test_soak " in *" $(basename "$b") "*) continue ;; esac
    tests+=("$b")
  done < <(find "$build/tests" -maxdepth 1 -type f -name 'test_*' -perm -u+x 2>/dev/null | sort)
  [ ${#tests[@]} = 0 ] && record tests "FAIL (no test binaries in $build/tests)" 0 -
  tests_end=$((SECONDS + $(limit_of "$T_TESTS")))
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
    summary="$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?[.,]' "$out/tests/$name.log" | sed 's/, listed below://' | tr -s ' ' | tr '\n' ' ')"
    failed="$(sed -n 's/^\[  FAILED  \] \([^ ]*\) (.*/\1/p' "$out/tests/$name.log" | sort -u | tr '\n' ' ')"
    [ -n "$failed" ] && summary="$summary failed: $failed"
    record "$name" "$st${summary:+: $summary}" $((SECONDS - t0)) "tests/$name.log"
  done
fi

# sanitizer: compute-sanitizer on the kernel sweep
sanitizer="$(command -v compute-sanitizer || true)"
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  [ -z "$sanitizer" ] && [ -x "$c" ] && sanitizer="$c"
done
for tool in memcheck racecheck initcheck; do
  want sanitizer "$tool" || continue
  case $tool in memcheck) limit=$T_MEMCHECK ;; racecheck) limit=$T_RACECHECK ;; *) limit=$T_INITCHECK ;; esac
  if [ -z "$sanitizer" ]; then
    echo "compute-sanitizer not found" >"$out/sanitizer-$tool.log"
    record "sanitizer $tool" "SKIP (no compute-sanitizer)" 0 "sanitizer-$tool.log"
    continue
  fi
  # The kernels (the sweep), then the tracker's device path and the track loop; the tool's
  # limit is shared, half each.
  for target in kernels tracker; do
    if [ $target = kernels ]; then
      bins=(test_kernel_sweep); filter="$SANITIZER_GTEST_FILTER"
    else
      bins=(test_tracker test_pipeline); filter="$SANITIZER_TRACKER_FILTER"
    fi
    log="sanitizer-$tool-$target.log"
    : >"$out/$log"
    t0=$SECONDS
    worst=0
    for bin in "${bins[@]}"; do
      if [ ! -x "$build/tests/$bin" ]; then
        echo "no $bin" >>"$out/$log"; worst=2; continue
      fi
      run_step "$(limit_of $((limit / 2 / ${#bins[@]} + 1)))" "$out/$log.part" "$sanitizer" --tool "$tool" \
        --error-exitcode 86 "$build/tests/$bin" --gtest_filter="$filter"
      rc=$?
      cat "$out/$log.part" >>"$out/$log"; rm -f "$out/$log.part"
      [ $rc != 0 ] && [ $worst = 0 ] && worst=$rc
      [ $rc = 86 ] && worst=86
    done
    st="$(status_of $worst)"
    [ $worst = 86 ] && st="FAIL (sanitizer errors)"
    errs="$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
    record "sanitizer $tool $target" "$st${errs:+: $errs}" $((SECONDS - t0)) "$log"
  done
done

# soak: the GPU tracker (kernel auto) for SOAK_FRAMES frames rendered in memory, 8 targets x 3
# scales; the test fails when RSS or the update time grow by 10% after its warm-up.
if want soak; then
  t0=$SECONDS
  run_step "$(limit_of "$T_SOAK")" "$out/soak.txt" env CORRTRACK_SOAK_FRAMES="$SOAK_FRAMES" \
    CORRTRACK_SOAK_KERNEL=auto CORRTRACK_SOAK_TIME_GROWTH=1.10 CORRTRACK_SOAK_REPORT="$out/soak.json" \
    "$build/tests/test_soak"
  rc=$?
  line="$(grep -E '^soak: [0-9]+ frames' "$out/soak.txt" | tail -1 | cut -c1-160)"
  record soak "$(status_of $rc)${line:+: $line}" $((SECONDS - t0)) "soak.txt, soak.json"
fi

# bench: the full default sweep. GPU kernels run first; --max-total-seconds leaves time to
# write the outputs before the step's time limit.
if want bench; then
  t0=$SECONDS
  lim="$(limit_of "$T_BENCH")"
  budget=$((lim - 25)); [ $budget -lt 10 ] && budget=10
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of words on purpose
  timeout -k 5 "$lim" env LD_LIBRARY_PATH="$lib_path" "$build/app/corrtrack" bench \
    --csv "$out/bench.csv" --plot "$out/bench.png" --json "$out/bench.json" \
    --max-total-seconds "$budget" ${BENCH_ARGS:-} >"$out/bench.txt" 2>"$out/bench.log"
  rc=$?
  st="$(status_of $rc)"
  if [ $rc = 1 ] && [ -s "$out/bench.csv" ] && grep -q 'gnuplot not found' "$out/bench.log" &&
     ! grep -q 'failed with an error' "$out/bench.log"; then
    st="PASS (no gnuplot here: plot script saved as bench.gp)"
  fi
  cases="$(grep -E '^[0-9]+ cases:' "$out/bench.txt" | tail -1)"
  record bench "$st${cases:+: $cases}" $((SECONDS - t0)) "bench.txt, bench.log"
fi

# eval: OTB metrics and update fps of the tracker per kernel on the carried sequences
if want eval; then
  t0=$SECONDS
  lim="$(limit_of "$T_EVAL")"
  data="${EVAL_DATA:-$repo/.gpu/data}"
  st=PASS; line=""
  for k in ${EVAL_KERNELS:-auto cuda_dp4a_ilp cpu_fast}; do
    timeout -k 5 "$lim" env LD_LIBRARY_PATH="$lib_path" "$build/app/corrtrack" eval "$data" --kernel "$k" ${EVAL_ARGS:-} \
      --json "$out/eval-$k.json" >"$out/eval-$k.txt" 2>&1 || st="FAIL (eval --kernel $k: see eval-$k.txt)"
    line="$line $k: $(grep -E '^mean' "$out/eval-$k.txt" | tr -s ' ' | head -c 120);"
  done
  record eval "$st:$line" $((SECONDS - t0)) "eval-*.txt"
fi

# nvdec: FFmpeg decode throughput, NVDEC / CUVID / CPU, on a 1080p H.264 clip made here
# (scripts/bench/nvdec.sh)
if want nvdec; then
  t0=$SECONDS
  lim="$(limit_of "$T_NVDEC")"
  # timeout signals its whole process group: the ffmpeg processes too.
  timeout -k 5 "$lim" bash "$repo/scripts/bench/nvdec.sh" "$ffprefix/bin/ffmpeg" "$out/nvdec-1080p.mp4" \
    >"$out/nvdec.txt" 2>&1
  rc=$?
  rm -f "$out/nvdec-1080p.mp4"
  fps="$(grep -E '^(nvdec|cuvid|cpu): ' "$out/nvdec.txt" | sed -E 's/: 600 frames in .* = / /' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
  record nvdec "$(status_of $rc)${fps:+: $fps}" $((SECONDS - t0)) nvdec.txt
fi

# The e2e clips: testsrc2 through x264 veryfast. make_clip SIZE SECONDS FILE
make_clip() {
  "$ffprefix/bin/ffmpeg" -nostdin -hide_banner -loglevel error -y -f lavfi -i "testsrc2=size=$1:rate=30:duration=$2" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p "$3"
}

# The e2e and gui steps' clips: 1080p (600 frames) and 4K (300 frames) H.264, made here.
make_clips() {
  [ -s "$out/e2e-1080p.mp4" ] && [ -s "$out/e2e-4k.mp4" ] && return 0
  make_clip 1920x1080 20 "$out/e2e-1080p.mp4" && make_clip 3840x2160 10 "$out/e2e-4k.mp4"
}

# e2e: the whole pipeline (decode thread, pinned slots or NVDEC surfaces, copy, track) on
# 1080p and 4K H.264 clips made here, software decode and NVDEC, each against decoding alone.
if want e2e; then
  t0=$SECONDS
  lim="$(limit_of "$T_E2E")"
  make_clips >"$out/e2e.log" 2>&1
  # shellcheck disable=SC2086  # E2E_ARGS is a list of words on purpose
  timeout -k 5 "$lim" env LD_LIBRARY_PATH="$lib_path" "$build/app/corrtrack" bench \
    --e2e "$out/e2e-1080p.mp4,$out/e2e-4k.mp4" --json "$out/e2e.json" ${E2E_ARGS:-} >"$out/e2e.txt" 2>>"$out/e2e.log"
  rc=$?
  want gui || rm -f "$out/e2e-1080p.mp4" "$out/e2e-4k.mp4"
  record e2e "$(status_of $rc)" $((SECONDS - t0)) "e2e.txt, e2e.log"
fi

# crowd: 1024 targets in both layouts, and the issue's track command (scripts/bench/crowd.sh)
if want crowd; then
  t0=$SECONDS
  timeout -k 5 "$(limit_of "$T_CROWD")" env LD_LIBRARY_PATH="$lib_path" \
    bash "$repo/scripts/bench/crowd.sh" "$build/app/corrtrack" "$ffprefix/bin/ffmpeg" "$out" >"$out/crowd.log" 2>&1
  rc=$?
  # "1024 tracking fps: testsrc grid N, testsrc crowded N, pan grid N, pan crowded N"
  fps="$(awk '/^== bench/ {c = $4; l = $8} /^crowd-/ && $3 == 1024 {printf "%s%s %s %s", sep, c, l, $5; sep = ", "}' \
    "$out/crowd.txt" 2>/dev/null)"
  record crowd "$(status_of $rc)${fps:+: 1024 tracking fps: $fps}" $((SECONDS - t0)) "crowd.txt, crowd.log"
fi

# first: a 256-target run's first frames (issue 30), each run its own process with a quarter of
# the step's limit (scripts/bench/first.sh)
if want first; then
  t0=$SECONDS
  env LD_LIBRARY_PATH="$lib_path" bash "$repo/scripts/bench/first.sh" "$build/app/corrtrack" \
    "$ffprefix/bin/ffmpeg" "$out" "$(limit_of "${T_FIRST:-120}")" >"$out/first.log" 2>&1
  rc=$?
  # "first: PASS: cold first-100 p95 X ms; warm ...;" (FAIL and why in place of PASS)
  line="$(sed -n 's/^first: //p' "$out/first.log" | tail -n 1)"
  record first "${line:-$(status_of $rc)}" $((SECONDS - t0)) "first.txt, first-*.json"
fi

# gui: the GUI's whole window on this GPU: carried Xvfb, NVIDIA's GL, NVDEC, interop
if want gui; then
  t0=$SECONDS
  lim="$(limit_of "$T_GUI")"
  if make_clips >"$out/gui-clips.log" 2>&1; then
    timeout -k 5 "$lim" env LD_LIBRARY_PATH="$lib_path" bash "$repo/scripts/gpu_gui.sh" "$out/gui" \
      "$build/app/corrtrack" "$out/e2e-1080p.mp4" "$out/e2e-4k.mp4" >"$out/gui.log" 2>&1
    rc=$?
  else
    echo "making the clips failed: $(tail -n 3 "$out/gui-clips.log")" >"$out/gui.log"; rc=2
  fi
  rm -f "$out/e2e-1080p.mp4" "$out/e2e-4k.mp4"
  why="$(grep -m1 'gpu_gui: FAILED' "$out/gui.log" | sed 's/^gpu_gui: FAILED: //')"
  line="$(cat "$out/gui/gui-line.txt" 2>/dev/null)"
  record gui "$(status_of $rc)${why:+: $why}${line:+: $line}" $((SECONDS - t0)) "gui.log, gui/"
fi

# python: the Python package on the host's Python, GPU cases required (scripts/bench/python.sh)
if want python; then
  t0=$SECONDS
  lim="$(limit_of "$T_PYTHON")"
  timeout -k 5 "$lim" bash "$repo/scripts/bench/python.sh" "$repo" "$build" "$out" "$ffprefix" \
    "${GPU_PYTHON:-python3}" "${PYTHON_DRY_RUN:-0}" >"$out/python.txt" 2>&1
  rc=$?
  st="$(status_of $rc)"
  counts="$(grep -E '^=* *[0-9]+ (passed|failed)' "$out/python.txt" | tail -n 1 | tr -d '=' | sed 's/^ *//; s/ in [0-9.]*s.*//')"
  why="$(grep -E '^python step: FAILED' "$out/python.txt" | head -n 1 | sed 's/^python step: FAILED: //')"
  ovh="$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
kernel = "cpu_fast" if rows and rows[0]["framework"] == "numpy" else "cuda_mma"
sel = [r for r in rows if r["call"] == "Matcher.match(out=)" and r["kernel"] == kernel]
print("; ".join("%s %s %s %+.1f us/call over C++" % (kernel, r["framework"], r["case"], r["overhead_us"]) for r in sel))' \
    "$out/python-overhead.json" 2>/dev/null)"
  [ "${PYTHON_DRY_RUN:-0}" = 1 ] && st="$st (dry run, no GPU required)"
  record python "$st${why:+: $why}${counts:+: $counts}${ovh:+; Matcher.match: $ovh}" $((SECONDS - t0)) \
    "python.txt, python-tests.xml, python-overhead.txt"
fi

# Summary
publish
cat "$out/summary.txt"
fails=0
for r in "${results[@]}"; do
  case "$r" in PASS*|SKIP*) ;; *) fails=$((fails + 1)) ;; esac
done
echo "gpu_check: $fails step(s) not passed in $((SECONDS - t_begin)) s; everything is in $out${final:+ (results and gpu_check.tar.gz in $final)}"
exit $((fails > 0))
