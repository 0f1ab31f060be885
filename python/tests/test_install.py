"""`pip install .` from the clone into a fresh virtual environment, then the package works from
anywhere. The build takes minutes (the kernels, the app library and the module; one CUDA
architecture, CORRTRACK_CUDA_ARCHS, 90 unless set); the wheels it needs come from
CORRTRACK_WHEELHOUSE (scripts/setup.sh's .venv/wheelhouse) when set, else from the index."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import SOURCE_DIR, project_version

SMOKE = r"""
import sys, numpy as np, corrtrack
assert corrtrack.__file__.startswith(sys.prefix), corrtrack.__file__
rng = np.random.default_rng(0)
img = rng.integers(0, 256, (40, 50), dtype=np.uint8)
t = img[10:22, 15:30].copy()
ncc = corrtrack.match_template(img, t)
# TM_CCOEFF_NORMED by its definition, in float64
T = t.astype(np.float64) - t.mean()
ref = np.zeros((29, 36))
for y in range(29):
    for x in range(36):
        W = img[y:y + 12, x:x + 15].astype(np.float64)
        W = W - W.mean()
        ref[y, x] = (W * T).sum() / np.sqrt((W * W).sum() * (T * T).sum())
assert ncc.shape == ref.shape and np.abs(ncc - ref).max() < 1e-5, np.abs(ncc - ref).max()
p = corrtrack.find_peak(ncc)
assert (p.x, p.y) == (15, 10)
import pathlib
assert (pathlib.Path(corrtrack.__file__).parent / "_corrtrack.pyi").exists()
assert "TM_CCOEFF_NORMED" in corrtrack.match_template.__doc__
import importlib.metadata
# The wheel's metadata (scikit-build-core reads CMakeLists.txt) and the module agree.
assert importlib.metadata.version("corrtrack") == corrtrack.__version__, corrtrack.__version__
print("ok", corrtrack.__version__, corrtrack.device())
"""


def test_pip_install_in_a_fresh_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["CORRTRACK_CUDA_ARCHS"] = os.environ.get("CORRTRACK_CUDA_ARCHS") or "90"
    cmd = [str(py), "-m", "pip", "install", "--disable-pip-version-check", str(SOURCE_DIR)]
    wheelhouse = os.environ.get("CORRTRACK_WHEELHOUSE")
    if wheelhouse:
        cmd += ["--no-index", "--find-links", wheelhouse]
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1700)
    print(f"pip install . took {time.monotonic() - t0:.0f} s (CORRTRACK_CUDA_ARCHS={env['CORRTRACK_CUDA_ARCHS']})")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    r = subprocess.run([str(py), "-c", SMOKE], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"ok {project_version()} "), r.stdout
