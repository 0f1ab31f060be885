// Writes the seed corpora of the fuzz targets into DIR/<target>/: tiny clips in the containers
// and codecs the app reads (made here with the project's own writer, so no binary is
// committed), box files, ground truth and command lines. Usage: fuzz_make_seeds DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" {
#include <libavutil/log.h>
}

#include "fuzz/fuzz_common.h"
#include "tests/support/synthetic_clip.h"

namespace fs = std::filesystem;
using corrtrack::SyntheticClipSpec;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
    fs::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string args(const std::vector<std::string>& list) {
    std::string s;
    for (std::size_t i = 0; i < list.size(); ++i) s += (i ? std::string(1, '\0') : std::string()) + list[i];
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
        return 2;
    }
    av_log_set_level(AV_LOG_ERROR);
    const fs::path out = argv[1];
    const fs::path tmp = out / "tmp";
    fs::create_directories(tmp);
    SyntheticClipSpec spec;
    spec.width = 64;
    spec.height = 48;
    spec.object_width = 16;
    spec.object_height = 12;
    spec.start_x = 10;
    spec.start_y = 10;
    spec.frames = 4;
    spec.crf = 30;
    // {file, name prefix byte for fuzz_input (picks the extension hint), codec}
    struct Clip {
        const char* file;
        unsigned char hint;
        const char* codec;
    };
    const Clip clips[] = {{"c.mkv", 0, ""}, {"c.mp4", 1, ""},      {"c.avi", 2, ""},    {"c.ts", 3, ""},
                          {"c.mov", 4, ""}, {"m.mkv", 0, "mjpeg"}, {"p.mkv", 0, "png"}, {"g.avi", 2, "mpeg4"}};
    // The bytes of a clip written with `s` as tmp/file; empty (and said) when it cannot be written.
    auto clip_bytes = [&](const SyntheticClipSpec& s, const std::string& file) {
        std::string error;
        const std::string path = (tmp / file).string();
        if (corrtrack::write_synthetic_clip(path, s, &error).empty()) {
            std::fprintf(stderr, "fuzz_make_seeds: %s: %s\n", file.c_str(), error.c_str());
            return std::string();
        }
        return slurp(path);
    };
    int written = 0;
    for (const Clip& c : clips) {
        SyntheticClipSpec s = spec;
        s.codec = c.codec;
        const std::string bytes = clip_bytes(s, c.file);
        if (bytes.empty()) continue;
        put(out / "fuzz_input", c.file, std::string(1, static_cast<char>(c.hint)) + bytes);
        if (c.hint <= 3) put(out / "fuzz_track", c.file, std::string(1, static_cast<char>(c.hint | 0x80)) + bytes);
        ++written;
    }
    // A tall and a wide clip for fuzz_track: the harness's box (half the frame) is then a thin
    // box whose longer side passes the kernels' 256, which once threw on its first search.
    for (const bool tall : {true, false}) {
        SyntheticClipSpec s = spec;
        s.width = tall ? 16 : 520;
        s.height = tall ? 520 : 16;
        s.object_width = tall ? 8 : 200;
        s.object_height = tall ? 200 : 8;
        s.start_x = tall ? 4 : 100;
        s.start_y = tall ? 100 : 4;
        const std::string file = tall ? "tall.mkv" : "wide.mkv";
        const std::string bytes = clip_bytes(s, file);
        if (bytes.empty()) continue;
        put(out / "fuzz_track", file, std::string(1, static_cast<char>(0x80)) + bytes);
        ++written;
    }
    // Single images (image2 writes numbered files from 1).
    SyntheticClipSpec one = spec;
    one.frames = 1;
    for (const char* ext : {"png", "jpg"}) {
        std::string error;
        const std::string pattern = (tmp / (std::string("i%d.") + ext)).string();
        if (corrtrack::write_synthetic_sequence(pattern, one, &error).empty()) continue;
        const unsigned char hint = std::string(ext) == "png" ? 5 : 6;
        put(out / "fuzz_input", std::string("i.") + ext,
            std::string(1, static_cast<char>(hint)) + slurp((tmp / (std::string("i1.") + ext)).string()));
        ++written;
    }
    // Streams cut short (issue 28): a Matroska file 460 bytes short, MP4 and MJPEG cut in half.
    for (const char* file : {"c.mkv", "c.mp4", "m.mkv"}) {
        const std::string bytes = slurp((tmp / file).string());
        if (bytes.size() < 1000) continue;
        const unsigned char hint = std::string(file) == "c.mp4" ? 1 : 0;
        put(out / "fuzz_input", std::string("cut_") + file,
            std::string(1, static_cast<char>(hint)) + bytes.substr(0, bytes.size() - 460));
        put(out / "fuzz_input", std::string("half_") + file,
            std::string(1, static_cast<char>(hint)) + bytes.substr(0, bytes.size() / 2));
        written += 2;
    }
    // Image sequences for fuzz_input's sequence mode (hint 16: seq.png, 17: seq.jpg): whole, an
    // empty image in the middle or at the end, a damaged one, one cut short.
    SyntheticClipSpec three = spec;
    three.frames = 3;
    for (const char* ext : {"png", "jpg"}) {
        std::string error;
        const std::string pattern = (tmp / (std::string("s%d.") + ext)).string();
        if (corrtrack::write_synthetic_sequence(pattern, three, &error).empty()) continue;
        std::vector<std::string> images;
        for (int i = 1; i <= 3; ++i) images.push_back(slurp((tmp / ("s" + std::to_string(i) + "." + ext)).string()));
        const unsigned char hint = std::string(ext) == "png" ? 16 : 17;
        auto join = [&](std::vector<std::string> parts) {
            std::string bytes(1, static_cast<char>(hint));
            for (std::size_t i = 0; i < parts.size(); ++i) bytes += (i ? fuzz::kImageSeparator : "") + parts[i];
            return bytes;
        };
        std::string damaged = images[1];
        for (std::size_t i = damaged.size() / 3; i < damaged.size() * 2 / 3; ++i) damaged[i] = '\0';
        const std::string name = std::string("seq_") + ext;
        put(out / "fuzz_input", name, join(images));
        put(out / "fuzz_input", name + "_empty", join({images[0], "", images[2]}));
        put(out / "fuzz_input", name + "_empty_last", join({images[0], images[1], ""}));
        put(out / "fuzz_input", name + "_damaged", join({images[0], damaged, images[2]}));
        put(out / "fuzz_input", name + "_cut", join({images[0], images[1], images[2].substr(0, images[2].size() / 2)}));
        written += 5;
    }
    put(out / "fuzz_box_file", "one", "252,218,34,92\n");
    put(out / "fuzz_box_file", "many", "# targets\n10 20 30 40\n1.5,2.5,3.5,4.5\r\n7\t8\t9\t10\n");
    put(out / "fuzz_box_file", "bad", "1,2,3\nnan,1,2,3\n1e999,0,1,1\n");
    put(out / "fuzz_groundtruth", "otb", "198,214,34,81\n197,214,34,81\n195,214,34,81\n");
    put(out / "fuzz_groundtruth", "nan", "NaN,NaN,NaN,NaN\n10\t20\t30\t40\n0,0,0,0\n");
    put(out / "fuzz_groundtruth", "odd", "1 2 3 4\r\n\n-5,-5,1e308,2\n");
    put(out / "fuzz_groundtruth", "vot", "11,20,31,20,31,40,11,40\n5\t1\t9\t3\t5\t7\t1\t3\nNaN,1,2,3,4,5,6,7\n");
    put(out / "fuzz_groundtruth", "refused", "10,20,30,40,junk\n5,5,-3,4\n1,2,3,4,5\n");
    const std::vector<std::vector<std::string>> lines = {
        {"track", "clip.mp4", "--box", "252,218,34,92", "--csv", "out.csv", "--json", "out.json"},
        {"track", "seq/img/%05d.jpg", "--box-file", "first_box.txt", "--scales", "3", "--scale-step", "1.04"},
        {"track", "clip.mp4", "-b", "1,2,3,4", "--update", "keyframe", "--keyframe-interval", "5"},
        {"track", "clip.mp4", "--box", "1,2,3,4", "--video", "out/%05d.png", "--otb", "out.txt", "--frames", "10"},
        {"track", "-", "--box", "1,2,3,4", "--read-timeout", "0.5", "--allow-damaged", "--realtime"},
        {"track", "clip.mp4", "--box", "1,2,3,4", "--search-factor", "2.5", "--blend-rate", "0.1", "--anchor", "0.2"},
        {"eval", "sequences", "--sequences", "a,b", "--json", "e.json", "--plot", "e.png", "--results", "r"},
        {"bench", "--kernels", "cpu_fast", "--sizes", "640x480", "--templates", "8,48x24", "--modes", "full"},
        {"bench", "--e2e", "a.mp4,b.mp4", "--e2e-frames", "10", "--json", "x.json"},
        {"kernels"},
        {"track", "--help"},
    };
    int n = 0;
    for (const auto& l : lines) put(out / "fuzz_options", "args" + std::to_string(n++), args(l));
    fs::remove_all(tmp);
    std::printf("fuzz_make_seeds: %d media seeds, %d command lines in %s\n", written, n, out.c_str());
    return written > 0 ? 0 : 1;
}
