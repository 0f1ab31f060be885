// Fuzz target: box files (--box-file, INPUT.box) and single --box values. Every box that
// parses is finite; a failure always says why.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace corrtrack;
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<BoxF> boxes;
    std::string error;
    if (!parse_box_text(text, "fuzz.box", &boxes, &error)) {
        if (error.empty()) std::abort();
    }
    for (const BoxF& b : boxes)
        if (!std::isfinite(b.x) || !std::isfinite(b.y) || !std::isfinite(b.width) || !std::isfinite(b.height))
            std::abort();
    BoxF one;
    if (parse_box(text, &one, &error) && !std::isfinite(one.x + one.y + one.width + one.height)) std::abort();
    return 0;
}
