#include "render/screenshot.h"

#include <GL/glew.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <vector>

#include <stb_image_write.h>

namespace corrtrack {

bool save_back_buffer_png(const std::string& path, Size size, std::string* error) {
    if (size.width <= 0 || size.height <= 0) {
        *error = "nothing to save: the window has no pixels";
        return false;
    }
    const std::size_t row = static_cast<std::size_t>(size.width) * 3;
    std::vector<std::uint8_t> pixels(row * size.height);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, size.width, size.height, GL_RGB, GL_UNSIGNED_BYTE, pixels.data());
    if (const GLenum e = glGetError(); e != GL_NO_ERROR) {
        *error = "glReadPixels failed (GL error " + std::to_string(e) + ")";
        return false;
    }
    // GL's rows run bottom-up, PNG's top-down.
    for (int y = 0; y < size.height / 2; ++y)
        std::swap_ranges(pixels.begin() + row * y, pixels.begin() + row * (y + 1),
                         pixels.begin() + row * (size.height - 1 - y));
    errno = 0;
    if (!stbi_write_png(path.c_str(), size.width, size.height, 3, pixels.data(), static_cast<int>(row))) {
        *error = "cannot write '" + path + "'" + (errno ? std::string(": ") + std::strerror(errno) : "");
        return false;
    }
    return true;
}

}  // namespace corrtrack
