// libav's log, captured for messages: the last error-level lines logged on each thread, because
// an error code alone says "Invalid data" where the log says why ("moov atom not found").
// Everything is still forwarded to libav's default logger, so av_log_set_level decides what is
// printed. Also the one-time libav set-up (the callback, libavdevice's inputs).
// Thread rules: the captured lines are per thread (thread_local); init_libav_once may be called
// from any thread.
#pragma once

#include <string>

namespace corrtrack {

// Installs the log callback and registers libavdevice (v4l2); the first call does it.
void init_libav_once();

// Forgets this thread's captured lines: call before the libav call whose reason matters.
void clear_av_log();
const std::string& last_av_log();      // "" when nothing was logged since clear_av_log()
const std::string& previous_av_log();  // the line before it: a failing hwaccel's own reason

// " (detail)" from the last logged line when it adds something to already_said, else "".
std::string log_detail(const std::string& already_said);

// "file.cpp:123" of a __FILE__ and __LINE__, for messages that point at the failing call.
std::string code_location(const char* file, int line);

// "'name': call failed: reason (detail) (file.cpp:line)": a libav call failed in a way the
// user cannot cause, so the message names the call and where it is.
std::string av_call_error(const std::string& name, int ret, const char* call, const char* file, int line);

}  // namespace corrtrack
