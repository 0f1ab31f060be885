#include "render/gui_stats.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace corrtrack {
namespace {

// Nearest-rank percentile of `v` (copied: sorted here), 0 when empty.
double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

nlohmann::json spread(const std::vector<double>& v) {
    return {{"median", percentile(v, 50)},
            {"p95", percentile(v, 95)},
            {"max", v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())}};
}

}  // namespace

void LoopStats::add(double track_ms, double draw_ms) {
    track_ms_.push_back(track_ms);
    draw_ms_.push_back(draw_ms);
}

std::size_t LoopStats::warmup() const { return std::min<std::size_t>(10, track_ms_.size() / 4); }

nlohmann::json LoopStats::summary(long frames_done, nlohmann::json fields) const {
    const std::size_t skip = warmup();
    std::vector<double> frame, track(track_ms_.begin() + static_cast<long>(skip), track_ms_.end()),
        draw(draw_ms_.begin() + static_cast<long>(skip), draw_ms_.end());
    double total_ms = 0, track_total = 0;
    for (std::size_t i = 0; i < track.size(); ++i) {
        frame.push_back(track[i] + draw[i]);
        total_ms += frame.back();
        track_total += track[i];
    }
    const double n = static_cast<double>(frame.size());
    fields["frames"] = frames_done;
    fields["drawn"] = track_ms_.size();
    fields["warmup"] = skip;
    fields["measured"] = frame.size();
    fields["seconds"] = total_ms / 1000.0;
    fields["loop_fps"] = total_ms > 0 ? n * 1000.0 / total_ms : 0.0;
    fields["track_fps"] = track_total > 0 ? n * 1000.0 / track_total : 0.0;
    fields["frame_ms"] = spread(frame);
    fields["track_ms"] = spread(track);
    fields["draw_ms"] = spread(draw);
    return fields;
}

bool write_stats(const std::string& path, const nlohmann::json& j) {
    const std::string text = j.dump() + "\n";
    if (path == "-") {
        std::fputs(text.c_str(), stdout);
        std::fflush(stdout);
        return true;
    }
    std::ofstream out(path);
    out << text;
    if (out.flush()) return true;
    std::fprintf(stderr, "corrtrack gui: cannot write the stats '%s'\n", path.c_str());
    return false;
}

}  // namespace corrtrack
