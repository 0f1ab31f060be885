"""VideoSource: frames of FFmpeg's decode thread as NumPy (and, on a GPU, CuPy / PyTorch) arrays,
and every input error as OSError."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import corrtrack
from conftest import REQUIRE_GPU, SOURCE_DIR, Clip, gpu_framework, require_gpu, to_host


def test_frames_equal_what_was_written(clip_dir):
    pattern, clip = clip_dir
    with corrtrack.VideoSource(pattern) as src:
        assert src.size == (320, 240)
        assert src.frame_count == clip.frames and src.live is False and src.decode_mode == "sw"
        assert "320x240" in src.description
        n = 0
        for frame in src:
            assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == (240, 320)
            np.testing.assert_array_equal(frame, clip.frame(n))
            assert src.index == n and src.pts == pytest.approx(n / 30.0)
            n += 1
        assert n == clip.frames


def test_sample_clip():
    frames = list(corrtrack.VideoSource(str(SOURCE_DIR / "assets" / "sample.mp4")))
    assert len(frames) == 120 and frames[0].shape == (576, 768)
    assert 20 < float(frames[60].mean()) < 235


def test_input_errors_raise_oserror(tmp_path):
    with pytest.raises(OSError, match="nothing.mp4"):
        corrtrack.VideoSource(str(tmp_path / "nothing.mp4"))
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(os.urandom(4096))
    with pytest.raises(OSError):
        list(corrtrack.VideoSource(str(junk)))
    # a gap in an image sequence with more images after it: the frames before it, then OSError
    Clip(frames=8).write(tmp_path / "gap", skip={5})
    src = corrtrack.VideoSource(str(tmp_path / "gap" / "%05d.png"))
    got = []
    with pytest.raises(OSError, match="has a gap"):
        for f in src:
            got.append(f)
    assert len(got) == 5


def test_bad_arguments():
    sample = str(SOURCE_DIR / "assets" / "sample.mp4")
    with pytest.raises(ValueError, match="decode must be 'sw', 'nvdec' or 'auto'"):
        corrtrack.VideoSource(sample, decode="gpu")
    with pytest.raises(ValueError, match="output must be"):
        corrtrack.VideoSource(sample, output="jax")
    with pytest.raises(ValueError, match="slots"):
        corrtrack.VideoSource(sample, slots=1)
    if not corrtrack.cuda_available():
        with pytest.raises(RuntimeError, match="need a CUDA GPU"):
            corrtrack.VideoSource(sample, output="torch")
    src = corrtrack.VideoSource(sample)
    next(src)
    src.close()
    with pytest.raises(ValueError, match="closed"):
        next(src)


def test_nvdec_without_a_gpu_decodes_on_the_cpu():
    if corrtrack.cuda_available():
        pytest.skip("this machine has a GPU")
    src = corrtrack.VideoSource(str(SOURCE_DIR / "assets" / "sample.mp4"), decode="nvdec")
    assert src.decode_mode == "sw" and "CPU" in src.decode_note
    assert next(src).shape == (576, 768)


@pytest.mark.parametrize("fw_name", ["torch", "cupy"])
def test_device_frames_from_host_decode(clip_dir, fw_name):
    fw = gpu_framework(fw_name)
    pattern, clip = clip_dir
    n = 0
    for frame in corrtrack.VideoSource(pattern, output=fw_name):
        assert type(frame).__module__.startswith(fw_name)
        np.testing.assert_array_equal(to_host(fw, frame), clip.frame(n))
        n += 1
    assert n == clip.frames


def test_nvdec_device_frames_equal_its_host_frames(tmp_path):
    """NVDEC (H.264 made with FFmpeg's libx264 where an ffmpeg binary is found: CORRTRACK_FFMPEG
    or PATH): torch frames straight from the decoder's surfaces equal its host copies."""
    torch = gpu_framework("torch")
    require_gpu()
    ffmpeg = os.environ.get("CORRTRACK_FFMPEG") or shutil.which("ffmpeg")
    if not ffmpeg:
        (pytest.fail if REQUIRE_GPU else pytest.skip)("no ffmpeg binary to make an H.264 clip (set CORRTRACK_FFMPEG)")
    clip = tmp_path / "nvdec.mp4"
    subprocess.run([ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=size=640x360:rate=30:duration=2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                    str(clip)], check=True, timeout=120)
    dev_src = corrtrack.VideoSource(str(clip), decode="nvdec", output="torch")
    assert dev_src.decode_mode == "nvdec", dev_src.decode_note
    dev = [f.cpu().numpy() for f in dev_src]
    host = list(corrtrack.VideoSource(str(clip), decode="nvdec"))
    assert len(dev) == len(host) == 60
    for a, b in zip(dev, host):
        np.testing.assert_array_equal(a, b)
