// Target boxes as the user gives them: "x,y,w,h" on the command line (--box, repeatable) and box
// files (--box-file, or INPUT.box next to the input, as the bundled sample carries its target).
// Used by track, bench --e2e and gui. OTB ground truth (1-based, NaN rows) is app/eval/otb.*.
// Thread rules: stateless.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "app/track/types.h"

namespace corrtrack {

// "x,y,w,h" (commas, spaces, tabs or semicolons). False + *error when malformed.
bool parse_box(const std::string& text, BoxF* box, std::string* error);
// Every text through parse_box, appended to *boxes in order; false + *error at the first bad one.
bool parse_boxes(const std::vector<std::string>& texts, std::vector<BoxF>* boxes, std::string* error);

// "<input minus extension>.box" next to the input when that file exists (how the bundled
// sample carries its default target), else "".
std::string default_box_file(const std::string& input);
// The box file a command reads: the given one (--box-file), else with no --box boxes the
// input's default_box_file, else "" (none).
std::string box_file_to_read(const std::string& given, const std::string& input, bool have_boxes);

// One x,y,w,h per line, '#' starts a comment. False + *error when unreadable, malformed or empty.
// At most kMaxBoxFileBytes are read (a box file is small; /dev/zero is not one).
constexpr std::size_t kMaxBoxFileBytes = 1 << 20;
bool read_box_file(const std::string& path, std::vector<BoxF>* boxes, std::string* error);
// The same from text already read; `name` names it in messages.
bool parse_box_text(const std::string& text, const std::string& name, std::vector<BoxF>* boxes, std::string* error);

}  // namespace corrtrack
