"""Shared helpers of the corrtrack pytest suites: synthetic clips with known motion (written as
PNG image sequences, which FFmpeg reads losslessly), the CLI's path, and the GPU frameworks.

GPU cases skip with a message when PyTorch / CuPy or a GPU are missing; with
CORRTRACK_REQUIRE_GPU=1 (scripts/gpu_check.sh's python step) they fail instead, so that a GPU
run cannot pass by skipping.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

import corrtrack

SOURCE_DIR = Path(os.environ.get("CORRTRACK_SOURCE_DIR", Path(__file__).resolve().parents[2]))
REQUIRE_GPU = os.environ.get("CORRTRACK_REQUIRE_GPU", "0") == "1"


def project_version() -> str:
    """The version written once, in CMakeLists.txt's project(corrtrack VERSION ...)."""
    m = re.search(r"project\(corrtrack VERSION ([0-9][0-9.]*)", (SOURCE_DIR / "CMakeLists.txt").read_text())
    assert m, "no project(corrtrack VERSION ...) in CMakeLists.txt"
    return m.group(1)


def cli_path() -> Path:
    """The corrtrack executable of this build (CORRTRACK_BINARY, set by ctest)."""
    p = Path(os.environ.get("CORRTRACK_BINARY", SOURCE_DIR / "build" / "app" / "corrtrack"))
    if not p.exists():
        pytest.fail(f"corrtrack CLI not found at {p} (set CORRTRACK_BINARY)")
    return p


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(cli_path()), *map(str, args)], capture_output=True, text=True, timeout=600)


def require_module(name: str):
    """A test dependency (cv2, distributed): skip the file without it, or fail with
    CORRTRACK_REQUIRE_GPU=1, where a missing peer must not pass as a skip."""
    try:
        return __import__(name)
    except ImportError as e:
        if REQUIRE_GPU:
            pytest.fail(f"CORRTRACK_REQUIRE_GPU=1 but {name} is not importable ({e})", pytrace=False)
        pytest.skip(f"{name} is not installed ({e})", allow_module_level=True)


def gpu_framework(name: str):
    """The torch or cupy module with a usable GPU, else skip (fail with CORRTRACK_REQUIRE_GPU=1)."""
    def missing(why: str):
        if REQUIRE_GPU:
            pytest.fail(f"CORRTRACK_REQUIRE_GPU=1 but {why}")
        pytest.skip(why)
    if not corrtrack.cuda_available():
        missing(f"no CUDA GPU ({corrtrack.device()})")
    try:
        module = __import__(name)
    except ImportError as e:
        missing(f"{name} is not installed ({e})")
    if name == "torch" and not module.cuda.is_available():
        missing("torch sees no CUDA device")
    return module


def to_device(fw, a: np.ndarray):
    return fw.from_numpy(a).cuda() if fw.__name__ == "torch" else fw.asarray(a)


def to_host(fw, a) -> np.ndarray:
    return a.cpu().numpy() if fw.__name__ == "torch" else fw.asnumpy(a)


def require_gpu():
    if not corrtrack.cuda_available():
        if REQUIRE_GPU:
            pytest.fail("CORRTRACK_REQUIRE_GPU=1 but no CUDA GPU: " + corrtrack.device())
        pytest.skip("no CUDA GPU: " + corrtrack.device())


# ------------------------------------------------------------------------------ images

def texture(height: int, width: int, seed: int, waves: int = 12, scale: float = 1.0) -> np.ndarray:
    """A smooth random texture (a sum of plane waves), values 0..255 as float64, defined for
    continuous coordinates so that sub-pixel shifts are exact."""
    rng = np.random.default_rng(seed)
    f = rng.uniform(0.02, 0.18, (waves, 2)) * rng.choice([-1, 1], (waves, 2)) / scale
    ph = rng.uniform(0, 2 * np.pi, waves)
    amp = rng.uniform(0.5, 1.0, waves)

    def at(y: np.ndarray, x: np.ndarray) -> np.ndarray:
        v = np.zeros(np.broadcast(y, x).shape)
        for k in range(waves):
            v += amp[k] * np.sin(2 * np.pi * (f[k, 0] * x + f[k, 1] * y) + ph[k])
        return 128 + 110 * v / amp.sum() * 2.2

    return at


def random_image(height: int, width: int, seed: int) -> np.ndarray:
    """Textured uint8 test image (smooth structure plus pixel noise, asymmetric)."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    img = texture(height, width, seed)(yy, xx) + np.random.default_rng(seed + 1).normal(0, 12, (height, width))
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


class Clip:
    """A textured object moving with known sub-pixel motion over another texture."""

    def __init__(self, width=320, height=240, frames=40, box=(60.0, 70.0, 40.0, 32.0),
                 velocity=(1.7, 0.9), wobble=0.6, noise=2.0, seed=1):
        self.width, self.height, self.frames = width, height, frames
        self.box0, self.velocity, self.wobble, self.noise, self.seed = box, velocity, wobble, noise, seed
        self._bg = texture(height, width, seed * 7 + 1)
        self._obj = texture(64, 64, seed * 7 + 2, scale=0.6)

    def box(self, i: int):
        x0, y0, w, h = self.box0
        return (x0 + self.velocity[0] * i + self.wobble * np.sin(i * 2 * np.pi / 7.0),
                y0 + self.velocity[1] * i + self.wobble * np.cos(i * 2 * np.pi / 7.0), w, h)

    def frame(self, i: int) -> np.ndarray:
        yy, xx = np.mgrid[0:self.height, 0:self.width].astype(np.float64) + 0.5
        img = self._bg(yy, xx)
        x, y, w, h = self.box(i)
        inside = (xx >= x) & (xx < x + w) & (yy >= y) & (yy < y + h)
        img = np.where(inside, self._obj(yy - y, xx - x), img)
        img = img + np.random.default_rng(self.seed * 1000 + i).normal(0, self.noise, img.shape)
        return np.clip(np.rint(img), 0, 255).astype(np.uint8)

    def write(self, folder: Path, first: int = 0, skip=()) -> str:
        """Writes frames as folder/%05d.png (numbered from `first`, leaving out `skip`); returns
        the printf pattern FFmpeg opens."""
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(self.frames):
            if i not in skip:
                write_png(folder / f"{first + i:05d}.png", self.frame(i))
        return str(folder / "%05d.png")


def write_png(path: Path, gray: np.ndarray) -> None:
    """An 8-bit greyscale PNG (no OpenCV needed, so the GPU host can make clips too)."""
    h, w = gray.shape

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    raw = b"".join(b"\0" + gray[y].tobytes() for y in range(h))
    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
                           chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def write_otb_sequence(root: Path, name: str, clip: Clip, truth_offset=(0.0, 0.0)) -> Path:
    """An OTB-style sequence folder: img/00001.jpg-style numbering (PNG here) + groundtruth_rect.txt
    (1-based x,y,w,h)."""
    seq = root / name
    clip.write(seq / "img", first=1)
    with open(seq / "groundtruth_rect.txt", "w") as f:
        for i in range(clip.frames):
            x, y, w, h = clip.box(i)
            f.write(f"{x + 1 + truth_offset[0]:.2f},{y + 1 + truth_offset[1]:.2f},{w:.2f},{h:.2f}\n")
    return seq


@pytest.fixture(scope="session")
def clip_dir(tmp_path_factory) -> tuple:
    """The default clip as a PNG sequence: (pattern, Clip)."""
    clip = Clip()
    return clip.write(tmp_path_factory.mktemp("clip")), clip
