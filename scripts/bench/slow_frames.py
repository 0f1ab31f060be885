#!/usr/bin/env python3
"""The slow frames of a `corrtrack track --csv` run: which frames took far longer than the
median to track, and what the frame held (lost and re-detected targets), so that a stall in
the steady state can be matched to its cause (crowd.sh; CORRTRACK_TRACE_START's lines give
the one-time costs beside it).

    scripts/bench/slow_frames.py RUN.csv [--factor 3] [--top 15]
"""
import argparse
import csv
import statistics
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("--factor", type=float, default=3.0, help="slow: correlate time above this x the median")
    p.add_argument("--top", type=int, default=15, help="the slowest frames listed")
    a = p.parse_args()
    frames = {}
    with open(a.csv, newline="") as f:
        for row in csv.DictReader(f):
            n = int(row["frame"])
            fr = frames.setdefault(n, {"correlate": float(row["correlate_ms"]), "peak": float(row["peak_ms"]),
                                       "latency": float(row["latency_ms"]), "lost": 0, "redetected": 0})
            fr["lost"] += int(row["lost"])
            fr["redetected"] += int(row["redetected"])
    if not frames:
        sys.exit("slow_frames: no rows in " + a.csv)
    times = [fr["correlate"] for fr in frames.values()]
    med = statistics.median(times)
    slow = {n: fr for n, fr in frames.items() if fr["correlate"] > a.factor * med}
    print(f"{a.csv}: {len(frames)} frames, correlate median {med:.3f} ms, mean {statistics.mean(times):.3f} ms, "
          f"total {sum(times):.1f} ms; {len(slow)} frames over {a.factor:g}x the median take "
          f"{sum(fr['correlate'] for fr in slow.values()):.1f} ms")
    print("frame  correlate_ms  peak_ms  latency_ms  lost  redetected")
    for n, fr in sorted(frames.items(), key=lambda kv: -kv[1]["correlate"])[: a.top]:
        print(f"{n:5d}  {fr['correlate']:12.3f}  {fr['peak']:7.3f}  {fr['latency']:10.3f}  {fr['lost']:4d}  {fr['redetected']:10d}")


if __name__ == "__main__":
    main()
