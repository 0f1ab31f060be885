// Where NCC maps become coloured GL textures for display. The CPU sink colours a host map
// through a lookup table and uploads it with glTexSubImage2D; a CUDA sink (registered texture,
// colormap kernel on the caller's stream) is in heatmap_sink_cuda.h; make_heatmap_sink() picks.
// Thread rules: main (GL) thread only.
#pragma once

#include <memory>

#include "corrtrack/image.h"
#include "render/colormap.h"

namespace corrtrack {

struct HeatmapStyle {
    Colormap colormap = Colormap::kTurbo;
    bool stretch = false;  // false: NCC -1..1 spans the colormap; true: the map's own min..max
};

class HeatmapSink {
public:
    virtual ~HeatmapSink() = default;
    // Colours `map` into the texture; the texture is reallocated only when the map's size
    // changes. An empty map leaves the texture as it was. A CUDA sink would enqueue its
    // colormap kernel on `stream` (the tracker's) between map and unmap of the registered
    // texture; the CPU sink ignores it.
    virtual void upload(const MapView& map, const HeatmapStyle& style, Stream stream) = 0;
    // True when upload() colours device maps in place (CUDA-GL interop working); false means
    // hand it host maps.
    virtual bool takes_device_maps() const { return false; }
    virtual unsigned texture() const = 0;  // GL texture name, 0 before the first upload
    virtual Size size() const = 0;         // size of the last uploaded map
};

// Takes host maps only (MapView::space == kHost; device maps are skipped).
std::unique_ptr<HeatmapSink> make_cpu_heatmap_sink();

}  // namespace corrtrack
