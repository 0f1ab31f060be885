// Before a run: no output may overwrite an input (the video or image sequence, an OTB folder's
// files such as its ground truth, a box file) or another output. Paths are compared after
// resolving symlinks, "..", and hard links; an image pattern ("out/%05d.png") stands for every
// file it names.
// Thread rules: plain functions.
#pragma once

#include <string>
#include <vector>

namespace corrtrack {

struct NamedPath {
    std::string path;
    std::string role;         // how the message names it: "the input", "--box-file", "--csv"
    bool pattern_ok = false;  // a printf pattern here means numbered files (image2)
};

// A folder among `inputs` protects every file already in it (an OTB folder's ground truth and
// attributes) and its img/ images. False + *error naming both paths on a conflict; the CLI
// reports it as a usage error (exit 2). Devices (/dev/null, /dev/stdout) may be shared by
// several outputs.
bool check_output_paths(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs,
                        std::string* error);

}  // namespace corrtrack
