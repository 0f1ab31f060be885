#!/usr/bin/env bash
# Sets up and runs corrtrack on the bundled sample: the GUI when a display is there, else the
# headless tracker, which writes out/sample_tracked.mp4 and out/sample.csv and prints a summary.
# Extra arguments go to corrtrack (e.g. --kernel cpu_ref).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
build="${CORRTRACK_BUILD_DIR:-$here/build}"
sample="$here/assets/sample.mp4"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && "$build/app/corrtrack" gui --help >/dev/null 2>&1; then
  exec "$build/app/corrtrack" gui "$sample" "$@"
fi
mkdir -p "$here/out"
exec "$build/app/corrtrack" track "$sample" --video "$here/out/sample_tracked.mp4" \
  --csv "$here/out/sample.csv" "$@"
