// Input path resolution and image sequence scanning; see input_path.h.
#include "app/io/input_path.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include "app/io/sequence_pattern.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string escape_percent(const std::string& s) {
    std::string out;
    for (char c : s) {
        out += c;
        if (c == '%') out += '%';
    }
    return out;
}

bool is_image_extension(std::string ext) {
    ext = lower(ext);
    static const char* const kExts[] = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".webp"};
    return std::any_of(std::begin(kExts), std::end(kExts), [&](const char* e) { return ext == e; });
}

// The printf pattern of the largest group of numbered images in dir (name = prefix + digits +
// extension), or empty when there is none.
std::string find_numbered_images(const fs::path& dir) {
    struct Group {
        long files = 0;
        std::set<std::size_t> widths;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        std::string ext = it->path().extension().string();
        if (!is_image_extension(ext)) continue;
        std::string stem = it->path().stem().string();
        std::size_t d = stem.size();
        while (d > 0 && std::isdigit(static_cast<unsigned char>(stem[d - 1]))) --d;
        if (d == stem.size() || stem.size() - d > 15) continue;
        Group& g = groups[{stem.substr(0, d), ext}];
        ++g.files;
        g.widths.insert(stem.size() - d);
    }
    const std::pair<const std::pair<std::string, std::string>, Group>* best = nullptr;
    for (const auto& g : groups)
        if (!best || g.second.files > best->second.files) best = &g;
    if (!best) return {};
    // One width for all files: zero padded (or all numbers happen to have that many digits,
    // which the padded pattern matches as well). Mixed widths: unpadded numbers.
    std::string conv =
        best->second.widths.size() == 1 ? "%0" + std::to_string(*best->second.widths.begin()) + "d" : std::string("%d");
    return (dir / (escape_percent(best->first.first) + conv + escape_percent(best->first.second))).string();
}

bool resolve_folder(const std::string& input, ResolvedInput* out, std::string* error) {
    fs::path dir(input);
    std::error_code ec;
    std::string pattern;
    if (fs::is_directory(dir / "img", ec)) pattern = find_numbered_images(dir / "img");
    if (pattern.empty()) {
        for (const char* name : {"video.mkv", "video.mp4", "video.avi"}) {
            if (fs::is_regular_file(dir / name, ec)) {
                out->kind = SourceKind::kFile;
                out->url = (dir / name).string();
                return true;
            }
        }
        pattern = find_numbered_images(dir);
    }
    if (pattern.empty()) {
        *error = "cannot open '" + input + "': the folder has no numbered images (img/00001.jpg ...) and no video.mkv";
        return false;
    }
    out->kind = SourceKind::kImageSequence;
    out->url = pattern;
    return true;
}

}  // namespace

std::string url_scheme(const std::string& s) {
    auto p = s.find("://");
    if (p == std::string::npos || p == 0) return {};
    for (std::size_t i = 0; i < p; ++i) {
        char c = s[i];
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return {};
    }
    return lower(s.substr(0, p));
}

std::string redact_url(const std::string& url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return url;
    auto host_start = scheme_end + 3;
    auto path_start = url.find('/', host_start);
    auto at = url.rfind('@', path_start == std::string::npos ? url.size() : path_start);
    if (at == std::string::npos || at < host_start) return url;
    return url.substr(0, host_start) + "***@" + url.substr(at + 1);
}

bool scan_sequence(const std::string& pattern, long* start, long* count, long* beyond_gap, std::string* error) {
    SequencePattern sp;
    if (!parse_sequence_pattern(pattern, &sp)) {
        *error = "'" + pattern + "' is not an image sequence pattern (expected one %d or %05d)";
        return false;
    }
    std::error_code ec;
    std::set<long> numbers;
    for (fs::directory_iterator it(sp.dir, ec), end; !ec && it != end; it.increment(ec)) {
        long n = 0;
        if (sp.matches(it->path().filename().string(), &n)) numbers.insert(n);
    }
    if (ec) {
        *error = "cannot open image sequence '" + pattern + "': " + ec.message();
        return false;
    }
    if (numbers.empty()) {
        *error = "cannot open image sequence '" + pattern + "': no file matches the pattern";
        return false;
    }
    *start = *numbers.begin();
    long n = *start;
    while (numbers.count(n)) ++n;
    *count = n - *start;
    *beyond_gap = static_cast<long>(numbers.size()) - *count;
    return true;
}

bool resolve_input(const SourceOptions& o, ResolvedInput* out, std::string* error) {
    const std::string& in = o.input;
    if (in.empty()) {
        *error = "no input given";
        return false;
    }
    std::error_code ec;
    fs::path as_path(in);
    std::string name = as_path.filename().string();
    if (name.empty()) name = as_path.parent_path().filename().string();
    out->display = name.empty() ? in : name;
    out->url = in;

    SourceKind kind = o.kind;
    std::string scheme = url_scheme(in);
    if (kind == SourceKind::kAuto) {
        if (starts_with(in, "/dev/video"))
            kind = SourceKind::kCamera;
        else if (!scheme.empty() && scheme != "file")
            kind = SourceKind::kUrl;
        else if (fs::is_directory(in, ec))
            kind = SourceKind::kImageSequence;
        else if (in.find('%') != std::string::npos && !fs::exists(in, ec))
            kind = SourceKind::kImageSequence;
        else
            kind = SourceKind::kFile;
    }
    out->kind = kind;
    switch (kind) {
    case SourceKind::kCamera: out->display = in; return true;
    case SourceKind::kUrl: out->display = redact_url(in); return true;
    case SourceKind::kFile:
        if (scheme == "file") out->url = in.substr(7);
        if (fs::is_directory(out->url, ec)) return resolve_folder(out->url, out, error);
        return true;
    case SourceKind::kImageSequence: {
        if (fs::is_directory(in, ec)) return resolve_folder(in, out, error);
        // "car4/img/%05d.jpg" says more than "%05d.jpg".
        fs::path parent = as_path.parent_path();
        fs::path shown = parent.filename() / as_path.filename();
        if (parent.filename() == "img" && parent.has_parent_path()) shown = parent.parent_path().filename() / shown;
        out->display = shown.string();
        return true;
    }
    case SourceKind::kAuto: break;
    }
    *error = "unknown input kind";
    return false;
}

std::vector<std::string> input_paths(const std::string& input) {
    SourceOptions o;
    o.input = input;
    ResolvedInput r;
    std::string error;
    if (input.empty() || !resolve_input(o, &r, &error)) return {input};
    if (r.kind != SourceKind::kFile && r.kind != SourceKind::kImageSequence) return {};
    if (r.url.rfind("pipe:", 0) == 0 || r.url == "-") return {};
    std::vector<std::string> paths{r.url};
    std::error_code ec;
    if (r.url != input && fs::is_directory(input, ec)) paths.push_back(input);
    return paths;
}

}  // namespace corrtrack
