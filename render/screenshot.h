// Saves what the window shows: reads the GL back buffer after rendering (before the swap) and
// writes it as a PNG through stb_image_write.
// Thread rules: main (GL) thread only, with the window's context current.
#pragma once

#include <string>

#include "corrtrack/image.h"

namespace corrtrack {

// Reads `size` pixels of the back buffer (RGB, top row first) and writes them to `path`.
bool save_back_buffer_png(const std::string& path, Size size, std::string* error);

}  // namespace corrtrack
