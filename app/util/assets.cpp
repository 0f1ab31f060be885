#include "app/util/assets.h"

#include <filesystem>
#include <system_error>
#include <vector>

#ifndef CORRTRACK_DATA_RELDIR
#define CORRTRACK_DATA_RELDIR "../share/corrtrack"  // bin/ to share/corrtrack/ of an install
#endif

namespace corrtrack {
namespace {

std::vector<std::filesystem::path> asset_dirs() {
    std::vector<std::filesystem::path> dirs;
    const std::string exe = executable_dir();
    if (exe.empty()) return dirs;
    const std::filesystem::path base(exe);
    for (const char* rel : {CORRTRACK_DATA_RELDIR, "../share/corrtrack"}) {
        const std::filesystem::path d = (base / rel).lexically_normal();
        bool seen = false;
        for (const auto& e : dirs) seen = seen || e == d;
        if (!seen) dirs.push_back(d);
    }
    return dirs;
}

}  // namespace

std::string executable_dir() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.parent_path().string();
}

std::string find_asset(const std::string& name) {
    for (const auto& d : asset_dirs()) {
        std::error_code ec;
        const std::filesystem::path p = d / name;
        if (std::filesystem::is_regular_file(p, ec)) return p.string();
    }
    return {};
}

std::string asset_search_path() {
    std::string s;
    for (const auto& d : asset_dirs()) s += (s.empty() ? "" : ":") + d.string();
    return s;
}

}  // namespace corrtrack
