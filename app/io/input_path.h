// What an input string names before anything is opened: a file, a URL (credentials redacted
// for messages), a V4L2 camera, an image sequence (a printf pattern, or a folder in OTB layout
// or of numbered images), and the numbers an image sequence runs over on disk.
// Thread rules: plain functions; they read the file system only.
#pragma once

#include <string>

#include "app/io/frame_source.h"

namespace corrtrack {

struct ResolvedInput {
    SourceKind kind = SourceKind::kFile;
    std::string url;      // what libav opens
    std::string display;  // short name for description()
};

// Settles o.kind (kAuto) and what to open; false with a message for the user.
bool resolve_input(const SourceOptions& o, ResolvedInput* out, std::string* error);

// "scheme" of "scheme://..." (lower case), or empty.
std::string url_scheme(const std::string& s);
// The URL with any user:password@ replaced by ***@: messages must not show a password.
std::string redact_url(const std::string& url);

// The first number present for `pattern` and how many consecutive files follow it (image2
// stops at a gap); *beyond_gap counts the matching files after the gap, which image2 will not
// read. False with a message when the pattern is bad or matches nothing.
bool scan_sequence(const std::string& pattern, long* start, long* count, long* beyond_gap, std::string* error);

}  // namespace corrtrack
