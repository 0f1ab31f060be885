// The CUDA heatmap sink: NCC maps become coloured GL textures through CUDA-GL interop, with no
// host round trip for device maps. The GL texture is registered with CUDA once per size
// (re-registered on resize); each upload maps it on the given stream, writes RGBA8 texels into
// a surface object with a colormap kernel (the same tables and value->index rounding as the CPU
// sink, so both give identical texels) and unmaps it on the stream. No per-frame allocation and
// no device synchronisation.
// Thread rules: main (GL) thread only; the GL context must be current and belong to the CUDA
// device in use (cudaGraphicsGLRegisterImage fails otherwise).
#pragma once

#include <memory>

#include "render/heatmap_sink.h"

namespace corrtrack {

// Takes device maps (MapView::space == kDevice; the GPU pipeline's path) and host maps (one
// cudaMemcpy2DAsync into a device staging buffer, then the same kernel: today's tracker hands
// host maps to the GUI). Construct only when cuda_available().
std::unique_ptr<HeatmapSink> make_cuda_heatmap_sink();

// The GUI's factory: the CUDA sink when cuda_available(), otherwise the CPU sink.
std::unique_ptr<HeatmapSink> make_heatmap_sink();

}  // namespace corrtrack
