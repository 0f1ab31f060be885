#include "tests/support/egl_context.h"

#include <GL/gl.h>

#include <cstdio>

namespace corrtrack::test {

EglContext::EglContext(bool want_cuda_device) {
    ok_ = egl_.open(16, 16, &error, want_cuda_device ? EglOffscreen::Devices::kCudaOnly : EglOffscreen::Devices::kAny);
    if (ok_) std::printf("%s\n", egl_.describe().c_str());
}

std::vector<std::uint8_t> read_texture(unsigned texture, Size size) {
    std::vector<std::uint8_t> rgba(static_cast<std::size_t>(size.width) * size.height * 4, 0xCD);
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    return rgba;
}

}  // namespace corrtrack::test
