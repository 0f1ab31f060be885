// Fuzz target: OTB ground truth and the metrics computed over it (the ground truth scored
// against itself, shifted). Rates stay within [0, 1].
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/eval/otb.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace corrtrack;
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<std::optional<BoxF>> truth;
    std::string error;
    if (!parse_groundtruth(text, "fuzz.txt", &truth, &error)) {
        if (error.empty()) std::abort();
        return 0;
    }
    std::vector<BoxF> boxes;
    for (const auto& t : truth) boxes.push_back(t ? BoxF{t->x + 3, t->y - 2, t->width, t->height} : BoxF{});
    const SequenceMetrics m = score_sequence(boxes, truth);
    for (double r : m.success)
        if (!(r >= 0 && r <= 1)) std::abort();
    for (double r : m.precision)
        if (!(r >= 0 && r <= 1)) std::abort();
    return 0;
}
