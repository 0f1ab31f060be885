// An 8-bit RGB colour and the turbo colormap, shared by the annotated video (app/io/annotate.*)
// and the GUI's heatmap colour tables (render/colormap.*), so both show the same colours
// without render/ depending on app/io/ for them.
// Thread rules: pure functions.
#pragma once

#include <cstdint>

namespace corrtrack {

struct Rgb {
    std::uint8_t r, g, b;
};

// The turbo colormap at t in [0, 1] (clamped).
Rgb turbo(float t);

}  // namespace corrtrack
