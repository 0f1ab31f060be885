"""corrtrack.distributed on a local Dask cluster of two worker processes (loopback only): one task
per sequence / video, GPU resources declared, the same numbers as in one process."""

from __future__ import annotations

import pytest

import corrtrack
import corrtrack.distributed as ctd
from conftest import Clip, require_module, write_otb_sequence

distributed = require_module("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address="127.0.0.1:0", resources={"GPU": 1})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("otb_dask")
    for k in range(4):
        write_otb_sequence(root, f"seq{k}", Clip(frames=16 + 2 * k, seed=10 + k))
    return root


def test_eval_sequences_one_task_each(client, dataset):
    table = ctd.eval_sequences(client, str(dataset), kernel="cpu_fast")
    local = corrtrack.eval_otb(str(dataset), kernel="cpu_fast")
    assert [r["sequence"] for r in table] == ["seq0", "seq1", "seq2", "seq3", "mean"]
    workers = set(client.scheduler_info()["workers"])
    for row in table[:-1]:
        m = local["sequences"][row["sequence"]]
        assert (row["auc"], row["prec20"], row["frames"], row["lost"]) == (m["auc"], m["prec20"], m["frames"], m["lost"])
        assert row["worker"] in workers and row["device"] == corrtrack.device()
    assert table[-1]["auc"] == pytest.approx(local["mean"]["auc"], abs=1e-12)
    assert table[-1]["frames"] == local["mean"]["frames"]
    text = str(table)
    assert text.splitlines()[0].split()[:3] == ["sequence", "kernel", "auc"] and "mean" in text


def test_track_videos_as_in_one_process(client, tmp_path):
    videos = {}
    for k in range(3):
        clip = Clip(frames=12, seed=20 + k)
        videos[clip.write(tmp_path / f"v{k}")] = [clip.box(0)]
    table = ctd.track_videos(client, videos, keep_boxes=True, kernel="cpu_fast")
    assert [r["video"] for r in table] == list(videos)
    for row, (video, boxes) in zip(table, videos.items()):
        local = ctd.track_video_task(video, boxes, {"kernel": "cpu_fast"}, keep_boxes=True)
        assert row["boxes"] == local["boxes"] and row["frames"] == 12 and row["lost"] == 0
        assert row["final_boxes"] == local["final_boxes"]
    out = tmp_path / "videos.csv"
    table.to_csv(str(out))
    assert out.read_text().splitlines()[0].startswith("video,kernel,frames,targets,lost,mean_score,fps")


def test_tasks_without_gpu_workers_are_refused(tmp_path):
    # one worker in this process (inproc comms), offering no GPU resource
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address="127.0.0.1:0") as cluster, distributed.Client(cluster) as c:
        with pytest.raises(ValueError, match="no worker offers 1 GPU resource"):
            ctd.eval_sequences(c, str(tmp_path), sequences=["x"])
        clip = Clip(frames=3)
        table = ctd.track_videos(c, [(clip.write(tmp_path / "v"), [clip.box(0)])], gpus_per_task=0,
                                 kernel="cpu_fast")
        assert table[0]["frames"] == 3
