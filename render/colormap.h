// Colormaps for NCC heatmaps (turbo, grey, viridis) as 256-entry RGBA lookup tables.
// Thread rules: the tables are built once on first use (thread-safe static init), read-only after.
#pragma once

#include <array>
#include <cstdint>

namespace corrtrack {

enum class Colormap { kTurbo, kGrey, kViridis };
constexpr Colormap kColormaps[] = {Colormap::kTurbo, Colormap::kGrey, Colormap::kViridis};

const char* to_string(Colormap c);

// Entry i is the colour of t = i / 255, packed as bytes R, G, B, A (A = 255) in memory order,
// so a row of entries can go straight to glTexSubImage2D as GL_RGBA / GL_UNSIGNED_BYTE.
using ColormapLut = std::array<std::array<std::uint8_t, 4>, 256>;
const ColormapLut& colormap_lut(Colormap c);

}  // namespace corrtrack
