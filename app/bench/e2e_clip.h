// What the e2e bench's --targets and --streams passes need to know about a clip before they
// run: its size, rate and length, its first frame's luma (where targets go) and whether NVDEC
// decodes it for this tracker kernel.
// Thread rules: plain values; probe_e2e_clip runs on the caller's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

struct E2eClip {
    std::string path, name;  // name: the file name, for the tables
    Size size;
    double fps = 0;                        // nominal (0 when unknown)
    long frames = -1;                      // declared (-1 when unknown)
    std::vector<std::uint8_t> first_luma;  // size.width x size.height, rows packed
    bool nvdec = false;                    // NVDEC decodes it (a GPU tracker with this kernel)
    std::string nvdec_note;                // why not, when not
};

// False + *error when the clip cannot be opened or has no frame.
bool probe_e2e_clip(const std::string& path, const std::string& kernel, E2eClip* clip, std::string* error);

}  // namespace corrtrack
