#!/usr/bin/env python3
"""The Python binding's per-call overhead on a GPU: corrtrack.Matcher.match (and
match_template) on PyTorch / CuPy arrays against the same kernel driven from C++.

For each kernel and case (1920x1080 frame, 64x64 template; "full": the whole frame, "window":
the 192x192 region centred in it, as `corrtrack bench --modes full,window` places it):

  host us/call   time to queue one call from Python (N calls back to back, no wait), against
                 the same calls queued from a C++ loop (Correlator.host_seconds): their
                 difference is the binding's overhead per call (goal: under 10 us)
  wall us/call   N calls then one synchronize, per call: what a loop of calls achieves
  bench us       `corrtrack bench`'s median GPU time (CUDA events) for the same case
  wall - bench   what the Python loop costs over the kernel alone (0 while the GPU is the
                 bottleneck, the host overhead when it is not)

    python python/benchmarks/binding_overhead.py --cli build/app/corrtrack --json overhead.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import corrtrack

W, H, T = 1920, 1080, 64


def cases():
    win = 3 * T
    return {"full": None, "window": ((W - win) // 2, (H - win) // 2, win, win)}


def bench_medians(cli: str, kernels, runs: int) -> dict:
    """(kernel, mode) -> corrtrack bench's median microseconds."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [cli, "bench", "--kernels", ",".join(kernels), "--sizes", f"{W}x{H}", "--templates", str(T),
               "--modes", "full,window", "--runs", str(runs), "--json", f.name]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise SystemExit(f"corrtrack bench failed ({r.returncode}): {r.stderr[-2000:]}")
        doc = json.load(open(f.name))
    return {(row["kernel"], row["mode"]): row["median_ms"] * 1e3 for row in doc["results"] if row.get("status") == "ok"}


def framework(name: str):
    """to_device, synchronize, empty(shape) float32, current stream; "numpy" runs the same loop
    on the CPU kernels (a smoke test of this script where there is no GPU)."""
    if name == "numpy":
        return (lambda a: a, lambda: None, lambda shape: np.empty(shape, np.float32), lambda: 0)
    if name == "torch":
        import torch
        return (lambda a: torch.from_numpy(a).cuda(), torch.cuda.synchronize,
                lambda shape: torch.empty(shape, dtype=torch.float32, device="cuda"),
                lambda: int(torch.cuda.current_stream().cuda_stream))
    import cupy
    return (cupy.asarray, cupy.cuda.runtime.deviceSynchronize,
            lambda shape: cupy.empty(shape, dtype=cupy.float32), lambda: int(cupy.cuda.get_current_stream().ptr))


def per_call_us(fn, calls: int, sync, repeats: int):
    """(host us/call, wall us/call): medians over `repeats` loops of `calls` calls."""
    host, wall = [], []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        host.append((t1 - t0) / calls * 1e6)
        wall.append((t2 - t0) / calls * 1e6)
    return statistics.median(host), statistics.median(wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="build/app/corrtrack", help="the corrtrack executable (for its bench)")
    ap.add_argument("--kernels", default="cuda_mma,cuda_dp4a_ilp,cuda_fft")
    ap.add_argument("--frameworks", default="torch,cupy", help="torch,cupy; or numpy alone (CPU kernels)")
    ap.add_argument("--calls", type=int, default=100, help="calls per timed loop (few enough not to fill the launch queue)")
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--bench-runs", type=int, default=50)
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    on_gpu = args.frameworks != "numpy"
    if on_gpu and not corrtrack.cuda_available():
        print(f"binding_overhead: needs a CUDA GPU ({corrtrack.device()})", file=sys.stderr)
        return 2
    kernels = [k for k in args.kernels.split(",")
               if next((i for i in corrtrack.kernels() if i.name == k), None) and
               next(i for i in corrtrack.kernels() if i.name == k).available]
    bench = bench_medians(args.cli, kernels, args.bench_runs)
    rng = np.random.default_rng(1)
    frame = np.clip(rng.normal(128, 40, (H, W)), 0, 255).astype(np.uint8)
    templ = np.ascontiguousarray(frame[500:500 + T, 900:900 + T])
    print(f"{corrtrack.device()}; {W}x{H} frame, {T}x{T} template; {args.calls} calls x {args.repeats} loops, medians")
    header = (f"{'framework':9s} {'kernel':14s} {'case':6s} {'call':22s} {'py host':>8s} {'C++ host':>8s} "
              f"{'overhead':>8s} {'py wall':>8s} {'bench':>8s} {'wall-bench':>10s}")
    print(header)
    rows = []
    for fw_name in args.frameworks.split(","):
        try:
            to_dev, sync, empty, stream = framework(fw_name)
        except ImportError as e:
            print(f"{fw_name}: not installed ({e})")
            continue
        d_frame = to_dev(frame)
        d_templ = to_dev(templ)
        for k in kernels:
            m = corrtrack.Matcher(templ, kernel=k, device="cuda" if on_gpu else "cpu")
            for case, roi in cases().items():
                shape = (H - T + 1, W - T + 1) if roi is None else (roi[3] - T + 1, roi[2] - T + 1)
                out = empty(shape)
                m.match(d_frame, roi, out=out)  # warm-up: workspaces, auto's timing
                sync()
                cpp_host = statistics.median(
                    m._corr.host_seconds(d_frame, out, roi, stream(), args.calls) / args.calls * 1e6
                    for _ in range(args.repeats))
                sync()
                variants = {
                    "Matcher.match(out=)": lambda: m.match(d_frame, roi, out=out),
                    "Matcher.match": lambda: m.match(d_frame, roi),
                    "match_template(np tpl)": lambda: corrtrack.match_template(d_frame, templ, kernel=k, roi=roi),
                    "match_template(dev tpl)": lambda: corrtrack.match_template(d_frame, d_templ, kernel=k, roi=roi),
                }
                for name, fn in variants.items():
                    fn()
                    py_host, py_wall = per_call_us(fn, args.calls, sync, args.repeats)
                    b = bench.get((k, case), float("nan"))
                    row = {"framework": fw_name, "kernel": k, "case": case, "call": name, "py_host_us": py_host,
                           "cpp_host_us": cpp_host, "overhead_us": py_host - cpp_host, "py_wall_us": py_wall,
                           "bench_us": b, "wall_minus_bench_us": py_wall - b}
                    rows.append(row)
                    print(f"{fw_name:9s} {k:14s} {case:6s} {name:22s} {py_host:8.1f} {cpp_host:8.1f} "
                          f"{py_host - cpp_host:8.1f} {py_wall:8.1f} {b:8.1f} {py_wall - b:10.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": corrtrack.device(), "calls": args.calls, "repeats": args.repeats, "rows": rows}, f,
                      indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
