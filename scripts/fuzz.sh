#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (built by scripts/sanitize.sh in build-san/, with ASan
# and UBSan) from seed corpora that fuzz_make_seeds writes (tiny clips made with the project's
# own writer, clips cut short, image sequences with empty, damaged and cut images for
# fuzz_input's sequence mode, box files, ground truth, command lines: nothing binary is
# committed).
#   scripts/fuzz.sh                          every target for FUZZ_SECONDS (60) each: CI
#   FUZZ_SECONDS=600 scripts/fuzz.sh         a longer run (10 minutes a target)
#   FUZZ_TARGETS="fuzz_input fuzz_track" FUZZ_SECONDS=1200 scripts/fuzz.sh
#   FUZZ_JOBS=2                              parallel fuzzing processes per target
# The corpora grow in build-san/fuzz/corpus/<target> across runs; a crash, leak or timeout
# leaves its input in build-san/fuzz/artifacts/<target>/ and fails the script. Reproduce one
# with: build-san/fuzz/<target> <artifact>. One line per target: runs, corpus, crashes.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
san="${CORRTRACK_SAN_BUILD_DIR:-$here/build-san}"
secs="${FUZZ_SECONDS:-60}"
targets="${FUZZ_TARGETS:-fuzz_input fuzz_track fuzz_box_file fuzz_groundtruth fuzz_options}"
jobs="${FUZZ_JOBS:-1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/scripts/sanitizers.supp:print_suppressions=0}"
if [ ! -x "$san/fuzz/fuzz_make_seeds" ]; then
  SANITIZE_BUILD_ONLY=1 "$here/scripts/sanitize.sh" || exit 1
fi
# shellcheck disable=SC2086  # targets is a list of words
cmake --build "$san" --target fuzz_make_seeds $targets >/dev/null || exit 1
seeds="$san/fuzz/seeds"
rm -rf "$seeds"
"$san/fuzz/fuzz_make_seeds" "$seeds" || exit 1
failed=0
for t in $targets; do
  case $t in fuzz_input|fuzz_track) max_len=65536 ;; *) max_len=4096 ;; esac
  corpus="$san/fuzz/corpus/$t" artifacts="$san/fuzz/artifacts/$t"
  mkdir -p "$corpus" "$artifacts" "$seeds/$t"
  log="$san/fuzz/$t.log"
  before=$(find "$artifacts" -type f | wc -l)
  args=(-max_total_time="$secs" -timeout=30 -rss_limit_mb=3072 -malloc_limit_mb=2048 -max_len="$max_len"
        -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$artifacts/")
  [ "$jobs" -gt 1 ] && args+=(-fork="$jobs" -ignore_crashes=0)
  (cd "$san/fuzz" && "./$t" "${args[@]}" "$corpus" "$seeds/$t" </dev/null >"$log" 2>&1)
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{s += $1} END {print s + 0}')
  [ "$runs" = 0 ] && runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  crashes=$(( $(find "$artifacts" -type f | wc -l) - before ))
  printf 'fuzz: %-18s %3s s  %10s runs  corpus %5s  new crashes %s%s\n' "$t" "$secs" "${runs:-0}" \
    "$(find "$corpus" -type f | wc -l)" "$crashes" "$([ $rc = 0 ] || echo "  (exit $rc, see $log)")"
  if [ $rc != 0 ] || [ "$crashes" != 0 ]; then
    failed=1
    # The report itself, so that a clean clone's CI log says what broke, not only where.
    first=$(grep -n -m1 -E '==ERROR|ERROR: libFuzzer|runtime error|Slowest unit|out-of-memory|deadly signal' "$log" | cut -d: -f1)
    [ -n "$first" ] && sed -n "$((first > 3 ? first - 3 : 1)),$((first + 60))p" "$log" | sed 's/^/fuzz:   /'
    find "$artifacts" -type f -newer "$seeds" -printf 'fuzz:   artifact %p (%s bytes)\n'
  fi
done
exit $failed
