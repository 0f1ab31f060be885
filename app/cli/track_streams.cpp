#include "app/cli/track_streams.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/gpu/gpu_context.h"
#include "app/io/output_file.h"
#include "app/io/result_writers.h"

namespace corrtrack {
namespace {

// Splits a line into fields: spaces and tabs separate, double quotes group, '#' at the start
// of a field ends the line. False + *error on an unclosed quote.
bool split_fields(const std::string& line, std::vector<std::string>* fields, std::string* error) {
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i >= line.size() || line[i] == '#') break;
        std::string field;
        if (line[i] == '"') {
            const std::size_t close = line.find('"', i + 1);
            if (close == std::string::npos) {
                *error = "unclosed '\"'";
                return false;
            }
            field = line.substr(i + 1, close - i - 1);
            i = close + 1;
        } else {
            while (i < line.size() && line[i] != ' ' && line[i] != '\t') field += line[i++];
        }
        fields->push_back(field);
    }
    return true;
}

std::string sanitise(const std::string& s) {
    std::string out;
    for (const char c : s)
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
    while (!out.empty() && out.front() == '.') out.erase(out.begin());  // no hidden names
    return out;
}

double median_of(const std::vector<double>& v) { return v.empty() ? 0.0 : median(v); }
double p95_of(const std::vector<double>& v) { return v.empty() ? 0.0 : percentile(v, 95); }

}  // namespace

bool parse_inputs_list(const std::string& text, const std::string& name, std::vector<InputEntry>* entries,
                       std::string* error) {
    std::istringstream in(text);
    std::string line;
    int number = 0;
    const std::size_t before = entries->size();
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const std::string where = name + " line " + std::to_string(number) + ": ";
        std::vector<std::string> fields;
        std::string why;
        if (!split_fields(line, &fields, &why)) {
            *error = where + why;
            return false;
        }
        if (fields.empty()) continue;
        InputEntry e;
        e.input = fields[0];
        e.line = number;
        if (e.input.empty()) {
            *error = where + "empty input name";
            return false;
        }
        if (fields.size() < 2) {
            *error = where + "'" + e.input + "' has no box: write `input x,y,w,h [x,y,w,h ...]`";
            return false;
        }
        for (std::size_t i = 1; i < fields.size(); ++i) {
            BoxF b;
            if (!parse_box(fields[i], &b, &why)) {
                *error = where + why;
                return false;
            }
            e.boxes.push_back(b);
        }
        entries->push_back(std::move(e));
    }
    if (entries->size() == before) {
        *error = "input list '" + name + "' names no input";
        return false;
    }
    return true;
}

bool read_inputs_list(const std::string& path, std::vector<InputEntry>* entries, std::string* error) {
    std::string text;
    switch (read_text_file(path, kMaxInputsListBytes, &text)) {
    case TextRead::kOk: break;
    case TextRead::kTooLarge:
        *error = "input list '" + path + "' is larger than " + std::to_string(kMaxInputsListBytes) +
                 " bytes: not an input list";
        return false;
    case TextRead::kFailed: *error = "cannot read input list '" + path + "'"; return false;
    }
    return parse_inputs_list(text, path, entries, error);
}

std::string stream_name_of(const std::string& input) {
    if (input == "-" || input.rfind("pipe:", 0) == 0) return "stdin";
    std::string s = input;
    const std::size_t scheme = s.find("://");
    if (scheme != std::string::npos) {
        s = s.substr(0, s.find_first_of("?#", scheme));
        // rtsp://host:554 with no path: the host.
        if (s.find('/', scheme + 3) == std::string::npos)
            return sanitise(s.substr(scheme + 3)).empty() ? "stream" : sanitise(s.substr(scheme + 3));
    }
    std::vector<std::string> parts;
    std::stringstream ss(s);
    for (std::string part; std::getline(ss, part, '/');)
        if (!part.empty() && part != ".") parts.push_back(part);
    std::string name;
    // An image pattern is named by its folder, an OTB sequence's img/ by the sequence.
    while (!parts.empty() &&
           (parts.back().find('%') != std::string::npos || parts.back() == "img" || parts.back() == ".."))
        parts.pop_back();
    if (!parts.empty()) name = parts.back();
    const std::size_t dot = name.rfind('.');
    if (dot != std::string::npos && dot > 0) name = name.substr(0, dot);
    name = sanitise(name);
    return name.empty() ? "stream" : name;
}

std::vector<std::string> unique_stream_names(const std::vector<std::string>& inputs) {
    std::vector<std::string> bases, names;
    for (const std::string& in : inputs) bases.push_back(stream_name_of(in));
    // Plain names first, so that an input really named cam-2 keeps its name.
    std::set<std::string> taken(bases.begin(), bases.end());
    std::set<std::string> used;
    for (const std::string& b : bases) {
        std::string n = b;
        for (int k = 2; used.count(n) || (n != b && taken.count(n)); ++k) n = b + "-" + std::to_string(k);
        used.insert(n);
        names.push_back(n);
    }
    return names;
}

bool stream_output_path(const std::string& path, const std::string& name, const std::string& flag, std::string* result,
                        std::string* error) {
    if (path.empty()) {
        result->clear();
        return true;
    }
    // A device whatever it points to: /dev/stdout is a regular file when stdout is redirected
    // to one, and /dev/stdout.<stream> would be created in /dev.
    if (is_device_path(path)) {
        if (path == "/dev/null") {
            *result = path;
            return true;
        }
        *error = flag + " '" + path + "' is a device or FIFO: with several inputs each stream writes its own " +
                 flag.substr(2) + " file (" + flag + " NAME.EXT gives NAME.<stream>.EXT); give a file name";
        return false;
    }
    const std::size_t slash = path.rfind('/');
    const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t dot = path.rfind('.');
    if (dot != std::string::npos && dot > base)
        *result = path.substr(0, dot) + "." + name + path.substr(dot);
    else
        *result = path + "." + name;
    return true;
}

StreamSetRun run_stream_set(const TrackArgs& a, const std::vector<StreamPlan>& plans, const std::string& kernel) {
    const std::size_t n = plans.size();
    announce_compute_path();  // once, before the threads
    StreamSetRun run;
    std::vector<std::unique_ptr<StreamResult>>& results = run.results;
    for (std::size_t i = 0; i < n; ++i) results.push_back(std::make_unique<StreamResult>());
    run.decoders.resize(n);
    std::vector<bool> candidate(n);
    std::vector<double> paced_rate(n, 0.0);  // Mpixel/s of a paced auto stream, 0 otherwise
    for (std::size_t i = 0; i < n; ++i) {
        const NvdecNeed need = nvdec_need(plans[i].input, plans[i].decode, a.realtime);
        candidate[i] = need.candidate;
        paced_rate[i] = need.paced_mpix_per_s;
    }
    const std::size_t jobs = a.jobs > 0 ? std::min<std::size_t>(static_cast<std::size_t>(a.jobs), n) : n;
    run.jobs = jobs;
    const std::atomic<bool>& stop = InterruptGuard::flag();
    std::atomic<std::size_t> running{0}, done{0}, workers_left{0};
    // Streams start in input order and take their decoder as they start, under one lock, so
    // that all at once the first inputs NVDEC has room for get it whichever thread runs first.
    std::mutex start_mutex;
    std::size_t next = 0;
    NvdecShare share(a.nvdec_streams, a.nvdec_rate);
    // All at once (jobs == n): every stream takes its decoder here, in input order, before any
    // thread starts, so that a stream that ends early cannot hand its place to a later one
    // whose thread happened to start late. With fewer jobs they take it as they start.
    const bool all_at_once = jobs == n;
    if (all_at_once)
        for (std::size_t i = 0; i < n; ++i) run.decoders[i] = share.take(plans[i].decode, candidate[i], paced_rate[i]);
    const auto t_start = std::chrono::steady_clock::now();

    // One GPU context per worker, made here before any thread starts and destroyed after every
    // thread has joined: each input tracks on the compute stream of its worker's context (one
    // CUDA stream per input at a time, as docs/cameras_and_streams.md promises), so streams
    // never wait on one another's kernels; a worker's streams run one after another and reuse
    // its context.
    std::vector<std::unique_ptr<GpuContext>> contexts;
    for (std::size_t j = 0; j < jobs; ++j) contexts.push_back(std::make_unique<GpuContext>());
    // Each worker tracks streams one after another; with jobs == n each tracks one. A stream's
    // failure stays in its result: the others go on.
    auto work = [&](const GpuContext& gpu) {
        for (;;) {
            std::size_t i = 0;
            DecoderChoice choice;
            {
                const std::lock_guard<std::mutex> lock(start_mutex);
                if (stop.load()) return;  // a signal: streams not started yet stay so
                i = next++;
                if (i >= n) return;
                if (!all_at_once) run.decoders[i] = share.take(plans[i].decode, candidate[i], paced_rate[i]);
                choice = run.decoders[i];
            }
            ++running;
            StreamResult& r = *results[i];
            StreamPlan plan = plans[i];
            plan.decode = choice.mode;
            try {
                run_stream(a, plan, kernel, gpu, &r);
            } catch (const std::exception& e) {
                r.error = e.what();
                r.status = "failed";
                r.exit_code = kExitInput;
                std::fprintf(stderr, "corrtrack track [%s]: error: %s\n", plans[i].name.c_str(), e.what());
            }
            // Only news where a GPU tracker could have had NVDEC.
            if (choice.nvdec_full && r.on_gpu) r.decode_why = choice.full_why;
            {
                const std::lock_guard<std::mutex> lock(start_mutex);
                share.give_back(choice);
            }
            --running;
            ++done;
        }
    };
    auto worker = [&](std::size_t j) {
        work(*contexts[j]);
        --workers_left;
    };
    workers_left = jobs;
    std::vector<std::thread> threads;
    for (std::size_t j = 0; j < jobs; ++j) threads.emplace_back(worker, j);
    auto t_progress = t_start;
    while (workers_left.load() > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto now = std::chrono::steady_clock::now();
        if (!a.quiet && std::chrono::duration<double>(now - t_progress).count() >= 5.0) {
            t_progress = now;
            long frames = 0;
            for (const auto& r : results) frames += r->progress.load(std::memory_order_relaxed);
            const double secs = std::chrono::duration<double>(now - t_start).count();
            std::fprintf(stderr, "streams %zu running, %zu done of %zu: %ld frames, %.1f fps in all\n", running.load(),
                         done.load(), n, frames, frames / secs);
        }
    }
    for (std::thread& t : threads) t.join();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    return run;
}

int run_streams(const TrackArgs& a, const std::vector<StreamPlan>& plans, const std::string& kernel) {
    const std::size_t n = plans.size();
    StreamSetRun run = run_stream_set(a, plans, kernel);
    const std::vector<std::unique_ptr<StreamResult>>& results = run.results;
    const std::size_t jobs = run.jobs;
    const double secs = run.seconds;
    const bool signalled = InterruptGuard::signal_number() != 0;

    // The worst stream decides: failed (1) > signal (128+N) > damaged (3) > 0.
    int exit_code = 0;
    bool any_failed = false, any_damaged = false;
    long frames = 0, late = 0, live = 0, lost_targets = 0, targets = 0;
    std::vector<double> latency;
    int failed_count = 0, on_nvdec = 0, on_cpu = 0;
    bool on_gpu = false;
    for (std::size_t i = 0; i < n; ++i) {
        StreamResult& r = *results[i];
        if (!r.started) {
            r.status = "not started";
            r.error = signalled ? std::string("stopped by ") + InterruptGuard::signal_name() + " before it started"
                                : "not started";
        }
        if (r.exit_code == kExitInput || r.exit_code == kExitUsage) {
            any_failed = true;
            ++failed_count;
        }
        if (r.exit_code == kExitDamaged) any_damaged = true;
        on_gpu = on_gpu || r.on_gpu;
        if (r.opened) ++(r.decode_mode == "nvdec" ? on_nvdec : on_cpu);
        frames += r.frames;
        late += r.loop.late_drops;
        live += r.live_dropped;
        lost_targets += r.lost_frames;
        targets += static_cast<long>(plans[i].boxes.size());
        latency.insert(latency.end(), r.loop.latency_ms.begin(), r.loop.latency_ms.end());
    }
    if (any_failed)
        exit_code = kExitInput;
    else if (signalled)
        exit_code = InterruptGuard::exit_code();
    else if (any_damaged)
        exit_code = kExitDamaged;

    // The summary file (--json): per stream and in all.
    nlohmann::json streams = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) {
        const StreamPlan& p = plans[i];
        const StreamResult& r = *results[i];
        nlohmann::json outputs = nlohmann::json::object();
        for (const auto& [flag, path] : stream_outputs(p, r)) outputs[flag] = path;
        streams.push_back(
            {{"name", p.name},
             {"input", p.input},
             {"targets", p.boxes.size()},
             {"status", r.status},
             {"exit_code", r.exit_code},
             {"error", r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error)},
             {"frames", r.frames},
             {"lost_target_frames", r.lost_frames},
             {"seconds", r.seconds},
             {"fps", r.frames / std::max(r.seconds, 1e-9)},
             {"late_dropped", r.loop.late_drops},
             {"live_dropped", r.live_dropped},
             {"latency_ms", {{"median", median_of(r.loop.latency_ms)}, {"p95", p95_of(r.loop.latency_ms)}}},
             {"decode", r.decode_mode},
             {"decode_why", r.decode_why.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.decode_why)},
             {"outputs", outputs}});
    }
    bool summary_ok = true;
    if (!a.json.empty()) {
        const nlohmann::json doc = {
            {"kernel", kernel},
            {"jobs", jobs},
            {"streams", streams},
            {"aggregate",
             {{"streams", n},
              {"failed", failed_count},
              {"frames", frames},
              {"seconds", secs},
              {"fps", frames / std::max(secs, 1e-9)},
              {"late_dropped", late},
              {"live_dropped", live},
              {"lost_target_frames", lost_targets},
              {"latency_ms", {{"median", median_of(latency)}, {"p95", p95_of(latency)}}},
              {"decoders", {{"nvdec", on_nvdec}, {"sw", on_cpu}}}}},
            {"decode", to_string(a.decode)},
            {"nvdec_streams", a.nvdec_streams},
            {"nvdec_rate", a.nvdec_rate},
            {"exit_code", exit_code},
            {"interrupted", signalled ? nlohmann::json(InterruptGuard::signal_name()) : nlohmann::json(nullptr)}};
        std::string why;
        if (!write_json_file(a.json, doc, &why)) {
            std::fprintf(stderr, "corrtrack track: %s\n", why.c_str());
            summary_ok = false;
            exit_code = kExitInput;
        }
    }

    if (!a.quiet) {
        std::printf("streams     %zu (%zu at once), %d failed\n", n, jobs, failed_count);
        std::size_t width = 0;
        for (const StreamPlan& p : plans) width = std::max(width, p.name.size());
        for (std::size_t i = 0; i < n; ++i) {
            const StreamPlan& p = plans[i];
            const StreamResult& r = *results[i];
            std::printf("  %-*s  %s: %s", static_cast<int>(width), p.name.c_str(), p.input.c_str(), r.status.c_str());
            if (r.opened)
                std::printf(
                    ", %ld frames (%ld target-frames lost), %.1f fps, dropped %ld live %ld late, latency "
                    "median %.2f ms p95 %.2f ms, decode %s",
                    r.frames, r.lost_frames, r.frames / std::max(r.seconds, 1e-9), r.live_dropped, r.loop.late_drops,
                    median_of(r.loop.latency_ms), p95_of(r.loop.latency_ms), r.decode_mode.c_str());
            if (!r.decode_why.empty()) std::printf(" (%s)", r.decode_why.c_str());
            if (!r.error.empty() && r.status != "clean") std::printf(" (%s)", r.error.c_str());
            std::printf("\n");
        }
        std::printf(
            "all         %ld frames in %.2f s, %.1f fps in all, dropped %ld live %ld late, latency median "
            "%.2f ms p95 %.2f ms\n",
            frames, secs, frames / std::max(secs, 1e-9), live, late, median_of(latency), p95_of(latency));
        std::printf("kernel      %s (%ld target%s in %zu streams, %s)\n", kernel.c_str(), targets,
                    targets == 1 ? "" : "s", n, on_gpu ? "GPU" : "CPU");
        std::printf("decode      %s: %d stream%s on NVDEC, %d on the CPU", to_string(a.decode), on_nvdec,
                    on_nvdec == 1 ? "" : "s", on_cpu);
        if (a.decode == DecodeMode::kAuto && on_gpu)
            std::printf(
                " (at most %d full-speed streams or %.0f Mpixel/s of paced ones on NVDEC: --nvdec-streams, "
                "--nvdec-rate)",
                a.nvdec_streams, a.nvdec_rate);
        std::printf("\n");
        if (signalled)
            std::printf("stopped     by %s; the outputs cover the frames tracked\n", InterruptGuard::signal_name());
        for (std::size_t i = 0; i < n; ++i)
            for (const auto& [flag, path] : stream_outputs(plans[i], *results[i]))
                std::printf("wrote %-5s %s\n", flag.c_str(), path.c_str());
        if (!a.json.empty() && summary_ok) std::printf("wrote json  %s (summary)\n", a.json.c_str());
    }
    return exit_code;
}

}  // namespace corrtrack
