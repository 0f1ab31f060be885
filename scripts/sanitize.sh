#!/usr/bin/env bash
# Builds corrtrack with AddressSanitizer + UndefinedBehaviorSanitizer (clang, also carrying the
# libFuzzer targets of fuzz/) in build-san/ and runs the CPU tests under it; any ASan, UBSan or
# LeakSanitizer report fails the run. The soak test is left out (it measures memory; ASan's
# shadow would swamp it). GPU tests skip themselves without a GPU.
#   scripts/sanitize.sh                   ASan + UBSan build, all CPU tests
#   SANITIZE_TSAN=1 scripts/sanitize.sh   also a ThreadSanitizer build (build-tsan/) running the
#                                         pipeline, frame-session, track-loop, signal, several-
#                                         stream and video-queue tests
#   SANITIZE_BUILD_ONLY=1                 configure and build only
# With setup.sh's .venv, the Python module is built too and python/tests/test_threads.py (Python
# threads sharing Trackers, Matchers and VideoSources) runs under ASan + UBSan, the ASan
# runtime preloaded into the (uninstrumented) interpreter; the other Python suites are left out.
# CORRTRACK_CUDA_ARCHS narrows the CUDA targets as for setup.sh (CI uses 90).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORRTRACK_SKIP_BUILD=1 "$here/scripts/setup.sh"  # the Debian packages, clang among them
jobs="$(nproc)"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/scripts/sanitizers.supp:print_suppressions=0}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$here/scripts/sanitizers.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1}"

configure() {  # build dir, sanitizer, extra cmake args
  local dir="$1" san="$2"
  shift 2
  local args=(-S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCORRTRACK_SANITIZE="$san"
              -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCORRTRACK_WITH_GUI=OFF
              "-DCMAKE_CXX_FLAGS=-gline-tables-only" "-DCMAKE_C_FLAGS=-gline-tables-only")
  [ -n "${CORRTRACK_CUDA_ARCHS:-}" ] && args+=("-DCORRTRACK_CUDA_ARCHS=${CORRTRACK_CUDA_ARCHS}")
  cmake "${args[@]}" "$@" >/dev/null
}

san="${CORRTRACK_SAN_BUILD_DIR:-$here/build-san}"
venv_python="$here/.venv/bin/python"
if [ -x "$venv_python" ]; then
  configure "$san" address -DCORRTRACK_FUZZ=ON "-DPython_EXECUTABLE=$venv_python"
else
  configure "$san" address -DCORRTRACK_FUZZ=ON -DCORRTRACK_WITH_PYTHON=OFF
fi
cmake --build "$san" -j "$jobs"
if [ "${SANITIZE_TSAN:-0}" = 1 ]; then
  tsan="$here/build-tsan"
  configure "$tsan" thread
  cmake --build "$tsan" -j "$jobs" --target test_pipeline test_signals test_streams test_camera_video corrtrack
fi
[ "${SANITIZE_BUILD_ONLY:-0}" = 1 ] && exit 0

echo "sanitize: CPU tests under ASan + UBSan"
ctest --test-dir "$san" --output-on-failure -j "$jobs" -LE soak -E '^python_'
if [ -f "$san/python/corrtrack/__init__.py" ]; then
  echo "sanitize: Python threads under ASan + UBSan"
  # Python itself leaks by design at exit: leak checks stay with the C++ tests above.
  LD_PRELOAD="$(clang -print-file-name=libclang_rt.asan-x86_64.so)" \
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" PYTHONPATH="$san/python" CORRTRACK_SOURCE_DIR="$here" \
    CORRTRACK_THREADS_ROUNDS=100 "$venv_python" -m pytest -q -p no:cacheprovider "$here/python/tests/test_threads.py"
fi
if [ "${SANITIZE_TSAN:-0}" = 1 ]; then
  echo "sanitize: pipeline, stream and video-queue tests under TSan"
  # SecondSignal (and the command signal tests, held by FIFOs the same way) are left out here:
  # TSan defers a signal's handler until the thread leaves the
  # call it is in, and that test's process is blocked for good in write() on a full FIFO.
  ctest --test-dir "$tsan" --output-on-failure -j "$jobs" -R 'Pipeline|FrameSession|TrackLoop|Signals|Streams|AsyncVideo' \
    -E 'SecondSignal|EvalSignals|BenchSignals'
fi
