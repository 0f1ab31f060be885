// Camera modes through V4L2 ioctls, and the texts around them. See camera_modes.h.
#include "app/io/camera_modes.h"

#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace corrtrack {
namespace {

struct FormatName {
    unsigned fourcc;
    const char* name;   // ours
    const char* libav;  // v4l2 input_format (a codec or pixel format name)
    const char* raw;    // the pixel format libav's raw video arrives in ("" for codecs)
};

const FormatName kFormats[] = {
    {V4L2_PIX_FMT_MJPEG, "mjpeg", "mjpeg", ""},        {V4L2_PIX_FMT_JPEG, "mjpeg", "mjpeg", ""},
    {V4L2_PIX_FMT_H264, "h264", "h264", ""},           {V4L2_PIX_FMT_HEVC, "hevc", "hevc", ""},
    {V4L2_PIX_FMT_YUYV, "yuyv", "yuyv422", "yuyv422"}, {V4L2_PIX_FMT_UYVY, "uyvy", "uyvy422", "uyvy422"},
    {V4L2_PIX_FMT_NV12, "nv12", "nv12", "nv12"},       {V4L2_PIX_FMT_YUV420, "yuv420", "yuv420p", "yuv420p"},
    {V4L2_PIX_FMT_GREY, "gray", "gray", "gray"},       {V4L2_PIX_FMT_RGB24, "rgb24", "rgb24", "rgb24"},
    {V4L2_PIX_FMT_BGR24, "bgr24", "bgr24", "bgr24"},
};

int xioctl(int fd, unsigned long request, void* arg) {
    int r;
    do r = ioctl(fd, request, arg);
    while (r < 0 && errno == EINTR);
    return r;
}

std::string fps_text(double fps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", fps);
    return buf;
}

std::string fps_list(const std::vector<double>& fps) {
    std::string s;
    for (double f : fps) s += (s.empty() ? "" : ", ") + fps_text(f);
    return s;
}

// Frame rates of one format and size, descending; stepwise ranges give their two ends.
std::vector<double> list_rates(int fd, unsigned fourcc, int w, int h) {
    std::vector<double> rates;
    v4l2_frmivalenum iv{};
    iv.pixel_format = fourcc;
    iv.width = static_cast<unsigned>(w);
    iv.height = static_cast<unsigned>(h);
    for (iv.index = 0; iv.index < 64 && xioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &iv) == 0; ++iv.index) {
        auto rate = [](const v4l2_fract& f) { return f.numerator > 0 ? double(f.denominator) / f.numerator : 0.0; };
        if (iv.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
            rates.push_back(rate(iv.discrete));
        } else {
            rates.push_back(rate(iv.stepwise.min));  // shortest interval: the highest rate
            rates.push_back(rate(iv.stepwise.max));
            break;
        }
    }
    rates.erase(std::remove_if(rates.begin(), rates.end(), [](double r) { return !(r > 0); }), rates.end());
    std::sort(rates.rbegin(), rates.rend());
    rates.erase(std::unique(rates.begin(), rates.end(), [](double a, double b) { return std::fabs(a - b) < 1e-3; }),
                rates.end());
    return rates;
}

}  // namespace

bool parse_camera_size(const std::string& text, int* width, int* height, std::string* error) {
    int w = 0, h = 0, n = 0;
    char x = 0;
    if (std::sscanf(text.c_str(), "%d%c%d%n", &w, &x, &h, &n) != 3 || (x != 'x' && x != 'X') ||
        n != static_cast<int>(text.size())) {
        *error = "must be WIDTHxHEIGHT, e.g. 1920x1080 (got '" + text + "')";
        return false;
    }
    if (w < 16 || h < 16 || w > 16384 || h > 16384) {
        *error = "must be between 16x16 and 16384x16384 (got '" + text + "')";
        return false;
    }
    *width = w;
    *height = h;
    return true;
}

bool parse_camera_format(const std::string& text, std::string* name, std::string* error) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "yuyv422" || lower == "yuy2") lower = "yuyv";  // what FFmpeg and Windows call it
    if (lower == "mjpg" || lower == "jpeg") lower = "mjpeg";
    if (lower == "grey") lower = "gray";
    for (const FormatName& f : kFormats)
        if (lower == f.name) {
            *name = lower;
            return true;
        }
    *error = "must be one of " + camera_format_names() + " (got '" + text + "')";
    return false;
}

std::string camera_format_names() {
    std::string s;
    for (const FormatName& f : kFormats)
        if (s.find(f.name) == std::string::npos) s += (s.empty() ? "" : ", ") + std::string(f.name);
    return s;
}

std::string v4l2_input_format(const std::string& name) {
    for (const FormatName& f : kFormats)
        if (name == f.name) return f.libav;
    return {};
}

std::string camera_format_name(unsigned fourcc) {
    for (const FormatName& f : kFormats)
        if (f.fourcc == fourcc) return f.name;
    std::string s;
    for (int i = 0; i < 4; ++i) {
        const char c = static_cast<char>((fourcc >> (8 * i)) & 0xFF);
        s += static_cast<char>(std::tolower(static_cast<unsigned char>(c ? c : ' ')));
    }
    return s;
}

std::string camera_format_from_libav(const std::string& codec, const std::string& pix_fmt) {
    if (codec != "rawvideo") {
        for (const FormatName& f : kFormats)
            if (codec == f.libav && !*f.raw) return f.name;
        return codec;
    }
    for (const FormatName& f : kFormats)
        if (*f.raw && pix_fmt == f.raw) return f.name;
    return pix_fmt;
}

CameraRequest request_for(const CameraMode& mode) {
    CameraRequest r;
    r.size = std::to_string(mode.width) + "x" + std::to_string(mode.height);
    r.fps = mode.fps.empty() ? 0.0 : mode.fps.front();
    r.format = mode.format;
    return r;
}

std::string describe_request(const CameraRequest& r) {
    std::string s = r.size.empty() ? "the default size" : r.size;
    if (r.fps > 0) s += " @ " + fps_text(r.fps) + " fps";
    if (!r.format.empty()) s += " " + r.format;
    return s;
}

std::string describe_mode(const CameraMode& m) {
    std::string s = m.format + " " + std::to_string(m.width) + "x" + std::to_string(m.height);
    if (!m.fps.empty()) s += " @ " + fps_list(m.fps) + " fps";
    return s;
}

std::string format_camera_list(const std::vector<CameraDevice>& devices) {
    if (devices.empty()) return "no cameras found (no /dev/video* device)\n";
    std::string out;
    for (const CameraDevice& d : devices) {
        out += d.path + (d.name.empty() ? "" : " (" + d.name + ")") + "\n";
        if (!d.error.empty()) {
            out += "  " + d.error + "\n";
            continue;
        }
        if (d.modes.empty()) out += "  no capture modes (a metadata or output node)\n";
        std::string last_format;
        for (const CameraMode& m : d.modes) {
            if (m.format != last_format) {
                last_format = m.format;
                out += "  " + m.format + (m.description.empty() ? "" : " (" + m.description + ")") + "\n";
            }
            out += "    " + std::to_string(m.width) + "x" + std::to_string(m.height);
            if (!m.fps.empty()) out += " @ " + fps_list(m.fps) + " fps";
            out += "\n";
        }
    }
    return out;
}

std::string summarize_modes(const CameraDevice& device, std::size_t max) {
    if (!device.error.empty()) return "its modes could not be listed (" + device.error + ")";
    if (device.modes.empty()) return "it lists no capture modes";
    std::string s;
    for (std::size_t i = 0; i < device.modes.size() && i < max; ++i)
        s += (i ? "; " : "") + describe_mode(device.modes[i]);
    if (device.modes.size() > max) s += "; ... (" + std::to_string(device.modes.size() - max) + " more)";
    return "it offers " + s;
}

std::string camera_mode_mismatch(const CameraRequest& request, Size delivered, const std::string& format, double fps) {
    std::vector<std::string> wrong;
    int w = 0, h = 0;
    std::string unused;
    if (!request.size.empty() && parse_camera_size(request.size, &w, &h, &unused) &&
        (delivered.width != w || delivered.height != h))
        wrong.push_back("size");
    if (!request.format.empty() && format != request.format) wrong.push_back("format");
    // Drivers round rates (30000/1001 for 30); 5% tells a rounding from another mode.
    if (request.fps > 0 && fps > 0 && std::fabs(fps - request.fps) > 0.05 * request.fps) wrong.push_back("rate");
    if (wrong.empty()) return {};
    std::string s = "it delivers " + std::to_string(delivered.width) + "x" + std::to_string(delivered.height);
    if (fps > 0) s += " @ " + fps_text(fps) + " fps";
    if (!format.empty()) s += " " + format;
    return s;
}

std::string camera_refusal_message(const std::string& path, const CameraRequest& request, const std::string& reason,
                                   const CameraDevice& device) {
    std::string s = "camera '" + path + "' refused " + describe_request(request) + ": " + reason;
    return s + "; " + summarize_modes(device) + " (see `corrtrack cameras`)";
}

std::vector<std::string> camera_paths(const std::string& dev_dir) {
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dev_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("video", 0) == 0) found.push_back(e.path().string());
    }
    std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;  // video2 before video10
    });
    return found;
}

CameraDevice enumerate_camera(const std::string& path) {
    CameraDevice d;
    d.path = path;
    int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EROFS)) fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        d.error = std::string("cannot open: ") + std::strerror(errno);
        return d;
    }
    v4l2_capability cap{};
    if (xioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
        d.error = std::string("not a V4L2 device (VIDIOC_QUERYCAP: ") + std::strerror(errno) + ")";
        ::close(fd);
        return d;
    }
    d.name = reinterpret_cast<const char*>(cap.card);
    const unsigned caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    if (!(caps & V4L2_CAP_VIDEO_CAPTURE)) {
        ::close(fd);
        return d;  // no modes: a metadata node (UVC cameras have one per camera)
    }
    v4l2_fmtdesc fmt{};
    fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    for (fmt.index = 0; fmt.index < 64 && xioctl(fd, VIDIOC_ENUM_FMT, &fmt) == 0; ++fmt.index) {
        const std::string name = camera_format_name(fmt.pixelformat);
        const std::string desc = reinterpret_cast<const char*>(fmt.description);
        v4l2_frmsizeenum fs{};
        fs.pixel_format = fmt.pixelformat;
        for (fs.index = 0; fs.index < 256 && xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; ++fs.index) {
            CameraMode m{name, desc, 0, 0, {}};
            if (fs.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
                m.width = static_cast<int>(fs.discrete.width);
                m.height = static_cast<int>(fs.discrete.height);
            } else {
                m.width = static_cast<int>(fs.stepwise.max_width);
                m.height = static_cast<int>(fs.stepwise.max_height);
            }
            m.fps = list_rates(fd, fmt.pixelformat, m.width, m.height);
            d.modes.push_back(std::move(m));
            if (fs.type != V4L2_FRMSIZE_TYPE_DISCRETE) break;
        }
    }
    ::close(fd);
    return d;
}

}  // namespace corrtrack
