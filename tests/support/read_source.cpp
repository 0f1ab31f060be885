#include "tests/support/read_source.h"

namespace corrtrack {

ReadAll read_all(FrameSource& source, bool keep_frames) {
    ReadAll r;
    Frame f;
    while ((r.status = source.read(f)) == ReadStatus::kFrame) {
        ++r.count;
        r.last_pts = f.pts;
        r.last_size = f.size();
        if (keep_frames) r.frames.push_back(f);
    }
    r.error = source.error();
    return r;
}

std::unique_ptr<FrameSource> open_source(const std::string& input, std::string* error, bool want_rgb) {
    SourceOptions o;
    o.input = input;
    o.want_rgb = want_rgb;
    return FrameSource::open(o, error);
}

ReadAll read_file(const std::string& input) {
    std::string error;
    SourceOptions o;
    o.input = input;
    auto source = FrameSource::open(o, &error);
    if (!source) {
        ReadAll r;
        r.error = error;
        return r;
    }
    return read_all(*source, /*keep_frames=*/false);
}

double luma_error(const Frame& f, const SyntheticScene& scene, Range range) {
    std::vector<std::uint8_t> truth;
    scene.render(static_cast<int>(f.index), truth);
    if (range == Range::kLimited)
        for (std::uint8_t& v : truth) v = limited_y(v);
    const auto& s = scene.spec();
    return mean_abs_diff(f.luma.data(), static_cast<std::size_t>(f.width), truth.data(),
                         static_cast<std::size_t>(s.width), s.width, s.height);
}

SourceOptions decode_options(const std::string& input, DecodeMode mode, bool want_rgb, bool want_host_luma,
                             Stream stream) {
    SourceOptions o;
    o.input = input;
    o.decode = mode;
    o.want_rgb = want_rgb;
    o.want_host_luma = want_host_luma;
    o.cuda_stream = stream;
    return o;
}

}  // namespace corrtrack
