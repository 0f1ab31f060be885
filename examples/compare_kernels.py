#!/usr/bin/env python3
"""Compare corrtrack's kernels with cv2.matchTemplate(TM_CCOEFF_NORMED), and with a PyTorch FFT
NCC when torch is installed, on the same frame and templates; print a ratio table.

    python examples/compare_kernels.py                          # 1920x1080 synthetic frame
    python examples/compare_kernels.py --video clip.mp4 --templates 32,64
    python examples/compare_kernels.py --kernels cpu_fast,cuda_mma,cuda_fft --repeats 15
    CORRTRACK_CPU_ISA=avx2 python examples/compare_kernels.py   # as on a CPU without AVX-512

Templates are cut from the middle of the frame. Each method runs once to warm up (plans,
workspaces, "auto"'s timing), then --repeats times; the table gives the median wall time per
call (GPU methods: synchronised after each call), "x cv2" = OpenCV's median / this method's,
and the largest difference from OpenCV's map over windows with variance. CPU kernels take NumPy
arrays; CUDA kernels take PyTorch tensors (CuPy arrays when torch is missing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

corrtrack = None  # imported in main(), after --threads has set OMP_NUM_THREADS


def synthetic_frame(width: int, height: int, seed: int = 1) -> np.ndarray:
    """Smooth random structure plus noise: every window has texture, as in real footage."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    img = np.zeros((height, width), np.float32)
    for _ in range(12):
        fx, fy = rng.uniform(-0.12, 0.12, 2)
        img += np.sin(2 * np.pi * (fx * xx + fy * yy) + rng.uniform(0, 6.3)).astype(np.float32)
    img = 128 + 9 * img + rng.normal(0, 10, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def video_frame(path: str, index: int) -> np.ndarray:
    with corrtrack.VideoSource(path) as src:
        for i, frame in enumerate(src):
            if i == index:
                return frame
    raise SystemExit(f"{path} has fewer than {index + 1} frames")


def torch_fft_ncc(image, templ):
    """TM_CCOEFF_NORMED with torch: FFT correlation of the zero-mean template (float32), window
    sums from float64 integral images; zero-variance windows score 0."""
    import torch
    img = image.to(torch.float32)
    t = templ.to(torch.float32)
    h, w = t.shape
    H, W = img.shape
    tz = t - t.mean()
    spec = torch.fft.rfft2(img) * torch.conj(torch.fft.rfft2(tz, s=(H, W)))
    num = torch.fft.irfft2(spec, s=(H, W))[: H - h + 1, : W - w + 1].to(torch.float64)
    d = img.to(torch.float64)
    ii = torch.nn.functional.pad(d, (1, 0, 1, 0)).cumsum(0).cumsum(1)
    i2 = torch.nn.functional.pad(d * d, (1, 0, 1, 0)).cumsum(0).cumsum(1)
    box = lambda s: s[h:, w:] - s[:-h, w:] - s[h:, :-w] + s[:-h, :-w]  # noqa: E731
    s1, s2 = box(ii), box(i2)
    var = s2 - s1 * s1 / (h * w)
    den = torch.sqrt(var.clamp_min(0) * (tz.to(torch.float64) ** 2).sum())
    return torch.where(var > 1e-6, num / den.clamp_min(1e-12), torch.zeros_like(num)).to(torch.float32)


def median_ms(fn, repeats: int, sync=None) -> float:
    fn()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def flat_mask(img: np.ndarray, h: int, w: int) -> np.ndarray:
    i = np.pad(img.astype(np.int64), ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    i2 = np.pad(img.astype(np.int64) ** 2, ((1, 0), (1, 0))).cumsum(0).cumsum(1)
    box = lambda t: t[h:, w:] - t[:-h, w:] - t[h:, :-w] + t[:-h, :-w]  # noqa: E731
    return h * w * box(i2) - box(i) ** 2 == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1920x1080", help="synthetic frame WxH (default 1920x1080)")
    ap.add_argument("--video", help="take the frame from this video instead (FFmpeg, via corrtrack.VideoSource)")
    ap.add_argument("--frame", type=int, default=0, help="which frame of --video")
    ap.add_argument("--templates", default="16,32,64,128", help="template sides (default 16,32,64,128)")
    ap.add_argument("--kernels", default=None,
                    help="corrtrack kernels (default: cpu_fast,cpu_vnni,cpu_avx2, and auto,cuda_mma,cuda_fft "
                         "with a GPU)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-torch", action="store_true", help="leave the PyTorch FFT NCC out")
    ap.add_argument("--threads", type=int, default=0,
                    help="CPU threads for OpenCV, corrtrack's CPU kernels and torch (default: all cores)")
    args = ap.parse_args()

    global corrtrack
    if args.threads > 0:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # read when corrtrack's OpenMP loads
    import corrtrack
    import cv2
    cv2.setNumThreads(args.threads)  # 0: OpenCV's default, all cores
    if args.video:
        frame, what = video_frame(args.video, args.frame), f"{args.video} frame {args.frame}"
    else:
        w, h = (int(v) for v in args.size.lower().split("x"))
        frame, what = synthetic_frame(w, h), "synthetic"
    H, W = frame.shape
    sides = [int(s) for s in args.templates.split(",")]
    gpu = corrtrack.cuda_available()
    cpu = ["cpu_fast", "cpu_vnni", "cpu_avx2"]  # cpu_fast: what "auto" runs without a GPU
    kernels = args.kernels.split(",") if args.kernels else cpu + (["auto", "cuda_mma", "cuda_fft"] if gpu else [])
    available = {k.name: k for k in corrtrack.kernels(variants=True)}
    for k in kernels:
        if k not in available:
            raise SystemExit(f"unknown kernel {k} (see corrtrack.kernels())")

    try:
        import torch
        if args.threads > 0:
            torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    cupy, dev_fw = None, None
    if gpu and torch is not None and torch.cuda.is_available():
        dev_fw = "torch"
    elif gpu:
        try:
            import cupy
            dev_fw = "cupy"
        except ImportError:
            pass

    def to_dev(a):
        return torch.from_numpy(a).cuda() if dev_fw == "torch" else cupy.asarray(a)

    def to_host(a):
        return a.cpu().numpy() if dev_fw == "torch" else cupy.asnumpy(a)

    def sync():
        (torch.cuda.synchronize if dev_fw == "torch" else cupy.cuda.runtime.deviceSynchronize)()

    threads = f"{args.threads} CPU thread(s)" if args.threads > 0 else f"all {os.cpu_count()} CPU threads"
    print(f"frame {W}x{H} ({what}); {corrtrack.device()}; {threads}; median of {args.repeats} calls after one warm-up")
    print(f"{'template':9s} {'method':22s} {'device':6s} {'median ms':>10s} {'x cv2':>7s} {'max|diff|':>10s}")
    d_frame = to_dev(frame) if dev_fw else None
    for side in sides:
        if side > min(W, H):
            continue
        y0, x0 = (H - side) // 2, (W - side) // 2
        templ = np.ascontiguousarray(frame[y0:y0 + side, x0:x0 + side])
        ref = cv2.matchTemplate(frame, templ, cv2.TM_CCOEFF_NORMED)
        keep = ~flat_mask(frame, side, side)
        cv_ms = median_ms(lambda: cv2.matchTemplate(frame, templ, cv2.TM_CCOEFF_NORMED), args.repeats)
        label = f"{side}x{side}"
        print(f"{label:9s} {'cv2.matchTemplate':22s} {'cpu':6s} {cv_ms:10.3f} {1.0:7.3g} {'-':>10s}")

        def row(name, device, ms, result):
            diff = float(np.abs(result[keep] - ref[keep]).max())
            print(f"{label:9s} {name:22s} {device:6s} {ms:10.3f} {cv_ms / ms:7.3g} {diff:10.2e}")

        for k in kernels:
            info = available[k]
            if not info.available:
                print(f"{label:9s} {k:22s} {info.device:6s} {'not available here':>29s}")
                continue
            if info.device == "cpu":
                m = corrtrack.Matcher(templ, kernel=k)
                ms = median_ms(lambda: m.match(frame), args.repeats)
                row(k, "cpu", ms, m.match(frame))
            elif dev_fw:
                m = corrtrack.Matcher(templ, kernel=k, device="cuda")
                out = m.match(d_frame)
                ms = median_ms(lambda: m.match(d_frame, out=out), args.repeats, sync)
                row(k, "cuda", ms, to_host(m.match(d_frame)))
            else:
                print(f"{label:9s} {k:22s} {'cuda':6s} {'needs torch or cupy':>29s}")
        if torch is not None and not args.no_torch:
            on_gpu = torch.cuda.is_available()
            t_img = torch.from_numpy(frame).cuda() if on_gpu else torch.from_numpy(frame)
            t_tpl = torch.from_numpy(templ).cuda() if on_gpu else torch.from_numpy(templ)
            ms = median_ms(lambda: torch_fft_ncc(t_img, t_tpl), args.repeats, torch.cuda.synchronize if on_gpu else None)
            row("torch_fft_ncc", "cuda" if on_gpu else "cpu", ms, torch_fft_ncc(t_img, t_tpl).cpu().numpy())
    return 0


if __name__ == "__main__":
    sys.exit(main())
