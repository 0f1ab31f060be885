#!/usr/bin/env bash
# Prepares, on the build machine, the Python package for the GPU host (Ubuntu 24.04: CPython
# 3.12 with PyTorch, CuPy and OpenCV; no package registry, no network). A module built for this
# machine's CPython 3.11 would not import there, so the module is built for CPython's stable
# ABI (abi3: any CPython from 3.12 on) with a Python 3.12+ found here, in its own build folder.
# Fills the git-ignored .gpu/python, which travels beside the usual paths (carry ".gpu/python"):
#   corrtrack/   the package: .py files, py.typed, _corrtrack.abi3.so, _corrtrack.pyi
#   wheels/      pytest and its dependencies (pure Python, ~2 MiB), unpacked there by the step
#   BUILD_INFO   the Python it was built with, nanobind, CUDA architectures, and a hash of the
#                sources, which scripts/gpu_check.sh's python step compares with the tree it runs
#
#   scripts/gpu_python_bundle.sh [BUILD_DIR]     (default build-abi3; a few minutes the first
#                                                 time: the kernels and the app library too)
#   scripts/gpu_python_bundle.sh --source-hash   prints the hash of the package's sources
#
# Environment:
#   CORRTRACK_GPU_PYTHON   a Python 3.12+ with its headers (default: the first found among
#                          python3.12, python3.13, python3.14 on PATH and pyenv's versions)
#   CORRTRACK_CUDA_ARCHS   CUDA architectures of this build (default 90: the H200)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "gpu_python_bundle: $*"; }
die() { echo "gpu_python_bundle: error: $*" >&2; exit 1; }

# Everything the module is built from; the same command runs on the GPU host (no git there).
source_hash() {
  (cd "$repo" && find CMakeLists.txt kernels app python/src python/corrtrack python/CMakeLists.txt \
      python/FindCorrtrackPython.cmake -type f \
      \( -name '*.cpp' -o -name '*.cu' -o -name '*.h' -o -name '*.cuh' -o -name '*.py' -o -name '*.txt' \
         -o -name '*.cmake' -o -name py.typed \) -not -path '*/__pycache__/*' -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
}
if [ "${1:-}" = "--source-hash" ]; then source_hash; exit 0; fi

build="${1:-$repo/build-abi3}"
[ "${build#/}" = "$build" ] && build="$repo/$build"
out="$repo/.gpu/python"
archs="${CORRTRACK_CUDA_ARCHS:-90}"
reqs="$repo/python/requirements-dev.txt"
venv_py="$repo/.venv/bin/python"
[ -x "$venv_py" ] || die "no .venv: run scripts/setup.sh first (it installs nanobind and pytest's pins)"

# A Python 3.12+ that runs and has Python.h (pyenv's shims answer for every version but run only
# the selected one, so each candidate is tried).
usable() {
  "$1" -c 'import sys, sysconfig, os
sys.exit(0 if sys.version_info >= (3, 12) and os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")) else 1)' \
    >/dev/null 2>&1
}
py="${CORRTRACK_GPU_PYTHON:-}"
if [ -n "$py" ]; then
  usable "$py" || die "CORRTRACK_GPU_PYTHON=$py is not a Python 3.12+ with its headers"
else
  pyenv_root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  for c in python3.12 python3.13 python3.14 "$pyenv_root"/versions/3.1[2-9]*/bin/python3 /usr/bin/python3.1[2-9]; do
    if usable "$c"; then py="$(command -v "$c" || echo "$c")"; break; fi
  done
  [ -n "$py" ] || die "no Python 3.12+ with headers here (tried python3.12-3.14, $pyenv_root/versions, /usr/bin); set CORRTRACK_GPU_PYTHON"
fi
pyver="$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
say "building the stable-ABI module with $py ($pyver), CUDA archs $archs, in $build"

nb_dir="$("$venv_py" -m nanobind --cmake_dir)"
mkdir -p "$build"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCORRTRACK_CUDA_ARCHS="$archs" \
  -DPython_EXECUTABLE="$py" -DCORRTRACK_PYTHON_STABLE_ABI=ON -Dnanobind_DIR="$nb_dir" \
  -DCORRTRACK_WITH_GUI=OFF >"$build/configure.log" 2>&1 || { tail -n 30 "$build/configure.log"; die "configure failed"; }
nice -n 10 cmake --build "$build" --target corrtrack_python -j "$(nproc)"

so="$(ls "$build"/python/corrtrack/_corrtrack*.abi3.so 2>/dev/null | head -n 1)"
[ -n "$so" ] || die "no _corrtrack*.abi3.so in $build/python/corrtrack"
# It must import here, with this Python (no NumPy needed for the module itself).
PYTHONPATH="$build/python/corrtrack" "$py" -c 'import _corrtrack; print("gpu_python_bundle: imports:", _corrtrack.cuda_available() and "GPU" or "no GPU here (as expected)")'

rm -rf "$out/corrtrack" "$out/wheels"
mkdir -p "$out/corrtrack" "$out/wheels"
cp -a "$build"/python/corrtrack/*.py "$build"/python/corrtrack/py.typed "$build"/python/corrtrack/_corrtrack.pyi "$so" \
  "$out/corrtrack/"
"$venv_py" -m pip download -q --disable-pip-version-check --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux2014_x86_64 -d "$out/wheels" "$(grep -E '^pytest==' "$reqs")"
{
  echo "python: $pyver ($py)"
  echo "nanobind: $("$venv_py" -c 'import nanobind; print(nanobind.__version__)')"
  echo "cuda_archs: $archs"
  echo "module: $(basename "$so")"
  echo "sources: $(source_hash)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out/BUILD_INFO"
cat "$out/BUILD_INFO" | sed 's/^/gpu_python_bundle:   /'
mib() { du -sm "$1" | cut -f1; }
say ".gpu/python: $(du -sh "$out" | cut -f1) (module $(du -h "$so" | cut -f1), wheels $(du -sh "$out/wheels" | cut -f1))"
say "device call: carry [\".gpu/carry\", \".gpu/python\"] (run scripts/gpu_bundle.sh first: it packs the build)"
say "             command: STEPS=\"ffmpeg python\" bash scripts/gpu_check.sh"
