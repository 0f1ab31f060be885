// `corrtrack cameras [DEVICE...]`: lists the V4L2 cameras (/dev/video*, or the devices given)
// with each one's modes: pixel formats, frame sizes and frame rates, the values that
// --camera-format, --camera-size and --camera-fps take.
#include <cstdio>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/io/camera_modes.h"

namespace corrtrack {
namespace {

// Exit 0 when nothing is found (no camera is not an error); 1 when a device named on the
// command line cannot be listed.
int run_cameras(const std::vector<std::string>& given) {
    const std::vector<std::string> paths = given.empty() ? camera_paths() : given;
    std::vector<CameraDevice> devices;
    bool failed = false;
    for (const std::string& p : paths) {
        devices.push_back(enumerate_camera(p));
        if (!given.empty() && !devices.back().error.empty()) failed = true;
    }
    std::fputs(format_camera_list(devices).c_str(), stdout);
    return failed ? kExitInput : 0;
}

}  // namespace

void register_cameras_command(CLI::App& root, CommandOutcome& outcome) {
    auto devices = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = root.add_subcommand("cameras", "list V4L2 cameras and their modes (format, size, frame rates)");
    cmd->add_option("device", *devices, "devices to list (default: every /dev/video*)");
    cmd->footer("Exit status: 0 listed (also when no camera is found); 1 a device given cannot be listed.");
    cmd->callback([devices, &outcome] {
        if (!outcome.dry_run) outcome.exit_code = run_cameras(*devices);
    });
}

}  // namespace corrtrack
