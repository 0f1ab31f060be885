// The NCC map of one template from its exact numerator map and the searched image: window
// sums by sliding column sums (no integral tables: a 1080p frame's two 64-bit tables are
// 33 MB written and read again), then ncc_from_sums, the formula every kernel shares.
// Thread rules: reentrant; large maps use the work pool (corrtrack/work_pool.h).
#pragma once

#include <cstdint>

#include "corrtrack/image.h"
#include "cpu/integral.h"

namespace corrtrack {

// out(x, y) = NCC of the window of size templ at (x, y) of image, for the valid positions;
// sit[y * sit_pitch + x] is the window's exact sum of template x image.
void ncc_epilogue(ImageView image, Size templ, const TemplateStats& ts, const std::uint32_t* sit, std::size_t sit_pitch,
                  MapView out);

}  // namespace corrtrack
