#include "app/bench/runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>

#include "app/bench/data.h"
#include "app/cli/interrupt.h"
#include "app/gpu/gpu_context.h"
#include "app/util/stats.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack::bench {

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

namespace {

// The bench's GPU context, whose compute stream every GPU kernel runs on, and the events that
// time it (made only when a GPU kernel is in the plan; the timer's events go before the context).
class GpuTiming {
public:
    Stream stream() const { return gpu_.compute(); }
    void synchronize() { CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(gpu_.compute()))); }
    double time_ms(const std::function<void()>& work) {
        timer_.start(gpu_.compute());
        work();
        timer_.stop(gpu_.compute());
        return timer_.elapsed_ms();
    }

private:
    GpuContext gpu_;  // non-blocking streams
    GpuTimer timer_;
};

double cpu_time_ms(const std::function<void()>& work) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    return ms_since(t0);
}

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
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
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
            std::snprintf(buf, sizeof buf,
                          "hung: a call did not return within %.0f s (--hang-seconds); "
                          "the bench stopped here",
                          hang_s);
            hung.note = buf;
            done.push_back(hung);
            std::fprintf(stderr, "corrtrack bench: %s %s %s %s hung; writing what was measured and stopping\n",
                         hung.kernel->name, size_text(hung.c.frame).c_str(), size_text(hung.c.templ).c_str(),
                         mode_name(hung.c.mode));
            on_hang_(std::move(done));  // does not return
        }
    }

    // After the first SIGINT, SIGTERM or SIGHUP (InterruptGuard): the case in flight finishes,
    // every later one is skipped, and the outputs are written with them.
    static bool stopped(Status* status, std::string* note) {
        if (InterruptGuard::signal_number() == 0) return false;
        *status = Status::kSkipped;
        *note = std::string("not run: stopped by ") + InterruptGuard::signal_name();
        return true;
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
        total_ = plan_.kernels.size() * plan_.case_count();
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
                    r.c = KernelCase{size, plan_.templates[t], mode};
                    {
                        std::lock_guard<std::mutex> lock(results_mutex_);
                        current_ = r;
                    }
                    if (!frame_error.empty() && k->available()) {
                        r.status = Status::kError;
                        r.note = frame_error;
                    } else {
                        const ImageView fv =
                            group == Device::kCuda && device_frame ? device_frame->view() : frame.view();
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

    // The kernel of `k`, ready for `p`; null, with *status and *note set (error or unsupported),
    // when it cannot be made or declines p.
    Correlator* kernel_for(const KernelEntry* k, const NccProblem& p, Status* status, std::string* note) {
        std::string why;
        Correlator* kernel = correlator(k, &why);
        if (!kernel) {
            *status = Status::kError;
            *note = why;
            return nullptr;
        }
        why.clear();
        if (!kernel->supports(p, &why)) {
            *status = Status::kUnsupported;
            *note = why.empty() ? "declined by the kernel (no reason given)" : why;
            return nullptr;
        }
        return kernel;
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
                if (p.too_slow) return Prediction{INFINITY, 1, "already over the budget at " + size_text(p.c.frame)};
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
        if (stopped(&r.status, &r.note)) return;
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
        const NccProblem p = r.c.problem();
        Correlator* kernel = kernel_for(k, p, &r.status, &r.note);
        if (!kernel) return;
        if (const auto pred = predict(r); pred && pred->ms > limit_ms * pred->margin) {
            r.status = Status::kSkipped;
            r.too_slow = true;
            r.note = "too slow (" + pred->why +
                     (std::isfinite(pred->ms) ? ": ~" + seconds_text(pred->ms) + " per run" : "") + ", budget " +
                     seconds_text(limit_ms) + ")";
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
        if (stopped(&b.status, &b.note)) return;
        if (o_.max_total_seconds > 0 &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > o_.max_total_seconds) {
            b.status = Status::kSkipped;
            b.note = "bench time limit reached (--max-total-seconds)";
            return;
        }
        const NccProblem single = r.c.problem();
        const Size window{single.roi.width, single.roi.height};
        const Size templ = r.c.templ;
        const NccProblem batched = r.c.batched(n).problem();  // the atlas of n windows
        Correlator* kernel = kernel_for(k, batched, &b.status, &b.note);
        if (!kernel) return;
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
            std::string why;
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
        cudaError_t err = cudaStreamSynchronize(as_cuda(gpu_->stream()));
        if (err == cudaSuccess) err = cudaDeviceSynchronize();
        if (err != cudaSuccess)
            gpu_lost_ =
                std::string("CUDA context unusable after ") + kernel + " failed (" + cudaGetErrorName(err) + ")";
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

}  // namespace

std::vector<Result> run_cases(const BenchOptions& o, const Plan& plan, HangHandler on_hang) {
    BenchRunner runner(o, plan, std::move(on_hang));
    return runner.run();
}

}  // namespace corrtrack::bench
