"""Many videos or sequences on a Dask cluster: one task per video (or OTB sequence), each
declaring the GPUs it needs as a Dask resource, the results gathered into one table.

    from dask.distributed import Client
    import corrtrack.distributed as ctd

    client = Client("tcp://scheduler:8786")      # workers: dask worker tcp://scheduler:8786 --resources GPU=1
    table = ctd.eval_sequences(client, "/data/otb", kernel="auto")
    print(table)                                 # one row per sequence, then the mean
    table.to_csv("otb.csv")

    table = ctd.track_videos(client, {"a.mp4": [(10, 20, 40, 40)], "b.mp4": [(5, 5, 32, 32)]})

Start one worker per GPU, each seeing its own (CUDA_VISIBLE_DEVICES=N dask worker ...
--resources GPU=1 --nthreads 1, or dask-cuda's dask cuda worker, which does both), so that a task
holding the GPU resource has the device to itself. gpus_per_task=0 runs on any worker (the CPU
kernels where there is no GPU). On one machine the same code runs on
dask.distributed.LocalCluster(n_workers=2, threads_per_worker=1, resources={"GPU": 1}).
No scheduling of our own: Dask places the tasks, retries lost workers and gathers the results.
"""

from __future__ import annotations

import csv
import statistics
import time
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

import corrtrack

Box = Tuple[float, float, float, float]


class Table(list):
    """Rows (dicts) with the same keys, printable as an aligned text table."""

    def columns(self) -> list:
        cols: list = []
        for row in self:
            cols += [k for k in row if k not in cols]
        return cols

    def to_csv(self, path: str) -> None:
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns(), extrasaction="ignore")
            w.writeheader()
            for row in self:
                w.writerow({k: v for k, v in row.items() if not isinstance(v, (list, tuple))})

    def to_pandas(self):
        import pandas
        return pandas.DataFrame(list(self))

    def __str__(self) -> str:
        cols = [c for c in self.columns() if not any(isinstance(r.get(c), (list, tuple)) for r in self)]
        fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
        cells = [[fmt(r.get(c, "")) for c in cols] for r in self]
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
        lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
        return "\n".join(lines)


def _worker_note() -> dict:
    try:
        from distributed import get_worker
        address = get_worker().address
    except (ImportError, ValueError):
        address = "local"
    return {"worker": address, "device": corrtrack.device()}


def eval_sequence_task(dataset: str, name: str, options: Mapping[str, Any]) -> dict:
    """One OTB sequence (runs on a worker): the metrics of corrtrack.eval_otb."""
    res = corrtrack.eval_otb(dataset, sequences=[name], **dict(options))
    m = res["sequences"][name]
    return {"sequence": name, "kernel": res["kernel"], "auc": m["auc"], "prec20": m["prec20"], "fps": m["fps"],
            "frames": m["frames"], "lost": m["lost"], "success": m["success"], "precision": m["precision"],
            **_worker_note()}


def track_video_task(video: str, boxes: Sequence[Box], options: Mapping[str, Any],
                     keep_boxes: bool = False) -> dict:
    """One video (runs on a worker): tracks `boxes` from its first frame with corrtrack.Tracker on
    corrtrack.VideoSource frames, as `corrtrack track` does."""
    tracker = corrtrack.Tracker(**dict(options))
    source = corrtrack.VideoSource(video, output="numpy")
    tracks: list = [[] for _ in boxes]
    lost = 0
    scores: list = []
    update_s = 0.0
    frames = 0
    with source:
        for frame in source:
            if frames == 0:
                for t, b in zip(tracks, boxes):
                    tracker.add(frame, b)
                    t.append(tuple(float(v) for v in b))
            else:
                t0 = time.perf_counter()
                results = tracker.update(frame)
                update_s += time.perf_counter() - t0
                for t, r in zip(tracks, results):
                    t.append(r.box)
                    lost += r.lost
                    scores.append(r.score)
            frames += 1
    row = {"video": video, "kernel": tracker.kernel, "frames": frames, "targets": len(boxes),
           "lost": lost, "mean_score": statistics.fmean(scores) if scores else 0.0,
           "fps": (frames - 1) / update_s if update_s > 0 else 0.0,
           "final_boxes": [t[-1] for t in tracks] if frames else [], **_worker_note()}
    if keep_boxes:
        row["boxes"] = tracks
    return row


def _resources(client: Any, gpus_per_task: float) -> Optional[dict]:
    if not gpus_per_task:
        return None
    workers = client.scheduler_info()["workers"].values()
    if not any(w.get("resources", {}).get("GPU", 0) >= gpus_per_task for w in workers):
        raise ValueError(f"no worker offers {gpus_per_task} GPU resource(s): start workers with "
                         "--resources GPU=1 (or LocalCluster(resources={'GPU': 1})), or pass gpus_per_task=0")
    return {"GPU": gpus_per_task}


def _gather(client: Any, futures: list) -> Table:
    return Table(client.gather(futures))


def eval_sequences(client: Any, dataset: str, sequences: Optional[Iterable[str]] = None,
                   gpus_per_task: float = 1, **tracker_options: Any) -> Table:
    """OTB one-pass evaluation of every sequence of `dataset` (a path every worker can read), one
    Dask task per sequence holding `gpus_per_task` of the workers' "GPU" resource. Returns one
    row per sequence (sequence, kernel, auc, prec20, fps, frames, lost, worker, device; the
    curves as success / precision) and a last row "mean" averaged as `corrtrack eval` does."""
    if sequences is None:
        sequences = corrtrack._core.find_sequences(str(dataset))
    resources = _resources(client, gpus_per_task)
    futures = [client.submit(eval_sequence_task, str(dataset), name, dict(tracker_options), resources=resources,
                             key=f"corrtrack-eval-{name}-{time.monotonic_ns()}", pure=False)
               for name in sequences]
    table = _gather(client, futures)
    if table:
        n = len(table)
        mean = {"sequence": "mean", "kernel": table[0]["kernel"],
                "auc": sum(r["auc"] for r in table) / n, "prec20": sum(r["prec20"] for r in table) / n,
                "fps": sum(r["fps"] for r in table) / n, "frames": sum(r["frames"] for r in table),
                "lost": sum(r["lost"] for r in table)}
        table.append(mean)
    return table


def track_videos(client: Any, videos: Union[Mapping[str, Sequence[Box]], Iterable[Tuple[str, Sequence[Box]]]],
                 gpus_per_task: float = 1, keep_boxes: bool = False, **tracker_options: Any) -> Table:
    """Tracks the boxes of each video (video -> [(x, y, w, h), ...] on its first frame), one
    Dask task per video holding `gpus_per_task` of the workers' "GPU" resource. One row per
    video: frames, targets, lost target-frames, mean score, tracker fps, final boxes, worker,
    device (and every box per frame with keep_boxes=True)."""
    items = list(videos.items()) if isinstance(videos, Mapping) else list(videos)
    resources = _resources(client, gpus_per_task)
    futures = [client.submit(track_video_task, str(v), [tuple(b) for b in boxes], dict(tracker_options), keep_boxes,
                             resources=resources, key=f"corrtrack-track-{i}-{time.monotonic_ns()}", pure=False)
               for i, (v, boxes) in enumerate(items)]
    return _gather(client, futures)
