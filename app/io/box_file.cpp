#include "app/io/box_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "app/io/output_file.h"

namespace corrtrack {

bool parse_box(const std::string& text, BoxF* box, std::string* error) {
    std::string s = text;
    std::replace_if(
        s.begin(), s.end(), [](char c) { return c == ',' || c == '\t' || c == ';'; }, ' ');
    std::istringstream in(s);
    double v[4];
    const std::string shown = text.size() > 80 ? text.substr(0, 80) + "..." : text;
    for (double& x : v)
        if (!(in >> x)) {
            if (error) *error = "box '" + shown + "' is not x,y,w,h";
            return false;
        }
    std::string rest;
    if (in >> rest || !std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]) || !std::isfinite(v[3])) {
        if (error) *error = "box '" + shown + "' is not x,y,w,h";
        return false;
    }
    *box = {v[0], v[1], v[2], v[3]};
    return true;
}

bool parse_boxes(const std::vector<std::string>& texts, std::vector<BoxF>* boxes, std::string* error) {
    for (const std::string& s : texts) {
        BoxF b;
        if (!parse_box(s, &b, error)) return false;
        boxes->push_back(b);
    }
    return true;
}

std::string default_box_file(const std::string& input) {
    std::filesystem::path p(input);
    p.replace_extension(".box");
    std::error_code ec;
    return std::filesystem::is_regular_file(p, ec) ? p.string() : std::string();
}

std::string box_file_to_read(const std::string& given, const std::string& input, bool have_boxes) {
    if (!given.empty()) return given;
    return have_boxes ? std::string() : default_box_file(input);
}

bool read_box_file(const std::string& path, std::vector<BoxF>* boxes, std::string* error) {
    std::string text;
    switch (read_text_file(path, kMaxBoxFileBytes, &text)) {
    case TextRead::kOk: break;
    case TextRead::kTooLarge:
        *error =
            "box file '" + path + "' is larger than " + std::to_string(kMaxBoxFileBytes) + " bytes: not a box file";
        return false;
    case TextRead::kFailed: *error = "cannot read box file '" + path + "'"; return false;
    }
    return parse_box_text(text, path, boxes, error);
}

bool parse_box_text(const std::string& text, const std::string& name, std::vector<BoxF>* boxes, std::string* error) {
    std::istringstream in(text);
    std::string line;
    const std::size_t before = boxes->size();
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        BoxF b;
        if (!parse_box(line, &b, error)) {
            *error = name + ": " + *error;
            return false;
        }
        boxes->push_back(b);
    }
    if (boxes->size() == before) {
        *error = "box file '" + name + "' holds no box";
        return false;
    }
    return true;
}

}  // namespace corrtrack
