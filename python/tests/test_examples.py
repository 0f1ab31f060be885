"""examples/compare_kernels.py runs and prints its ratio table (a small frame here)."""

from __future__ import annotations

import subprocess
import sys

from conftest import SOURCE_DIR


def test_compare_kernels_prints_the_table():
    r = subprocess.run([sys.executable, str(SOURCE_DIR / "examples" / "compare_kernels.py"), "--size", "320x240",
                        "--templates", "16,48", "--repeats", "2", "--kernels", "cpu_fast,cpu_ref", "--threads", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("frame 320x240 (synthetic)") and "1 CPU thread(s)" in lines[0]
    assert lines[1].split() == ["template", "method", "device", "median", "ms", "x", "cv2", "max|diff|"]
    rows = [line.split() for line in lines[2:]]
    methods = [(row[0], row[1]) for row in rows]
    for side in ("16x16", "48x48"):
        assert (side, "cv2.matchTemplate") in methods and (side, "cpu_fast") in methods and (side, "cpu_ref") in methods
    for row in rows:
        ms, ratio = float(row[3]), float(row[4])
        assert ms > 0 and ratio > 0
        if row[1].startswith("cpu_"):
            assert float(row[5]) < 1e-4  # the same map as OpenCV's
        elif row[1] == "torch_fft_ncc":  # where torch is installed: float32 FFT, looser
            assert float(row[5]) < 1e-3


def test_binding_overhead_script_runs_on_the_cpu(tmp_path):
    """python/benchmarks/binding_overhead.py (the GPU measurement of scripts/gpu_check.sh's
    python step) in its NumPy mode: the same loop on cpu_fast, so the script cannot rot here."""
    import json

    from conftest import cli_path
    out = tmp_path / "overhead.json"
    r = subprocess.run([sys.executable, str(SOURCE_DIR / "python" / "benchmarks" / "binding_overhead.py"),
                        "--cli", str(cli_path()), "--frameworks", "numpy", "--kernels", "cpu_fast", "--calls", "1",
                        "--repeats", "1", "--bench-runs", "5", "--json", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {(row["case"], row["call"]) for row in rows} == {
        (case, call) for case in ("full", "window")
        for call in ("Matcher.match(out=)", "Matcher.match", "match_template(np tpl)", "match_template(dev tpl)")}
    for row in rows:
        assert row["py_host_us"] > 0 and row["cpp_host_us"] > 0 and row["bench_us"] > 0
