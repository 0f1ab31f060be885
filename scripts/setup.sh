#!/usr/bin/env bash
# Installs every system dependency from Debian's packages (idempotent), then configures and
# builds corrtrack in Release. The package manager is the only network access.
#   CORRTRACK_CUDA_ARCHS=90 scripts/setup.sh   narrows the CUDA targets for a faster build
#   CORRTRACK_SKIP_BUILD=1 scripts/setup.sh    installs packages only
#   CORRTRACK_PYTHON=python3.12 scripts/setup.sh  builds the Python module for that Python
#   CORRTRACK_WITH_PYTHON=0 scripts/setup.sh   no Python package (no .venv, no PyPI)
#   CORRTRACK_WITH_REFERENCE=1 scripts/setup.sh  also Debian's python3-opencv, whose CSRT
#                                               scripts/csrt_reference.py runs (not needed to build)
# The Python package's build and test dependencies (python/requirements-dev.txt: nanobind,
# scikit-build-core, pytest, NumPy, OpenCV, Dask) come from PyPI into .venv, and the wheels
# `pip install .` needs into .venv/wheelhouse, so that its test installs offline.
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
  python3-dev python3-venv
  xvfb xdotool xauth
  clang libclang-rt-dev libomp-dev  # scripts/sanitize.sh and scripts/fuzz.sh: sanitizers, libFuzzer
  clang-format                      # scripts/format.sh
  help2man librsvg2-bin             # the man page and the icon's PNG sizes (cmake/package.cmake)
  desktop-file-utils debootstrap    # scripts/deb_test.sh: the .desktop check, a clean Debian 12 root
)
[ "${CORRTRACK_WITH_REFERENCE:-0}" = 1 ] && packages+=(python3-opencv)

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

# Python: a virtual environment with the pinned requirements (redone when they change).
if [ "${CORRTRACK_WITH_PYTHON:-1}" != 0 ]; then
  venv="$here/.venv"
  reqs="$here/python/requirements-dev.txt"
  py="${CORRTRACK_PYTHON:-python3}"
  stamp="$("$py" -c 'import sys; print(sys.version)' 2>/dev/null | head -n 1) $(sha256sum "$reqs" | cut -c1-16)"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.corrtrack-stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "setup: Python environment $venv ($py: $("$py" --version 2>&1))"
    rm -rf "$venv"
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs"
    # What `pip install .` fetches for its isolated build, plus NumPy, kept for offline installs.
    "$venv/bin/python" -m pip download -q --disable-pip-version-check --only-binary=:all: \
      -d "$venv/wheelhouse" "$(grep -E '^scikit-build-core==' "$reqs")" "$(grep -E '^nanobind==' "$reqs")" \
      "$(grep -E '^numpy==' "$reqs")"
    echo "$stamp" >"$venv/.corrtrack-stamp"
  fi
  cmake_args+=("-DPython_EXECUTABLE=$venv/bin/python" "-DCORRTRACK_WHEELHOUSE=$venv/wheelhouse")
else
  cmake_args+=(-DCORRTRACK_WITH_PYTHON=OFF)
fi
cmake "${cmake_args[@]}"
cmake --build "$build" -j "$(nproc)"
