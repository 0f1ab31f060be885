#include "app/cli/output_paths.h"

#include <filesystem>
#include <system_error>

#include "app/io/output_file.h"
#include "app/io/sequence_pattern.h"

namespace corrtrack {
namespace fs = std::filesystem;

namespace {

enum class Kind { kFile, kPattern, kFolder };

struct Resolved {
    const NamedPath* named = nullptr;
    Kind kind = Kind::kFile;
    fs::path file;  // kFile: the resolved path; kPattern, kFolder: the resolved folder
    SequencePattern sp;
    bool device = false;  // an output written in place (/dev/null, /dev/stdout, a FIFO)
};

fs::path resolve(const std::string& path) {
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    if (ec) abs = path;
    fs::path r = fs::weakly_canonical(abs, ec);
    return ec ? abs.lexically_normal() : r;
}

Resolved resolve_named(const NamedPath& n, bool input) {
    Resolved r;
    r.named = &n;
    std::error_code ec;
    const fs::file_status st = fs::status(n.path, ec);
    if ((input || n.pattern_ok) && !fs::exists(st) && is_sequence_pattern(n.path)) {
        r.kind = Kind::kPattern;
        parse_sequence_pattern(n.path, &r.sp);
        r.file = resolve(r.sp.dir);
    } else if (input && fs::is_directory(st)) {
        r.kind = Kind::kFolder;
        r.file = resolve(n.path);
    } else {
        r.file = resolve(n.path);
        r.device = !input && is_device_path(n.path);  // /dev/stdout also when it is a file
    }
    return r;
}

bool same_file(const fs::path& a, const fs::path& b) {
    if (a == b) return true;
    std::error_code ec;
    return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);  // hard links
}

// Some existing file in `dir` that `want` matches (and `also`, when given), or "".
std::string existing_match(const fs::path& dir, const SequencePattern* want, const SequencePattern* also) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if ((!want || want->matches(name)) && (!also || also->matches(name)) && !it->is_directory(ec))
            return (dir / name).string();
    }
    return {};
}

// The path of `in` that output `out` would overwrite, or "".
std::string overwritten(const Resolved& out, const Resolved& in) {
    std::error_code ec;
    if (out.kind == Kind::kFile) {
        switch (in.kind) {
        case Kind::kFile: return same_file(out.file, in.file) ? in.file.string() : "";
        case Kind::kPattern:
            return out.file.parent_path() == in.file && in.sp.matches(out.file.filename().string()) ? out.file.string()
                                                                                                    : "";
        case Kind::kFolder:
            if (out.file == in.file) return in.file.string();
            return out.file.parent_path() == in.file && fs::exists(out.file, ec) ? out.file.string() : "";
        }
    }
    // An output pattern.
    switch (in.kind) {
    case Kind::kFile:
        return in.file.parent_path() == out.file && out.sp.matches(in.file.filename().string()) ? in.file.string() : "";
    case Kind::kPattern:
        if (out.file != in.file) return {};
        if (out.sp.prefix == in.sp.prefix && out.sp.suffix == in.sp.suffix) return in.named->path;
        return existing_match(in.file, &in.sp, &out.sp);
    case Kind::kFolder: return out.file == in.file ? existing_match(in.file, &out.sp, nullptr) : "";
    }
    return {};
}

}  // namespace

bool check_output_paths(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                        std::string* error) {
    std::vector<Resolved> in, out;
    for (const NamedPath& n : inputs) {
        if (n.path.empty()) continue;
        in.push_back(resolve_named(n, true));
        // An OTB folder reads its images from img/ as well.
        if (in.back().kind == Kind::kFolder) {
            std::error_code ec;
            const fs::path img = fs::path(n.path) / "img";
            if (fs::is_directory(img, ec)) {
                Resolved r = in.back();
                r.file = resolve(img.string());
                in.push_back(r);
            }
        }
    }
    for (const NamedPath& n : outputs)
        if (!n.path.empty()) out.push_back(resolve_named(n, false));
    for (const Resolved& o : out) {
        for (const Resolved& i : in) {
            const std::string hit = overwritten(o, i);
            if (hit.empty()) continue;
            // Name the file hit only when it is not simply the input itself.
            const bool same_name = hit == o.named->path || hit == i.named->path || hit == i.file.string();
            *error = o.named->role + " '" + o.named->path + "' would overwrite " + i.named->role + " '" +
                     i.named->path + "'" + (same_name ? "" : " (" + hit + ")") + "; choose another output path";
            return false;
        }
    }
    for (std::size_t a = 0; a < out.size(); ++a) {
        for (std::size_t b = a + 1; b < out.size(); ++b) {
            const Resolved &x = out[a], &y = out[b];
            bool clash = false;
            if (x.kind == Kind::kFile && y.kind == Kind::kFile)
                clash = !x.device && !y.device && same_file(x.file, y.file);
            else if (x.kind == Kind::kPattern && y.kind == Kind::kPattern)
                clash = x.file == y.file && x.sp.prefix == y.sp.prefix && x.sp.suffix == y.sp.suffix;
            else
                clash = !overwritten(x.kind == Kind::kPattern ? y : x, x.kind == Kind::kPattern ? x : y).empty();
            if (clash) {
                *error = x.named->role + " '" + x.named->path + "' and " + y.named->role + " '" + y.named->path +
                         "' would write the same file; give each output its own path";
                return false;
            }
        }
    }
    return true;
}

}  // namespace corrtrack
