#include "app/bench/options.h"

#include <sstream>

namespace corrtrack::bench {

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!trim(item).empty()) items.push_back(trim(item));
    return items;
}

bool parse_int(const std::string& s, int* v) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *v = std::stoi(s);
    return *v > 0;
}

bool parse_size(const std::string& text, bool square_ok, Size* out) {
    const auto x = text.find_first_of("xX");
    if (x == std::string::npos) {
        int n = 0;
        if (!square_ok || !parse_int(text, &n)) return false;
        *out = {n, n};
        return true;
    }
    return parse_int(text.substr(0, x), &out->width) && parse_int(text.substr(x + 1), &out->height);
}

namespace {

std::string known_kernels() {
    std::string names;
    for (const KernelEntry& e : kernel_registry()) names += std::string(names.empty() ? "" : ", ") + e.name;
    return names;
}

}  // namespace

std::string unknown_kernel_message(const std::string& name, const char* option) {
    std::string msg = std::string(option) + ": unknown kernel '" + name + "' (known: " + known_kernels() + ")";
    if (name == "cpu_opencv") msg += "; cpu_opencv is built only when OpenCV is found";
    return msg;
}

}  // namespace corrtrack::bench
