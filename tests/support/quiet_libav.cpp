// Linked into the test binaries that feed libav broken or cut inputs: its own log lines about
// them are expected, so they are silenced for the whole program and the output kept for
// failures (CORRTRACK_TEST_AV_LOG=1 shows them).
#include <cstdlib>

extern "C" {
#include <libavutil/log.h>
}

namespace {

const bool kQuietLibav = [] {
    av_log_set_level(std::getenv("CORRTRACK_TEST_AV_LOG") ? AV_LOG_INFO : AV_LOG_QUIET);
    return true;
}();

}  // namespace
