#!/usr/bin/env bash
# Sets up (Debian packages + Release build) and runs every test under ctest.
#   CORRTRACK_CUDA_ARCHS=90 scripts/test.sh   builds one CUDA architecture only (faster)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
build="${CORRTRACK_BUILD_DIR:-$here/build}"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
