#include "app/io/sequence_pattern.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

namespace corrtrack {

bool parse_sequence_pattern(const std::string& pattern, SequencePattern* out) {
    std::filesystem::path p(pattern);
    *out = SequencePattern{};
    out->dir = p.has_parent_path() ? p.parent_path().string() : ".";
    std::string name = p.filename().string();
    bool found = false;
    std::string* lit = &out->prefix;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] != '%') {
            *lit += name[i];
            continue;
        }
        if (i + 1 < name.size() && name[i + 1] == '%') {
            *lit += '%';
            ++i;
            continue;
        }
        std::size_t j = i + 1;
        int width = 0;
        while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) && width < 100)
            width = width * 10 + (name[j++] - '0');
        if (j >= name.size() || name[j] != 'd' || found || width > 18) return false;
        found = true;
        out->width = width;
        lit = &out->suffix;
        i = j;
    }
    return found;
}

bool is_sequence_pattern(const std::string& path) {
    SequencePattern sp;
    return path.find('%') != std::string::npos && parse_sequence_pattern(path, &sp);
}

std::string SequencePattern::name(long n) const {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%0*ld", width, n);
    return prefix + digits + suffix;
}

bool SequencePattern::matches(const std::string& file_name, long* n) const {
    const std::size_t fixed = prefix.size() + suffix.size();
    if (file_name.size() <= fixed || file_name.compare(0, prefix.size(), prefix) != 0 ||
        file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    const std::string mid = file_name.substr(prefix.size(), file_name.size() - fixed);
    if (mid.size() > 15 ||
        !std::all_of(mid.begin(), mid.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
        return false;
    const long v = std::stol(mid);
    if (name(v) != file_name) return false;
    if (n) *n = v;
    return true;
}

}  // namespace corrtrack
