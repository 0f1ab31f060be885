#!/usr/bin/env bash
# The Python package of .gpu/python (scripts/gpu_python_bundle.sh: the module for CPython's
# stable ABI, 3.12+, and pytest's wheels) on the host's Python with its PyTorch, CuPy and
# OpenCV: checks the Python, the bundle's source hash against this tree and the module's
# libraries, unpacks the wheels into /tmp/corrtrack-pysite, imports corrtrack (and prints what
# it finds of NumPy, torch, CuPy, cv2, pytest, Dask), runs the pytest suites with
# CORRTRACK_REQUIRE_GPU=1 (a GPU case that cannot run fails, never skips), then
# python/benchmarks/binding_overhead.py. scripts/gpu_check.sh's python step runs it.
#
#   scripts/bench/python.sh REPO BUILD OUTDIR FFPREFIX PY DRY
#
# REPO: the repository; BUILD: the build folder (app/corrtrack); FFPREFIX: the minimal FFmpeg's
# prefix; PY: the host's Python (GPU_PYTHON); DRY=1 (PYTHON_DRY_RUN=1) checks the step where
# there is no GPU. Writes OUTDIR/python-tests.xml, python-overhead.txt and .json; gpu_check
# keeps its output as python.txt. Fails with "python step: FAILED: why" (exit 3) when the
# bundle or the host cannot run it; else exits 0 when pytest and binding_overhead.py pass.
# No pipefail: the ldd check below goes by its last grep's status.
set -u
repo=${1:?repository}; build=${2:?build folder}; out=${3:?output folder}
ffprefix=${4:?FFmpeg prefix}; py=${5:?host Python}; dry=${6:-0}
# dry=1 (PYTHON_DRY_RUN=1): checks this step on a machine without a GPU: nothing GPU required,
# the overhead loop on the CPU kernels. Never on the GPU host.
require_gpu=1; overhead_args=()
[ "$dry" = 1 ] && { require_gpu=0; overhead_args=(--frameworks numpy --kernels cpu_fast --calls 2 --repeats 3); }
pydir="$repo/.gpu/python"
fail() { echo "python step: FAILED: $*"; exit 3; }
command -v "$py" >/dev/null || fail "no $py on this host (GPU_PYTHON names another)"
echo "host Python: $("$py" -c 'import sys; print(sys.version.split()[0], sys.executable)')"
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 12))' ||
  fail "host Python is older than 3.12; the carried module is built for CPython's stable ABI from 3.12 on"
# shellcheck disable=SC2012  # the first match or nothing
so="$(ls "$pydir"/corrtrack/_corrtrack*.abi3.so 2>/dev/null | head -n 1)"
if [ ! -f "$pydir/BUILD_INFO" ] || [ -z "$so" ]; then
  fail "no package in $pydir: run scripts/gpu_python_bundle.sh on the build machine and carry .gpu/python"
fi
sed 's/^/bundle: /' "$pydir/BUILD_INFO"
want_hash="$(sed -n 's/^sources: //p' "$pydir/BUILD_INFO")"
have_hash="$(bash "$repo/scripts/gpu_python_bundle.sh" --source-hash)"
[ "$want_hash" = "$have_hash" ] ||
  fail "the carried module was built from other sources ($want_hash) than this tree's ($have_hash): re-run scripts/gpu_python_bundle.sh"
echo "== ldd -r $(basename "$so") (Python's own symbols resolve when the interpreter loads it)"
ldd -r "$so" 2>&1 | grep -E 'not found|undefined symbol' | grep -vE 'undefined symbol: _?Py' &&
  fail "the module's libraries or symbols do not resolve (see above)"
# pytest and its dependencies from the carried wheels (the host has no package registry)
site=/tmp/corrtrack-pysite
rm -rf "$site" && mkdir -p "$site"
"$py" -c 'import sys, zipfile, glob
for w in glob.glob(sys.argv[1] + "/*.whl"): zipfile.ZipFile(w).extractall(sys.argv[2])' "$pydir/wheels" "$site" ||
  fail "cannot unpack the carried wheels"
export PYTHONPATH="$pydir:$site"
"$py" - "$dry" <<'PY' || fail "corrtrack does not import, or sees no GPU"
import importlib, sys
import corrtrack
print("corrtrack", corrtrack.__version__, corrtrack.__file__)
print("device:", corrtrack.device())
for name in ("numpy", "torch", "cupy", "cv2", "pytest", "distributed"):
    try:
        m = importlib.import_module(name)
        print(f"  {name:12s} {getattr(m, '__version__', '?')}")
    except Exception as e:
        print(f"  {name:12s} missing ({e})")
sys.exit(0 if corrtrack.cuda_available() or sys.argv[1] == "1" else 4)
PY
tests=(test_match.py test_tracker.py test_video.py test_eval.py test_examples.py)
# Dask is optional on the host: its suite runs where distributed imports (CI runs it on the CPU).
if "$py" -c 'import distributed' 2>/dev/null; then
  tests+=(test_distributed.py)
else
  echo "note: distributed is not installed here: test_distributed.py left out"
fi
cd "$repo/python/tests" || fail "no python/tests in the tree"
CORRTRACK_REQUIRE_GPU=$require_gpu CORRTRACK_BINARY="$build/app/corrtrack" CORRTRACK_SOURCE_DIR="$repo" \
  CORRTRACK_FFMPEG="$ffprefix/bin/ffmpeg" "$py" -m pytest -p no:cacheprovider -q -rs \
  --junitxml="$out/python-tests.xml" "${tests[@]}"
rc=$?
echo "== pytest exit code $rc"
"$py" "$repo/python/benchmarks/binding_overhead.py" --cli "$build/app/corrtrack" \
  --json "$out/python-overhead.json" "${overhead_args[@]}" >"$out/python-overhead.txt" 2>&1
orc=$?
cat "$out/python-overhead.txt"
[ $orc = 0 ] || echo "binding_overhead.py failed (rc $orc)"
[ $rc = 0 ] && [ $orc = 0 ]
