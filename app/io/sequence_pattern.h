// printf patterns of numbered image files ("img/%05d.jpg"), as FFmpeg's image2 reads and
// writes them: exactly one integer conversion, %% for a literal percent sign.
// Thread rules: plain values and functions.
#pragma once

#include <string>

namespace corrtrack {

struct SequencePattern {
    std::string dir, prefix, suffix;  // prefix/suffix literal (%% already undone)
    int width = 0;                    // minimum digits; zero-padded when > 0

    // The file name of number n (without the folder).
    std::string name(long n) const;
    // Whether `file_name` is one this pattern produces (for some n >= 0); *n gets the number.
    bool matches(const std::string& file_name, long* n = nullptr) const;
};

// False when `pattern` has no integer conversion, more than one, or another conversion.
bool parse_sequence_pattern(const std::string& pattern, SequencePattern* out);
// Whether `path` looks like a pattern (parses as one).
bool is_sequence_pattern(const std::string& path);

}  // namespace corrtrack
