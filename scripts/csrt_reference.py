#!/usr/bin/env python3
"""OpenCV's CSRT on the shared sequences, scored as `corrtrack eval` scores corrtrack.

    /usr/bin/python3 scripts/csrt_reference.py ../shared/data/sequences --sre 13 --json csrt.json
    scripts/eval_halves.py csrt.json --data ../shared/data

The data set's README gives CSRT's one-pass numbers. One pass swings with the first box, so
corrtrack's choices are made on SRE (`eval --sre 5` or `13`), and this gives CSRT's numbers
on the same runs: the first box and OTB's twelve perturbed ones in the order and with the
clamping of app/eval/otb.cpp's sre_starts (shifted by 10% of the box in 8 directions, then
scaled by 0.8, 0.9, 1.1 and 1.2 about its centre). The JSON has eval's layout
(sequences.<name>.{auc, prec20, frames}, mean, sre_runs), so eval_halves.py reads it.

CSRT lives in OpenCV's contrib tracking module: Debian's python3-opencv (4.6, the version
the README's table used) has it, PyPI's opencv-python does not. `CORRTRACK_WITH_REFERENCE=1
scripts/setup.sh` installs it. One OpenCV thread per process; --jobs runs sequences in
parallel. The 32 sequences with --sre 13 take about 40 minutes on the 2-core VM.
"""
import argparse
import json
import math
import multiprocessing
import pathlib
import sys


def read_truth(path):
    """Boxes per frame, 0-based x, y, w, h; None where the target is not visible."""
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        v = line.replace("\t", ",").split(",")[:4]
        try:
            x, y, w, h = (float(c) for c in v)
        except ValueError:
            out.append(None)
            continue
        bad = any(math.isnan(c) for c in (x, y, w, h)) or w == 0 or h == 0
        out.append(None if bad else (x - 1, y - 1, w, h))
    return out


def sre_starts(first, count, width, height):
    """app/eval/otb.cpp's sre_starts: the true box, 8 shifts, 4 scales, clamped to the frame."""
    x, y, w, h = first
    sx, sy = 0.1 * w, 0.1 * h
    out = [first]
    for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)):
        out.append((x + dx * sx, y + dy * sy, w, h))
    cx, cy = x + w / 2, y + h / 2
    for f in (0.8, 0.9, 1.1, 1.2):
        out.append((cx - w * f / 2, cy - h * f / 2, w * f, h * f))
    clamped = []
    for bx, by, bw, bh in out[: max(1, min(count, len(out)))]:
        bw, bh = min(bw, width), min(bh, height)
        clamped.append((min(max(bx, 0.0), width - bw), min(max(by, 0.0), height - bh), bw, bh))
    return clamped


def iou(a, b):
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def score(boxes, truth, start):
    """AUC over IoU thresholds 0, 0.05, ..., 1 (IoU above each) and precision at 20 px."""
    success, within, n = [0] * 21, 0, 0
    for k, box in enumerate(boxes):
        g = truth[start + k] if start + k < len(truth) else None
        if g is None:
            continue
        n += 1
        o = iou(box, g)
        success = [s + (o > t / 20) for t, s in enumerate(success)]
        err = math.hypot(box[0] + box[2] / 2 - g[0] - g[2] / 2, box[1] + box[3] / 2 - g[1] - g[3] / 2)
        within += err <= 20
    return (sum(success) / 21 / n, within / n) if n else (0.0, 0.0)


def run_sequence(args):
    import cv2  # in the worker: each process sets its own thread count

    folder, runs = args
    cv2.setNumThreads(1)
    video = folder / "video.mkv"
    capture = cv2.VideoCapture(str(video) if video.exists() else str(folder / "img" / "%05d.jpg"))
    frames = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        frames.append(image)
    truth = read_truth(folder / "groundtruth_rect.txt")
    if not frames or not any(truth):
        return folder.name, None
    start = next(i for i, b in enumerate(truth) if b)
    height, width = frames[0].shape[:2]
    end = min(len(frames), len(truth))
    results = []
    for box in sre_starts(truth[start], runs, width, height):
        tracker = cv2.TrackerCSRT_create()
        tracker.init(frames[start], tuple(int(round(c)) for c in box))
        boxes = [box]
        for i in range(start + 1, end):
            ok, found = tracker.update(frames[i])
            boxes.append(tuple(float(c) for c in found) if ok else boxes[-1])
        results.append(score(boxes, truth, start))
    auc = sum(r[0] for r in results) / len(results)
    prec20 = sum(r[1] for r in results) / len(results)
    return folder.name, {"auc": auc, "prec20": prec20, "frames": end - start, "runs": results}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sequences", help="folder of OTB-style sequences (../shared/data/sequences)")
    ap.add_argument("--sre", type=int, default=1, help="runs per sequence, 1 (one pass) to 13")
    ap.add_argument("--only", nargs="*", help="these sequence names only")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    root = pathlib.Path(a.sequences)
    folders = sorted(p for p in root.iterdir() if (p / "groundtruth_rect.txt").exists())
    if a.only:
        folders = [p for p in folders if p.name in set(a.only)]
    if not folders:
        sys.exit(f"csrt_reference: no sequences under {root}")
    try:
        import cv2

        cv2.TrackerCSRT_create
    except (ImportError, AttributeError):
        sys.exit("csrt_reference: needs OpenCV with CSRT: CORRTRACK_WITH_REFERENCE=1 scripts/setup.sh, "
                 "then run it with /usr/bin/python3")
    with multiprocessing.Pool(max(1, a.jobs)) as pool:
        done = dict(pool.imap_unordered(run_sequence, [(f, a.sre) for f in folders]))
    sequences = {name: m for name, m in sorted(done.items()) if m}
    mean = {k: sum(m[k] for m in sequences.values()) / len(sequences) for k in ("auc", "prec20")}
    json.dump({"tracker": "opencv csrt " + cv2.__version__, "sre_runs": a.sre, "mean": mean,
               "sequences": sequences}, open(a.json, "w"), indent=1)
    print(f"csrt: {len(sequences)} sequences, {a.sre} runs each: AUC {mean['auc']:.4f}, P@20 {mean['prec20']:.4f}")


if __name__ == "__main__":
    main()
