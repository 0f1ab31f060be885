"""match_template, Matcher, find_peak and kernels(): against OpenCV's matchTemplate
(TM_CCOEFF_NORMED), bad inputs, and (on a GPU) CuPy / PyTorch arrays on the caller's stream."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import corrtrack
from conftest import gpu_framework, project_version, random_image, require_module, run_cli, to_device, to_host

cv2 = require_module("cv2")

# The CPU kernels this CPU runs (cpu_vnni needs AVX-512 VNNI, cpu_avx2 AVX2; CORRTRACK_CPU_ISA caps).
CPU_KERNELS = [k.name for k in corrtrack.kernels() if k.device == "cpu" and k.available]


def window_variance(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """Exact N*SII - SI^2 of every valid window (int64 integral images)."""
    i = np.pad(img.astype(np.int64), ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    i2 = np.pad(img.astype(np.int64) ** 2, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    box = lambda t: t[h:, w:] - t[:-h, w:] - t[h:, :-w] + t[:-h, :-w]  # noqa: E731
    return h * w * box(i2) - box(i) ** 2


def check_against_opencv(ours: np.ndarray, img: np.ndarray, templ: np.ndarray, tol: float = 1e-4):
    ref = cv2.matchTemplate(img, templ, cv2.TM_CCOEFF_NORMED)
    assert ours.shape == ref.shape and ours.dtype == np.float32
    flat = window_variance(img, *templ.shape) == 0
    # OpenCV's value for a window without variance is an accident of its float rounding; ours is 0.
    assert np.all(ours[flat] == 0)
    assert np.abs(ours[~flat] - ref[~flat]).max() <= tol


@pytest.mark.parametrize("kernel", CPU_KERNELS + ["auto"])
@pytest.mark.parametrize("th,tw", [(1, 1), (16, 16), (17, 33), (64, 64), (128, 96)])
def test_equals_opencv(kernel, th, tw):
    if kernel == "cpu_ref" and th * tw > 64 * 64:
        pytest.skip("cpu_ref is brute force: small templates only")
    img = random_image(240, 320, seed=th * 1000 + tw)
    img[60:200, 20:160] = 77  # a flat block: windows inside it score exactly 0
    templ = random_image(th, tw, seed=5)
    ours = corrtrack.match_template(img, templ, kernel=kernel)
    assert isinstance(ours, np.ndarray)
    if th * tw > 1:
        check_against_opencv(ours, img, templ)
    else:
        assert np.all(ours == 0)  # a 1x1 template has no variance: every score is 0
    flat_windows = window_variance(img, th, tw) == 0
    assert flat_windows.any() and np.all(ours[flat_windows] == 0)


def test_template_from_image_scores_one_at_its_place():
    img = random_image(200, 300, seed=3)
    ours = corrtrack.match_template(img, img[50:82, 60:100].copy())
    peak = corrtrack.find_peak(ours)
    assert (peak.x, peak.y) == (60, 50)
    assert peak.score == pytest.approx(1.0, abs=1e-6)


def test_roi_and_strided_views():
    img = random_image(240, 320, seed=11)
    templ = random_image(24, 20, seed=12)
    x, y, w, h = 30, 40, 150, 120
    ours = corrtrack.match_template(img, templ, roi=(x, y, w, h))
    assert ours.shape == (h - 24 + 1, w - 20 + 1)
    check_against_opencv(ours, np.ascontiguousarray(img[y:y + h, x:x + w]), templ)
    crop = img[y:y + h, x:x + w]  # rows strided: taken as is
    assert not crop.flags.c_contiguous
    np.testing.assert_array_equal(corrtrack.match_template(crop, templ), ours)
    # read-only input is fine
    ro = img.copy()
    ro.flags.writeable = False
    corrtrack.match_template(ro, templ)


def test_template_stack_gives_a_stack_of_maps():
    img = random_image(180, 260, seed=21)
    stack = np.stack([random_image(20, 28, seed=s) for s in (1, 2, 3, 4)])
    for kernel in CPU_KERNELS:
        if kernel == "cpu_ref":
            continue
        maps = corrtrack.match_template(img, stack, kernel=kernel)
        assert maps.shape == (4, 161, 233)
        for k in range(4):
            np.testing.assert_allclose(maps[k], corrtrack.match_template(img, stack[k], kernel=kernel), atol=1e-6)
            check_against_opencv(maps[k], img, stack[k])


def test_out_argument():
    img = random_image(120, 160, seed=31)
    templ = random_image(16, 16, seed=32)
    out = np.full((105, 145), np.nan, np.float32)
    res = corrtrack.match_template(img, templ, out=out)
    assert res is out and not np.isnan(out).any()
    with pytest.raises(ValueError, match=r"out must have shape \(105, 145\)"):
        corrtrack.match_template(img, templ, out=np.empty((10, 10), np.float32))
    with pytest.raises(TypeError, match="out must be float32"):
        corrtrack.match_template(img, templ, out=np.empty((105, 145), np.float64))


def test_matcher_keeps_its_template():
    img = random_image(150, 200, seed=41)
    templ = random_image(24, 24, seed=42)
    m = corrtrack.Matcher(templ)
    expect = corrtrack.match_template(img, templ)
    templ[:] = 0  # the matcher copied it
    np.testing.assert_array_equal(m.match(img), expect)
    assert m.kernel == "cpu_fast" and m.device == "cpu" and m.template_shape == (24, 24)


def test_threads_each_get_their_own_kernels():
    imgs = [random_image(160, 200, seed=s) for s in range(4)]
    templs = [random_image(20, 20, seed=10 + s) for s in range(4)]
    expect = [corrtrack.match_template(i, t) for i, t in zip(imgs, templs)]
    got = [None] * 4

    def work(k):
        for _ in range(5):
            got[k] = corrtrack.match_template(imgs[k], templs[k])
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e, g in zip(expect, got):
        np.testing.assert_array_equal(e, g)


def test_bad_inputs_raise():
    img = random_image(100, 120, seed=51)
    templ = random_image(16, 16, seed=52)
    mt = corrtrack.match_template
    with pytest.raises(TypeError, match=r"image must be uint8 \(got float32\)"):
        mt(img.astype(np.float32), templ)
    with pytest.raises(TypeError, match=r"templ must be uint8 \(got int64\)"):
        mt(img, templ.astype(np.int64))
    with pytest.raises(ValueError, match="image must be a 2-D array"):
        mt(np.zeros((10, 10, 3), np.uint8), templ)
    with pytest.raises(ValueError, match="templ must be 2-D"):
        mt(img, np.zeros(16, np.uint8))
    with pytest.raises(ValueError, match="not contiguous along its rows.*copy=True"):
        mt(img[:, ::2], templ)
    with pytest.raises(ValueError, match="not contiguous along its rows"):
        mt(np.ascontiguousarray(img.T).T, templ)  # a transposed view
    with pytest.raises(ValueError, match="row stride of -120"):
        mt(img[::-1], templ)  # flipped
    np.testing.assert_array_equal(mt(img[:, ::2], templ, copy=True), mt(np.ascontiguousarray(img[:, ::2]), templ))
    with pytest.raises(ValueError, match="larger than the search region"):
        mt(img[:10, :10], templ)
    with pytest.raises(ValueError, match="exceeds the supported 256x256"):
        mt(np.zeros((300, 300), np.uint8), np.zeros((257, 20), np.uint8))
    with pytest.raises(ValueError, match="unknown kernel 'nope'.*cpu_fast"):
        mt(img, templ, kernel="nope")
    with pytest.raises(TypeError, match="kernel must be"):
        mt(img, templ, kernel=3)
    with pytest.raises(TypeError, match="NumPy array, a CuPy array or a PyTorch tensor"):
        mt(img.tolist(), templ)
    with pytest.raises(ValueError, match="empty"):
        mt(np.zeros((0, 5), np.uint8), templ)
    with pytest.raises(ValueError, match="outside"):
        mt(img, templ, roi=(100, 90, 40, 40))
    with pytest.raises(ValueError, match="roi must be"):
        mt(img, templ, roi=(1, 2, 3))
    with pytest.raises(TypeError, match="roi must hold 4 integers"):
        mt(img, templ, roi=(1.5, 2, 30, 30))
    np.testing.assert_array_equal(mt(img, templ, roi=np.array([5, 5, 60, 50])), mt(img, templ, roi=(5, 5, 60, 50)))
    stack = np.stack([templ, templ])
    with pytest.raises(ValueError, match="do not follow each other"):
        mt(img, stack.transpose(1, 0, 2))
    if corrtrack.cuda_available():
        with pytest.raises(ValueError, match="runs on the GPU but image is in host memory"):
            mt(img, templ, kernel="cuda_fft")
    else:
        with pytest.raises(RuntimeError, match="needs a CUDA GPU and none was found"):
            mt(img, templ, kernel="cuda_fft")
    with pytest.raises(ValueError, match="device must be"):
        corrtrack.Matcher(templ, device="gpu")


def test_find_peak_definition():
    m = np.zeros((40, 50), np.float32)
    rng = np.random.default_rng(7)
    m[:] = rng.uniform(-0.3, 0.3, m.shape)
    m[20, 30], m[20, 29], m[20, 31], m[19, 30], m[21, 30] = 0.9, 0.5, 0.7, 0.6, 0.4
    p = corrtrack.find_peak(m, exclusion_radius=3)
    assert (p.x, p.y, p.score) == (30, 20, pytest.approx(0.9))
    a, b, c = 0.5, 0.9, 0.7
    assert p.sub_x == pytest.approx(30 + 0.5 * (a - c) / (a - 2 * b + c), abs=1e-6)
    a, c = 0.6, 0.4
    assert p.sub_y == pytest.approx(20 + 0.5 * (a - c) / (a - 2 * b + c), abs=1e-6)
    outside = np.ones(m.shape, bool)
    outside[17:24, 27:34] = False
    rest = m[outside].astype(np.float64)
    assert p.second == pytest.approx(rest.max())
    assert p.psr == pytest.approx((0.9 - rest.mean()) / rest.std(), rel=1e-4)
    with pytest.raises(TypeError, match="map must be float32"):
        corrtrack.find_peak(m.astype(np.float64))


def test_find_peak_of_an_all_nan_map_raises():
    with pytest.raises(ValueError, match="no peak: every value is NaN"):
        corrtrack.find_peak(np.full((20, 30), np.nan, np.float32))
    # one finite value is a peak, whatever the NaNs around it
    m = np.full((20, 30), np.nan, np.float32)
    m[4, 7] = 0.25
    p = corrtrack.find_peak(m)
    assert (p.x, p.y, p.score) == (7, 4, pytest.approx(0.25))


def test_kernels_list():
    ks = corrtrack.kernels()
    names = [k.name for k in ks]
    assert names[0] == "cpu_ref" and "cpu_fast" in names and names[-1] == "auto"
    for k in ks:
        assert (k.available == (k.device == "cpu" or corrtrack.cuda_available()) or k.name.startswith("cuda_mma")
                or k.name in ("cpu_avx2", "cpu_vnni"))  # these two need the CPU's ISA
    assert len(corrtrack.kernels(variants=True)) > len(ks)


def test_version_is_the_cmake_projects_and_the_clis():
    assert corrtrack.__version__ == project_version()
    r = run_cli("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"corrtrack {corrtrack.__version__}"


def test_docs_and_stubs():
    assert "TM_CCOEFF_NORMED" in corrtrack.match_template.__doc__
    stub = Path(corrtrack._corrtrack.__file__).with_name("_corrtrack.pyi")
    text = stub.read_text()
    for name in ("class Correlator", "class Tracker", "class VideoSource", "def eval_otb", "class Peak"):
        assert name in text
    assert (Path(corrtrack.__file__).parent / "py.typed").exists()


def test_import_without_a_gpu_says_so():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-c", "import corrtrack, numpy as np; "
                        "print(corrtrack.cuda_available()); print(corrtrack.device()); "
                        "print(corrtrack.match_template(np.eye(8, dtype=np.uint8) * 200, "
                        "np.eye(4, dtype=np.uint8) * 200)[0, 0])"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "False"
    assert lines[1].startswith("no CUDA GPU found: CPU kernels only")
    assert float(lines[2]) == pytest.approx(1.0)
    r = subprocess.run([sys.executable, "-m", "corrtrack"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "no CUDA GPU found" in r.stdout and "cpu_fast" in r.stdout


# ------------------------------------------------------------------------------ GPU arrays

GPU_KERNELS = ["auto", "cuda_mma", "cuda_fft", "cuda_dp4a_ilp", "cuda_shared"]


@pytest.mark.parametrize("fw_name", ["torch", "cupy"])
def test_device_arrays_match_opencv(fw_name):
    fw = gpu_framework(fw_name)
    img = random_image(240, 320, seed=61)
    img[60:200, 20:160] = 77
    for kernel in GPU_KERNELS:
        if not next(k for k in corrtrack.kernels() if k.name == kernel).available:
            continue
        for th, tw in [(16, 16), (17, 33), (64, 64)]:
            templ = random_image(th, tw, seed=th + tw)
            d_img = to_device(fw, img)
            out = corrtrack.match_template(d_img, to_device(fw, templ), kernel=kernel)
            assert type(out) is type(d_img)
            if fw_name == "torch":
                assert out.is_cuda and out.device == d_img.device and out.dtype == fw.float32
            else:
                assert out.device == d_img.device and out.dtype == fw.float32
            check_against_opencv(to_host(fw, out), img, templ)
            # a host template with device images, and a crop of a device frame (strided rows)
            crop = d_img[10:200, 30:300]
            got = to_host(fw, corrtrack.match_template(crop, templ, kernel=kernel))
            check_against_opencv(got, np.ascontiguousarray(img[10:200, 30:300]), templ)


@pytest.mark.parametrize("fw_name", ["torch", "cupy"])
def test_device_stacks_batched_and_looped(fw_name):
    fw = gpu_framework(fw_name)
    img = random_image(200, 240, seed=71)
    stack = np.stack([random_image(24, 20, seed=s) for s in range(5)])
    for kernel in ("cuda_dp4a", "cuda_fft", "cuda_shared", "cuda_mma"):  # batched, batched, looped, looped
        if not next(k for k in corrtrack.kernels() if k.name == kernel).available:
            continue
        maps = to_host(fw, corrtrack.match_template(to_device(fw, img), to_device(fw, stack), kernel=kernel))
        assert maps.shape == (5, 177, 221)
        for k in range(5):
            check_against_opencv(maps[k], img, stack[k])


def test_torch_runs_on_the_current_stream():
    torch = gpu_framework("torch")
    img = random_image(480, 640, seed=81)
    templ = random_image(32, 32, seed=82)
    ref = cv2.matchTemplate(img, templ, cv2.TM_CCOEFF_NORMED)
    base = torch.from_numpy(img).cuda().to(torch.int16)
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU time before the image exists
        d_img = (base + 0).to(torch.uint8)
        out = corrtrack.match_template(d_img, templ, kernel="cuda_dp4a_ilp")
        peak = corrtrack.find_peak(out)
    s.synchronize()
    check_against_opencv(out.cpu().numpy(), img, templ)
    assert peak.score == pytest.approx(float(ref.max()), abs=1e-4)


def test_cupy_runs_on_the_current_stream():
    cupy = gpu_framework("cupy")
    img = random_image(480, 640, seed=83)
    templ = random_image(32, 32, seed=84)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        d = cupy.asarray(img.astype(np.int16))
        for _ in range(50):  # queue some work that produces the image on this stream
            d = d + 0
        out = corrtrack.match_template(d.astype(cupy.uint8), templ, kernel="cuda_fft")
    s.synchronize()
    check_against_opencv(cupy.asnumpy(out), img, templ)


@pytest.mark.parametrize("fw_name", ["torch", "cupy"])
def test_device_peak_and_matcher(fw_name):
    fw = gpu_framework(fw_name)
    img = random_image(300, 400, seed=91)
    templ = img[100:148, 200:260].copy()
    m = corrtrack.Matcher(to_device(fw, templ))
    assert m.device == "cuda:0"
    d_map = m.match(to_device(fw, img))
    p_dev = corrtrack.find_peak(d_map)
    p_host = corrtrack.find_peak(to_host(fw, d_map))
    assert (p_dev.x, p_dev.y) == (p_host.x, p_host.y) == (200, 100)
    assert (p_dev.score, p_dev.second) == (p_host.score, p_host.second)
    # the device reduces the sidelobe sums in another order (as test_cuda_peak allows)
    for a, b in ((p_dev.sub_x, p_host.sub_x), (p_dev.sub_y, p_host.sub_y), (p_dev.psr, p_host.psr)):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-5)
    # a NumPy template prepared for device images
    m2 = corrtrack.Matcher(templ, device="cuda")
    np.testing.assert_array_equal(to_host(fw, m2.match(to_device(fw, img))), to_host(fw, d_map))


def test_device_bad_inputs():
    torch = gpu_framework("torch")
    img = torch.from_numpy(random_image(100, 120, seed=95)).cuda()
    templ = random_image(16, 16, seed=96)
    with pytest.raises(ValueError, match="runs on the CPU but image is on cuda:0"):
        corrtrack.match_template(img, templ, kernel="cpu_fast")
    with pytest.raises(TypeError, match="image must be uint8"):
        corrtrack.match_template(img.float(), templ)
    with pytest.raises(ValueError, match="not contiguous"):
        corrtrack.match_template(img[:, ::2], templ)
    with pytest.raises(ValueError, match="out is in host memory but image is in cuda:0"):
        corrtrack.match_template(img, templ, out=np.empty((85, 105), np.float32))
