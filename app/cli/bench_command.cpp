// `corrtrack bench`: times registered kernels over frame sizes x template sizes x search modes
// on random data, then prints a table and writes CSV, JSON and a PNG plot. With --batch N,
// window cases also time N targets as one batched run against N separate run() calls.
// Thread rules: main thread only; owns one CUDA stream and two timing events when GPU kernels
// run, and synchronizes that stream after every timed run.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/bench/e2e_bench.h"
#include "app/cli/commands.h"
#include "app/cli/output_paths.h"
#include "app/eval/plot.h"
#include "app/io/output_file.h"
#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

// ---------------------------------------------------------------------------------------------
// Options and the plan they describe

struct BenchOptions {
    std::string kernels;
    std::string sizes = "640x480,1920x1080,3840x2160";
    std::string templates = "8,16,32,64,128,48x24";
    std::string modes = "full,window";
    int runs = 20;
    int warmup = 3;
    double max_seconds = 2.0;
    double max_total_seconds = 0.0;
    double hang_seconds = 0.0;  // 0: max(60, 30 x max_seconds)
    std::string csv, plot, json;
    std::uint32_t seed = 1;
    double peak_gmacs = 0.0;
    std::vector<std::string> ratio_to;
    bool variants = false;  // also time the tuning variants (kernel_variants())
    bool quiet = false;
    int batch = 0;          // window cases: also time this many targets batched vs separately (0: off)
};

// GPU medians need enough samples to be stable; CPU kernels may time fewer to fit the budget.
constexpr int kMinGpuRuns = 20;
constexpr int kMinCpuRuns = 5;
// The tracking window is this many template sides wide and high, centred in the frame.
constexpr int kWindowFactor = 3;
// Baselines every row is compared with (time_baseline / time_kernel).
const char* const kBaselines[] = {"cuda_shared", "cuda_fft"};
// --batch at most this many targets (one correlator each for the separate calls).
constexpr int kMaxBatch = 1024;
// Frames up to 16384 a side and 8192x8192 pixels: a float map of the largest is 256 MiB.
constexpr int kMaxFrameSide = 16384;
constexpr long long kMaxFrameArea = 8192LL * 8192;

enum class Mode { kFull, kWindow };

const char* mode_name(Mode m) { return m == Mode::kFull ? "full" : "window"; }

std::string size_text(Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }

struct Case {
    Size frame, templ;
    Mode mode = Mode::kFull;

    NccProblem problem() const {
        if (mode == Mode::kFull) return NccProblem::full_frame(frame, templ);
        const int w = std::min(kWindowFactor * templ.width, frame.width);
        const int h = std::min(kWindowFactor * templ.height, frame.height);
        return {frame, templ, Rect{(frame.width - w) / 2, (frame.height - h) / 2, w, h}, 1};
    }
    long long positions() const {
        const Size o = problem().out_size();
        return o.width > 0 && o.height > 0 ? o.area() : 0;
    }
    double macs() const { return static_cast<double>(positions()) * static_cast<double>(templ.area()); }
    std::string key() const { return size_text(frame) + "|" + size_text(templ) + "|" + mode_name(mode); }
};

struct Plan {
    std::vector<const KernelEntry*> kernels;  // registry order
    std::vector<Size> sizes, templates;       // ascending pixel count
    std::vector<Mode> modes;
    std::vector<std::string> ratio_to;        // extra "x NAME" columns
};

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        if (!trim(item).empty()) items.push_back(trim(item));
    return items;
}

bool parse_int(const std::string& s, int* v) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *v = std::stoi(s);
    return *v > 0;
}

// "WxH", or "N" for N x N when square_ok.
bool parse_size(const std::string& text, bool square_ok, Size* out) {
    const auto x = text.find_first_of("xX");
    if (x == std::string::npos) {
        int n = 0;
        if (!square_ok || !parse_int(text, &n)) return false;
        *out = {n, n};
        return true;
    }
    return parse_int(text.substr(0, x), &out->width) && parse_int(text.substr(x + 1), &out->height);
}

std::string known_kernels() {
    std::string names;
    for (const KernelEntry& e : kernel_registry()) names += std::string(names.empty() ? "" : ", ") + e.name;
    return names;
}

std::string unknown_kernel_message(const std::string& name, const char* option) {
    std::string msg = std::string(option) + ": unknown kernel '" + name + "' (known: " + known_kernels() + ")";
    if (name == "cpu_opencv") msg += "; cpu_opencv is built only when OpenCV is found";
    return msg;
}

bool make_plan(const BenchOptions& o, Plan* plan, std::string* error) {
    if (o.kernels.empty()) {
        for (const KernelEntry& e : kernel_registry())
            if (std::string(e.name) != "auto" && e.available()) plan->kernels.push_back(&e);
    } else {
        const std::vector<std::string> names = split_list(o.kernels);
        for (const std::string& name : names) {
            if (!find_kernel(name)) {
                *error = unknown_kernel_message(name, "--kernels");
                return false;
            }
        }
        for (const auto* list : {&kernel_registry(), &kernel_variants()})
            for (const KernelEntry& e : *list)
                if (std::find(names.begin(), names.end(), e.name) != names.end()) plan->kernels.push_back(&e);
    }
    if (o.variants)
        for (const KernelEntry& e : kernel_variants())
            if (e.available() && std::find(plan->kernels.begin(), plan->kernels.end(), &e) == plan->kernels.end())
                plan->kernels.push_back(&e);
    if (plan->kernels.empty()) {
        *error = "--kernels: no kernel to run";
        return false;
    }
    for (const std::string& s : split_list(o.sizes)) {
        Size size;
        if (!parse_size(s, false, &size)) {
            *error = "--sizes: malformed frame size '" + s + "' (expected WIDTHxHEIGHT, e.g. 1920x1080)";
            return false;
        }
        if (size.width > kMaxFrameSide || size.height > kMaxFrameSide || size.area() > kMaxFrameArea) {
            *error = "--sizes: frame size '" + s + "' is too large (at most " + std::to_string(kMaxFrameSide) +
                     " a side and " + std::to_string(kMaxFrameArea) + " pixels)";
            return false;
        }
        plan->sizes.push_back(size);
    }
    for (const std::string& s : split_list(o.templates)) {
        Size size;
        if (!parse_size(s, true, &size)) {
            *error = "--templates: malformed template size '" + s + "' (expected N or WIDTHxHEIGHT, e.g. 32 or 48x24)";
            return false;
        }
        if (size.width > kMaxFrameSide || size.height > kMaxFrameSide) {
            *error = "--templates: template size '" + s + "' is too large (at most " +
                     std::to_string(kMaxFrameSide) + " a side)";
            return false;
        }
        plan->templates.push_back(size);
    }
    for (const std::string& s : split_list(o.modes)) {
        if (s != "full" && s != "window") {
            *error = "--modes: unknown mode '" + s + "' (expected full and/or window)";
            return false;
        }
        const Mode m = s == "full" ? Mode::kFull : Mode::kWindow;
        if (std::find(plan->modes.begin(), plan->modes.end(), m) == plan->modes.end()) plan->modes.push_back(m);
    }
    if (plan->sizes.empty() || plan->templates.empty() || plan->modes.empty()) {
        *error = "--sizes, --templates and --modes each need at least one entry";
        return false;
    }
    for (const std::string& name : o.ratio_to) {
        if (!find_kernel(name)) {
            *error = unknown_kernel_message(name, "--ratio-to");
            return false;
        }
        if (std::find(plan->ratio_to.begin(), plan->ratio_to.end(), name) == plan->ratio_to.end() &&
            std::find(std::begin(kBaselines), std::end(kBaselines), name) == std::end(kBaselines))
            plan->ratio_to.push_back(name);
    }
    const auto by_area = [](Size a, Size b) { return a.area() < b.area(); };
    const auto dedupe = [](std::vector<Size>& v) {
        std::vector<Size> u;
        for (Size s : v)
            if (std::find(u.begin(), u.end(), s) == u.end()) u.push_back(s);
        v = u;
    };
    dedupe(plan->sizes);
    dedupe(plan->templates);
    std::stable_sort(plan->sizes.begin(), plan->sizes.end(), by_area);
    std::stable_sort(plan->templates.begin(), plan->templates.end(), by_area);
    if (o.batch < 0 || o.batch > kMaxBatch) {
        *error = "--batch must be between 0 (off) and " + std::to_string(kMaxBatch);
        return false;
    }
    if (o.runs < 1 || o.warmup < 0 || !(o.max_seconds > 0) || o.max_total_seconds < 0 || o.hang_seconds < 0 ||
        o.peak_gmacs < 0) {
        *error = "--runs must be >= 1, --warmup >= 0, --max-seconds > 0; --max-total-seconds, --hang-seconds "
                 "and --peak-gmacs >= 0";
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// The machine: GPU, DP4A peak, CPU, date and command line for the report header

struct GpuInfo {
    bool present = false;
    std::string description, name;
    int sms = 0, major = 0, minor = 0;
    double clock_mhz = 0;
    std::string clock_source;
    int dp4a_per_clock = 0;  // DP4A instructions per clock per SM
    double peak_gmacs = 0;   // 0: unknown
    std::string peak_note;
};

// Boost clocks (MHz) for GPUs whose driver may not report cudaDevAttrClockRate.
double known_boost_clock_mhz(const std::string& name) {
    static const std::pair<const char*, double> table[] = {
        {"H200", 1980}, {"H100 PCIe", 1755}, {"H100", 1980}, {"H800", 1980}, {"A100", 1410},
        {"A800", 1410}, {"L40S", 2520},      {"L40", 2490},  {"L4", 2040},   {"RTX 4090", 2520},
        {"A10", 1695},  {"T4", 1590},        {"V100", 1530},
    };
    for (const auto& [key, mhz] : table)
        if (name.find(key) != std::string::npos) return mhz;
    return 0;
}

// DP4A issue rate per SM: Volta and later run 64 per clock (one per INT32 lane); Pascal
// sm_61/62 runs 128; earlier GPUs have no DP4A.
int dp4a_per_clock_per_sm(int major, int minor) {
    if (major >= 7) return 64;
    if (major == 6 && minor >= 1) return 128;
    return 0;
}

GpuInfo query_gpu(double peak_override) {
    GpuInfo g;
    if (peak_override > 0) {
        g.peak_gmacs = peak_override;
        g.peak_note = "DP4A peak " + std::to_string(static_cast<long long>(peak_override)) + " GMAC/s (--peak-gmacs)";
    }
    if (!cuda_available()) return g;
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        cudaGetLastError();
        return g;
    }
    g.present = true;
    g.description = cuda_device_description();
    g.name = prop.name;
    g.sms = prop.multiProcessorCount;
    g.major = prop.major;
    g.minor = prop.minor;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess && khz > 0) {
        g.clock_mhz = khz / 1000.0;
        g.clock_source = "cudaDevAttrClockRate";
    } else {
        cudaGetLastError();
        g.clock_mhz = known_boost_clock_mhz(g.name);
        g.clock_source = "corrtrack's boost-clock table";
    }
    g.dp4a_per_clock = dp4a_per_clock_per_sm(g.major, g.minor);
    if (peak_override > 0) return g;
    char buf[320];
    if (g.clock_mhz > 0 && g.dp4a_per_clock > 0) {
        g.peak_gmacs = g.sms * g.clock_mhz * 1e-3 * g.dp4a_per_clock * 4;
        std::snprintf(buf, sizeof buf,
                      "DP4A peak = %d SMs x %.0f MHz (%s) x %d DP4A/clk/SM x 4 MAC = %.0f GMAC/s",
                      g.sms, g.clock_mhz, g.clock_source.c_str(), g.dp4a_per_clock, g.peak_gmacs);
    } else {
        std::snprintf(buf, sizeof buf, "DP4A peak unknown for %s (sm_%d%d); give --peak-gmacs",
                      g.name.c_str(), g.major, g.minor);
    }
    g.peak_note = buf;
    return g;
}

std::string cuda_version_text(int v) {
    return v > 0 ? std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) : "none";
}

std::string first_line_matching(const char* path, const char* prefix) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0) return line;
    return {};
}

std::string driver_text() {
    int api = 0;
    if (cudaDriverGetVersion(&api) != cudaSuccess) cudaGetLastError();
    std::string kernel_module;
    std::smatch m;
    const std::string line = first_line_matching("/proc/driver/nvidia/version", "NVRM version:");
    if (std::regex_search(line, m, std::regex(R"(\b(\d+\.\d+(\.\d+)?)\b)"))) kernel_module = m[1];
    if (kernel_module.empty() && api == 0) return "none";
    return (kernel_module.empty() ? "unknown" : kernel_module) + " (CUDA driver API " + cuda_version_text(api) + ")";
}

std::string cpu_text() {
    std::string line = first_line_matching("/proc/cpuinfo", "model name");
    const auto colon = line.find(':');
    std::string model = colon == std::string::npos ? "unknown CPU" : trim(line.substr(colon + 1));
    return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " hardware threads)";
}

std::string utc_now_iso() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// The exact argv of this process, shell-quoted where needed.
std::string command_line() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.empty()) return "corrtrack bench (command line unavailable)";
    std::string out;
    std::stringstream args(raw);
    for (std::string a; std::getline(args, a, '\0');) {
        const bool plain = !a.empty() && a.find_first_not_of(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./,:=+%@") == std::string::npos;
        std::string q = a;
        if (!plain) {
            q = "'";
            for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
            q += "'";
        }
        out += (out.empty() ? "" : " ") + q;
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Data: random frames and templates, device copies, output maps

struct HostImage {
    std::vector<std::uint8_t> bytes;
    Size size;
    std::size_t pitch = 0;
    ImageView view() const { return {bytes.data(), size.width, size.height, pitch, MemorySpace::kHost}; }
};

// Random bytes from mt19937 (specified bit for bit by the standard), so a seed means the same
// data everywhere. Random templates are asymmetric, which is what every kernel must handle.
HostImage random_image(Size s, std::uint32_t seed, std::size_t align) {
    HostImage img;
    img.size = s;
    img.pitch = (static_cast<std::size_t>(s.width) + align - 1) / align * align;
    img.bytes.resize(img.pitch * s.height);
    std::mt19937 rng(seed ^ (static_cast<std::uint32_t>(s.width) * 73856093u) ^
                     (static_cast<std::uint32_t>(s.height) * 19349663u));
    for (std::uint8_t& b : img.bytes) b = static_cast<std::uint8_t>(rng() >> 24);
    return img;
}

class DeviceImage {
public:
    explicit DeviceImage(const HostImage& host) : size_(host.size) {
        CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&ptr_), &pitch_, size_.width, size_.height));
        CORRTRACK_CUDA(cudaMemcpy2D(ptr_, pitch_, host.bytes.data(), host.pitch, size_.width, size_.height,
                                    cudaMemcpyHostToDevice));
    }
    ~DeviceImage() { cudaFree(ptr_); }
    DeviceImage(const DeviceImage&) = delete;
    DeviceImage& operator=(const DeviceImage&) = delete;
    ImageView view() const { return {ptr_, size_.width, size_.height, pitch_, MemorySpace::kDevice}; }

private:
    Size size_;
    std::uint8_t* ptr_ = nullptr;
    std::size_t pitch_ = 0;
};

// Output maps, one per output shape and memory space, reused by every run of that shape.
class MapStore {
public:
    ~MapStore() { clear(); }
    MapStore() = default;
    MapStore(const MapStore&) = delete;
    MapStore& operator=(const MapStore&) = delete;

    MapView get(Size shape, bool device) {
        Entry& e = maps_[{shape.width, shape.height, device}];
        if (!e.data) {
            if (device) {
                std::size_t pitch_bytes = 0;
                CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&e.data), &pitch_bytes,
                                               shape.width * sizeof(float), shape.height));
                e.pitch = pitch_bytes / sizeof(float);
            } else {
                e.pitch = static_cast<std::size_t>(shape.width);
                e.host.resize(e.pitch * shape.height);
                e.data = e.host.data();
            }
        }
        return {e.data, shape.width, shape.height, e.pitch, device ? MemorySpace::kDevice : MemorySpace::kHost};
    }
    void clear() {
        for (auto& [key, e] : maps_)
            if (std::get<2>(key) && e.data) cudaFree(e.data);
        maps_.clear();
    }

private:
    struct Entry {
        float* data = nullptr;
        std::size_t pitch = 0;
        std::vector<float> host;
    };
    std::map<std::tuple<int, int, bool>, Entry> maps_;
};

// The caller-owned stream every GPU kernel runs on, and the events that time it.
class GpuTiming {
public:
    GpuTiming() {
        CORRTRACK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CORRTRACK_CUDA(cudaEventCreate(&start_));
        CORRTRACK_CUDA(cudaEventCreate(&stop_));
    }
    ~GpuTiming() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
        cudaStreamDestroy(stream_);
    }
    GpuTiming(const GpuTiming&) = delete;
    GpuTiming& operator=(const GpuTiming&) = delete;
    Stream stream() const { return stream_; }
    void synchronize() { CORRTRACK_CUDA(cudaStreamSynchronize(stream_)); }
    double time_ms(const std::function<void()>& work) {
        CORRTRACK_CUDA(cudaEventRecord(start_, stream_));
        work();
        CORRTRACK_CUDA(cudaEventRecord(stop_, stream_));
        CORRTRACK_CUDA(cudaEventSynchronize(stop_));
        float ms = 0;
        CORRTRACK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

private:
    cudaStream_t stream_ = nullptr;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

double cpu_time_ms(const std::function<void()>& work) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    return ms_since(t0);
}

// ---------------------------------------------------------------------------------------------
// Running the cases

enum class Status { kOk, kUnsupported, kSkipped, kUnavailable, kError };

// "ok", or the status and its reason; unsupported: how a kUnsupported case is named (a batch
// that the kernel cannot run is "n/a", a case it cannot run "unsupported").
std::string status_text(Status status, const std::string& note, const char* unsupported) {
    switch (status) {
        case Status::kOk: return "ok";
        case Status::kUnsupported: return std::string(unsupported) + ": " + note;
        case Status::kSkipped: return "skipped: " + note;
        case Status::kUnavailable: return "unavailable: " + note;
        case Status::kError: return "error: " + note;
    }
    return note;
}

// --batch: N targets of a window case as one batched run (an atlas of N search windows,
// templates = N, template_roi_step = window height) against N separate run() calls, one
// correlator per target, on the same windows and templates.
struct BatchResult {
    int n = 0;  // 0: not attempted (--batch off, full mode, or the case itself did not run)
    Status status = Status::kOk;
    std::string note;                         // the reason for any status but ok
    std::vector<double> batch_runs, separate_runs;  // timed runs (separate: all N calls)
    double batch_ms = 0, separate_ms = 0;     // medians

    bool attempted() const { return n > 0; }
    bool ok() const { return attempted() && status == Status::kOk; }
    double speedup() const { return ok() ? separate_ms / batch_ms : NAN; }
    std::string status_text() const {
        return attempted() ? corrtrack::status_text(status, note, "n/a") : std::string();
    }
};

struct Result {
    const KernelEntry* kernel = nullptr;
    Case c;
    Status status = Status::kOk;
    std::string note;       // the reason for any status but ok
    bool too_slow = false;  // skipped for the time budget (larger cases of it are skipped too)
    std::vector<double> ms; // timed runs
    double median_ms = 0, min_ms = 0, p90_ms = 0;
    BatchResult batch;

    bool ok() const { return status == Status::kOk; }
    bool gpu() const { return kernel->device == Device::kCuda; }
    std::string status_text() const { return corrtrack::status_text(status, note, "unsupported"); }
    double mpos_per_s() const { return c.positions() / (median_ms * 1e-3) / 1e6; }
    double gmac_per_s() const { return c.macs() / (median_ms * 1e-3) / 1e9; }
};

std::string seconds_text(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g s", ms / 1000.0);
    return buf;
}

// Runs every case. A watchdog thread guards against a kernel run that never returns (a
// deadlock, a GPU kernel that spins): it hands the finished cases plus the hung one to
// `on_hang`, which writes the outputs and ends the process.
class BenchRunner {
public:
    using HangHandler = std::function<void(std::vector<Result>)>;
    BenchRunner(const BenchOptions& o, const Plan& plan, HangHandler on_hang)
        : o_(o), plan_(plan), on_hang_(std::move(on_hang)) {}

    std::vector<Result> run() {
        const double hang_s = o_.hang_seconds > 0 ? o_.hang_seconds : std::max(60.0, 30.0 * o_.max_seconds);
        std::thread watchdog([this, hang_s] { watch(hang_s); });
        // Whatever escapes a case (bad_alloc for a frame too large for this machine) must
        // not leave the watchdog joinable: that would be std::terminate.
        std::exception_ptr failure;
        try {
            run_all();
        } catch (...) {
            failure = std::current_exception();
        }
        {
            std::lock_guard<std::mutex> lock(watch_mutex_);
            stop_watch_ = true;
        }
        watch_cv_.notify_all();
        watchdog.join();
        if (failure) std::rethrow_exception(failure);
        std::lock_guard<std::mutex> lock(results_mutex_);
        return std::move(results_);
    }

private:
    static std::int64_t now_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch()).count();
    }

    void watch(double hang_s) {
        std::unique_lock<std::mutex> lock(watch_mutex_);
        while (!stop_watch_) {
            watch_cv_.wait_for(lock, std::chrono::milliseconds(250));
            const std::int64_t since = busy_since_ns_.load();
            if (stop_watch_ || since == 0 || (now_ns() - since) * 1e-9 <= hang_s) continue;
            // Holding the results lock to the end keeps the main thread, should the call return
            // after all, from adding rows or reporting alongside.
            std::lock_guard<std::mutex> results_lock(results_mutex_);
            std::vector<Result> done = results_;
            Result hung = current_;
            hung.status = Status::kError;
            hung.ms.clear();
            char buf[160];
            std::snprintf(buf, sizeof buf, "hung: a call did not return within %.0f s (--hang-seconds); "
                          "the bench stopped here", hang_s);
            hung.note = buf;
            done.push_back(hung);
            std::fprintf(stderr, "corrtrack bench: %s %s %s %s hung; writing what was measured and stopping\n",
                         hung.kernel->name, size_text(hung.c.frame).c_str(), size_text(hung.c.templ).c_str(),
                         mode_name(hung.c.mode));
            on_hang_(std::move(done));  // does not return
        }
    }

    void run_all() {
        const bool any_gpu = std::any_of(plan_.kernels.begin(), plan_.kernels.end(), [](const KernelEntry* k) {
            return k->device == Device::kCuda && k->available();
        });
        if (any_gpu) {
            try {
                gpu_ = std::make_unique<GpuTiming>();
            } catch (const std::exception& e) {
                gpu_lost_ = std::string("cannot set up GPU timing: ") + e.what();
            }
        }
        for (Size t : plan_.templates) templates_.push_back(random_image(t, o_.seed + 1, 1));
        total_ = plan_.kernels.size() * plan_.sizes.size() * plan_.templates.size() * plan_.modes.size();
        started_ = std::chrono::steady_clock::now();
        // GPU kernels first: under --max-total-seconds they are the rows that matter most.
        for (const Device group : {Device::kCuda, Device::kCpu}) {
            for (Size size : plan_.sizes) {
                std::vector<const KernelEntry*> kernels;
                for (const KernelEntry* k : plan_.kernels)
                    if (k->device == group) kernels.push_back(k);
                if (kernels.empty()) continue;
                run_size(group, size, kernels);
            }
        }
    }

    void run_size(Device group, Size size, const std::vector<const KernelEntry*>& kernels) {
        const HostImage frame = random_image(size, o_.seed, 64);
        std::unique_ptr<DeviceImage> device_frame;
        MapStore maps;
        std::string frame_error;
        if (group == Device::kCuda && gpu_ && gpu_lost_.empty()) {
            try {
                device_frame = std::make_unique<DeviceImage>(frame);
            } catch (const std::exception& e) {
                frame_error = std::string("cannot place the frame in device memory: ") + e.what();
            }
        }
        for (const KernelEntry* k : kernels) {
            for (std::size_t t = 0; t < plan_.templates.size(); ++t) {
                for (Mode mode : plan_.modes) {
                    Result r;
                    r.kernel = k;
                    r.c = Case{size, plan_.templates[t], mode};
                    {
                        std::lock_guard<std::mutex> lock(results_mutex_);
                        current_ = r;
                    }
                    if (!frame_error.empty() && k->available()) {
                        r.status = Status::kError;
                        r.note = frame_error;
                    } else {
                        const ImageView fv = group == Device::kCuda && device_frame ? device_frame->view() : frame.view();
                        run_case(r, fv, templates_[t].view(), maps);
                        if (o_.batch > 0 && mode == Mode::kWindow && r.ok()) run_batch(r, frame, maps);
                    }
                    busy_since_ns_ = 0;
                    report_progress(r);
                    std::lock_guard<std::mutex> lock(results_mutex_);
                    results_.push_back(std::move(r));
                }
            }
        }
    }

    Correlator* correlator(const KernelEntry* k, std::string* why) {
        auto it = correlators_.find(k);
        if (it != correlators_.end()) {
            *why = it->second.second;
            return it->second.first.get();
        }
        std::unique_ptr<Correlator> c;
        std::string err;
        try {
            c = make_correlator(k->name, &err);
        } catch (const std::exception& e) {
            err = std::string("creating the kernel failed: ") + e.what();
        }
        auto& slot = correlators_[k];
        slot.first = std::move(c);
        slot.second = err;
        *why = err;
        return slot.first.get();
    }

    // A guess of one run's time from this kernel's earlier cases; `margin` says how far off it
    // may be. Same template at fewer positions scales well with the position count (direct and
    // FFT alike); a smaller template at the same frame is scaled by template pixels, which
    // overestimates FFT kernels, so only a gross excess skips on it.
    struct Prediction {
        double ms = 0;
        double margin = 1;
        std::string why;
    };
    std::optional<Prediction> predict(const Result& r) const {
        const double pos = static_cast<double>(r.c.positions());
        const Result* same_templ = nullptr;
        const Result* smaller_templ = nullptr;
        for (const Result& p : results_) {
            if (p.kernel != r.kernel || p.c.mode != r.c.mode) continue;
            if (p.c.templ == r.c.templ && p.c.positions() <= r.c.positions()) {
                if (p.too_slow)
                    return Prediction{INFINITY, 1, "already over the budget at " + size_text(p.c.frame)};
                if (p.ok() && (!same_templ || p.c.positions() > same_templ->c.positions())) same_templ = &p;
            }
            if (p.ok() && p.c.frame == r.c.frame && p.c.templ.area() < r.c.templ.area() &&
                (!smaller_templ || p.c.templ.area() > smaller_templ->c.templ.area()))
                smaller_templ = &p;
        }
        if (same_templ)
            return Prediction{same_templ->median_ms * pos / same_templ->c.positions(), 1,
                              "predicted from " + size_text(same_templ->c.frame)};
        if (smaller_templ)
            return Prediction{smaller_templ->median_ms * (pos / smaller_templ->c.positions()) *
                                  (static_cast<double>(r.c.templ.area()) / smaller_templ->c.templ.area()),
                              4, "predicted from the " + size_text(smaller_templ->c.templ) + " template"};
        return std::nullopt;
    }

    void run_case(Result& r, ImageView frame, ImageView templ, MapStore& maps) {
        const KernelEntry* k = r.kernel;
        const bool gpu = k->device == Device::kCuda;
        const double limit_ms = o_.max_seconds * 1000.0;
        if (o_.max_total_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > o_.max_total_seconds) {
            r.status = Status::kSkipped;
            r.note = "bench time limit reached (--max-total-seconds)";
            return;
        }
        if (!k->available()) {
            r.status = Status::kUnavailable;
            r.note = gpu ? "no usable CUDA GPU" : "not available on this machine";
            return;
        }
        if (gpu && !gpu_lost_.empty()) {
            r.status = Status::kSkipped;
            r.note = gpu_lost_;
            return;
        }
        std::string why;
        Correlator* kernel = correlator(k, &why);
        if (!kernel) {
            r.status = Status::kError;
            r.note = why;
            return;
        }
        const NccProblem p = r.c.problem();
        why.clear();
        if (!kernel->supports(p, &why)) {
            r.status = Status::kUnsupported;
            r.note = why.empty() ? "declined by the kernel (no reason given)" : why;
            return;
        }
        if (const auto pred = predict(r); pred && pred->ms > limit_ms * pred->margin) {
            r.status = Status::kSkipped;
            r.too_slow = true;
            r.note = "too slow (" + pred->why + (std::isfinite(pred->ms) ? ": ~" + seconds_text(pred->ms) + " per run" : "") +
                     ", budget " + seconds_text(limit_ms) + ")";
            return;
        }
        try {
            const Stream stream = gpu ? gpu_->stream() : nullptr;
            busy_since_ns_ = now_ns();
            kernel->set_template(templ, stream);
            if (gpu) gpu_->synchronize();
            const MapView out = maps.get(p.out_size(), gpu);
            const auto work = [&] { kernel->run(frame, p, out, stream); };
            const auto once = [&] {
                busy_since_ns_ = now_ns();
                return gpu ? gpu_->time_ms(work) : cpu_time_ms(work);
            };
            // The first run doubles as the budget probe; it may carry one-time setup (workspace
            // allocation, FFT plans), so a slow first run gets one second chance.
            double first = once();
            if (first > limit_ms && first <= 3 * limit_ms) first = once();
            if (first > limit_ms) {
                r.status = Status::kSkipped;
                r.too_slow = true;
                r.note = "too slow (one run took " + seconds_text(first) + ", budget " + seconds_text(limit_ms) + ")";
                return;
            }
            if (o_.warmup == 0) r.ms.push_back(first);
            double warm_ms = first;
            for (int i = 1; i < o_.warmup && (gpu || warm_ms <= limit_ms / 2); ++i) warm_ms += once();
            int runs = o_.runs;
            if (!gpu) {
                const double fit = std::min(limit_ms / std::max(first, 1e-3), 1e6);
                runs = std::clamp(static_cast<int>(fit), std::min(o_.runs, kMinCpuRuns), o_.runs);
            }
            while (static_cast<int>(r.ms.size()) < runs) r.ms.push_back(once());
            std::vector<double> sorted = r.ms;
            std::sort(sorted.begin(), sorted.end());
            const std::size_t n = sorted.size();
            r.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
            r.min_ms = sorted.front();
            r.p90_ms = sorted[static_cast<std::size_t>(std::ceil(0.9 * n)) - 1];
            if (!(r.median_ms > 0)) {
                r.status = Status::kError;
                r.note = "timer reported no elapsed time";
            }
        } catch (const std::exception& e) {
            r.status = Status::kError;
            r.note = e.what();
            r.ms.clear();
            if (gpu) check_gpu_after_error(k->name);
        }
    }

    // Window origins of the batch's targets, spread over the frame by a fixed rule (the same
    // for every kernel), so the atlas holds n different windows of the case's frame.
    static std::vector<Rect> batch_windows(Size frame, Size window, int n) {
        std::vector<Rect> w;
        for (int i = 0; i < n; ++i) {
            const int x = static_cast<int>(static_cast<long long>(frame.width - window.width) * ((37 * i + 50) % 101) / 100);
            const int y = static_cast<int>(static_cast<long long>(frame.height - window.height) * ((61 * i + 50) % 101) / 100);
            w.push_back({x, y, window.width, window.height});
        }
        return w;
    }

    // Times `work` like a case (a first run as the budget probe, warm-up, then --runs timed
    // runs, fewer for CPU kernels to fit --max-seconds). False, with the reason, when one run
    // is over the budget.
    bool time_runs(const std::function<void()>& work, bool gpu, std::vector<double>* runs, double* median,
                   std::string* why) {
        const double limit_ms = o_.max_seconds * 1000.0;
        const auto once = [&] {
            busy_since_ns_ = now_ns();
            return gpu ? gpu_->time_ms(work) : cpu_time_ms(work);
        };
        const double first = once();
        if (first > limit_ms) {
            *why = "too slow (one run took " + seconds_text(first) + ", budget " + seconds_text(limit_ms) + ")";
            return false;
        }
        if (o_.warmup == 0) runs->push_back(first);
        for (int i = 1; i < o_.warmup; ++i) once();
        int count = o_.runs;
        if (!gpu) {
            const double fit = std::min(limit_ms / std::max(first, 1e-3), 1e6);
            count = std::clamp(static_cast<int>(fit), std::min(o_.runs, kMinCpuRuns), o_.runs);
        }
        while (static_cast<int>(runs->size()) < count) runs->push_back(once());
        *median = corrtrack::median(*runs);
        return true;
    }

    // --batch N on a window case that ran: an atlas of N windows of the frame (W x N*H), N
    // random templates stacked, one batched run (templates = N, template_roi_step = H) against
    // N separate run() calls (one correlator per target, each with its template) on the same
    // atlas windows, into the same stacked output. Templates are set untimed.
    void run_batch(Result& r, const HostImage& host_frame, MapStore& maps) {
        BatchResult& b = r.batch;
        const int n = o_.batch;
        b.n = n;
        const KernelEntry* k = r.kernel;
        const bool gpu = k->device == Device::kCuda;
        if (o_.max_total_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > o_.max_total_seconds) {
            b.status = Status::kSkipped;
            b.note = "bench time limit reached (--max-total-seconds)";
            return;
        }
        const NccProblem single = r.c.problem();
        const Size window{single.roi.width, single.roi.height};
        const Size templ = r.c.templ;
        const NccProblem batched{{window.width, window.height * n}, templ, {0, 0, window.width, window.height},
                                 n, window.height};
        std::string why;
        Correlator* kernel = correlator(k, &why);
        if (!kernel) {
            b.status = Status::kError;
            b.note = why;
            return;
        }
        why.clear();
        if (!kernel->supports(batched, &why)) {
            b.status = Status::kUnsupported;
            b.note = why.empty() ? "declined by the kernel (no reason given)" : why;
            return;
        }
        HostImage atlas;
        atlas.size = batched.frame;
        atlas.pitch = static_cast<std::size_t>(window.width);
        atlas.bytes.resize(atlas.pitch * atlas.size.height);
        const std::vector<Rect> windows = batch_windows(host_frame.size, window, n);
        for (int i = 0; i < n; ++i)
            for (int y = 0; y < window.height; ++y)
                std::memcpy(&atlas.bytes[(static_cast<std::size_t>(i) * window.height + y) * atlas.pitch],
                            host_frame.view().row(windows[i].y + y) + windows[i].x, window.width);
        const HostImage stack = random_image({templ.width, templ.height * n}, o_.seed + 2, 1);
        const std::size_t templ_bytes = static_cast<std::size_t>(templ.width) * templ.height;
        try {
            std::unique_ptr<DeviceImage> device_atlas;
            if (gpu) device_atlas = std::make_unique<DeviceImage>(atlas);
            const ImageView frame = gpu ? device_atlas->view() : atlas.view();
            const Stream stream = gpu ? gpu_->stream() : nullptr;
            const Size o = single.out_size();
            const MapView out = maps.get({o.width, o.height * n}, gpu);
            std::vector<std::unique_ptr<Correlator>>& separate = separate_[k];
            while (static_cast<int>(separate.size()) < n) {
                std::string err;
                std::unique_ptr<Correlator> c = make_correlator(k->name, &err);
                if (!c) throw std::runtime_error("creating a correlator per target failed: " + err);
                separate.push_back(std::move(c));
            }
            std::vector<NccProblem> problems;
            std::vector<MapView> outs;
            busy_since_ns_ = now_ns();
            kernel->set_template(stack.view(), stream);
            for (int i = 0; i < n; ++i) {
                const ImageView t{stack.bytes.data() + i * templ_bytes, templ.width, templ.height,
                                  static_cast<std::size_t>(templ.width), MemorySpace::kHost};
                separate[i]->set_template(t, stream);
                problems.push_back({batched.frame, templ, batched.roi_of(i), 1, 0});
                MapView map = out;
                map.data = out.row(i * o.height);
                map.height = o.height;
                outs.push_back(map);
            }
            if (gpu) gpu_->synchronize();
            const auto batch_work = [&] { kernel->run(frame, batched, out, stream); };
            const auto separate_work = [&] {
                for (int i = 0; i < n; ++i) separate[i]->run(frame, problems[i], outs[i], stream);
            };
            if (!time_runs(batch_work, gpu, &b.batch_runs, &b.batch_ms, &why) ||
                !time_runs(separate_work, gpu, &b.separate_runs, &b.separate_ms, &why)) {
                b.status = Status::kSkipped;
                b.note = why;
                b.batch_runs.clear();
                b.separate_runs.clear();
                return;
            }
            if (!(b.batch_ms > 0) || !(b.separate_ms > 0)) {
                b.status = Status::kError;
                b.note = "timer reported no elapsed time";
            }
        } catch (const std::exception& e) {
            b.status = Status::kError;
            b.note = e.what();
            b.batch_runs.clear();
            b.separate_runs.clear();
            if (gpu) check_gpu_after_error(k->name);
        }
    }

    // A fault inside a kernel leaves the CUDA context unusable; later GPU cases then report
    // that instead of a string of follow-on errors.
    void check_gpu_after_error(const char* kernel) {
        cudaGetLastError();
        cudaError_t err = cudaStreamSynchronize(static_cast<cudaStream_t>(gpu_->stream()));
        if (err == cudaSuccess) err = cudaDeviceSynchronize();
        if (err != cudaSuccess)
            gpu_lost_ = std::string("CUDA context unusable after ") + kernel + " failed (" + cudaGetErrorName(err) + ")";
    }

    void report_progress(const Result& r) {
        ++done_;
        if (o_.quiet) return;
        char buf[64] = "";
        if (r.ok()) std::snprintf(buf, sizeof buf, "%.4f ms (%zu runs)", r.median_ms, r.ms.size());
        std::string batch;
        if (r.batch.ok()) {
            char b[128];
            std::snprintf(b, sizeof b, "; batch of %d %.4f ms vs %.4f ms separately (%.2fx)", r.batch.n,
                          r.batch.batch_ms, r.batch.separate_ms, r.batch.speedup());
            batch = b;
        } else if (r.batch.attempted()) {
            batch = "; batch " + r.batch.status_text();
        }
        std::fprintf(stderr, "bench: [%zu/%zu] %s %s %s %s: %s%s\n", done_, total_, r.kernel->name,
                     size_text(r.c.frame).c_str(), size_text(r.c.templ).c_str(), mode_name(r.c.mode),
                     r.ok() ? buf : r.status_text().c_str(), batch.c_str());
    }

    const BenchOptions& o_;
    const Plan& plan_;
    HangHandler on_hang_;
    std::mutex results_mutex_;  // guards results_ and current_ (read by the watchdog)
    std::mutex watch_mutex_;    // guards stop_watch_
    std::condition_variable watch_cv_;
    bool stop_watch_ = false;
    std::atomic<std::int64_t> busy_since_ns_{0};  // start of the kernel call in flight, 0: none
    Result current_;
    std::unique_ptr<GpuTiming> gpu_;
    std::string gpu_lost_;
    std::vector<HostImage> templates_;
    std::map<const KernelEntry*, std::pair<std::unique_ptr<Correlator>, std::string>> correlators_;
    std::map<const KernelEntry*, std::vector<std::unique_ptr<Correlator>>> separate_;  // --batch: one per target
    std::vector<Result> results_;
    std::size_t done_ = 0, total_ = 0;
    std::chrono::steady_clock::time_point started_;
};

// ---------------------------------------------------------------------------------------------
// Reporting

struct Report {
    std::vector<std::pair<std::string, std::string>> header;  // key, value
    std::vector<Result> rows;                                 // kernel, size, template, mode order
    std::vector<std::string> ratio_names;                     // cuda_shared, cuda_fft, --ratio-to
    std::map<std::string, const Result*> by_kernel_case;
    GpuInfo gpu;
    int batch = 0;  // --batch N: the batch columns are there when N > 0

    const Result* find(const std::string& kernel, const Case& c) const {
        const auto it = by_kernel_case.find(kernel + "|" + c.key());
        return it == by_kernel_case.end() ? nullptr : it->second;
    }
    // time_baseline / time_kernel; NaN when either did not run.
    double ratio(const Result& r, const std::string& baseline) const {
        const Result* b = find(baseline, r.c);
        return r.ok() && b && b->ok() ? b->median_ms / r.median_ms : NAN;
    }
    double dp4a_pct(const Result& r) const {
        return r.ok() && r.gpu() && gpu.peak_gmacs > 0 ? 100.0 * r.gmac_per_s() / gpu.peak_gmacs : NAN;
    }
};

std::string fmt(double v, const char* format) {
    if (!std::isfinite(v)) return "";
    char buf[48];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::vector<std::string> header_lines(const Report& rep) {
    std::vector<std::string> lines;
    for (const auto& [key, value] : rep.header) lines.push_back(key + ": " + value);
    return lines;
}

void print_table(const Report& rep, std::FILE* f) {
    for (const std::string& line : header_lines(rep)) std::fprintf(f, "# %s\n", line.c_str());
    std::size_t kw = 6;
    for (const Result& r : rep.rows) kw = std::max(kw, std::strlen(r.kernel->name));
    std::vector<std::string> ratio_titles;
    for (const std::string& n : rep.ratio_names) ratio_titles.push_back("x " + n);
    std::fprintf(f, "\n%-*s %10s %9s %-6s %11s %10s %10s %7s", static_cast<int>(kw), "kernel", "size", "template",
                 "mode", "median ms", "Mpos/s", "GMAC/s", "%DP4A");
    for (const std::string& t : ratio_titles) std::fprintf(f, " %*s", static_cast<int>(std::max<std::size_t>(t.size(), 6)), t.c_str());
    if (rep.batch > 0) std::fprintf(f, " %7s %11s %13s %7s", "batch_n", "batch_ms", "per_target_ms", "x batch");
    std::fprintf(f, "  status\n");
    const auto cell = [](double v, const char* format) {
        const std::string s = fmt(v, format);
        return s.empty() ? std::string("-") : s;
    };
    for (const Result& r : rep.rows) {
        const bool ok = r.ok();
        std::fprintf(f, "%-*s %10s %9s %-6s %11s %10s %10s %7s", static_cast<int>(kw), r.kernel->name,
                     size_text(r.c.frame).c_str(), size_text(r.c.templ).c_str(), mode_name(r.c.mode),
                     cell(ok ? r.median_ms : NAN, "%.4f").c_str(), cell(ok ? r.mpos_per_s() : NAN, "%.1f").c_str(),
                     cell(ok ? r.gmac_per_s() : NAN, "%.1f").c_str(), cell(rep.dp4a_pct(r), "%.1f").c_str());
        for (std::size_t i = 0; i < rep.ratio_names.size(); ++i)
            std::fprintf(f, " %*s", static_cast<int>(std::max<std::size_t>(ratio_titles[i].size(), 6)),
                         cell(rep.ratio(r, rep.ratio_names[i]), "%.2f").c_str());
        std::string status = r.status_text();
        if (rep.batch > 0) {
            const BatchResult& b = r.batch;
            const char* missing = b.attempted() && b.status == Status::kUnsupported ? "n/a" : "-";
            const auto bcell = [&](double v, const char* format) {
                const std::string s = fmt(v, format);
                return s.empty() ? std::string(missing) : s;
            };
            std::fprintf(f, " %7s %11s %13s %7s", b.attempted() ? std::to_string(b.n).c_str() : "-",
                         bcell(b.ok() ? b.batch_ms : NAN, "%.4f").c_str(),
                         bcell(b.ok() ? b.separate_ms : NAN, "%.4f").c_str(), bcell(b.speedup(), "%.2f").c_str());
            if (b.attempted() && !b.ok()) status += "; batch " + b.status_text();
        }
        std::fprintf(f, "  %s\n", status.c_str());
    }
}

// The CPU kernels side by side (cpu_ref is the oracle, not a contender): one line per case
// and pair, plus the geometric mean over cases.
struct CpuPair {
    const KernelEntry *a, *b;
    std::vector<std::pair<const Result*, const Result*>> cases;
};

std::vector<CpuPair> cpu_pairs(const Report& rep, const Plan& plan) {
    std::vector<const KernelEntry*> cpu;
    for (const KernelEntry* k : plan.kernels)
        if (k->device == Device::kCpu && std::string(k->name) != "cpu_ref") cpu.push_back(k);
    std::vector<CpuPair> pairs;
    for (std::size_t i = 0; i < cpu.size(); ++i)
        for (std::size_t j = i + 1; j < cpu.size(); ++j) {
            CpuPair pair{cpu[i], cpu[j], {}};
            for (const Result& r : rep.rows) {
                if (r.kernel != cpu[i] || !r.ok()) continue;
                const Result* other = rep.find(cpu[j]->name, r.c);
                if (other && other->ok()) pair.cases.push_back({&r, other});
            }
            if (!pair.cases.empty()) pairs.push_back(std::move(pair));
        }
    return pairs;
}

void print_cpu_pairs(const std::vector<CpuPair>& pairs, std::FILE* f) {
    if (pairs.empty()) return;
    std::fprintf(f, "\nCPU comparison (ratio = median time of the second / median time of the first)\n");
    for (const CpuPair& p : pairs) {
        double log_sum = 0;
        for (const auto& [a, b] : p.cases) {
            const double x = b->median_ms / a->median_ms;
            log_sum += std::log(x);
            std::fprintf(f, "  %s vs %s  %s %s %s: %s is %.2fx %s (%.4f ms vs %.4f ms)\n", p.a->name, p.b->name,
                         size_text(a->c.frame).c_str(), size_text(a->c.templ).c_str(), mode_name(a->c.mode),
                         p.a->name, x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower", a->median_ms, b->median_ms);
        }
        if (p.cases.size() > 1) {
            const double g = std::exp(log_sum / p.cases.size());
            std::fprintf(f, "  %s vs %s  geometric mean over %zu cases: %s is %.2fx %s\n", p.a->name, p.b->name,
                         p.cases.size(), p.a->name, g >= 1 ? g : 1 / g, g >= 1 ? "faster" : "slower");
        }
    }
}

bool write_csv(const Report& rep, const std::string& path, std::string* error) {
    std::ostringstream out;
    for (const std::string& line : header_lines(rep)) out << "# " << line << "\n";
    out << "kernel,size,template,mode,median_ms,mpos_per_s,gmac_per_s,dp4a_peak_pct";
    for (const std::string& n : rep.ratio_names) out << ",x_" << n;
    out << ",min_ms,p90_ms,runs,status";
    if (rep.batch > 0) out << ",batch_n,batch_ms,per_target_ms,batch_speedup,batch_status";
    out << "\n";
    for (const Result& r : rep.rows) {
        const bool ok = r.ok();
        out << r.kernel->name << "," << size_text(r.c.frame) << "," << size_text(r.c.templ) << ","
            << mode_name(r.c.mode) << "," << fmt(ok ? r.median_ms : NAN, "%.6g") << ","
            << fmt(ok ? r.mpos_per_s() : NAN, "%.6g") << "," << fmt(ok ? r.gmac_per_s() : NAN, "%.6g") << ","
            << fmt(rep.dp4a_pct(r), "%.4g");
        for (const std::string& n : rep.ratio_names) out << "," << fmt(rep.ratio(r, n), "%.4g");
        out << "," << fmt(ok ? r.min_ms : NAN, "%.6g") << "," << fmt(ok ? r.p90_ms : NAN, "%.6g") << ","
            << (ok ? std::to_string(r.ms.size()) : "") << "," << csv_field(r.status_text());
        if (rep.batch > 0) {
            const BatchResult& b = r.batch;
            out << "," << (b.attempted() ? std::to_string(b.n) : "") << "," << fmt(b.ok() ? b.batch_ms : NAN, "%.6g")
                << "," << fmt(b.ok() ? b.separate_ms : NAN, "%.6g") << "," << fmt(b.speedup(), "%.4g") << ","
                << csv_field(b.status_text());
        }
        out << "\n";
    }
    return write_file_atomically(path, out.str(), error);
}

bool write_json(const Report& rep, const std::vector<CpuPair>& pairs, const std::string& path, std::string* error) {
    using nlohmann::json;
    const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    json doc;
    for (const auto& [key, value] : rep.header) doc["header"][key] = value;
    doc["peak_gmacs"] = num(rep.gpu.peak_gmacs > 0 ? rep.gpu.peak_gmacs : NAN);
    doc["results"] = json::array();
    for (const Result& r : rep.rows) {
        json j{{"kernel", r.kernel->name},
               {"device", r.gpu() ? "cuda" : "cpu"},
               {"size", size_text(r.c.frame)},
               {"template", size_text(r.c.templ)},
               {"mode", mode_name(r.c.mode)},
               {"positions", r.c.positions()},
               {"status", r.ok() ? "ok" : r.status_text()}};
        if (r.ok()) {
            j["median_ms"] = r.median_ms;
            j["min_ms"] = r.min_ms;
            j["p90_ms"] = r.p90_ms;
            j["runs_ms"] = r.ms;
            j["mpos_per_s"] = r.mpos_per_s();
            j["gmac_per_s"] = r.gmac_per_s();
            j["dp4a_peak_pct"] = num(rep.dp4a_pct(r));
            for (const std::string& n : rep.ratio_names) j["x_" + n] = num(rep.ratio(r, n));
        }
        if (r.batch.attempted()) {
            const BatchResult& b = r.batch;
            j["batch"] = {{"n", b.n},
                          {"status", b.status_text()},
                          {"batch_ms", num(b.ok() ? b.batch_ms : NAN)},
                          {"per_target_ms", num(b.ok() ? b.separate_ms : NAN)},
                          {"batch_speedup", num(b.speedup())},
                          {"batch_runs_ms", b.batch_runs},
                          {"per_target_runs_ms", b.separate_runs}};
        }
        doc["results"].push_back(j);
    }
    doc["cpu_comparison"] = json::array();
    for (const CpuPair& p : pairs)
        for (const auto& [a, b] : p.cases)
            doc["cpu_comparison"].push_back({{"first", p.a->name}, {"second", p.b->name},
                                             {"size", size_text(a->c.frame)}, {"template", size_text(a->c.templ)},
                                             {"mode", mode_name(a->c.mode)}, {"ratio", b->median_ms / a->median_ms}});
    return write_file_atomically(path, doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n", error);
}

// One panel per mode at 1920x1080 (or the largest size run): effective GMAC/s, log scale,
// against the templates in ascending pixel count, one line per kernel.
plot::Figure make_figure(const Report& rep, const Plan& plan) {
    Size size = plan.sizes.back();
    for (Size s : plan.sizes)
        if (s == Size{1920, 1080}) size = s;
    plot::Figure fig;
    fig.panel_width = 900;
    fig.title = "corrtrack bench: " + (rep.gpu.present ? rep.gpu.name : std::string("no GPU")) + ", " + size_text(size);
    for (Mode mode : plan.modes) {
        plot::Panel panel;
        panel.title = mode == Mode::kFull ? "full-frame search" : "tracking window (3x template side)";
        panel.x_label = "template (w x h)";
        panel.y_label = "effective GMAC/s (template px x positions / time)";
        panel.log_y = true;
        panel.key = "outside right top";
        panel.x_min = -0.3;
        panel.x_max = plan.templates.size() - 0.7;
        for (std::size_t t = 0; t < plan.templates.size(); ++t)
            panel.x_tics.push_back({static_cast<double>(t), size_text(plan.templates[t])});
        for (const KernelEntry* k : plan.kernels) {
            plot::Series s;
            s.title = k->name;
            for (std::size_t t = 0; t < plan.templates.size(); ++t) {
                const Result* r = rep.find(k->name, Case{size, plan.templates[t], mode});
                s.x.push_back(static_cast<double>(t));
                s.y.push_back(r && r->ok() ? r->gmac_per_s() : NAN);
            }
            panel.series.push_back(std::move(s));
        }
        fig.panels.push_back(std::move(panel));
    }
    return fig;
}

std::string script_path_for(const std::string& png) {
    const auto dot = png.rfind('.');
    const auto slash = png.rfind('/');
    const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
    return (has_ext ? png.substr(0, dot) : png) + ".gp";
}

// ---------------------------------------------------------------------------------------------

int finish(const BenchOptions& o, const Plan& plan, Report rep, std::vector<Result> results);

int run_bench(const BenchOptions& o, bool dry_run) {
    Plan plan;
    std::string error;
    if (!make_plan(o, &plan, &error)) {
        std::fprintf(stderr, "corrtrack bench: error: %s\n", error.c_str());
        return kExitUsage;
    }
    if (dry_run) return 0;
    const bool any_gpu_kernel = std::any_of(plan.kernels.begin(), plan.kernels.end(),
                                            [](const KernelEntry* k) { return k->device == Device::kCuda; });
    if (any_gpu_kernel && o.runs < kMinGpuRuns)
        std::fprintf(stderr, "corrtrack bench: warning: --runs %d is below %d; GPU medians will be noisy (fine for a quick check)\n",
                     o.runs, kMinGpuRuns);
    for (const KernelEntry* k : plan.kernels)
        if (!k->available())
            std::fprintf(stderr, "corrtrack bench: warning: %s cannot run here (%s); its rows say unavailable\n",
                         k->name, k->device == Device::kCuda ? "no usable CUDA GPU" : "not available");

    Report rep;
    rep.gpu = query_gpu(o.peak_gmacs);
    rep.batch = o.batch;
    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) cudaGetLastError();
    rep.header = {
        {"corrtrack bench", "NCC kernel timings"},
        {"gpu", rep.gpu.present ? rep.gpu.description : "none (no usable CUDA device)"},
        {"driver", driver_text()},
        {"cuda runtime", cuda_version_text(runtime)},
        {"cpu", cpu_text()},
        {"date", utc_now_iso()},
        {"command", command_line()},
        {"timing", "GPU: CUDA events around run() on one stream, synchronized per run; CPU: steady_clock. "
                   "set_template untimed. Median of the timed runs after " + std::to_string(o.warmup) +
                   " warm-up run(s); CPU cases time fewer runs (>= " + std::to_string(kMinCpuRuns) +
                   ") to fit --max-seconds " + fmt(o.max_seconds, "%g")},
        {"metrics", "Mpos/s = output positions / median / 1e6; GMAC/s = template pixels x positions / "
                    "median / 1e9 (effective: FFT kernels do fewer operations); %DP4A = GMAC/s / DP4A peak; "
                    "x K = median(K) / median(row) on the same case (> 1: the row is faster than K)"},
        {"peak", rep.gpu.peak_note.empty() ? "no GPU; give --peak-gmacs for a %DP4A column" : rep.gpu.peak_note},
        {"window mode", "search region " + std::to_string(kWindowFactor) + "x the template's width and height, centred"},
    };
    if (o.batch > 0)
        rep.header.push_back(
            {"batch", "window cases also time " + std::to_string(o.batch) + " targets: one batched run (an atlas of " +
                          std::to_string(o.batch) + " search windows of the frame stacked vertically, templates=" +
                          std::to_string(o.batch) + ", template_roi_step=window height) and " + std::to_string(o.batch) +
                          " separate run() calls (one correlator per target) on the same windows and templates; "
                          "batch_ms = median of the batched run, per_target_ms = median of the " +
                          std::to_string(o.batch) + " separate calls together, batch_speedup = per_target_ms / "
                          "batch_ms (> 1: the batch is faster); n/a: the kernel does not run batches (its reason)"});

    BenchRunner runner(o, plan, [&](std::vector<Result> done) {
        const int code = finish(o, plan, rep, std::move(done));
        std::fflush(nullptr);
        std::_Exit(code == 0 ? kExitInput : code);
    });
    return finish(o, plan, rep, runner.run());
}

// Sorts, completes and reports the results; returns the exit status. Cases that never ran
// (the bench stopped after a hang) appear as skipped, so the grid is always complete.
int finish(const BenchOptions& o, const Plan& plan, Report rep, std::vector<Result> results) {
    std::set<std::string> seen;
    for (const Result& r : results) seen.insert(std::string(r.kernel->name) + "|" + r.c.key());
    for (const KernelEntry* k : plan.kernels)
        for (Size size : plan.sizes)
            for (Size templ : plan.templates)
                for (Mode mode : plan.modes) {
                    Result r;
                    r.kernel = k;
                    r.c = Case{size, templ, mode};
                    if (seen.count(std::string(k->name) + "|" + r.c.key())) continue;
                    r.status = Status::kSkipped;
                    r.note = "not run: the bench stopped after a hung case";
                    results.push_back(std::move(r));
                }
    std::string error;
    // Rows in the table's column order: kernel, size, template, mode.
    const auto index_of = [](const auto& v, const auto& x) {
        return static_cast<std::size_t>(std::find(v.begin(), v.end(), x) - v.begin());
    };
    std::stable_sort(results.begin(), results.end(), [&](const Result& a, const Result& b) {
        const auto key = [&](const Result& r) {
            return std::make_tuple(index_of(plan.kernels, r.kernel), index_of(plan.sizes, r.c.frame),
                                   index_of(plan.templates, r.c.templ), index_of(plan.modes, r.c.mode));
        };
        return key(a) < key(b);
    });
    rep.rows = std::move(results);
    for (const Result& r : rep.rows) rep.by_kernel_case[std::string(r.kernel->name) + "|" + r.c.key()] = &r;
    rep.ratio_names.assign(std::begin(kBaselines), std::end(kBaselines));
    rep.ratio_names.insert(rep.ratio_names.end(), plan.ratio_to.begin(), plan.ratio_to.end());

    const std::vector<CpuPair> pairs = cpu_pairs(rep, plan);
    print_table(rep, stdout);
    print_cpu_pairs(pairs, stdout);

    int exit_code = 0;
    std::size_t counts[5] = {};
    std::size_t batch_errors = 0;
    for (const Result& r : rep.rows) {
        ++counts[static_cast<int>(r.status)];
        if (r.batch.attempted() && r.batch.status == Status::kError) ++batch_errors;
    }
    std::printf("\n%zu cases: %zu ok, %zu unsupported, %zu skipped, %zu unavailable, %zu failed\n", rep.rows.size(),
                counts[0], counts[1], counts[2], counts[3], counts[4]);
    std::fflush(stdout);
    if (counts[static_cast<int>(Status::kError)] > 0) {
        std::fprintf(stderr, "corrtrack bench: %zu case(s) failed with an error (see the status column)\n",
                     counts[static_cast<int>(Status::kError)]);
        exit_code = kExitInput;
    }
    if (batch_errors > 0) {
        std::fprintf(stderr, "corrtrack bench: %zu batched run(s) failed with an error (see batch_status)\n",
                     batch_errors);
        exit_code = kExitInput;
    }
    const auto fail = [&](const std::string& msg) {
        std::fprintf(stderr, "corrtrack bench: error: %s\n", msg.c_str());
        exit_code = kExitInput;
    };
    if (!o.csv.empty()) {
        if (write_csv(rep, o.csv, &error)) std::fprintf(stderr, "corrtrack bench: wrote %s\n", o.csv.c_str());
        else fail(error);
    }
    if (!o.json.empty()) {
        if (write_json(rep, pairs, o.json, &error)) std::fprintf(stderr, "corrtrack bench: wrote %s\n", o.json.c_str());
        else fail(error);
    }
    if (!o.plot.empty()) {
        const plot::Figure fig = make_figure(rep, plan);
        const plot::RenderResult rendered = plot::render_png(fig, o.plot);
        if (rendered.ok) {
            std::fprintf(stderr, "corrtrack bench: wrote %s\n", o.plot.c_str());
        } else {
            // Keep what is needed to draw it later, e.g. on a GPU host without gnuplot.
            const std::string script = script_path_for(o.plot);
            std::ofstream out(script);
            out << plot::gnuplot_script(fig, o.plot);
            fail("plot " + o.plot + " not written: " + rendered.error +
                 (out.flush() ? "; saved the gnuplot script as " + script + " (render it with: gnuplot " + script + ")"
                              : std::string()));
        }
    }
    return exit_code;
}

}  // namespace

void register_bench_command(CLI::App& root, CommandOutcome& outcome) {
    auto o = std::make_shared<BenchOptions>();
    CLI::App* cmd = root.add_subcommand("bench", "Time the correlation kernels over frame sizes, template sizes and search modes");
    cmd->add_option("--kernels", o->kernels,
                    "Comma-separated kernel names (default: every kernel available here except 'auto')");
    cmd->add_option("--sizes", o->sizes, "Frame sizes, WIDTHxHEIGHT, comma-separated")->capture_default_str();
    cmd->add_option("--templates", o->templates, "Template sizes, N (square) or WIDTHxHEIGHT, comma-separated")
        ->capture_default_str();
    cmd->add_option("--modes", o->modes,
                    "full (whole frame) and/or window (search region 3x the template side, centred)")
        ->capture_default_str();
    cmd->add_option("--runs", o->runs, "Timed runs per case (median; 20+ for GPU kernels)")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")
        ->check(CLI::Range(0, 10000))
        ->capture_default_str();
    cmd->add_option("--max-seconds", o->max_seconds,
                    "Time budget per case: a case whose single run takes longer (measured, or predicted from "
                    "the kernel's smaller cases) is skipped as too slow; CPU kernels time fewer runs to fit")
        ->check(finite_range(0.001, 86400))
        ->capture_default_str();
    cmd->add_option("--max-total-seconds", o->max_total_seconds,
                    "Stop starting new cases after this long (0: no limit); the rest are marked skipped, "
                    "outputs are still written. GPU kernels run first")
        ->check(finite_range(0, 1e7))
        ->capture_default_str();
    cmd->add_option("--hang-seconds", o->hang_seconds,
                    "Give up on a kernel call that has not returned after this long (deadlock, spinning GPU "
                    "kernel): write what was measured, mark the case hung, exit 1 (0: max(60, 30 x --max-seconds))")
        ->check(finite_range(0, 1e7))
        ->capture_default_str();
    cmd->add_option("--csv", o->csv, "Write the results as CSV ('#' header lines, then one row per case)");
    cmd->add_option("--json", o->json, "Write the results, with every timed run, as JSON");
    cmd->add_option("--plot", o->plot,
                    "Write a PNG: GMAC/s per template at 1920x1080 (else the largest size), one panel per mode "
                    "side by side; needs gnuplot (without it the script is saved next to it as .gp)");
    cmd->add_option("--seed", o->seed, "Seed of the random frames and templates")->capture_default_str();
    cmd->add_option("--peak-gmacs", o->peak_gmacs,
                    "DP4A peak in GMAC/s for the %DP4A column (default: SMs x clock x DP4A/clk/SM x 4)")
        ->check(finite_range(0, 1e9));
    cmd->add_flag("--variants", o->variants, "also time the tuning variants (cuda_dp4a_ilp_c2/c4/c8, cuda_shuffle_grouped_r2/r4/r8)");
    cmd->add_option("--ratio-to", o->ratio_to, "Extra 'x NAME' columns: median(NAME) / median(row) on the same case")
        ->delimiter(',');
    cmd->add_option("--batch", o->batch,
                    "Window cases also time N targets as one batched run (atlas of N search windows, "
                    "templates=N, template_roi_step=window height) against N separate run() calls; adds "
                    "batch_n, batch_ms, per_target_ms, batch_speedup, batch_status columns (0: off)")
        ->check(CLI::Range(0, kMaxBatch))
        ->capture_default_str();
    cmd->add_flag("--quiet", o->quiet, "No per-case progress lines on stderr");
    cmd->footer(
        "Rows: every kernel x size x template x mode. Status: ok, unsupported (the kernel said why), "
        "skipped (too slow for --max-seconds, or --max-total-seconds), unavailable (no GPU) or error.\n"
        "Exit status: 0 when every case ran or was declined/skipped, 1 when a case failed or an output "
        "could not be written, 2 for bad options.");
    // --e2e switches from the kernel sweep to the whole pipeline (e2e_bench.h).
    auto e2e = std::make_shared<E2eOptions>();
    cmd->add_option("--e2e", e2e->clips,
                    "Time the whole pipeline instead, on these video files: decode alone vs decode + track, "
                    "software decode and NVDEC, fps, overhead and latency (median/p95)")
        ->delimiter(',');
    cmd->add_option("--e2e-box", e2e->boxes, "e2e target box x,y,w,h; repeat for more (default: 64x64 in the middle)");
    cmd->add_option("--e2e-kernel", e2e->kernel, "e2e tracker kernel")->capture_default_str();
    cmd->add_option("--e2e-frames", e2e->frames, "e2e frames per pass (-1: whole clip)")
        ->check(frame_count())
        ->capture_default_str();
    cmd->add_option("--e2e-repeats", e2e->repeats, "e2e passes per configuration (median fps)")->check(CLI::Range(1, 1000))
        ->capture_default_str();
    cmd->callback([o, e2e, &outcome] {
        std::vector<NamedPath> inputs, outputs{{o->csv, "--csv"}, {o->json, "--json"}, {o->plot, "--plot"}};
        for (const std::string& clip : e2e->clips) inputs.push_back({clip, "the --e2e clip"});
        if (std::string error; !check_output_paths(inputs, outputs, &error)) {
            std::fprintf(stderr, "corrtrack bench: error: %s\n", error.c_str());
            outcome.exit_code = kExitUsage;
            return;
        }
        if (!e2e->clips.empty()) {
            if (outcome.dry_run) return;
            e2e->json = o->json;
            e2e->quiet = o->quiet;
            outcome.exit_code = run_e2e_bench(*e2e);
            return;
        }
        outcome.exit_code = run_bench(*o, outcome.dry_run);
    });
}

}  // namespace corrtrack
