#include "render/heatmap_sink.h"
#include "render/gl_texture.h"

#include <GL/glew.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace corrtrack {
namespace {

class CpuHeatmapSink final : public HeatmapSink {
public:
    ~CpuHeatmapSink() override {
        if (texture_) glDeleteTextures(1, &texture_);
    }

    void upload(const MapView& map, const HeatmapStyle& style, Stream) override {
        if (map.width <= 0 || map.height <= 0 || !map.data || map.space != MemorySpace::kHost) return;
        float lo = -1, hi = 1;
        if (style.stretch) {
            lo = hi = map.row(0)[0];
            for (int y = 0; y < map.height; ++y)
                for (int x = 0; x < map.width; ++x) {
                    lo = std::min(lo, map.row(y)[x]);
                    hi = std::max(hi, map.row(y)[x]);
                }
        }
        const float k = hi > lo ? 255.0f / (hi - lo) : 0.0f;
        const ColormapLut& lut = colormap_lut(style.colormap);
        rgba_.resize(static_cast<std::size_t>(map.width) * map.height * 4);
        std::uint8_t* out = rgba_.data();
        for (int y = 0; y < map.height; ++y) {
            const float* row = map.row(y);
            for (int x = 0; x < map.width; ++x, out += 4) {
                const float v = std::isfinite(row[x]) ? (row[x] - lo) * k : 0.0f;
                const auto& c = lut[static_cast<int>(std::clamp(v + 0.5f, 0.0f, 255.0f))];
                std::copy(c.begin(), c.end(), out);
            }
        }
        if (!texture_) texture_ = create_texture_2d(GL_NEAREST);
        glBindTexture(GL_TEXTURE_2D, texture_);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        if (map.size() != size_) {
            size_ = map.size();
            glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, size_.width, size_.height, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                         rgba_.data());
        } else {
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, size_.width, size_.height, GL_RGBA, GL_UNSIGNED_BYTE, rgba_.data());
        }
    }

    unsigned texture() const override { return texture_; }
    Size size() const override { return size_; }

private:
    GLuint texture_ = 0;
    Size size_;
    std::vector<std::uint8_t> rgba_;
};

}  // namespace

std::unique_ptr<HeatmapSink> make_cpu_heatmap_sink() { return std::make_unique<CpuHeatmapSink>(); }

}  // namespace corrtrack
