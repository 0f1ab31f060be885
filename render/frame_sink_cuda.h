// The CUDA frame sink: NVDEC's NV12 surface becomes the video view's RGBA8 texture through
// CUDA-GL interop. The texture is registered once per frame size; each frame maps it on the
// caller's stream (the tracker's, which NVDEC decodes on, so the kernel sees finished pixels
// without a host wait), converts NV12 -> RGBA with the frame's colour matrix (yuv_rgb.h; chroma
// nearest-neighbour) into a surface object and unmaps it on the stream. Host RGB frames take
// the CPU sink's upload path.
// Thread rules: main (GL) thread only; the GL context must be current and belong to the CUDA
// device in use, else the sink says so once and converts device frames through a host copy.
#pragma once

#include <memory>

#include "render/frame_sink.h"

namespace corrtrack {

// Construct only when cuda_available(). Probes interop at once (takes_device_frames()).
std::unique_ptr<FrameSink> make_cuda_frame_sink();

// The GUI's factory: the CUDA sink when cuda_available(), otherwise the CPU sink.
std::unique_ptr<FrameSink> make_frame_sink();

}  // namespace corrtrack
