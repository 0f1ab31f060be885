#!/usr/bin/env bash
# Installs every system dependency from Debian's packages (idempotent), then configures and
# builds corrtrack in Release. The package manager is the only network access.
#   CORRTRACK_CUDA_ARCHS=90 scripts/setup.sh   narrows the CUDA targets for a faster build
#   CORRTRACK_SKIP_BUILD=1 scripts/setup.sh    installs packages only
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  build-essential cmake pkg-config ninja-build
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libavdevice-dev
  libcli11-dev nlohmann-json3-dev libstb-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopencv-imgproc-dev libopencv-core-dev
  libglfw3-dev libglew-dev libimgui-dev libegl-dev
  libfftw3-dev
  gnuplot-nox fonts-dejavu-core
  xvfb xdotool xauth
  clang libclang-rt-dev libomp-dev  # scripts/sanitize.sh and scripts/fuzz.sh: sanitizers, libFuzzer
)

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

[ "${CORRTRACK_SKIP_BUILD:-0}" = 1 ] && exit 0

build="${CORRTRACK_BUILD_DIR:-$here/build}"
cmake_args=(-S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release)
[ -n "${CORRTRACK_CUDA_ARCHS:-}" ] && cmake_args+=("-DCORRTRACK_CUDA_ARCHS=${CORRTRACK_CUDA_ARCHS}")
cmake "${cmake_args[@]}"
cmake --build "$build" -j "$(nproc)"
