"""corrtrack: normalized cross-correlation (OpenCV's TM_CCOEFF_NORMED) and NCC tracking on CUDA
GPUs and CPUs, on the arrays you already hold.

- match_template(image, templ): the valid-mode NCC map, as cv2.matchTemplate(...,
  cv2.TM_CCOEFF_NORMED) computes it. NumPy in, NumPy out (CPU kernels); a CuPy array or a
  PyTorch CUDA tensor in, an array of the same kind on the same device out, computed on the
  caller's current CUDA stream with no host copy of the image.
- Matcher(templ): the template prepared once for many images (the fast path for video).
- find_peak(map): sub-pixel peak, score and peak-to-sidelobe ratio.
- kernels(): the correlation kernels, on which device, whether they run here.
- Tracker(**options): the tracker of `corrtrack track` (GPU or CPU); add(frame, box) -> id,
  update(frame) -> [TrackResult], remove(id).
- VideoSource(path_or_camera): frames from FFmpeg's decode thread, as NumPy arrays, or as
  CuPy / PyTorch device arrays (NVDEC where the GPU decodes the stream).
- eval_otb(dataset, **tracker_options): OTB one-pass metrics, as `corrtrack eval`.
- corrtrack.distributed: one task per video or sequence on a Dask cluster.

Without a CUDA GPU everything imports and the CPU kernels run; device() says so.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _corrtrack as _core
from ._corrtrack import (
    Peak,
    TrackResult,
    cuda_available,
    cuda_device_description,
    tracker_option_defaults,
)

# One version for the package, the CLI and CMake: project(VERSION) in CMakeLists.txt.
__version__: str = _core.__version__

__all__ = [
    "KernelInfo", "Matcher", "Peak", "TrackResult", "Tracker", "VideoSource", "cuda_available",
    "cuda_device_description", "device", "eval_otb", "find_peak", "kernels", "match_template",
    "tracker_option_defaults",
]

Roi = Tuple[int, int, int, int]
Box = Tuple[float, float, float, float]


class KernelInfo(NamedTuple):
    """A correlation kernel: name, device ('cpu' or 'cuda'), available here, one-line summary."""

    name: str
    device: str
    available: bool
    summary: str


def kernels(variants: bool = False) -> list:
    """The registered kernels in `corrtrack kernels` order (with variants=True also the tuning
    variants the bench compares), as KernelInfo(name, device, available, summary)."""
    return [KernelInfo(*k) for k in _core._kernel_list(variants)]


def device() -> str:
    """The GPU the CUDA kernels run on, or a note that there is none and the CPU kernels run."""
    if cuda_available():
        return cuda_device_description()
    cpu = [k.name for k in kernels() if k.device == "cpu" and k.available]  # from the registry
    return "no CUDA GPU found: CPU kernels only (" + ", ".join(cpu) + ")"


# ------------------------------------------------------------------------------ array plumbing
# The C++ side reads every array through DLPack (nanobind's ndarray). Here we only tell which
# framework an array comes from, to find the caller's current CUDA stream and to allocate
# outputs with the caller's own allocator (PyTorch's and CuPy's caching allocators, so no
# per-call cudaMalloc).

_FRAMEWORKS: dict = {np.ndarray: "numpy"}  # array type -> framework, learnt on first sight


def _framework(a: Any, what: str) -> str:
    t = type(a)
    fw = _FRAMEWORKS.get(t)
    if fw is None:
        if issubclass(t, np.ndarray):
            fw = "numpy"
        elif t.__module__.startswith("torch"):
            fw = "torch"
        elif t.__module__.startswith("cupy"):
            fw = "cupy"
        else:
            raise TypeError(f"{what} must be a NumPy array, a CuPy array or a PyTorch tensor "
                            f"(got {t.__module__}.{t.__name__})")
        _FRAMEWORKS[t] = fw
    return fw


def _cuda_index(a: Any, fw: str) -> int:
    """The CUDA device of an array, -1 for host memory."""
    if fw == "torch":
        return a.get_device()  # -1 for CPU tensors
    if fw == "cupy":
        return a.device.id
    return -1


_stream_of: dict = {}  # framework -> function(device index) -> current stream handle, made once


def _stream_getter(fw: str):
    if fw == "torch":
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # a few us cheaper than a Stream object
        return raw if raw is not None else (lambda index: torch.cuda.current_stream(index).cuda_stream)
    import cupy

    def current(index: int) -> int:
        with cupy.cuda.Device(index):
            return cupy.cuda.get_current_stream().ptr
    return current


def _current_stream(fw: str, index: int, stream: Optional[int]) -> int:
    """The caller's current CUDA stream on device `index` as an integer handle."""
    if stream is not None:
        return int(stream)
    if fw == "numpy":
        return 0
    get = _stream_of.get(fw)
    if get is None:
        get = _stream_of[fw] = _stream_getter(fw)
    return int(get(index))


def _empty(like: Any, fw: str, shape: Tuple[int, ...], dtype: str) -> Any:
    if fw == "numpy":
        return np.empty(shape, dtype=dtype)
    if fw == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    import cupy
    with like.device:
        return cupy.empty(shape, dtype=dtype)


def _contiguous(a: Any, fw: str) -> Any:
    if fw == "numpy":
        return np.ascontiguousarray(a)
    if fw == "torch":
        return a.contiguous()
    import cupy
    return cupy.ascontiguousarray(a)


def _kernel_name(kernel: str, on_gpu: bool) -> str:
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a kernel name (str), got {type(kernel).__name__}")
    return _core._resolve_kernel(kernel, on_gpu)  # the registry's rule for "auto"


def _templ_dims(templ: Any) -> Tuple[int, int, int, bool]:
    """(count, height, width, stacked) of a 2-D template or a 3-D stack."""
    shape = tuple(templ.shape)
    if len(shape) == 2:
        return 1, shape[0], shape[1], False
    if len(shape) == 3:
        return shape[0], shape[1], shape[2], True
    raise ValueError("templ must be 2-D (height, width) or a 3-D stack (count, height, width), "
                     f"got shape {shape}")


def _roi(roi: Any) -> Optional[Roi]:
    """roi as a tuple of 4 Python ints (NumPy integers welcome), or None."""
    if roi is None:
        return None
    try:
        values = tuple(roi)
    except TypeError:
        raise TypeError(f"roi must be (x, y, width, height), got {roi!r}") from None
    if len(values) != 4:
        raise ValueError(f"roi must be (x, y, width, height), got {roi!r}")
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise TypeError(f"roi must hold 4 integers (x, y, width, height), got {roi!r}")
    return tuple(int(v) for v in values)  # type: ignore[return-value]


def _map_shape(image: Any, dims: Tuple[int, int, int, bool], roi: Optional[Roi]) -> Tuple[int, ...]:
    shape = tuple(image.shape)
    if len(shape) != 2:
        raise ValueError(f"image must be a 2-D array (height, width) of 8-bit luma, got shape {shape}")
    if roi is None:
        rw, rh = shape[1], shape[0]
    else:
        rw, rh = roi[2], roi[3]
    count, th, tw, stacked = dims
    # Sizes that do not fit give an empty map here and a clear error from the C++ checks.
    oh, ow = max(rh - th + 1, 0), max(rw - tw + 1, 0)
    return (count, oh, ow) if stacked else (oh, ow)


_local = threading.local()  # per thread: correlators and peak finders (one thread each)


def _correlator(kernel: str, index: int) -> "_core.Correlator":
    cache = getattr(_local, "correlators", None)
    if cache is None:
        cache = _local.correlators = {}
    key = (kernel, index)
    corr = cache.get(key)
    if corr is None:
        corr = cache[key] = _core.Correlator(kernel, index)
    return corr


# ------------------------------------------------------------------------------ matching

def match_template(image: Any, templ: Any, kernel: str = "auto", roi: Optional[Roi] = None,
                   out: Any = None, *, copy: bool = False, stream: Optional[int] = None) -> Any:
    """Normalized cross-correlation map of `templ` over `image`: OpenCV's TM_CCOEFF_NORMED,

        R(x, y) = (N*SIT - SI*ST) / sqrt((N*SII - SI^2) * (N*STT - ST^2)),   N = w*h,

    for every position where the template fits inside the image (or inside roi): the map is
    (H - h + 1, W - w + 1) float32, as cv2.matchTemplate(image, templ, cv2.TM_CCOEFF_NORMED)
    returns it. The window sums are exact integers; a window or template with zero variance
    scores exactly 0 (never NaN).

    image  uint8 (H, W): a NumPy array (CPU kernels), or a CuPy array / PyTorch CUDA tensor
           (CUDA kernels, computed on the caller's current stream, no host copy). Rows may be
           strided (a crop of a larger frame is used as is).
    templ  uint8 (h, w), or a stack (K, h, w) of K templates of one size: the result is then a
           stack (K, h', w') of maps, computed in one batched call where the kernel supports it.
           Templates may be host or device arrays; each side 1..256 px.
    kernel a name from kernels(); "auto" is cpu_fast for host arrays and, for device arrays,
           the fastest CUDA kernel for the shape (timed once per shape on first use).
    roi    (x, y, w, h): search only this rectangle of image; the map covers its positions.
    out    a preallocated float32 array of the map's shape on the image's device.
    copy   copy non-contiguous inputs instead of raising ValueError.
    stream CUDA stream handle to run on instead of the framework's current stream.

    Raises TypeError for a wrong dtype or array type, ValueError for a wrong shape, a
    non-contiguous row without copy=True, a template larger than the image (or roi) or over
    256 px a side, an unknown kernel, or host/device arrays on the wrong kernel.
    """
    fw = _framework(image, "image")
    tfw = _framework(templ, "templ")
    roi = _roi(roi)
    if copy:
        image, templ = _contiguous(image, fw), _contiguous(templ, tfw)
    index = _cuda_index(image, fw)
    corr = _correlator(_kernel_name(kernel, index >= 0), index)
    s = _current_stream(fw, index, stream) if index >= 0 else 0
    dims = _templ_dims(templ)
    corr.set_template(templ, _current_stream(tfw, _cuda_index(templ, tfw), stream) if tfw != "numpy" else 0)
    if out is None:
        out = _empty(image, fw, _map_shape(image, dims, roi), "float32")
    corr.run(image, out, roi, s)
    return out


class Matcher:
    """A template (or a stack of K templates) prepared once for matching many images: the
    template's sums and device copy are made here, so match() only correlates.

        m = corrtrack.Matcher(templ, kernel="auto", device="cuda")
        for frame in frames:
            ncc = m.match(frame)            # (H - h + 1, W - w + 1), same kind of array

    device: None takes the template's own (host: CPU kernels; a CUDA array: its GPU);
    "cpu", "cuda", "cuda:N" or a device ordinal pick one, e.g. a NumPy template for CUDA images.
    Threads: any thread may call match(); calls on one Matcher run one at a time.
    """

    def __init__(self, templ: Any, kernel: str = "auto", device: Union[None, str, int] = None,
                 *, copy: bool = False):
        tfw = _framework(templ, "templ")
        if copy:
            templ = _contiguous(templ, tfw)
        index = _cuda_index(templ, tfw) if device is None else _parse_device(device)
        self._index = index
        self._corr = _core.Correlator(_kernel_name(kernel, index >= 0), index)
        self._dims = _templ_dims(templ)
        self._corr.set_template(templ, _current_stream(tfw, _cuda_index(templ, tfw), None)
                                if tfw != "numpy" else 0)

    @property
    def kernel(self) -> str:
        """The kernel's name ('auto' stays 'auto')."""
        return self._corr.name

    @property
    def device(self) -> str:
        return "cpu" if self._index < 0 else f"cuda:{self._index}"

    @property
    def template_shape(self) -> Tuple[int, ...]:
        count, h, w, stacked = self._dims
        return (count, h, w) if stacked else (h, w)

    def match(self, image: Any, roi: Optional[Roi] = None, out: Any = None, *,
              copy: bool = False, stream: Optional[int] = None) -> Any:
        """The NCC map(s) of the template(s) over `image` (see match_template)."""
        fw = _framework(image, "image")
        if roi is not None:
            roi = _roi(roi)
        if copy:
            image = _contiguous(image, fw)
        index = _cuda_index(image, fw)
        if out is None:
            out = _empty(image, fw, _map_shape(image, self._dims, roi), "float32")
        self._corr.run(image, out, roi, _current_stream(fw, index, stream) if index >= 0 else 0)
        return out


def _parse_device(device: Union[str, int]) -> int:
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if device == "cpu":
        return -1
    if device == "cuda":
        return 0
    if isinstance(device, str) and device.startswith("cuda:") and device[5:].isdigit():
        return int(device[5:])
    raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:N' or an ordinal, got {device!r}")


def find_peak(map: Any, exclusion_radius: int = 0, *, stream: Optional[int] = None) -> Peak:
    """Peak of an NCC map (float32, 2-D, host or device): integer argmax (the first maximum in
    row-major order), sub-pixel position from a three-point parabola per axis (clamped to
    +-0.5), the score, the best value outside an exclusion zone around the peak (`second`) and
    the peak-to-sidelobe ratio (score - mean) / stddev outside it. exclusion_radius <= 0 picks
    max(2, min(map width, map height) / 8). Map coordinates: add roi's (x, y) for the image.
    A device map is searched on the GPU, on the caller's stream, and only the result returns.
    A map with no value above -2 (every value NaN) has no peak: ValueError. Thread-safe.
    """
    fw = _framework(map, "map")
    index = _cuda_index(map, fw)
    finder = getattr(_local, "peak_finder", None)
    if finder is None:
        finder = _local.peak_finder = _core.PeakFinder()
    return finder.find(map, int(exclusion_radius), _current_stream(fw, index, stream) if index >= 0 else 0)


# ------------------------------------------------------------------------------ tracking

class Tracker:
    """The tracker of `corrtrack track` (app/track: template from the first box, search window
    around the last position, scale search, sub-pixel peak, confidence, loss and full-frame
    re-detection, template updates); several targets share one pass per frame.

    Options are the CLI's tracker flags with underscores (tracker_option_defaults() lists them
    with their defaults), e.g. Tracker(kernel="cpu_fast", search_factor=2.5, update="blend").
    kernel "auto" (the default) runs the fastest CUDA kernel with a GPU, else cpu_fast. A GPU
    tracker takes NumPy frames (copied to the device) or CuPy / PyTorch CUDA frames (read in
    place, ordered after the caller's current stream); a CPU tracker takes NumPy frames.

    Threads: any thread may call any method; calls on one Tracker run one at a time (they wait
    for each other with the GIL released). For parallel work, give each thread its own Tracker.
    """

    def __init__(self, **options: Any):
        self._impl = _core.Tracker(**options)

    def add(self, frame: Any, box: Box) -> int:
        """Starts tracking the object in box = (x, y, w, h) (pixels, 0-based top-left corner) of
        `frame` (uint8 luma, 2-D). Returns the target's id, stable until remove(id). A box
        outside the frame, under 4x4 px or without texture raises ValueError."""
        fw = _framework(frame, "frame")
        index = _cuda_index(frame, fw)
        return self._impl.add(frame, tuple(float(v) for v in box),
                              _current_stream(fw, index, None) if index >= 0 else 0)

    def update(self, frame: Any) -> list:
        """Tracks every target on `frame`: one TrackResult per target (id, box, centre, score,
        confidence, lost, redetected), in the order the targets were added."""
        fw = _framework(frame, "frame")
        index = _cuda_index(frame, fw)
        return self._impl.update(frame, _current_stream(fw, index, None) if index >= 0 else 0)

    def remove(self, id: int) -> None:
        """Stops tracking target `id` (KeyError if there is none); the other ids stay."""
        self._impl.remove(id)

    def clear(self) -> None:
        self._impl.clear()

    def box(self, id: int) -> Box:
        """The last box of target `id`."""
        return self._impl.box(id)

    @property
    def ids(self) -> list:
        return list(self._impl.ids)

    def __len__(self) -> int:
        return len(self._impl.ids)

    @property
    def on_gpu(self) -> bool:
        return self._impl.on_gpu

    @property
    def kernel(self) -> str:
        return self._impl.kernel

    @property
    def options(self) -> dict:
        return self._impl.options


# ------------------------------------------------------------------------------ video input

class VideoSource:
    """Frames of a video file, image sequence ('img/%05d.jpg' or an OTB folder), camera
    (/dev/videoN, or its number) or URL, decoded by FFmpeg on corrtrack's decode thread, as
    8-bit luma arrays (height, width):

        for frame in corrtrack.VideoSource("clip.mp4"):               # NumPy
        for frame in corrtrack.VideoSource("clip.mp4", output="torch"):  # CUDA tensors

    output  "numpy", "torch" or "cupy" (device arrays on CUDA device 0 need a GPU).
    decode  "auto": NVDEC for device outputs when the GPU decodes the stream (H.264/HEVC 8-bit),
            else the CPU; "nvdec": NVDEC where it can, else the CPU with decode_note saying
            why; "sw": always the CPU.
    Each frame is a new array; index and pts describe the last one. An input that is corrupt
    or ends early raises OSError after its last good frame; one that cannot be opened, at once.

    Threads: several threads may take frames from one source; each frame goes to one of them
    (a frame is taken and copied under a lock). close() may come from any thread: an iteration
    in another thread then ends with StopIteration, and next() after close() raises ValueError.
    """

    def __init__(self, source: Union[str, int], decode: str = "auto", output: str = "numpy",
                 read_timeout: float = 5.0, slots: int = 4):
        if isinstance(source, int) and not isinstance(source, bool):
            source = f"/dev/video{source}"
        if output not in ("numpy", "torch", "cupy"):
            raise ValueError(f"output must be 'numpy', 'torch' or 'cupy', got {output!r}")
        self._output = output
        self._impl = _core.VideoSource(str(source), decode, output != "numpy", float(read_timeout), int(slots))
        self.index = -1
        self.pts = 0.0
        self._like = None
        # next, copy_to and release as one step: another thread's next() would release the
        # frame this one is copying. close() does not take it (it must wake a waiting next()).
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        with self._lock:
            return self._next_locked()

    def _next_locked(self) -> Any:
        info = self._impl.next()
        if info is None:
            raise StopIteration
        self.index, self.pts, width, height = info
        if self._output == "numpy":
            out = np.empty((height, width), dtype=np.uint8)
            self._impl.copy_to(out, 0)
        elif self._output == "torch":
            import torch
            out = torch.empty((height, width), dtype=torch.uint8, device="cuda")
            self._impl.copy_to(out, _current_stream("torch", out.device.index, None))
        else:
            import cupy
            out = cupy.empty((height, width), dtype=cupy.uint8)
            self._impl.copy_to(out, _current_stream("cupy", out.device.id, None))
        self._impl.release()
        return out

    def close(self) -> None:
        """Stops the decode thread (also on garbage collection and at the end of a with block).
        Any thread, any number of times; a next() waiting in another thread ends the iteration."""
        self._impl.close()

    def __enter__(self) -> "VideoSource":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    closed = property(lambda self: self._impl.closed, doc="close() was called (by any thread)")
    size = property(lambda self: self._impl.size, doc="(width, height)")
    fps = property(lambda self: self._impl.fps, doc="nominal frame rate (0 if unknown)")
    frame_count = property(lambda self: self._impl.frame_count, doc="frames the container declares, -1 if unknown")
    live = property(lambda self: self._impl.live, doc="a camera or network stream")
    dropped = property(lambda self: self._impl.dropped, doc="frames a live source dropped because we fell behind")
    description = property(lambda self: self._impl.description, doc="'clip.mp4: h264 768x576 @ 10 fps, 120 frames'")
    decode_mode = property(lambda self: self._impl.decode_mode, doc="'nvdec' or 'sw'")
    decode_note = property(lambda self: self._impl.decode_note, doc="why NVDEC was asked for but the CPU decodes, or ''")


# ------------------------------------------------------------------------------ evaluation

def eval_otb(dataset: str, sequences: Optional[Sequence[str]] = None, results_dir: Optional[str] = None,
             **tracker_options: Any) -> dict:
    """OTB one-pass evaluation, the same runs and metrics as `corrtrack eval DATASET`: every
    sub-folder of `dataset` with groundtruth_rect.txt and img/ (or video.mkv) is tracked from
    its first ground-truth box. Returns the dictionary `corrtrack eval --json` writes:

        {"dataset", "kernel", "sequences": {name: {"auc", "prec20", "fps", "frames",
         "evaluated", "lost", "mean_iou", "success", "precision"}},
         "mean": {"auc", "prec20", "fps", "frames", "sequences", "success", "precision"},
         "failed": {name: error}}

    auc: mean success rate over IoU thresholds 0, 0.05, ..., 1 ("success" holds the 21 rates);
    prec20: share of frames with centre error <= 20 px ("precision" holds 0..50 px); fps:
    tracker updates per second of update time. sequences= picks some by name; results_dir=
    writes each sequence's boxes as OTB text (1-based x,y,w,h). Tracker options as Tracker's.
    """
    return _core.eval_otb(str(dataset), None if sequences is None else list(sequences),
                          None if results_dir is None else str(results_dir), **tracker_options)
