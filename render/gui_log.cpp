// The UI event log and the status-bar message; see gui_log.h.
#include "render/gui_log.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <cmath>

namespace corrtrack {

bool EventLog::open(const std::string& path) {
    close();
    file_ = std::fopen(path.c_str(), "w");
    return file_ != nullptr;
}

void EventLog::close() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
}

void EventLog::log(nlohmann::json ev) {
    if (!file_) return;
    ev["t"] =
        std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start_).count() * 1000) / 1000;
    const std::string line = ev.dump() + "\n";
    std::fputs(line.c_str(), file_);
    std::fflush(file_);  // readers (tests, scripts) follow the file while the GUI runs
}

void StatusLine::set(const std::string& message, bool is_error) {
    text = message;
    error = is_error;
    time = glfwGetTime();
    if (is_error) std::fprintf(stderr, "corrtrack gui: %s\n", message.c_str());
}

nlohmann::json box_json(const BoxF& b) {
    auto r = [](double v) { return std::round(v * 1000) / 1000; };
    return {r(b.x), r(b.y), r(b.width), r(b.height)};
}

}  // namespace corrtrack
