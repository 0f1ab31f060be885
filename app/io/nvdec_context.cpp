// The CUDA primary context for NVDEC; see nvdec_context.h.
#include "app/io/nvdec_context.h"

#include "app/io/av_log.h"
#include "app/io/libav_handles.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

// NVDEC needs libavutil's CUDA device context (its header includes the toolkit's cuda.h).
// Without it the source still builds and every NVDEC request decodes on the CPU.
#if __has_include(<libavutil/hwcontext_cuda.h>)
#define CORRTRACK_HAVE_AV_CUDA 1
extern "C" {
#include <libavutil/hwcontext_cuda.h>
}
#include <cuda_runtime.h>

#include "corrtrack/cuda_util.h"
#else
#define CORRTRACK_HAVE_AV_CUDA 0
#endif

namespace corrtrack {
namespace {

#if CORRTRACK_HAVE_AV_CUDA
// The device context holds one retain of the primary context; the last unref gives it back.
struct PrimaryContextLease {
    CUresult (*release)(CUdevice) = nullptr;
    CUdevice device = 0;
};

void release_primary_context(AVHWDeviceContext* device) {
    auto* lease = static_cast<PrimaryContextLease*>(device->user_opaque);
    device->user_opaque = nullptr;
    if (lease && lease->release) lease->release(lease->device);
    delete lease;
}

template <class Fn>
bool driver_function(const char* name, Fn* fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !p) {
        cudaGetLastError();
        return false;
    }
    *fn = reinterpret_cast<Fn>(p);
    return true;
}
#endif

}  // namespace

// FFmpeg 5.1's own AV_CUDA_USE_PRIMARY_CONTEXT path (hwcontext_cuda.c, cuda_context_init)
// insists on CU_CTX_SCHED_BLOCKING_SYNC and fails with ENOTSUP once the runtime has activated
// the primary context with its default flags, which any cudaStreamCreate or cudaHostAlloc does
// first. So the context is retained here (driver entry points through the runtime; libcuda is
// not linked) and handed to FFmpeg as a user context, which FFmpeg uses without changing or
// releasing it. nvdec.c reads AVCUDADeviceContext::stream when it creates the decoder
// (nvdec_decoder_create), so the stream is set before av_hwdevice_ctx_init.
AVBufferRef* open_cuda_device(Stream stream, std::string* why) {
#if CORRTRACK_HAVE_AV_CUDA
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        *why = std::string("no CUDA device: ") + (e == cudaErrorInsufficientDriver
                                                      ? "no NVIDIA driver, or one older than this "
                                                        "CUDA runtime"
                                                  : e != cudaSuccess ? cudaGetErrorString(e)
                                                                     : "none found");
        cudaGetLastError();
        return nullptr;
    }
    int ordinal = 0;
    e = stream ? cudaStreamGetDevice(as_cuda(stream), &ordinal) : cudaGetDevice(&ordinal);
    if (e != cudaSuccess) {
        *why = std::string("cannot find the CUDA stream's device: ") + cudaGetErrorString(e);
        cudaGetLastError();
        return nullptr;
    }
    CUresult (*device_get)(CUdevice*, int) = nullptr;
    CUresult (*retain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*release)(CUdevice) = nullptr;
    if (!driver_function("cuDeviceGet", &device_get) || !driver_function("cuDevicePrimaryCtxRetain", &retain) ||
        !driver_function("cuDevicePrimaryCtxRelease", &release)) {
        *why = "the CUDA driver does not offer the primary-context functions";
        return nullptr;
    }
    CUdevice device = 0;
    CUcontext context = nullptr;
    if (device_get(&device, ordinal) != CUDA_SUCCESS || retain(&context, device) != CUDA_SUCCESS) {
        *why = "cannot retain the primary context of CUDA device " + std::to_string(ordinal);
        return nullptr;
    }
    AVBufferRef* ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!ref) {
        release(device);
        *why = "this FFmpeg has no CUDA device support";
        return nullptr;
    }
    auto* device_ctx = reinterpret_cast<AVHWDeviceContext*>(ref->data);
    auto* cuda = static_cast<AVCUDADeviceContext*>(device_ctx->hwctx);
    cuda->cuda_ctx = context;
    cuda->stream = static_cast<CUstream>(stream);
    device_ctx->user_opaque = new PrimaryContextLease{release, device};
    device_ctx->free = release_primary_context;
    clear_av_log();
    int ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        std::string reason = av_error_string(ret);
        *why = "av_hwdevice_ctx_init: " + reason + log_detail(reason);
        av_buffer_unref(&ref);  // releases the primary context through the free callback
        return nullptr;
    }
    return ref;
#else
    (void)stream;
    *why = "this build's libavutil has no CUDA device context";
    return nullptr;
#endif
}

}  // namespace corrtrack
