// FrameSource over libavformat/libavcodec/libswscale/libavdevice. See frame_source.h for the
// end-of-input policy; everything here runs on the thread that owns the source.
#include "app/io/frame_source.h"
#include "app/io/libav_handles.h"
#include "app/io/sequence_pattern.h"
#include "app/io/frame_accounting.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavdevice/avdevice.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

// NVDEC needs libavutil's CUDA device context (its header includes the toolkit's cuda.h).
// Without it the source still builds and every NVDEC request decodes on the CPU.
#if __has_include(<libavutil/hwcontext_cuda.h>)
#define CORRTRACK_HAVE_AV_CUDA 1
extern "C" {
#include <libavutil/hwcontext_cuda.h>
}
#include <cuda_runtime.h>
#else
#define CORRTRACK_HAVE_AV_CUDA 0
#endif

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The last error-level libav message logged on this thread. Error codes alone say "Invalid
// data"; the log says why ("moov atom not found"), which is what a user needs to see.
thread_local std::string t_last_av_log;
thread_local std::string t_previous_av_log;  // the one before: a failing hwaccel's own reason

void capture_av_log(void* avcl, int level, const char* fmt, va_list args) {
    if (level <= AV_LOG_ERROR && fmt) {
        va_list copy;
        va_copy(copy, args);
        char line[512];
        std::vsnprintf(line, sizeof line, fmt, copy);
        va_end(copy);
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '.'))
            text.pop_back();
        if (!text.empty()) {
            t_previous_av_log = std::move(t_last_av_log);
            t_last_av_log = text;
        }
    }
    av_log_default_callback(avcl, level, fmt, args);
}

void init_libav_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        av_log_set_callback(capture_av_log);
        avdevice_register_all();
    });
}

// " (detail)" from the log when it adds something to the error code's own text.
std::string log_detail(const std::string& already_said) {
    const std::string& d = t_last_av_log;
    if (d.empty() || already_said.find(d) != std::string::npos ||
        d.find(already_said) != std::string::npos)
        return {};
    return " (" + d + ")";
}

struct FormatCloser {
    void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
// Deadline checked by libav's blocking I/O through AVIOInterruptCB. It lives in the source
// object so that its address stays valid for the format context's lifetime.
struct Deadline {
    Clock::time_point at = Clock::time_point::max();
    bool expired = false;
    const std::atomic<bool>* stop = nullptr;  // SourceOptions::stop
    bool interrupted = false;

    void arm(double seconds) {
        expired = false;
        at = seconds > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(seconds))
                         : Clock::time_point::max();
    }
    static int check(void* opaque) {
        auto* d = static_cast<Deadline*>(opaque);
        if (d->stop && d->stop->load()) {
            d->interrupted = true;
            return 1;
        }
        if (Clock::now() < d->at) return 0;
        d->expired = true;
        return 1;
    }
};

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "scheme" of "scheme://..." or empty.
std::string url_scheme(const std::string& s) {
    auto p = s.find("://");
    if (p == std::string::npos || p == 0) return {};
    for (std::size_t i = 0; i < p; ++i) {
        char c = s[i];
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.')
            return {};
    }
    return lower(s.substr(0, p));
}

// URLs may carry a password (rtsp://user:pass@camera/); messages must not.
std::string redact_url(const std::string& url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return url;
    auto host_start = scheme_end + 3;
    auto path_start = url.find('/', host_start);
    auto at = url.rfind('@', path_start == std::string::npos ? url.size() : path_start);
    if (at == std::string::npos || at < host_start) return url;
    return url.substr(0, host_start) + "***@" + url.substr(at + 1);
}

std::string escape_percent(const std::string& s) {
    std::string out;
    for (char c : s) {
        out += c;
        if (c == '%') out += '%';
    }
    return out;
}

// First number present and how many consecutive files follow it (image2 stops at a gap);
// *beyond_gap counts the matching files after the gap, which image2 will not read.
bool scan_sequence(const std::string& pattern, long* start, long* count, long* beyond_gap,
                   std::string* error) {
    SequencePattern sp;
    if (!parse_sequence_pattern(pattern, &sp)) {
        *error = "'" + pattern + "' is not an image sequence pattern (expected one %d or %05d)";
        return false;
    }
    std::error_code ec;
    std::set<long> numbers;
    for (fs::directory_iterator it(sp.dir, ec), end; !ec && it != end; it.increment(ec)) {
        long n = 0;
        if (sp.matches(it->path().filename().string(), &n)) numbers.insert(n);
    }
    if (ec) {
        *error = "cannot open image sequence '" + pattern + "': " + ec.message();
        return false;
    }
    if (numbers.empty()) {
        *error = "cannot open image sequence '" + pattern + "': no file matches the pattern";
        return false;
    }
    *start = *numbers.begin();
    long n = *start;
    while (numbers.count(n)) ++n;
    *count = n - *start;
    *beyond_gap = static_cast<long>(numbers.size()) - *count;
    return true;
}

bool is_image_extension(std::string ext) {
    ext = lower(ext);
    static const char* const kExts[] = {".jpg", ".jpeg", ".png", ".bmp", ".tif",
                                        ".tiff", ".pgm", ".ppm", ".webp"};
    return std::any_of(std::begin(kExts), std::end(kExts), [&](const char* e) { return ext == e; });
}

// The printf pattern of the largest group of numbered images in dir (name = prefix + digits +
// extension), or empty when there is none.
std::string find_numbered_images(const fs::path& dir) {
    struct Group {
        long files = 0;
        std::set<std::size_t> widths;
    };
    std::map<std::pair<std::string, std::string>, Group> groups;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_regular_file(ec)) continue;
        std::string ext = it->path().extension().string();
        if (!is_image_extension(ext)) continue;
        std::string stem = it->path().stem().string();
        std::size_t d = stem.size();
        while (d > 0 && std::isdigit(static_cast<unsigned char>(stem[d - 1]))) --d;
        if (d == stem.size() || stem.size() - d > 15) continue;
        Group& g = groups[{stem.substr(0, d), ext}];
        ++g.files;
        g.widths.insert(stem.size() - d);
    }
    const std::pair<const std::pair<std::string, std::string>, Group>* best = nullptr;
    for (const auto& g : groups)
        if (!best || g.second.files > best->second.files) best = &g;
    if (!best) return {};
    // One width for all files: zero padded (or all numbers happen to have that many digits,
    // which the padded pattern matches as well). Mixed widths: unpadded numbers.
    std::string conv = best->second.widths.size() == 1
                           ? "%0" + std::to_string(*best->second.widths.begin()) + "d"
                           : std::string("%d");
    return (dir / (escape_percent(best->first.first) + conv + escape_percent(best->first.second)))
        .string();
}

struct ResolvedInput {
    SourceKind kind = SourceKind::kFile;
    std::string url;      // what libav opens
    std::string display;  // short name for description()
};

bool resolve_folder(const std::string& input, ResolvedInput* out, std::string* error) {
    fs::path dir(input);
    std::error_code ec;
    std::string pattern;
    if (fs::is_directory(dir / "img", ec)) pattern = find_numbered_images(dir / "img");
    if (pattern.empty()) {
        for (const char* name : {"video.mkv", "video.mp4", "video.avi"}) {
            if (fs::is_regular_file(dir / name, ec)) {
                out->kind = SourceKind::kFile;
                out->url = (dir / name).string();
                return true;
            }
        }
        pattern = find_numbered_images(dir);
    }
    if (pattern.empty()) {
        *error = "cannot open '" + input +
                 "': the folder has no numbered images (img/00001.jpg ...) and no video.mkv";
        return false;
    }
    out->kind = SourceKind::kImageSequence;
    out->url = pattern;
    return true;
}

bool resolve_input(const SourceOptions& o, ResolvedInput* out, std::string* error) {
    const std::string& in = o.input;
    if (in.empty()) {
        *error = "no input given";
        return false;
    }
    std::error_code ec;
    fs::path as_path(in);
    std::string name = as_path.filename().string();
    if (name.empty()) name = as_path.parent_path().filename().string();
    out->display = name.empty() ? in : name;
    out->url = in;

    SourceKind kind = o.kind;
    std::string scheme = url_scheme(in);
    if (kind == SourceKind::kAuto) {
        if (starts_with(in, "/dev/video"))
            kind = SourceKind::kCamera;
        else if (!scheme.empty() && scheme != "file")
            kind = SourceKind::kUrl;
        else if (fs::is_directory(in, ec))
            kind = SourceKind::kImageSequence;
        else if (in.find('%') != std::string::npos && !fs::exists(in, ec))
            kind = SourceKind::kImageSequence;
        else
            kind = SourceKind::kFile;
    }
    out->kind = kind;
    switch (kind) {
    case SourceKind::kCamera:
        out->display = in;
        return true;
    case SourceKind::kUrl:
        out->display = redact_url(in);
        return true;
    case SourceKind::kFile:
        if (scheme == "file") out->url = in.substr(7);
        if (fs::is_directory(out->url, ec)) return resolve_folder(out->url, out, error);
        return true;
    case SourceKind::kImageSequence: {
        if (fs::is_directory(in, ec)) return resolve_folder(in, out, error);
        // "car4/img/%05d.jpg" says more than "%05d.jpg".
        fs::path parent = as_path.parent_path();
        fs::path shown = parent.filename() / as_path.filename();
        if (parent.filename() == "img" && parent.has_parent_path())
            shown = parent.parent_path().filename() / shown;
        out->display = shown.string();
        return true;
    }
    case SourceKind::kAuto:
        break;
    }
    *error = "unknown input kind";
    return false;
}

// "HH:MM:SS.fffffffff" as Matroska's muxer writes per-track DURATION tags; -1 if absent.
double parse_duration_tag(const AVDictionary* metadata) {
    const AVDictionaryEntry* e = av_dict_get(metadata, "DURATION", nullptr, 0);
    if (!e) return -1;
    int h = 0, m = 0;
    double s = 0;
    if (std::sscanf(e->value, "%d:%d:%lf", &h, &m, &s) != 3) return -1;
    return h * 3600.0 + m * 60.0 + s;
}

AVPixelFormat without_jpeg_range(AVPixelFormat f, bool* full_range) {
    switch (f) {
    case AV_PIX_FMT_YUVJ420P: *full_range = true; return AV_PIX_FMT_YUV420P;
    case AV_PIX_FMT_YUVJ422P: *full_range = true; return AV_PIX_FMT_YUV422P;
    case AV_PIX_FMT_YUVJ444P: *full_range = true; return AV_PIX_FMT_YUV444P;
    case AV_PIX_FMT_YUVJ440P: *full_range = true; return AV_PIX_FMT_YUV440P;
    case AV_PIX_FMT_YUVJ411P: *full_range = true; return AV_PIX_FMT_YUV411P;
    default: return f;
    }
}

std::string format_fps(double fps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", fps);
    return buf;
}

// Whether this FFmpeg's decoder has an NVDEC hwaccel (set up through a CUDA device context).
bool has_cuda_hwaccel(const AVCodec* decoder) {
    for (int i = 0;; ++i) {
        const AVCodecHWConfig* config = avcodec_get_hw_config(decoder, i);
        if (!config) return false;
        if ((config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) &&
            config->device_type == AV_HWDEVICE_TYPE_CUDA)
            return true;
    }
}

int luma_depth(int pixel_format) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(pixel_format));
    return d ? d->comp[0].depth : 0;
}

// "hevc Main 10, yuv420p10le": what a note about a refused stream names.
std::string stream_kind(AVCodecID codec, int profile, int pixel_format) {
    std::string s = avcodec_get_name(codec);
    if (const char* p = avcodec_profile_name(codec, profile)) s += std::string(" ") + p;
    if (const char* f = av_get_pix_fmt_name(static_cast<AVPixelFormat>(pixel_format)))
        s += std::string(", ") + f;
    return s;
}

// NVDEC would give 10/12-bit video as P010/P016; the device path hands 8-bit luma to the
// kernels, so such video decodes on the CPU (to GRAY8, like any other).
std::string eight_bit_only_note(const std::string& kind) {
    return "NVDEC not used for " + kind + " (the GPU path takes 8-bit video only): decoding on "
           "the CPU";
}

#if CORRTRACK_HAVE_AV_CUDA
// The device context holds one retain of the primary context; the last unref gives it back.
struct PrimaryContextLease {
    CUresult (*release)(CUdevice) = nullptr;
    CUdevice device = 0;
};

void release_primary_context(AVHWDeviceContext* device) {
    auto* lease = static_cast<PrimaryContextLease*>(device->user_opaque);
    device->user_opaque = nullptr;
    if (lease && lease->release) lease->release(lease->device);
    delete lease;
}

template <class Fn>
bool driver_function(const char* name, Fn* fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !p) {
        cudaGetLastError();
        return false;
    }
    *fn = reinterpret_cast<Fn>(p);
    return true;
}
#endif

// A CUDA device context for NVDEC in the CUDA runtime's primary context of the consumer's
// device, working on the consumer's stream. FFmpeg 5.1's own AV_CUDA_USE_PRIMARY_CONTEXT
// path (hwcontext_cuda.c, cuda_context_init) insists on CU_CTX_SCHED_BLOCKING_SYNC and fails
// with ENOTSUP once the runtime has activated the primary context with its default flags,
// which any cudaStreamCreate or cudaHostAlloc does first. So the context is retained here
// (driver entry points through the runtime; libcuda is not linked) and handed to FFmpeg as a
// user context, which FFmpeg uses without changing or releasing it. nvdec.c reads
// AVCUDADeviceContext::stream when it creates the decoder (nvdec_decoder_create), so the
// stream is set before av_hwdevice_ctx_init. nullptr with *why on failure.
AVBufferRef* open_cuda_device(void* stream, std::string* why) {
#if CORRTRACK_HAVE_AV_CUDA
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        *why = std::string("no CUDA device: ") +
               (e == cudaErrorInsufficientDriver ? "no NVIDIA driver, or one older than this "
                                                   "CUDA runtime"
                : e != cudaSuccess               ? cudaGetErrorString(e)
                                                 : "none found");
        cudaGetLastError();
        return nullptr;
    }
    int ordinal = 0;
    e = stream ? cudaStreamGetDevice(static_cast<cudaStream_t>(stream), &ordinal)
               : cudaGetDevice(&ordinal);
    if (e != cudaSuccess) {
        *why = std::string("cannot find the CUDA stream's device: ") + cudaGetErrorString(e);
        cudaGetLastError();
        return nullptr;
    }
    CUresult (*device_get)(CUdevice*, int) = nullptr;
    CUresult (*retain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*release)(CUdevice) = nullptr;
    if (!driver_function("cuDeviceGet", &device_get) ||
        !driver_function("cuDevicePrimaryCtxRetain", &retain) ||
        !driver_function("cuDevicePrimaryCtxRelease", &release)) {
        *why = "the CUDA driver does not offer the primary-context functions";
        return nullptr;
    }
    CUdevice device = 0;
    CUcontext context = nullptr;
    if (device_get(&device, ordinal) != CUDA_SUCCESS || retain(&context, device) != CUDA_SUCCESS) {
        *why = "cannot retain the primary context of CUDA device " + std::to_string(ordinal);
        return nullptr;
    }
    AVBufferRef* ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!ref) {
        release(device);
        *why = "this FFmpeg has no CUDA device support";
        return nullptr;
    }
    auto* device_ctx = reinterpret_cast<AVHWDeviceContext*>(ref->data);
    auto* cuda = static_cast<AVCUDADeviceContext*>(device_ctx->hwctx);
    cuda->cuda_ctx = context;
    cuda->stream = static_cast<CUstream>(stream);
    device_ctx->user_opaque = new PrimaryContextLease{release, device};
    device_ctx->free = release_primary_context;
    t_last_av_log.clear();
    int ret = av_hwdevice_ctx_init(ref);
    if (ret < 0) {
        std::string reason = av_error_string(ret);
        *why = "av_hwdevice_ctx_init: " + reason + log_detail(reason);
        av_buffer_unref(&ref);  // releases the primary context through the free callback
        return nullptr;
    }
    return ref;
#else
    (void)stream;
    *why = "this build's libavutil has no CUDA device context";
    return nullptr;
#endif
}

class LibavSource final : public FrameSource {
public:
    bool open(const SourceOptions& options, const ResolvedInput& input, std::string* error);

    ReadStatus read(Frame& out) override;
    const std::string& error() const override { return error_; }
    bool live() const override { return live_; }
    Size size() const override { return size_; }
    double fps() const override { return fps_; }
    long frame_count() const override { return frame_count_; }
    std::string description() const override {
        return hw_ == Hw::kOn ? description_ + ", nvdec" : description_;
    }
    std::string decode_mode() const override { return hw_ == Hw::kOn ? "nvdec" : "sw"; }
    std::string decode_note() const override { return decode_note_; }
    SourceReport report() const override;

private:
    struct AvioFreer {
        void operator()(AVIOContext* c) const {
            av_freep(&c->buffer);
            avio_context_free(&c);
        }
    };
    static int read_bytes(void* opaque, uint8_t* buf, int size) {
        return static_cast<ByteReader*>(opaque)->read(buf, size);
    }
    static int64_t seek_bytes(void* opaque, int64_t offset, int whence) {
        return static_cast<ByteReader*>(opaque)->seek(offset, whence);
    }
    bool open_reader(std::string* error);
    // Why the last read or open failed when it was the byte reader or the stop flag.
    ReadStatus fail_io(const std::string& what);
    std::pair<std::string, EndReason> io_failure(const std::string& what) const;
    // kProbing: NVDEC is set up but has not delivered a frame yet; the packets it was given
    // are kept for a software decoder in case it refuses the stream.
    enum class Hw { kOff, kProbing, kOn };

    bool fail_open(const std::string& message, std::string* error);
    bool prepare_nvdec(const AVStream* st);
    bool open_decoder(bool hw, std::string* message);
    static AVPixelFormat get_format_callback(AVCodecContext* cc, const AVPixelFormat* formats);
    AVPixelFormat choose_format(AVCodecContext* cc, const AVPixelFormat* formats);
    bool probe_failed(int ret, const AVFrame* received);
    bool fall_back_to_software();
    ReadStatus decode_next(double* busy_ms);
    bool convert(const AVFrame* f, Frame& out);
    bool convert_host(const AVFrame* f, Frame& out);
    bool convert_device(const AVFrame* f, Frame& out);
    bool prepare_conversion(const AVFrame* f);
    bool scale_rgb(const AVFrame* f, Frame& out);
    bool download_luma(const AVFrame* f, Frame& out);
    AVFrame* download_frame(const AVFrame* f);
    void stamp(const AVFrame* f, Frame& out);
    ReadStatus finish();
    ReadStatus fail(const std::string& message, EndReason reason = EndReason::kFailed);
    void note_decode_error(const std::string& what);
    // Reports the failing libav call (architecture rule 4) for failures a user cannot cause.
    bool check(int ret, const char* call, int line);

    SourceOptions options_;
    ResolvedInput input_;
    std::string name_;  // the input as the user wrote it (redacted for URLs), for messages
    std::string what_;  // how messages name the input: "'clip.mp4'", "camera '/dev/video0'"
    const AVCodec* decoder_ = nullptr;
    Deadline deadline_;
    // Custom input (SourceOptions::reader, or a pipe/FIFO): declared before format_ so that it
    // outlives the format context that reads through it.
    std::shared_ptr<ByteReader> reader_;
    std::unique_ptr<AVIOContext, AvioFreer> avio_;
    std::unique_ptr<AVFormatContext, FormatCloser> format_;
    std::unique_ptr<AVCodecContext, CodecFreer> codec_;
    std::unique_ptr<AVFrame, FrameFreer> frame_;
    std::unique_ptr<AVPacket, PacketFreer> packet_;
    std::unique_ptr<SwsContext, SwsFreer> gray_sws_, rgb_sws_;

    Hw hw_ = Hw::kOff;
    std::unique_ptr<AVBufferRef, BufferUnref> hw_device_;
    bool cuda_chosen_ = false;            // get_format picked AV_PIX_FMT_CUDA at least once
    std::string refusal_;                 // set while probing: why NVDEC gave up (the note)
    std::deque<std::unique_ptr<AVPacket, PacketFreer>> probe_packets_, replay_;
    long probe_packets_dropped_ = 0;      // beyond kMaxProbePackets
    bool first_frame_ready_ = false;      // open() decoded the first frame into frame_
    double first_frame_ms_ = 0;
    std::unique_ptr<AVFrame, FrameFreer> host_frame_;  // NV12 download for RGB, reused
    std::unique_ptr<AVFrame, FrameFreer> y_src_, y_dst_;  // Y-plane-only download views
    std::string decode_note_;
    struct ConversionKey {
        int width = 0, height = 0, format = -1, full_range = -1, colorspace = -1;
        bool operator==(const ConversionKey& o) const {
            return width == o.width && height == o.height && format == o.format &&
                   full_range == o.full_range && colorspace == o.colorspace;
        }
    } conversion_key_;
    int stream_index_ = -1;
    AVRational time_base_{1, 1};
    int64_t origin_ts_ = AV_NOPTS_VALUE;  // timestamp that maps to pts 0

    bool live_ = false;
    Size size_;
    double fps_ = 0;
    long frame_count_ = -1;
    long declared_frames_ = -1;  // what the container promises, for the truncation check
    long sequence_start_ = 0;
    long sequence_beyond_gap_ = 0;  // images after a missing number, which image2 skips
    std::string description_;

    long delivered_ = 0;
    long packets_read_ = 0;         // video packets read (replays of NVDEC's probe not again)
    long last_index_ = -1;          // source index of the last frame delivered
    FrameAccounting accounting_;    // files and sequences: source indices, lost frames
    bool duration_count_ = false;   // declared_frames_ comes from duration x fps (rounded)
    Size out_size_;                 // every frame's size: the first frame's
    long resized_ = 0;
    std::string resize_note_;
    long concealed_ = 0;
    EndReason end_ = EndReason::kNone;
    bool draining_ = false;
    // A stall or read failure met while reading: reported once the decoder has given back
    // the frames it already holds (frame threads keep up to one per thread).
    std::optional<std::pair<std::string, EndReason>> pending_failure_;
    bool finished_ = false;
    ReadStatus final_status_ = ReadStatus::kEnd;
    int demux_error_ = 0;
    std::string demux_error_detail_;
    long decode_errors_ = 0;
    long first_decode_error_after_ = -1;  // frames delivered before the first decode error
    std::string first_decode_error_;
    std::string error_;
};

#define CT_AV_CHECK(call) check((call), #call, __LINE__)

bool LibavSource::check(int ret, const char* call, int line) {
    if (ret >= 0) return true;
    std::string what = av_error_string(ret);
    error_ = "'" + name_ + "': " + call + " failed: " + what + log_detail(what) +
             " (frame_source.cpp:" + std::to_string(line) + ")";
    return false;
}

bool LibavSource::fail_open(const std::string& message, std::string* error) {
    if (error) *error = message;
    return false;
}

bool LibavSource::open(const SourceOptions& options, const ResolvedInput& input,
                       std::string* error) {
    options_ = options;
    // 0 means "no limit"; anything not a finite positive number is taken as that.
    for (double* t : {&options_.open_timeout_s, &options_.read_timeout_s})
        if (!(std::isfinite(*t) && *t > 0)) *t = 0;
    input_ = input;
    deadline_.stop = options.stop;
    live_ = input.kind == SourceKind::kCamera || input.kind == SourceKind::kUrl;
    name_ = input.kind == SourceKind::kUrl ? redact_url(options.input) : options.input;
    init_libav_once();  // before looking up v4l2, which libavdevice registers
    t_last_av_log.clear();

    std::error_code ec;
    if (input.kind == SourceKind::kFile && fs::is_regular_file(input.url, ec) &&
        fs::file_size(input.url, ec) == 0 && !ec)
        return fail_open("cannot open '" + name_ + "': the file is empty", error);

    AVDictionary* raw_opts = nullptr;
    std::unique_ptr<AVDictionary*, void (*)(AVDictionary**)> opts(&raw_opts, av_dict_free);
    const AVInputFormat* input_format = nullptr;
    std::string what = "'" + name_ + "'";
    switch (input.kind) {
    case SourceKind::kImageSequence: {
        long count = 0;
        std::string message;
        if (!scan_sequence(input.url, &sequence_start_, &count, &sequence_beyond_gap_, &message))
            return fail_open(message, error);
        frame_count_ = count;
        input_format = av_find_input_format("image2");
        if (!input_format) return fail_open("this FFmpeg has no image2 demuxer", error);
        AVRational rate = av_d2q(options.sequence_fps > 0 ? options.sequence_fps : 30.0, 1001000);
        av_dict_set(opts.get(), "pattern_type", "sequence", 0);
        av_dict_set_int(opts.get(), "start_number", sequence_start_, 0);
        av_dict_set(opts.get(), "framerate",
                    (std::to_string(rate.num) + "/" + std::to_string(rate.den)).c_str(), 0);
        what = "image sequence '" + input.url + "'";
        break;
    }
    case SourceKind::kCamera:
        input_format = av_find_input_format("v4l2");
        if (!input_format)
            return fail_open("cannot open camera '" + name_ +
                                 "': this FFmpeg was built without the video4linux2 input",
                             error);
        if (!options.camera_size.empty())
            av_dict_set(opts.get(), "video_size", options.camera_size.c_str(), 0);
        if (options.camera_fps > 0) {
            AVRational rate = av_d2q(options.camera_fps, 1001000);
            av_dict_set(opts.get(), "framerate",
                        (std::to_string(rate.num) + "/" + std::to_string(rate.den)).c_str(), 0);
        }
        what = "camera '" + name_ + "'";
        break;
    case SourceKind::kUrl: {
        // Socket timeouts back up the interrupt callback inside protocols that poll without
        // it. All in microseconds. RTMP is left out: its "timeout" means "listen".
        const int64_t us = static_cast<int64_t>(std::clamp(options_.read_timeout_s, 0.1, 1e6) * 1e6);
        const std::string scheme = url_scheme(input.url);
        av_dict_set_int(opts.get(), "rw_timeout", us, 0);
        if (scheme == "rtsp" || scheme == "rtsps") {
#if LIBAVFORMAT_VERSION_MAJOR < 59
            av_dict_set_int(opts.get(), "stimeout", us, 0);
#else
            av_dict_set_int(opts.get(), "timeout", us, 0);
#endif
            av_dict_set(opts.get(), "rtsp_flags", "prefer_tcp", 0);
        } else if (scheme == "http" || scheme == "https" || scheme == "tcp" || scheme == "udp" ||
                   scheme == "srt") {
            av_dict_set_int(opts.get(), "timeout", us, 0);
        }
        break;
    }
    case SourceKind::kFile:
    case SourceKind::kAuto:
        break;
    }

    t_last_av_log.clear();
    AVFormatContext* fc = avformat_alloc_context();
    if (!fc) return fail_open("out of memory (avformat_alloc_context)", error);
    fc->interrupt_callback.callback = &Deadline::check;
    fc->interrupt_callback.opaque = &deadline_;
    // A blocking V4L2 dequeue ignores the interrupt callback; non-blocking mode returns
    // EAGAIN instead, and read() polls until its deadline.
    if (input.kind == SourceKind::kCamera) fc->flags |= AVFMT_FLAG_NONBLOCK;
    reader_ = options.reader;
    if (!reader_ && input.kind == SourceKind::kFile && is_stream_path(input.url)) {
        // A pipe or FIFO: FFmpeg's own reads would block for ever on a writer that never
        // comes or stalls; poll() under the read timeout instead.
        std::string message;
        const int fd = open_stream_descriptor(input.url, &message);
        if (fd < 0) {
            avformat_free_context(fc);
            return fail_open(message, error);
        }
        reader_ = descriptor_reader(fd, options_.read_timeout_s,
                                    [this] { return Deadline::check(&deadline_) != 0; });
        what = "'" + name_ + "'";
    }
    if (reader_) {
        constexpr int kBufferBytes = 1 << 16;
        auto* buffer = static_cast<unsigned char*>(av_malloc(kBufferBytes));
        AVIOContext* io = buffer ? avio_alloc_context(buffer, kBufferBytes, 0, reader_.get(), &read_bytes, nullptr,
                                                      reader_->seekable() ? &seek_bytes : nullptr)
                                 : nullptr;
        if (!io) {
            av_free(buffer);
            avformat_free_context(fc);
            return fail_open("out of memory (avio_alloc_context)", error);
        }
        avio_.reset(io);
        fc->pb = io;
        fc->flags |= AVFMT_FLAG_CUSTOM_IO;
        // Bytes from memory or a pipe name no other file: a playlist or reference inside them
        // (HLS, concat, external MOV data) must not make the demuxer open paths or URLs.
        av_dict_set(opts.get(), "protocol_whitelist", "none", 0);
    }
    deadline_.arm(options_.open_timeout_s);
    int ret = avformat_open_input(&fc, input.url.c_str(), input_format, opts.get());
    if (ret < 0) {  // avformat_open_input freed fc
        if (deadline_.interrupted) return fail_open("cannot open " + what + ": interrupted", error);
        if (reader_ && !deadline_.expired && !reader_->failure().empty())
            return fail_open("cannot open " + what + ": " + reader_->failure(), error);
        if (deadline_.expired)
            return fail_open("cannot open " + what + ": no answer within " +
                                 format_fps(options.open_timeout_s) + " s (open timeout)",
                             error);
        std::string reason = av_error_string(ret);
        reason += log_detail(reason);
        if (ret == AVERROR_INVALIDDATA && input.kind == SourceKind::kFile)
            return fail_open(what + " is not a video FFmpeg can read: " + reason, error);
        return fail_open("cannot open " + what + ": " + reason, error);
    }
    format_.reset(fc);

    ret = avformat_find_stream_info(fc, nullptr);
    if (ret < 0) {
        if (deadline_.interrupted) return fail_open("cannot open " + what + ": interrupted", error);
        if (reader_ && !deadline_.expired && !reader_->failure().empty())
            return fail_open("cannot read " + what + ": " + reader_->failure(), error);
        if (deadline_.expired)
            return fail_open("cannot open " + what + ": no video data within " +
                                 format_fps(options.open_timeout_s) + " s (open timeout)",
                             error);
        std::string reason = av_error_string(ret);
        return fail_open("cannot read " + what + ": " + reason + log_detail(reason), error);
    }

    const AVCodec* decoder = nullptr;
    stream_index_ = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (stream_index_ == AVERROR_STREAM_NOT_FOUND ||
        (stream_index_ >= 0 &&
         (fc->streams[stream_index_]->disposition & AV_DISPOSITION_ATTACHED_PIC)))
        return fail_open(what + " has no video stream", error);
    if (stream_index_ == AVERROR_DECODER_NOT_FOUND || (stream_index_ >= 0 && !decoder)) {
        int idx = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
        const char* codec_name =
            idx >= 0 ? avcodec_get_name(fc->streams[idx]->codecpar->codec_id) : "unknown";
        return fail_open(what + ": this FFmpeg has no decoder for its video codec '" +
                             codec_name + "'",
                         error);
    }
    if (stream_index_ < 0)
        return fail_open("cannot read " + what + ": " + av_error_string(stream_index_), error);
    AVStream* st = fc->streams[stream_index_];
    for (unsigned i = 0; i < fc->nb_streams; ++i)
        if (static_cast<int>(i) != stream_index_) fc->streams[i]->discard = AVDISCARD_ALL;
    time_base_ = st->time_base;
    decoder_ = decoder;
    what_ = what;

    frame_.reset(av_frame_alloc());
    packet_.reset(av_packet_alloc());
    if (!frame_ || !packet_) return fail_open("out of memory (av_frame_alloc)", error);

    std::string message;
    if (options.decode != DecodeMode::kSoftware && prepare_nvdec(st)) {
        hw_ = Hw::kProbing;
        if (!open_decoder(true, &message)) {
            hw_ = Hw::kOff;
            hw_device_.reset();
            decode_note_ = "NVDEC unavailable (" + message + "): decoding on the CPU";
        }
    }
    if (hw_ == Hw::kOff && !open_decoder(false, &message)) return fail_open(message, error);

    size_ = {st->codecpar->width, st->codecpar->height};
    if (input.kind == SourceKind::kImageSequence) {
        fps_ = options.sequence_fps > 0 ? options.sequence_fps : 30.0;
    } else {
        AVRational rate = av_guess_frame_rate(fc, st, nullptr);
        fps_ = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
    }
    if (input.kind == SourceKind::kFile) {
        if (st->nb_frames > 0) {
            declared_frames_ = static_cast<long>(st->nb_frames);
        } else if (fps_ > 0) {
            double seconds = -1;
            if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
                seconds = st->duration * av_q2d(st->time_base);
            if (seconds <= 0) seconds = parse_duration_tag(st->metadata);
            // The container's duration covers every stream; trust it only when video is alone.
            if (seconds <= 0 && fc->nb_streams == 1 && fc->duration != AV_NOPTS_VALUE)
                seconds = fc->duration / static_cast<double>(AV_TIME_BASE);
            if (seconds > 0 && seconds * fps_ < 1e12) {
                declared_frames_ = std::lround(seconds * fps_);
                duration_count_ = true;
            }
        }
        frame_count_ = declared_frames_;
    }
    if (!live_ && st->start_time != AV_NOPTS_VALUE) origin_ts_ = st->start_time;

    description_ = input.display + ": " + avcodec_get_name(st->codecpar->codec_id) + " " +
                   std::to_string(size_.width) + "x" + std::to_string(size_.height);
    if (fps_ > 0) description_ += " @ " + format_fps(fps_) + " fps";
    if (live_)
        description_ += ", live";
    else if (frame_count_ > 0)
        description_ += ", " + std::to_string(frame_count_) + " frames";

    // NVDEC proves itself on the first frame here, so that decode_mode() and decode_note()
    // are settled when open() returns; read() delivers that frame first.
    if (hw_ == Hw::kProbing) {
        deadline_.arm(options.read_timeout_s);
        first_frame_ready_ = decode_next(&first_frame_ms_) == ReadStatus::kFrame;
    }
    return true;
}

bool LibavSource::prepare_nvdec(const AVStream* st) {
    const bool quiet = options_.decode == DecodeMode::kAuto;  // auto: only news about the stream
    const AVCodecParameters* par = st->codecpar;
    if (input_.kind == SourceKind::kImageSequence || input_.kind == SourceKind::kCamera) {
        if (!quiet)
            decode_note_ = std::string("NVDEC decodes video files and streams only: decoding the ") +
                           (input_.kind == SourceKind::kCamera ? "camera" : "image sequence") +
                           " on the CPU";
        return false;
    }
    if (!has_cuda_hwaccel(decoder_)) {
        if (!quiet)
            decode_note_ = std::string("NVDEC unavailable (this FFmpeg has no NVDEC hwaccel for ") +
                           avcodec_get_name(par->codec_id) + "): decoding on the CPU";
        return false;
    }
    std::string why;
    t_last_av_log.clear();
    hw_device_.reset(open_cuda_device(options_.cuda_stream, &why));
    if (!hw_device_) {
        if (!quiet) decode_note_ = "NVDEC unavailable (" + why + "): decoding on the CPU";
        return false;
    }
    if (luma_depth(par->format) > 8) {
        hw_device_.reset();
        decode_note_ = eight_bit_only_note(stream_kind(par->codec_id, par->profile, par->format));
        return false;
    }
    return true;
}

bool LibavSource::open_decoder(bool hw, std::string* message) {
    const AVStream* st = format_->streams[stream_index_];
    AVCodecContext* cc = avcodec_alloc_context3(decoder_);
    codec_.reset(cc);
    if (!cc) {
        *message = "out of memory (avcodec_alloc_context3)";
        return false;
    }
    if (!CT_AV_CHECK(avcodec_parameters_to_context(cc, st->codecpar))) {
        *message = error_;
        return false;
    }
    cc->pkt_timebase = st->time_base;
    if (options_.max_pixels > 0) cc->max_pixels = options_.max_pixels;
    if (hw) {
        cc->hw_device_ctx = av_buffer_ref(hw_device_.get());
        if (!cc->hw_device_ctx) {
            *message = "out of memory (av_buffer_ref)";
            return false;
        }
        cc->opaque = this;
        cc->get_format = &LibavSource::get_format_callback;
        // Every frame the consumer holds keeps a decoder surface mapped (nvdec.c maps the
        // output surface into the AVFrame until it is freed).
        cc->extra_hw_frames = std::max(options_.held_frames, 0);
        // The GPU decodes; frame threads would add latency and one surface per thread.
        cc->thread_count = 1;
    } else {
        cc->thread_count = 0;  // one per core
        // Frame threads add one frame of latency per thread: fine for files, not for live.
        cc->thread_type = live_ ? FF_THREAD_SLICE : (FF_THREAD_FRAME | FF_THREAD_SLICE);
    }
    if (live_) cc->flags |= AV_CODEC_FLAG_LOW_DELAY;
    t_last_av_log.clear();
    int ret = avcodec_open2(cc, decoder_, nullptr);
    if (ret < 0) {
        std::string reason = av_error_string(ret);
        *message = "cannot start the " + std::string(decoder_->name) + " decoder for " + what_ +
                   ": " + reason + log_detail(reason);
        codec_.reset();
        return false;
    }
    return true;
}

AVPixelFormat LibavSource::get_format_callback(AVCodecContext* cc, const AVPixelFormat* formats) {
    return static_cast<LibavSource*>(cc->opaque)->choose_format(cc, formats);
}

// libavcodec calls this on the decode thread when a sequence starts; when the hwaccel it
// picked fails to initialise, it calls again without that format (decode.c, ff_get_format).
AVPixelFormat LibavSource::choose_format(AVCodecContext* cc, const AVPixelFormat* formats) {
    bool cuda = false;
    AVPixelFormat software = AV_PIX_FMT_NONE;
    for (const AVPixelFormat* p = formats; *p != AV_PIX_FMT_NONE; ++p) {
        const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*p);
        if (*p == AV_PIX_FMT_CUDA) cuda = true;
        if (d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL)) software = *p;
    }
    const bool eight_bit = luma_depth(cc->sw_pix_fmt) == 8;
    if (hw_ != Hw::kOff && cuda && eight_bit) {
        cuda_chosen_ = true;
        return AV_PIX_FMT_CUDA;
    }
    if (hw_ == Hw::kOff) return software;
    const std::string kind = stream_kind(cc->codec_id, cc->profile, cc->sw_pix_fmt);
    // decode.c's "Failed setup for format cuda" follows nvdec.c's own reason.
    std::string log = t_last_av_log;
    if (starts_with(log, "Failed setup for format") && !t_previous_av_log.empty())
        log = t_previous_av_log;
    const std::string why = cuda_chosen_ ? "refused" + (log.empty() ? "" : ": " + log)
                                         : "no NVDEC format offered";
    const std::string note = !eight_bit ? eight_bit_only_note(kind)
                                        : "NVDEC does not decode " + kind + " here (" + why +
                                              "): decoding on the CPU";
    if (hw_ == Hw::kProbing) {
        // Nothing decoded yet: give up here and let a threaded software decoder start over.
        refusal_ = note;
        return AV_PIX_FMT_NONE;
    }
    // The stream changed under a running NVDEC decode: carry on in software in this context.
    hw_ = Hw::kOff;
    decode_note_ = "after frame " + std::to_string(delivered_ - 1) + ": " + note;
    return software;
}

// While probing: whether NVDEC has failed, judging the last receive (received: the frame) or
// send (received: nullptr). A frame in device memory ends the probe.
bool LibavSource::probe_failed(int ret, const AVFrame* received) {
    if (!refusal_.empty()) return true;
    if (received && ret == 0) {
        if (received->format == AV_PIX_FMT_CUDA) {
            hw_ = Hw::kOn;
            probe_packets_.clear();
            return false;
        }
        refusal_ = "NVDEC did not take this stream: decoding on the CPU";
        return true;
    }
    if (received && ret == AVERROR_EOF) {
        refusal_ = "NVDEC delivered no frame: decoding on the CPU";
        return true;
    }
    if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF && cuda_chosen_) {
        std::string reason = av_error_string(ret);
        refusal_ = "NVDEC failed on the first frame (" + reason + log_detail(reason) +
                   "): decoding on the CPU";
        return true;
    }
    return false;
}

// Starts a software decoder on the packets NVDEC was given, so no frame is lost.
bool LibavSource::fall_back_to_software() {
    decode_note_ = refusal_;
    if (probe_packets_dropped_ > 0)
        decode_note_ += " (the first " + std::to_string(probe_packets_dropped_) +
                        " packets were not kept; their frames are missing)";
    hw_ = Hw::kOff;
    av_frame_unref(frame_.get());
    codec_.reset();
    hw_device_.reset();
    replay_ = std::move(probe_packets_);
    probe_packets_.clear();
    draining_ = false;
    // The replayed packets are counted again; the dropped ones are lost frames.
    accounting_ = FrameAccounting{};
    accounting_.lose(probe_packets_dropped_);
    // The software decoder meets the same packets again and reports their errors itself.
    decode_errors_ = 0;
    first_decode_error_after_ = -1;
    first_decode_error_.clear();
    std::string message;
    if (!open_decoder(false, &message)) {
        error_ = message;
        return false;
    }
    return true;
}

void LibavSource::note_decode_error(const std::string& what) {
    if (decode_errors_++ == 0) {
        first_decode_error_after_ = delivered_;
        first_decode_error_ = what + log_detail(what);
    }
}

ReadStatus LibavSource::fail(const std::string& message, EndReason reason) {
    finished_ = true;
    final_status_ = ReadStatus::kError;
    end_ = reason;
    error_ = message;
    return final_status_;
}

ReadStatus LibavSource::fail_io(const std::string& what) {
    const auto [message, reason] = io_failure(what);
    return fail(message, reason);
}

std::pair<std::string, EndReason> LibavSource::io_failure(const std::string& what) const {
    if (deadline_.interrupted || (options_.stop && options_.stop->load()))
        return {"'" + name_ + "': interrupted", EndReason::kInterrupted};
    const std::string failure = reader_ ? reader_->failure() : std::string();
    if (!deadline_.expired && !failure.empty()) {
        const bool stalled = failure.find("read timeout") != std::string::npos;
        return {"'" + name_ + "' " + what + ": " + failure, stalled ? EndReason::kStalled : EndReason::kFailed};
    }
    return {"'" + name_ + "' stopped sending data: nothing for " + format_fps(options_.read_timeout_s) +
                " s (read timeout)",
            EndReason::kStalled};
}

SourceReport LibavSource::report() const {
    SourceReport r;
    r.end = end_;
    r.delivered = delivered_;
    r.lost = accounting_.lost();
    r.lost_at = accounting_.lost_at();
    const long tolerance = duration_count_ ? 1 : 0;  // a rounded duration x fps
    if (!live_ && declared_frames_ > 0 && finished_ && packets_read_ + tolerance < declared_frames_)
        r.missing_at_end = declared_frames_ - packets_read_;
    r.concealed = concealed_;
    r.resized = resized_;
    r.resize_note = resize_note_;
    return r;
}

// "frames 3, 17 and 18" / "frame 3" / "frames 3, 4, ... (20 listed of 57)"
std::string list_frames(const std::vector<long>& at, long total) {
    std::string s = at.size() == 1 ? "frame " : "frames ";
    for (std::size_t i = 0; i < at.size(); ++i)
        s += (i == 0 ? "" : i + 1 == at.size() && static_cast<long>(at.size()) == total ? " and " : ", ") +
             std::to_string(at[i]);
    if (static_cast<long>(at.size()) < total) s += ", ... (" + std::to_string(total - static_cast<long>(at.size())) + " more)";
    return s;
}

// What the end of input means; see the policy in frame_source.h.
ReadStatus LibavSource::finish() {
    finished_ = true;
    if (!live_) accounting_.end_of_stream();
    const std::string last = last_index_ >= 0 ? std::to_string(last_index_) : std::string();
    if (delivered_ == 0) {
        std::string why = demux_error_ ? av_error_string(demux_error_) + demux_error_detail_
                        : decode_errors_ ? first_decode_error_
                                         : std::string("the video stream has no frames");
        return fail("'" + name_ + "': no frame could be decoded: " + why);
    }
    // image2 probes ahead past a hole and then fails to open the missing file; the gap is
    // what the user needs to hear about.
    if (sequence_beyond_gap_ > 0) {
        SequencePattern sp;
        parse_sequence_pattern(input_.url, &sp);
        return fail("image sequence '" + input_.url + "' has a gap: " +
                        sp.name(sequence_start_ + frame_count_) + " is missing, so " +
                        std::to_string(sequence_beyond_gap_) + " image(s) after it were not read",
                    EndReason::kDamaged);
    }
    const long lost = accounting_.lost();
    const std::string lost_text =
        lost > 0 ? std::to_string(lost) + " frame(s) missing or undecodable (" +
                       list_frames(accounting_.lost_at(), lost) + ")"
                 : std::string();
    if (demux_error_) {
        if (live_)
            return fail("'" + name_ + "' stopped after frame " + last + ": " + av_error_string(demux_error_) +
                        demux_error_detail_);
        return fail("'" + name_ + "' is corrupt after frame " + last + ": " + av_error_string(demux_error_) +
                        demux_error_detail_ + (lost > 0 ? "; " + lost_text : std::string()),
                    EndReason::kDamaged);
    }
    if (live_) {
        final_status_ = ReadStatus::kEnd;
        end_ = EndReason::kClean;
        return final_status_;
    }
    const SourceReport r = report();
    const std::string errors =
        std::to_string(decode_errors_) + " decoding error(s), the first near frame " +
        std::to_string(first_decode_error_after_) + ": " + first_decode_error_;
    // Missing frames matter most (a cut file's last packet also fails to decode, which is
    // not news); the decoding errors come second.
    if (r.missing_at_end > 0)
        return fail("'" + name_ + "' ended early: " + std::to_string(packets_read_) + " of " +
                        std::to_string(declared_frames_) + " frames read, " + std::to_string(delivered_) +
                        " decoded (input truncated or corrupt after frame " + last + ")" +
                        (lost > 0 ? "; " + lost_text : std::string()) +
                        (decode_errors_ > 0 ? "; " + errors : std::string()),
                    EndReason::kDamaged);
    if (lost > 0)
        return fail("'" + name_ + "' is damaged: " + lost_text + (decode_errors_ > 0 ? "; " + errors : std::string()),
                    EndReason::kDamaged);
    if (decode_errors_ > 0) return fail("'" + name_ + "' is corrupt: " + errors, EndReason::kDamaged);
    final_status_ = ReadStatus::kEnd;
    end_ = EndReason::kClean;
    return final_status_;
}

ReadStatus LibavSource::read(Frame& out) {
    out.decode_start = std::chrono::steady_clock::now();
    double busy_ms = 0;  // decoding and conversion; waiting for input is not decode time
    if (first_frame_ready_) {
        first_frame_ready_ = false;
        busy_ms = first_frame_ms_;
    } else {
        if (finished_) return final_status_;
        deadline_.arm(options_.read_timeout_s);
        ReadStatus status = decode_next(&busy_ms);
        if (status != ReadStatus::kFrame) return status;
    }
    const auto t0 = Clock::now();
    bool ok = convert(frame_.get(), out);
    av_frame_unref(frame_.get());
    if (!ok) return fail(error_);
    out.decode_ms = busy_ms + ms_since(t0);
    ++delivered_;
    last_index_ = out.index;
    return ReadStatus::kFrame;
}

// Runs the decoder until frame_ holds the next frame (kFrame) or the input ends (finish()).
ReadStatus LibavSource::decode_next(double* busy_ms) {
    AVFrame* f = frame_.get();
    AVPacket* pkt = packet_.get();
    long errors_in_a_row = 0;
    for (;;) {
        if (options_.stop && options_.stop->load()) return fail_io("stopped");
        auto t0 = Clock::now();
        int ret = avcodec_receive_frame(codec_.get(), f);
        *busy_ms += ms_since(t0);
        if (hw_ == Hw::kProbing && probe_failed(ret, f)) {
            if (!fall_back_to_software()) return fail(error_);
            continue;
        }
        if (ret == 0) {
            // Concealed damage: the frame is usable, but the file is not what it claims.
            if (!live_ && (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT))) {
                ++concealed_;
                note_decode_error("frame " + std::to_string(delivered_) +
                                  " decoded with concealed errors");
            }
            return ReadStatus::kFrame;
        }
        if (ret == AVERROR_EOF || (draining_ && ret == AVERROR(EAGAIN))) {
            if (pending_failure_) return fail(pending_failure_->first, pending_failure_->second);
            return finish();
        }
        if (ret != AVERROR(EAGAIN)) {
            note_decode_error(av_error_string(ret));
            if (++errors_in_a_row > 1000)
                return fail("'" + name_ + "': the decoder keeps failing: " + av_error_string(ret));
            if (draining_) continue;
        }
        t_last_av_log.clear();
        bool replayed = false;
        if (!replay_.empty()) {
            av_packet_move_ref(pkt, replay_.front().get());
            replay_.pop_front();
            replayed = true;
            ret = 0;
        } else {
            ret = av_read_frame(format_.get(), pkt);
        }
        if (ret == AVERROR(EAGAIN)) {  // non-blocking camera with no new frame yet
            if (Clock::now() >= deadline_.at) deadline_.expired = true;
            if (deadline_.interrupted || (options_.stop && options_.stop->load())) return fail_io("stopped");
            if (deadline_.expired) {
                return fail("'" + name_ + "' stopped sending frames: nothing for " +
                                format_fps(options_.read_timeout_s) + " s (read timeout)",
                            EndReason::kStalled);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            continue;
        }
        if (ret < 0) {
            if (deadline_.expired || deadline_.interrupted || ret == AVERROR_EXIT ||
                (reader_ && !reader_->failure().empty())) {
                if (deadline_.interrupted || (options_.stop && options_.stop->load()))
                    return fail_io("stopped sending data");
                // Stalled or failed: the frames already decoded come first, then the failure.
                pending_failure_ = io_failure("stopped sending data");
                draining_ = true;
                if (avcodec_send_packet(codec_.get(), nullptr) < 0)
                    return fail(pending_failure_->first, pending_failure_->second);
                continue;
            }
            if (ret != AVERROR_EOF) {
                demux_error_ = ret;
                demux_error_detail_ = log_detail(av_error_string(ret));
            }
            // Deliver what the decoder still holds, then finish() judges the end.
            draining_ = true;
            ret = avcodec_send_packet(codec_.get(), nullptr);
            if (hw_ == Hw::kProbing && probe_failed(ret, nullptr)) {
                if (!fall_back_to_software()) return fail(error_);
                continue;
            }
            if (ret < 0 && ret != AVERROR_EOF) return finish();
            continue;
        }
        if (pkt->stream_index != stream_index_) {
            av_packet_unref(pkt);
            continue;
        }
        if (hw_ == Hw::kProbing) {
            // Kept for a software decoder, should NVDEC refuse the stream. Bounded: a stream
            // that yields no frame for this long (waiting for a keyframe) loses its oldest.
            constexpr std::size_t kMaxProbePackets = 512;
            if (probe_packets_.size() == kMaxProbePackets) {
                probe_packets_.pop_front();
                ++probe_packets_dropped_;
            }
            probe_packets_.emplace_back(av_packet_clone(pkt));
            if (!probe_packets_.back()) return fail("out of memory (av_packet_clone)");
        }
        // Every packet is a source frame (edit-list preroll marked discard is never shown).
        if (!replayed) ++packets_read_;
        if (!live_ && !(pkt->flags & AV_PKT_FLAG_DISCARD))
            accounting_.packet_sent(pkt->pts, pkt->dts, pkt->duration);  // AV_NOPTS_VALUE == kNoTimestamp
        t0 = Clock::now();
        ret = avcodec_send_packet(codec_.get(), pkt);
        *busy_ms += ms_since(t0);
        av_packet_unref(pkt);
        if (hw_ == Hw::kProbing && probe_failed(ret, nullptr)) {
            if (!fall_back_to_software()) return fail(error_);
            continue;
        }
        if (ret < 0 && ret != AVERROR(EAGAIN)) {
            note_decode_error(av_error_string(ret));
            if (++errors_in_a_row > 1000)
                return fail("'" + name_ + "': the decoder keeps failing: " + av_error_string(ret));
        } else {
            errors_in_a_row = 0;
        }
    }
}

bool LibavSource::convert(const AVFrame* f, Frame& out) {
    const Size decoded{f->width, f->height};
    if (decoded.width < 1 || decoded.height < 1) {
        error_ = "'" + name_ + "': the decoder returned a frame of size " + std::to_string(decoded.width) + "x" +
                 std::to_string(decoded.height);
        return false;
    }
    // The first frame fixes the size of every frame (see frame_source.h, resolution changes).
    if (out_size_.width == 0) out_size_ = decoded;
    if (f->format == AV_PIX_FMT_CUDA) {
        if (!convert_device(f, out)) return false;
    } else {
        out.device = DeviceLuma{};  // releases the surface a reused slot may still hold
        if (!convert_host(f, out)) return false;
    }
    stamp(f, out);
    out.decoded_size = decoded;
    if (decoded != out_size_) {
        if (resized_++ == 0)
            resize_note_ = "frame " + std::to_string(out.index) + " is " + std::to_string(decoded.width) + "x" +
                           std::to_string(decoded.height) + " where the first frame was " +
                           std::to_string(out_size_.width) + "x" + std::to_string(out_size_.height) +
                           ": frames of another size are scaled to " + std::to_string(out_size_.width) + "x" +
                           std::to_string(out_size_.height) + " (boxes stay in the first frame's coordinates)";
    }
    return true;
}

// The swscale contexts for f's format, size and colours (rebuilt only when they change).
bool LibavSource::prepare_conversion(const AVFrame* f) {
    const int w = f->width, h = f->height;
    bool full_range = f->color_range == AVCOL_RANGE_JPEG;
    const AVPixelFormat src_format =
        without_jpeg_range(static_cast<AVPixelFormat>(f->format), &full_range);
    ConversionKey key{w, h, src_format, full_range ? 1 : 0, f->colorspace};
    if (key == conversion_key_) return true;
    conversion_key_ = ConversionKey{};
    const int ow = out_size_.width, oh = out_size_.height;
    gray_sws_.reset(sws_getCachedContext(gray_sws_.release(), w, h, src_format, ow, oh,
                                         AV_PIX_FMT_GRAY8, SWS_BILINEAR | SWS_ACCURATE_RND,
                                         nullptr, nullptr, nullptr));
    if (options_.want_rgb)
        rgb_sws_.reset(sws_getCachedContext(rgb_sws_.release(), w, h, src_format, ow, oh,
                                            AV_PIX_FMT_RGB24, SWS_BILINEAR | SWS_ACCURATE_RND,
                                            nullptr, nullptr, nullptr));
    if (!gray_sws_ || (options_.want_rgb && !rgb_sws_)) {
        const char* fmt_name = av_get_pix_fmt_name(src_format);
        error_ = "'" + name_ + "': cannot convert frames of pixel format " +
                 (fmt_name ? fmt_name : "unknown") + " (sws_getCachedContext failed)";
        return false;
    }
    // Unspecified colorspace: BT.601, as swscale and most players assume for SD.
    int cs = f->colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709
           : f->colorspace == AVCOL_SPC_BT2020_NCL || f->colorspace == AVCOL_SPC_BT2020_CL
               ? SWS_CS_BT2020
               : SWS_CS_ITU601;
    const int* coeffs = sws_getCoefficients(cs);
    for (SwsContext* s : {gray_sws_.get(), rgb_sws_.get()}) {
        // Fails (-1) for RGB and grey sources, which have no YUV range to set: harmless.
        if (s) sws_setColorspaceDetails(s, coeffs, full_range ? 1 : 0, coeffs, 1, 0, 1 << 16,
                                        1 << 16);
    }
    conversion_key_ = key;
    return true;
}

bool LibavSource::scale_rgb(const AVFrame* f, Frame& out) {
    const int w = out_size_.width, h = out_size_.height;
    out.rgb.resize(static_cast<std::size_t>(w) * 3 * h);
    uint8_t* rgb_dst[4] = {out.rgb.data(), nullptr, nullptr, nullptr};
    int rgb_stride[4] = {3 * w, 0, 0, 0};
    if (sws_scale(rgb_sws_.get(), f->data, f->linesize, 0, f->height, rgb_dst, rgb_stride) != h) {
        error_ = "'" + name_ + "': sws_scale to RGB24 failed (frame_source.cpp:" +
                 std::to_string(__LINE__) + ")";
        return false;
    }
    return true;
}

bool LibavSource::convert_host(const AVFrame* f, Frame& out) {
    if (!prepare_conversion(f)) return false;
    const int w = out_size_.width, h = out_size_.height;
    out.width = w;
    out.height = h;
    out.luma.resize(static_cast<std::size_t>(w) * h);
    uint8_t* gray_dst[4] = {out.luma.data(), nullptr, nullptr, nullptr};
    int gray_stride[4] = {w, 0, 0, 0};
    if (sws_scale(gray_sws_.get(), f->data, f->linesize, 0, f->height, gray_dst, gray_stride) != h) {
        error_ = "'" + name_ + "': sws_scale to GRAY8 failed (frame_source.cpp:" +
                 std::to_string(__LINE__) + ")";
        return false;
    }
    if (options_.want_rgb) return scale_rgb(f, out);
    out.rgb.clear();
    return true;
}

// An NVDEC frame: the Y plane stays on the device, kept mapped by a reference to the frame.
// Host copies only where asked for; each waits for the CUDA stream (cuda_transfer_data).
bool LibavSource::convert_device(const AVFrame* f, Frame& out) {
    const int w = f->width, h = f->height;
    if (Size{w, h} != out_size_) {
        // Another size than the first frame's: the kernels cannot take it as is. The frame goes
        // to the host and is scaled there like a software frame (rare: a resolution change).
        out.device = DeviceLuma{};
        AVFrame* host = download_frame(f);
        return host && convert_host(host, out);
    }
    AVFrame* ref = av_frame_clone(f);
    if (!ref) {
        error_ = "'" + name_ + "': out of memory (av_frame_clone)";
        return false;
    }
    out.width = w;
    out.height = h;
    out.device.data = ref->data[0];
    out.device.pitch = static_cast<std::size_t>(ref->linesize[0]);
    out.device.owner = std::shared_ptr<void>(ref, [](void* p) {
        auto* frame = static_cast<AVFrame*>(p);
        av_frame_free(&frame);
    });
    if (!options_.want_rgb) {
        out.rgb.clear();
        if (!options_.want_host_luma) {
            out.luma.clear();
            return true;
        }
        return download_luma(f, out);
    }
    // RGB needs the whole frame on the host: NV12 into a reused frame, then swscale.
    AVFrame* host = download_frame(f);
    if (!host) return false;
    if (options_.want_host_luma) {
        out.luma.resize(static_cast<std::size_t>(w) * h);
        for (int y = 0; y < h; ++y)
            std::memcpy(out.luma.data() + static_cast<std::size_t>(y) * w,
                        host->data[0] + static_cast<std::ptrdiff_t>(y) * host->linesize[0], w);
    } else {
        out.luma.clear();
    }
    return prepare_conversion(host) && scale_rgb(host, out);
}

// The whole NV12 frame in host memory (a frame reused while the size stays), or nullptr.
AVFrame* LibavSource::download_frame(const AVFrame* f) {
    const int w = f->width, h = f->height;
    const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
    AVFrame* host = host_frame_.get();
    if (!host || host->width != w || host->height != h || host->format != frames->sw_format) {
        host_frame_.reset(av_frame_alloc());
        host = host_frame_.get();
        if (!host) {
            error_ = "'" + name_ + "': out of memory (av_frame_alloc)";
            return nullptr;
        }
        host->format = frames->sw_format;
        host->width = w;
        host->height = h;
        if (!CT_AV_CHECK(av_frame_get_buffer(host, 0))) return nullptr;
    }
    if (!CT_AV_CHECK(av_hwframe_transfer_data(host, f, 0))) return nullptr;
    host->color_range = f->color_range;
    host->colorspace = f->colorspace;
    return host;
}

// Copies only the Y plane, straight into Frame::luma (pinned when a GPU is present):
// cuda_transfer_data copies the planes of the source up to the first null data pointer, so a
// reference to the frame with its chroma pointers cleared moves just the luma.
bool LibavSource::download_luma(const AVFrame* f, Frame& out) {
    const int w = f->width, h = f->height;
    out.luma.resize(static_cast<std::size_t>(w) * h);
    if (!y_src_) y_src_.reset(av_frame_alloc());
    if (!y_dst_) y_dst_.reset(av_frame_alloc());
    AVFrame* src = y_src_.get();
    AVFrame* dst = y_dst_.get();
    if (!src || !dst) {
        error_ = "'" + name_ + "': out of memory (av_frame_alloc)";
        return false;
    }
    if (!CT_AV_CHECK(av_frame_ref(src, f))) return false;
    for (int i = 1; i < AV_NUM_DATA_POINTERS; ++i) src->data[i] = nullptr;
    const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
    dst->format = frames->sw_format;
    dst->width = w;
    dst->height = h;
    dst->data[0] = out.luma.data();
    dst->linesize[0] = w;
    // av_hwframe_transfer_data wants an owned destination; this one owns nothing.
    dst->buf[0] = av_buffer_create(out.luma.data(), out.luma.size(),
                                   [](void*, uint8_t*) {}, nullptr, 0);
    bool ok = dst->buf[0] != nullptr;
    if (!ok)
        error_ = "'" + name_ + "': out of memory (av_buffer_create)";
    else
        ok = CT_AV_CHECK(av_hwframe_transfer_data(dst, src, 0));
    av_frame_unref(dst);
    av_frame_unref(src);
    return ok;
}

void LibavSource::stamp(const AVFrame* f, Frame& out) {
    int64_t ts = f->best_effort_timestamp;
    if (ts != AV_NOPTS_VALUE && origin_ts_ == AV_NOPTS_VALUE) origin_ts_ = ts;
    if (ts != AV_NOPTS_VALUE)
        out.pts = (ts - origin_ts_) * av_q2d(time_base_);
    else
        out.pts = fps_ > 0 ? delivered_ / fps_ : 0.0;
    // Files and sequences: the frame's place in the source, so that a frame that failed to
    // decode leaves a gap instead of shifting every later index against the ground truth
    // (image2 stamps image k with k - start). Live sources count what they deliver.
    if (live_)
        out.index = delivered_;
    else
        out.index = accounting_.frame_out(f->pts == AV_NOPTS_VALUE ? FrameAccounting::kNoTimestamp : f->pts);
}

}  // namespace

const char* to_string(DecodeMode mode) {
    switch (mode) {
    case DecodeMode::kSoftware: return "sw";
    case DecodeMode::kNvdec: return "nvdec";
    case DecodeMode::kAuto: return "auto";
    }
    return "sw";
}

bool parse_decode_mode(const std::string& text, DecodeMode* out) {
    for (DecodeMode m : {DecodeMode::kSoftware, DecodeMode::kNvdec, DecodeMode::kAuto}) {
        if (text == to_string(m)) {
            *out = m;
            return true;
        }
    }
    return false;
}

std::vector<std::string> input_paths(const std::string& input) {
    SourceOptions o;
    o.input = input;
    ResolvedInput r;
    std::string error;
    if (input.empty() || !resolve_input(o, &r, &error)) return {input};
    if (r.kind != SourceKind::kFile && r.kind != SourceKind::kImageSequence) return {};
    if (r.url.rfind("pipe:", 0) == 0 || r.url == "-") return {};
    std::vector<std::string> paths{r.url};
    std::error_code ec;
    if (r.url != input && fs::is_directory(input, ec)) paths.push_back(input);
    return paths;
}

std::unique_ptr<FrameSource> FrameSource::open(const SourceOptions& options, std::string* error) {
    std::string message;
    ResolvedInput input;
    if (!resolve_input(options, &input, &message)) {
        if (error) *error = message;
        return nullptr;
    }
    auto source = std::make_unique<LibavSource>();
    if (!source->open(options, input, &message)) {
        if (error) *error = message;
        return nullptr;
    }
    return source;
}

}  // namespace corrtrack
