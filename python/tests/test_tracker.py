"""Tracker through Python: the CLI's boxes on a generated clip, stable ids, bad input, and (on a
GPU) device frames."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import corrtrack
from conftest import Clip, gpu_framework, require_gpu, run_cli, to_device


def cli_track(pattern: str, box, kernel: str, tmp_path, extra=()) -> list:
    """Boxes per frame (frame -> (x, y, w, h)) of `corrtrack track` on the clip, first target."""
    out = tmp_path / f"track_{kernel}.csv"
    r = run_cli("track", pattern, "--box", ",".join(f"{v:.4f}" for v in box), "--kernel", kernel,
                "--csv", out, "--decode", "sw", *extra)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(out)))
    return [(float(r["x"]), float(r["y"]), float(r["w"]), float(r["h"]), int(r["lost"])) for r in rows]


def python_track(pattern: str, box, kernel: str, as_device=None) -> list:
    tracker = corrtrack.Tracker(kernel=kernel)
    boxes = []
    for i, frame in enumerate(corrtrack.VideoSource(pattern, decode="sw")):
        if as_device is not None:
            frame = as_device(frame)
        if i == 0:
            tid = tracker.add(frame, box)
            boxes.append((*box, 0))
        else:
            (r,) = tracker.update(frame)
            assert r.id == tid
            boxes.append((*r.box, int(r.lost)))
    return boxes


def test_python_gives_the_cli_boxes(clip_dir, tmp_path):
    pattern, clip = clip_dir
    box = clip.box(0)
    cli = cli_track(pattern, box, "cpu_fast", tmp_path)
    py = python_track(pattern, box, "cpu_fast")
    assert len(cli) == len(py) == clip.frames
    np.testing.assert_allclose(np.array(py), np.array(cli), atol=5.1e-4)  # the CSV's %.3f
    # and it tracks: the centre within 1 px of the truth on every frame, never lost
    for i, (x, y, w, h, lost) in enumerate(py):
        tx, ty, tw, th = clip.box(i)
        assert not lost
        assert abs(x + w / 2 - (tx + tw / 2)) < 1.0 and abs(y + h / 2 - (ty + th / 2)) < 1.0


def test_gpu_tracker_gives_the_cli_boxes(clip_dir, tmp_path):
    require_gpu()
    pattern, clip = clip_dir
    box = clip.box(0)
    cli = cli_track(pattern, box, "cuda_dp4a_ilp", tmp_path)
    py = python_track(pattern, box, "cuda_dp4a_ilp")
    np.testing.assert_allclose(np.array(py), np.array(cli), atol=5.1e-4)


@pytest.mark.parametrize("fw_name", ["torch", "cupy"])
def test_device_frames_give_the_host_frames_boxes(clip_dir, fw_name):
    fw = gpu_framework(fw_name)
    pattern, clip = clip_dir
    box = clip.box(0)
    host = python_track(pattern, box, "cuda_dp4a_ilp")
    dev = python_track(pattern, box, "cuda_dp4a_ilp", as_device=lambda f: to_device(fw, f))
    assert dev == host
    # a device frame on a CPU tracker is refused
    t = corrtrack.Tracker(kernel="cpu_fast")
    with pytest.raises(ValueError, match="runs on the CPU.*host memory"):
        t.add(to_device(fw, clip.frame(0)), box)


def test_ids_stay_stable_when_targets_leave():
    clip = Clip(width=360, height=260, frames=6, box=(40.0, 40.0, 40.0, 32.0))
    frame = clip.frame(0)
    t = corrtrack.Tracker(kernel="cpu_fast")
    a = t.add(frame, (40, 40, 40, 32))
    b = t.add(frame, (200, 150, 48, 48))
    c = t.add(frame, (250, 30, 40, 40))
    assert (a, b, c) == (0, 1, 2) and len(t) == 3
    t.remove(a)
    assert t.ids == [b, c]
    res = t.update(clip.frame(1))
    assert [r.id for r in res] == [b, c]
    d = t.add(clip.frame(1), (100, 180, 40, 40))
    assert d == 3 and t.ids == [b, c, d]
    res = {r.id: r for r in t.update(clip.frame(2))}
    assert set(res) == {b, c, d}
    # the background does not move: the static targets stay put
    assert res[b].box == pytest.approx((200, 150, 48, 48), abs=0.5)
    assert t.box(b) == res[b].box
    with pytest.raises(KeyError, match="no target with id 0"):
        t.remove(a)
    r = res[b]
    assert isinstance(r.centre, tuple) and 0 < r.score <= 1 and r.confidence > 0 and r.lost is False
    assert set(r.times_ms) == {"upload", "correlate", "peak"}
    t.clear()
    assert len(t) == 0


def test_lost_under_occlusion_then_redetected():
    clip = Clip(frames=30, velocity=(1.0, 0.0), wobble=0.0)
    t = corrtrack.Tracker(kernel="cpu_fast")
    t.add(clip.frame(0), clip.box(0))
    states = []
    for i in range(1, 30):
        f = clip.frame(i)
        if 10 <= i < 15:
            f = np.full_like(f, 90)  # the whole view goes flat: nothing to match
        (r,) = t.update(f)
        states.append((i, r.lost, r.redetected))
    assert all(lost for i, lost, _ in states if 10 <= i < 15)
    assert not any(lost for i, lost, _ in states if i >= 17)


def test_bad_boxes_and_options():
    frame = Clip().frame(0)
    t = corrtrack.Tracker(kernel="cpu_fast")
    with pytest.raises(ValueError, match="outside"):
        t.add(frame, (300, 200, 40, 60))
    with pytest.raises(ValueError, match="smaller than 4x4"):
        t.add(frame, (10, 10, 3, 3))
    with pytest.raises(ValueError, match="larger than the 320x240 frame"):
        t.add(frame, (0, 0, 400, 100))
    flat = np.full((240, 320), 128, np.uint8)
    with pytest.raises(ValueError):
        t.add(flat, (50, 50, 40, 40))
    with pytest.raises(TypeError, match="image|frame must be uint8"):
        t.add(frame.astype(np.float32), (50, 50, 40, 40))
    with pytest.raises(TypeError, match="unknown tracker option 'serch_factor'.*search_factor"):
        corrtrack.Tracker(serch_factor=2.0)
    with pytest.raises(TypeError, match="tracker option 'scales' has the wrong type"):
        corrtrack.Tracker(scales="three")
    with pytest.raises(ValueError, match="update must be 'none', 'keyframe' or 'blend'"):
        corrtrack.Tracker(update="sometimes")
    with pytest.raises(ValueError, match="unknown kernel 'nope'"):
        corrtrack.Tracker(kernel="nope")
    with pytest.raises(ValueError, match=r"scales must be in \[1, 25\] \(got 0\)"):
        corrtrack.Tracker(kernel="cpu_fast", scales=0)


def test_options_round_trip():
    defaults = corrtrack.tracker_option_defaults()
    assert defaults["search_factor"] == 2.5 and defaults["update"] == "blend" and defaults["kernel"] == "auto"
    t = corrtrack.Tracker(kernel="cpu_fast", search_factor=3.0, update="none", scales=1)
    o = t.options
    assert set(o) == set(defaults)
    assert (o["search_factor"], o["update"], o["scales"], o["kernel"]) == (3.0, "none", 1, "cpu_fast")
    assert t.kernel == "cpu_fast" and t.on_gpu is False
    auto = corrtrack.Tracker()
    assert auto.on_gpu == corrtrack.cuda_available()
