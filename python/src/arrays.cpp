#include "arrays.h"

#include <cuda_runtime.h>

#include "corrtrack/cuda_util.h"

namespace corrtrack::py {
namespace {

std::string dtype_name(nb::dlpack::dtype t) {
    std::string base;
    switch (static_cast<nb::dlpack::dtype_code>(t.code)) {
    case nb::dlpack::dtype_code::Int: base = "int"; break;
    case nb::dlpack::dtype_code::UInt: base = "uint"; break;
    case nb::dlpack::dtype_code::Float: base = "float"; break;
    case nb::dlpack::dtype_code::Bfloat: base = "bfloat"; break;
    case nb::dlpack::dtype_code::Complex: base = "complex"; break;
    case nb::dlpack::dtype_code::Bool: return "bool";
    default: base = "code" + std::to_string(t.code) + "_"; break;
    }
    return base + std::to_string(t.bits);
}

template <class Array>
Placement placement(const Array& a, const char* what) {
    switch (a.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value: return {MemorySpace::kHost, -1};
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value: return {MemorySpace::kDevice, a.device_id()};
    default:
        throw nb::value_error((std::string(what) + " lives on a device corrtrack cannot use (DLPack device type " +
                               std::to_string(a.device_type()) + "); use host memory or a CUDA GPU")
                                  .c_str());
    }
}

template <class Array>
std::int64_t stride_of(const Array& a, std::size_t i) {
    if (a.stride_ptr()) return a.stride(i);
    std::int64_t s = 1;  // a producer may leave strides out for C-contiguous arrays
    for (std::size_t j = i + 1; j < a.ndim(); ++j) s *= static_cast<std::int64_t>(a.shape(j));
    return s;
}

template <class Array>
void check_dtype(const Array& a, nb::dlpack::dtype want, const char* want_name, const char* what) {
    const nb::dlpack::dtype got = a.dtype();
    if (got != want)
        throw nb::type_error((std::string(what) + " must be " + want_name + " (got " + dtype_name(got) + ")").c_str());
}

[[noreturn]] void fail(const std::string& msg) { throw nb::value_error(msg.c_str()); }

template <class Array>
std::string shape_text(const Array& a) {
    std::string s = "(";
    for (std::size_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + (a.ndim() == 1 ? ",)" : ")");
}

// Rows of `width` elements, `pitch` elements apart: contiguous pixels, positive pitch.
void check_rows(std::int64_t col_stride, std::int64_t row_stride, std::size_t width, std::size_t height,
                const char* what) {
    if (width > 1 && col_stride != 1)
        fail(std::string(what) + " is not contiguous along its rows (element stride " + std::to_string(col_stride) +
             "); pass copy=True or a contiguous array");
    if (height > 1 && row_stride < static_cast<std::int64_t>(width))
        fail(std::string(what) + " has a row stride of " + std::to_string(row_stride) + " elements for rows of " +
             std::to_string(width) + " (transposed or flipped?); pass copy=True or a contiguous array");
}

template <class Array>
ImageView image_view_of(const Array& a, const char* what) {
    check_dtype(a, nb::dtype<std::uint8_t>(), "uint8", what);
    if (a.ndim() != 2)
        fail(std::string(what) + " must be a 2-D array (height, width) of 8-bit luma, got shape " + shape_text(a));
    const std::size_t h = a.shape(0), w = a.shape(1);
    if (h == 0 || w == 0) fail(std::string(what) + " is empty, shape " + shape_text(a));
    if (h > (1u << 30) || w > (1u << 30)) fail(std::string(what) + " is too large, shape " + shape_text(a));
    const std::int64_t pitch = h > 1 ? stride_of(a, 0) : static_cast<std::int64_t>(w);
    check_rows(stride_of(a, 1), pitch, w, h, what);
    const Placement p = placement(a, what);
    return {static_cast<const std::uint8_t*>(a.data()), static_cast<int>(w), static_cast<int>(h),
            static_cast<std::size_t>(pitch), p.space};
}

}  // namespace

Placement placement_of(const InArray& a, const char* what) { return placement(a, what); }
Placement placement_of(const OutArray& a, const char* what) { return placement(a, what); }

std::string placement_text(const Placement& p) {
    return p.space == MemorySpace::kHost ? "host memory" : "cuda:" + std::to_string(p.device);
}

ImageView image_view(const InArray& a, const char* what) { return image_view_of(a, what); }
ImageView image_view(const OutArray& a, const char* what) { return image_view_of(a, what); }

TemplateStack template_stack(const InArray& a) {
    const char* what = "templ";
    check_dtype(a, nb::dtype<std::uint8_t>(), "uint8", what);
    if (a.ndim() != 2 && a.ndim() != 3)
        fail("templ must be 2-D (height, width) or a 3-D stack (count, height, width), got shape " + shape_text(a));
    const bool stacked = a.ndim() == 3;
    const std::size_t k = stacked ? a.shape(0) : 1;
    const std::size_t h = a.shape(a.ndim() - 2), w = a.shape(a.ndim() - 1);
    if (k == 0 || h == 0 || w == 0) fail("templ is empty, shape " + shape_text(a));
    if (k * h > (1u << 30) || w > (1u << 30)) fail("templ is too large, shape " + shape_text(a));
    const std::int64_t pitch = h > 1 ? stride_of(a, a.ndim() - 2) : static_cast<std::int64_t>(w);
    check_rows(stride_of(a, a.ndim() - 1), pitch, w, h, what);
    if (stacked && k > 1 && stride_of(a, 0) != pitch * static_cast<std::int64_t>(h))
        fail("the templates of the stack do not follow each other in memory (stride " +
             std::to_string(stride_of(a, 0)) + " between templates, " + std::to_string(pitch * h) +
             " expected); pass copy=True or a contiguous array");
    const Placement p = placement(a, what);
    TemplateStack t;
    t.view = {static_cast<const std::uint8_t*>(a.data()), static_cast<int>(w), static_cast<int>(k * h),
              static_cast<std::size_t>(pitch), p.space};
    t.count = static_cast<int>(k);
    t.height = static_cast<int>(h);
    t.stacked = stacked;
    return t;
}

MapView map_view(const OutArray& a, Size size, int count, bool stacked, const char* what) {
    check_dtype(a, nb::dtype<float>(), "float32", what);
    const std::size_t want_ndim = stacked ? 3 : 2;
    std::string want = "(" + (stacked ? std::to_string(count) + ", " : std::string()) + std::to_string(size.height) +
                       ", " + std::to_string(size.width) + ")";
    bool ok = a.ndim() == want_ndim;
    if (ok && stacked) ok = a.shape(0) == static_cast<std::size_t>(count);
    if (ok)
        ok = a.shape(want_ndim - 2) == static_cast<std::size_t>(size.height) &&
             a.shape(want_ndim - 1) == static_cast<std::size_t>(size.width);
    if (!ok) {
        std::string got = "(";
        for (std::size_t i = 0; i < a.ndim(); ++i) got += (i ? ", " : "") + std::to_string(a.shape(i));
        fail(std::string(what) + " must have shape " + want + ", got " + got + ")");
    }
    const std::int64_t pitch = size.height > 1 ? stride_of(a, want_ndim - 2) : size.width;
    check_rows(stride_of(a, want_ndim - 1), pitch, size.width, size.height, what);
    if (stacked && count > 1 && stride_of(a, 0) != pitch * size.height)
        fail(std::string(what) + ": the maps of the stack must follow each other in memory (a C-contiguous array)");
    const Placement p = placement(a, what);
    return {static_cast<float*>(a.data()), size.width, size.height * count, static_cast<std::size_t>(pitch), p.space};
}

MapView input_map_view(const InArray& a, const char* what) {
    check_dtype(a, nb::dtype<float>(), "float32", what);
    if (a.ndim() != 2) fail(std::string(what) + " must be a 2-D float32 map, got shape " + shape_text(a));
    const std::size_t h = a.shape(0), w = a.shape(1);
    if (h == 0 || w == 0) fail(std::string(what) + " is empty, shape " + shape_text(a));
    const std::int64_t pitch = h > 1 ? stride_of(a, 0) : static_cast<std::int64_t>(w);
    check_rows(stride_of(a, 1), pitch, w, h, what);
    const Placement p = placement(a, what);
    return {const_cast<float*>(static_cast<const float*>(a.data())), static_cast<int>(w), static_cast<int>(h),
            static_cast<std::size_t>(pitch), p.space};
}

DeviceGuard::DeviceGuard(int device) {
    if (device < 0) return;
    CORRTRACK_CUDA(cudaGetDevice(&previous_));
    if (previous_ == device)
        previous_ = -1;
    else
        CORRTRACK_CUDA(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace corrtrack::py
