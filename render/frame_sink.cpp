#include "render/frame_sink.h"
#include "render/gl_texture.h"

#include <GL/glew.h>

#include <algorithm>

namespace corrtrack {
namespace {

class CpuFrameSink final : public FrameSink {
public:
    ~CpuFrameSink() override {
        if (texture_) glDeleteTextures(1, &texture_);
    }

    void upload_rgb(const std::uint8_t* rgb, Size size) override {
        if (!rgb || size.width <= 0 || size.height <= 0) return;
        if (!texture_) texture_ = create_texture_2d(GL_LINEAR);
        glBindTexture(GL_TEXTURE_2D, texture_);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);  // RGB24 rows need not be 4-byte multiples
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        if (size != size_) {
            size_ = size;
            glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, size.width, size.height, 0, GL_RGB, GL_UNSIGNED_BYTE, rgb);
        } else {
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, size.width, size.height, GL_RGB, GL_UNSIGNED_BYTE, rgb);
        }
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    }

    unsigned texture() const override { return texture_; }
    Size size() const override { return size_; }
    const char* path() const override { return "texture upload"; }

private:
    GLuint texture_ = 0;
    Size size_;
};

}  // namespace

std::unique_ptr<FrameSink> make_cpu_frame_sink() { return std::make_unique<CpuFrameSink>(); }

bool show_frame(FrameSink& sink, const Frame& frame, Stream stream, std::vector<std::uint8_t>* scratch) {
    if (!frame.rgb.empty()) {
        sink.upload_rgb(frame.rgb.data(), frame.size());
        return true;
    }
    if (Nv12Planes planes; sink.takes_device_frames() && device_nv12_planes(frame, &planes))
        return sink.upload_nv12(planes, stream);
    if (!frame.has_host_luma()) return false;
    scratch->resize(frame.luma.size() * 3);
    for (std::size_t i = 0; i < frame.luma.size(); ++i) std::fill_n(&(*scratch)[3 * i], 3, frame.luma[i]);
    sink.upload_rgb(scratch->data(), frame.size());
    return true;
}

bool read_frame_rgb(const FrameSink& sink, std::vector<std::uint8_t>* rgb) {
    const Size s = sink.size();
    if (!sink.texture() || s.width <= 0 || s.height <= 0) return false;
    rgb->resize(static_cast<std::size_t>(s.width) * s.height * 3);
    glBindTexture(GL_TEXTURE_2D, sink.texture());
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGB, GL_UNSIGNED_BYTE, rgb->data());
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    return true;
}

}  // namespace corrtrack
