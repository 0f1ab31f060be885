// libav log capture; see av_log.h.
#include "app/io/av_log.h"

#include "app/io/libav_handles.h"

extern "C" {
#include <libavdevice/avdevice.h>
#include <libavutil/log.h>
}

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace corrtrack {
namespace {

thread_local std::string t_last_av_log;
thread_local std::string t_previous_av_log;

void capture_av_log(void* avcl, int level, const char* fmt, va_list args) {
    if (level <= AV_LOG_ERROR && fmt) {
        va_list copy;
        va_copy(copy, args);
        char line[512];
        std::vsnprintf(line, sizeof line, fmt, copy);
        va_end(copy);
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '.')) text.pop_back();
        if (!text.empty()) {
            t_previous_av_log = std::move(t_last_av_log);
            t_last_av_log = text;
        }
    }
    av_log_default_callback(avcl, level, fmt, args);
}

}  // namespace

void init_libav_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        av_log_set_callback(capture_av_log);
        avdevice_register_all();
    });
}

// Only the last line: the previous one may be a hwaccel's reason that decode.c's "Failed
// setup" line, logged after it, hides.
void clear_av_log() { t_last_av_log.clear(); }
const std::string& last_av_log() { return t_last_av_log; }
const std::string& previous_av_log() { return t_previous_av_log; }

std::string log_detail(const std::string& already_said) {
    const std::string& d = t_last_av_log;
    if (d.empty() || already_said.find(d) != std::string::npos || d.find(already_said) != std::string::npos) return {};
    return " (" + d + ")";
}

std::string code_location(const char* file, int line) {
    const char* slash = std::strrchr(file, '/');
    return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}

std::string av_call_error(const std::string& name, int ret, const char* call, const char* file, int line) {
    const std::string what = av_error_string(ret);
    return "'" + name + "': " + call + " failed: " + what + log_detail(what) + " (" + code_location(file, line) + ")";
}

}  // namespace corrtrack
