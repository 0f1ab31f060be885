// Where decoded frames become the video view's GL texture. The CPU sink uploads host RGB24
// with glTexSubImage2D; the CUDA sink (frame_sink_cuda.h) also takes NVDEC's NV12 surface in
// device memory and converts it into a registered texture through CUDA-GL interop, with no
// host copy. show_frame() picks what a Frame offers.
// Thread rules: main (GL) thread only, with the GL context current.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "app/io/frame.h"
#include "render/nv12_frame.h"

namespace corrtrack {

class FrameSink {
public:
    virtual ~FrameSink() = default;
    // Packed RGB24 rows (3 * width bytes each). The texture is reallocated only on a new size.
    virtual void upload_rgb(const std::uint8_t* rgb, Size size) = 0;
    // Device NV12 planes, converted on `stream` (the tracker's, which NVDEC decodes on) between
    // map and unmap of the registered texture: later GL work sees the pixels, the host waits
    // for nothing. False when this sink takes no device frames (the CPU sink).
    virtual bool upload_nv12(const Nv12Planes& planes, Stream stream) {
        (void)planes, (void)stream;
        return false;
    }
    // True when upload_nv12 goes through CUDA-GL interop here (a GPU, and a GL context CUDA
    // accepts); a decoder may then leave frames on the device without host RGB.
    virtual bool takes_device_frames() const { return false; }
    virtual unsigned texture() const = 0;  // GL texture name of the last upload, 0 before
    virtual Size size() const = 0;
    virtual const char* path() const = 0;  // how the last frame got there, for the Timings panel
};

std::unique_ptr<FrameSink> make_cpu_frame_sink();

// Shows `frame` in `sink`: host RGB when the frame has it, else its NVDEC planes when the sink
// takes device frames, else host luma as grey (expanded in `scratch`). False when none applies.
bool show_frame(FrameSink& sink, const Frame& frame, Stream stream, std::vector<std::uint8_t>* scratch);

// The sink's texture as packed RGB24 (glGetTexImage), e.g. for recording frames that never had
// host RGB. False before the first upload.
bool read_frame_rgb(const FrameSink& sink, std::vector<std::uint8_t>* rgb);

}  // namespace corrtrack
