// Arrays from Python (NumPy, CuPy, PyTorch, anything with DLPack, through nanobind's ndarray)
// as the kernels' views, with the checks that turn bad input into TypeError / ValueError.
// Thread rules: call with the GIL held (the ndarrays are Python objects); the views they
// return stay valid while the ndarrays live.
#pragma once

#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "corrtrack/image.h"

namespace corrtrack::py {

namespace nb = nanobind;

// Inputs: any framework, device, dtype and layout; checked here, so that a wrong dtype gets
// "image must be uint8 (got float32)" rather than nanobind's generic overload error.
using InArray = nb::ndarray<nb::ro>;
using OutArray = nb::ndarray<>;

// Where an array lives: host memory (CPU, pinned CUDA host memory) or a CUDA device.
struct Placement {
    MemorySpace space = MemorySpace::kHost;
    int device = -1;  // CUDA device ordinal, -1 for host memory
};
Placement placement_of(const InArray& a, const char* what);
Placement placement_of(const OutArray& a, const char* what);
// "host" or "cuda:N"
std::string placement_text(const Placement& p);

// A 2-D uint8 array as an image. Rows may be strided (a crop of a larger frame is taken as is);
// pixels within a row must be contiguous, else ValueError (the Python layer's copy=True makes
// a contiguous copy first).
ImageView image_view(const InArray& a, const char* what);
ImageView image_view(const OutArray& a, const char* what);  // a uint8 output (same rules)

// A 2-D (one template) or 3-D (K templates of one size) uint8 array as one image of K stacked
// templates (K * h rows), as NccProblem::templates expects. The templates of a 3-D array must
// follow each other in memory at a fixed row pitch (any C-contiguous stack does).
struct TemplateStack {
    ImageView view;  // K * h rows
    int count = 1;
    int height = 0;
    bool stacked = false;  // came as a 3-D array
};
TemplateStack template_stack(const InArray& a);

// A writable float32 array of `count` maps of `size` (2-D when count == 1 and !stacked, else
// K x h x w) as one MapView of count * size.height rows.
MapView map_view(const OutArray& a, Size size, int count, bool stacked, const char* what);

// A read-only float32 2-D map (find_peak's input).
MapView input_map_view(const InArray& a, const char* what);

// Makes `device` current for the lifetime of the guard (and restores the previous one), so
// that kernels and their workspaces land on the device of the caller's arrays.
class DeviceGuard {
public:
    explicit DeviceGuard(int device);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1;
};

// The caller's CUDA stream: a cudaStream_t given from Python as an integer (0: the legacy
// default stream).
inline Stream as_stream(std::uintptr_t handle) { return reinterpret_cast<Stream>(handle); }

}  // namespace corrtrack::py
