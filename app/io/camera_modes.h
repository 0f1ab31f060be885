// V4L2 cameras: the modes a device offers (pixel formats, frame sizes, frame rates, through
// VIDIOC_ENUM_FMT / ENUM_FRAMESIZES / ENUM_FRAMEINTERVALS), the mode a user asks for
// (--camera-size, --camera-fps, --camera-format) and the messages when a camera refuses it.
// Enumeration and formatting are split so that the formatting is testable without hardware.
// Thread rules: plain functions; the enumeration opens the device briefly (read-only ioctls).
#pragma once

#include <string>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

// One pixel format at one size, with the frame rates the device lists for it.
struct CameraMode {
    std::string format;         // our name: "mjpeg", "yuyv", "h264", "nv12", ... (see below)
    std::string description;    // the driver's ("Motion-JPEG"); may be empty
    int width = 0, height = 0;  // stepwise/continuous sizes: the largest
    std::vector<double> fps;    // descending; empty when the driver lists none
};

struct CameraDevice {
    std::string path;  // "/dev/video0"
    std::string name;  // the card name ("HD Pro Webcam C920"); empty if unknown
    std::vector<CameraMode> modes;
    std::string error;  // why the modes could not be listed ("" when they were)
};

// What the user asked for; empty / 0 fields mean "the camera's default".
struct CameraRequest {
    std::string size;  // "1920x1080"
    double fps = 0;
    std::string format;  // our name, as for CameraMode::format
    bool empty() const { return size.empty() && !(fps > 0) && format.empty(); }
};

// Checks for the command-line values; false + *error (a sentence for a usage message).
bool parse_camera_size(const std::string& text, int* width, int* height, std::string* error);
bool parse_camera_format(const std::string& text, std::string* name, std::string* error);
constexpr double kMaxCameraFps = 1000;
// The --camera-format names we accept, "mjpeg, yuyv, h264, ..."
std::string camera_format_names();
// What libavdevice's v4l2 input_format option takes for our name ("yuyv" -> "yuyv422",
// "mjpeg" -> "mjpeg"); empty for an unknown name.
std::string v4l2_input_format(const std::string& name);
// Our name for a V4L2 fourcc (V4L2_PIX_FMT_MJPEG -> "mjpeg"); unknown ones as their four
// characters in lower case ("y16 ").
std::string camera_format_name(unsigned fourcc);
// Our name for what libav's v4l2 demuxer delivers: codec "mjpeg"/"h264"/... or, for raw video,
// the pixel format ("yuyv422" -> "yuyv"). Empty when unknown.
std::string camera_format_from_libav(const std::string& codec, const std::string& pix_fmt);

// The request that opens `mode` at its highest listed rate.
CameraRequest request_for(const CameraMode& mode);

// "1920x1080 @ 30 fps mjpeg", "default size", ...: the request for messages.
std::string describe_request(const CameraRequest& request);
// "mjpeg 1920x1080 @ 30, 15 fps"
std::string describe_mode(const CameraMode& mode);
// Device listing for `corrtrack cameras`: one header per device and one line per mode, or
// "no cameras found".
std::string format_camera_list(const std::vector<CameraDevice>& devices);
// The modes as "mjpeg 1920x1080 @ 30 fps; yuyv 640x480 @ 30 fps; ..." (at most `max` modes,
// then "... (N more)"), for refusal messages.
std::string summarize_modes(const CameraDevice& device, std::size_t max = 8);

// Whether what the camera delivers matches the request (V4L2 drivers silently pick the
// nearest size and rate, and libav falls back to another raw format). Empty when it does,
// else what differs: "it delivers 640x480 yuyv @ 30 fps".
std::string camera_mode_mismatch(const CameraRequest& request, Size delivered, const std::string& format, double fps);
// "camera '/dev/video0' refused 1920x1080 @ 60 fps mjpeg: <reason>; it offers: <modes>"
std::string camera_refusal_message(const std::string& path, const CameraRequest& request, const std::string& reason,
                                   const CameraDevice& device);

// /dev/video* in numeric order (video2 before video10); `dev_dir` for tests.
std::vector<std::string> camera_paths(const std::string& dev_dir = "/dev");
// Opens `path` and lists its capture modes; device.error says why not (not a V4L2 device,
// not a capture device, cannot open). Metadata-only nodes report no modes.
CameraDevice enumerate_camera(const std::string& path);

}  // namespace corrtrack
