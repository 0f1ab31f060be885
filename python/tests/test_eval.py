"""eval_otb: the same sequences, runs and metrics as `corrtrack eval`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import corrtrack
from conftest import Clip, run_cli, write_otb_sequence


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("otb")
    write_otb_sequence(root, "slide", Clip(frames=30, seed=2))
    write_otb_sequence(root, "drift", Clip(frames=25, seed=3, velocity=(-1.2, 1.4), box=(200.0, 60.0, 36.0, 36.0)),
                       truth_offset=(1.5, -0.5))
    return root


def cli_eval(dataset: Path, tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "eval.json"
    r = run_cli("eval", dataset, "--json", out, "--quiet", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def test_same_metrics_as_the_cli(dataset, tmp_path):
    cli = cli_eval(dataset, tmp_path, "--kernel", "cpu_fast", "--results", tmp_path / "cli")
    py = corrtrack.eval_otb(str(dataset), results_dir=str(tmp_path / "py"), kernel="cpu_fast")
    assert py["kernel"] == cli["kernel"] == "cpu_fast" and py["failed"] == {}
    assert set(py["sequences"]) == set(cli["sequences"]) == {"slide", "drift"}
    for name, c in cli["sequences"].items():
        p = py["sequences"][name]
        for key in ("auc", "prec20", "frames", "evaluated", "lost", "mean_iou"):
            assert p[key] == c[key], (name, key)
        assert len(p["success"]) == 21 and len(p["precision"]) == 51
        assert p["success"][0] == 1.0 and 0.9 < p["auc"] <= 1.0
        # the boxes written as OTB text are the CLI's, line for line
        assert (tmp_path / "py" / f"{name}.txt").read_text() == (tmp_path / "cli" / f"{name}.txt").read_text()
    for key in ("auc", "prec20", "frames", "sequences"):
        assert py["mean"][key] == cli["mean"][key], key
    assert py["sequences"]["drift"]["prec20"] == 1.0 and py["sequences"]["slide"]["lost"] == 0


def test_options_reach_the_tracker(dataset, tmp_path):
    cli = cli_eval(dataset, tmp_path, "--kernel", "cpu_fast", "--scales", "1", "--update", "none",
                   "--sequences", "drift")
    py = corrtrack.eval_otb(str(dataset), sequences=["drift"], kernel="cpu_fast", scales=1, update="none")
    assert list(py["sequences"]) == ["drift"]
    assert py["sequences"]["drift"]["auc"] == cli["sequences"]["drift"]["auc"]


def test_bad_arguments(dataset, tmp_path):
    with pytest.raises(ValueError, match="sequence 'nope' is not in"):
        corrtrack.eval_otb(str(dataset), sequences=["nope"])
    with pytest.raises(OSError):
        corrtrack.eval_otb(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="unknown kernel"):
        corrtrack.eval_otb(str(dataset), kernel="nope")
    with pytest.raises(TypeError, match="unknown tracker option"):
        corrtrack.eval_otb(str(dataset), serch_factor=3)
    broken = tmp_path / "broken"
    write_otb_sequence(broken, "ok", Clip(frames=6))
    bad = write_otb_sequence(broken, "bad", Clip(frames=6))
    (bad / "groundtruth_rect.txt").write_text("NaN,NaN,NaN,NaN\n" * 6)
    res = corrtrack.eval_otb(str(broken), kernel="cpu_fast")
    assert list(res["sequences"]) == ["ok"] and "no visible target" in res["failed"]["bad"]


def test_real_sequence_as_the_cli(tmp_path):
    data = Path(os.environ.get("CORRTRACK_DATA_DIR", ""))
    if not (data / "otb_dudek_first20").is_dir():
        pytest.skip(f"real sequences not found in '{data}' (set CORRTRACK_DATA_DIR)")
    cli = cli_eval(data, tmp_path, "--kernel", "cpu_fast", "--sequences", "otb_dudek_first20")
    py = corrtrack.eval_otb(str(data), sequences=["otb_dudek_first20"], kernel="cpu_fast")
    for key in ("auc", "prec20", "frames", "lost"):
        assert py["sequences"]["otb_dudek_first20"][key] == cli["sequences"]["otb_dudek_first20"][key]
    assert py["sequences"]["otb_dudek_first20"]["auc"] > 0.85
