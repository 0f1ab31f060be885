// auto's timing rounds (auto_timing.h): on the caller's stream, or on a worker thread.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "corrtrack/start_trace.h"
#include "cuda/auto_hopeless.h"
#include "cuda/auto_timing.h"
#include "cuda/common.cuh"

namespace corrtrack {
namespace {

constexpr float kQuickMs = 2.0f;  // runs faster than this are timed kMoreRunsQuick more times
constexpr float kSlowMs = 20.0f;  // up to this, kMoreRunsSlow; beyond, the one timed run stands
constexpr int kMoreRunsQuick = 4;
constexpr int kMoreRunsSlow = 2;
// A first run this many times the best so far is not repeated (the same factor drops a kernel
// from later rounds, auto_hopeless.h).
constexpr float kHopeless = HopelessRecord::kHopelessFactor;

float elapsed_ms(Correlator& corr, ImageView frame, const NccProblem& p, MapView out, Stream stream, cudaEvent_t start,
                 cudaEvent_t stop) {
    const cudaStream_t s = as_cuda(stream);
    CORRTRACK_CUDA(cudaEventRecord(start, s));
    corr.run(frame, p, out, stream);
    CORRTRACK_CUDA(cudaEventRecord(stop, s));
    CORRTRACK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CORRTRACK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

// A queued background round: it owns its copies of the frame, the output map and the template.
struct Job {
    int device = 0;
    std::vector<std::string> names;
    ImageView frame;  // the copy (device), freed by the worker
    NccProblem problem;
    MapView out;  // the worker's own map (device)
    std::vector<std::uint8_t> templ;
    Size templ_size;
    cudaEvent_t copied = nullptr;  // on the caller's stream, after the frame copy
    std::function<void(const AutoTimingResult&)> done;
};

// One worker for the process: rounds run one after another (each uses the whole GPU's
// attention it can get; two at once would time each other).
class Worker {
public:
    ~Worker() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) thread_.join();
    }
    void push(Job job) {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(std::move(job));
        if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
        wake_.notify_one();
    }

private:
    void loop() {
        for (;;) {
            Job job;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
                if (stopping_) return;  // the process is ending: rounds not started are dropped
                job = std::move(jobs_.front());
                jobs_.pop_front();
            }
            run(job);
        }
    }

    static void run(Job& job) {
        AutoTimingResult result;
        cudaStream_t s = nullptr;
        try {
            CORRTRACK_CUDA(cudaSetDevice(job.device));
            // The lowest priority: the tracker's stream (GpuContext: the highest) gets the SMs
            // first as blocks finish, so a round slows its frames as little as it can.
            int lowest = 0, highest = 0;
            CORRTRACK_CUDA(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
            CORRTRACK_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, lowest));
            CORRTRACK_CUDA(cudaStreamWaitEvent(s, job.copied, 0));
            // Fresh instances: the caller's are in use on its thread (a Correlator is used by one
            // thread at a time). They and their workspaces go when the round ends.
            std::vector<std::unique_ptr<Correlator>> made;
            const ImageView templ{job.templ.data(), job.templ_size.width, job.templ_size.height,
                                  static_cast<std::size_t>(job.templ_size.width), MemorySpace::kHost};
            auto prepare = [&](const std::string& name) -> Correlator* {
                std::unique_ptr<Correlator> c = make_correlator(name);
                if (!c || !c->supports(job.problem, nullptr)) return nullptr;
                c->set_template(templ, s);
                made.push_back(std::move(c));
                return made.back().get();
            };
            StartTraceScope trace("auto timing (background)");
            result = time_candidates_on(job.names, prepare, job.frame, job.problem, job.out, s);
            trace.set_detail(result.text());
        } catch (const std::exception& ex) {
            result.failures += std::string(result.failures.empty() ? "" : "; ") + "background round: " + ex.what();
        }
        if (s) {
            cudaFreeAsync(const_cast<std::uint8_t*>(job.frame.data), s);
            cudaFreeAsync(job.out.data, s);
            cudaStreamSynchronize(s);
            cudaStreamDestroy(s);
        }
        cudaEventDestroy(job.copied);
        cudaGetLastError();  // nothing here may leave an error for the caller's thread's next check
        if (job.done) job.done(result);
    }

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job> jobs_;
    std::thread thread_;
    bool stopping_ = false;
};

Worker& worker() {
    static Worker w;  // made after the CUDA runtime (the caller used it), so destroyed before it
    return w;
}

}  // namespace

std::string AutoTimingResult::text() const {
    std::string t;
    for (const auto& [ms, name] : times) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %.3f ms", t.empty() ? "" : ", ", name.c_str(), ms);
        t += buf;
    }
    if (!failures.empty()) t += (t.empty() ? "" : "; ") + failures;
    return t;
}

AutoTimingResult time_candidates_on(const std::vector<std::string>& names, const PrepareCandidate& prepare,
                                    ImageView frame, const NccProblem& p, MapView out, Stream stream) {
    AutoTimingResult r;
    cudaEvent_t start = nullptr, stop = nullptr;
    CORRTRACK_CUDA(cudaEventCreate(&start));
    if (cudaEventCreate(&stop) != cudaSuccess) {
        cudaEventDestroy(start);
        throw std::runtime_error("auto: cannot create a timing event");
    }
    float fastest = 0;
    for (const std::string& name : names) {
        float best = 0;
        try {
            Correlator* corr = prepare(name);
            if (!corr) continue;
            corr->run(frame, p, out, stream);  // warm-up: workspaces, plans, caches
            best = elapsed_ms(*corr, frame, p, out, stream, start, stop);
            int more = best < kQuickMs ? kMoreRunsQuick : (best < kSlowMs ? kMoreRunsSlow : 0);
            if (!r.times.empty() && best > kHopeless * fastest) more = 0;
            for (int k = 0; k < more; ++k) best = std::min(best, elapsed_ms(*corr, frame, p, out, stream, start, stop));
        } catch (const std::exception& ex) {
            r.failures += (r.failures.empty() ? "" : "; ") + name + " failed: " + ex.what();
            continue;
        }
        r.times.emplace_back(best, name);
        fastest = r.times.size() == 1 ? best : std::min(fastest, best);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::stable_sort(r.times.begin(), r.times.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return r;
}

bool queue_background_timing(const std::vector<std::string>& names, ImageView frame, const NccProblem& p, MapView out,
                             std::vector<std::uint8_t> templ, Size templ_size, Stream stream,
                             std::function<void(const AutoTimingResult&)> done) {
    if (frame.space != MemorySpace::kDevice || out.space != MemorySpace::kDevice) return false;
    Job job;
    if (cudaGetDevice(&job.device) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    // Stream-ordered allocations and copies: queued behind the caller's work, no wait here.
    const cudaStream_t s = as_cuda(stream);
    void* frame_copy = nullptr;
    void* out_copy = nullptr;
    const std::size_t frame_bytes = frame.pitch * static_cast<std::size_t>(frame.height);
    const std::size_t out_bytes = out.pitch * static_cast<std::size_t>(out.height) * sizeof(float);
    if (cudaMallocAsync(&frame_copy, frame_bytes, s) != cudaSuccess) {  // no memory pools here
        cudaGetLastError();
        return false;
    }
    if (cudaMallocAsync(&out_copy, out_bytes, s) != cudaSuccess ||
        cudaMemcpy2DAsync(frame_copy, frame.pitch, frame.data, frame.pitch, frame.width, frame.height,
                          cudaMemcpyDeviceToDevice, s) != cudaSuccess ||
        cudaEventCreateWithFlags(&job.copied, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventRecord(job.copied, s) != cudaSuccess) {
        cudaGetLastError();
        cudaFreeAsync(frame_copy, s);
        if (out_copy) cudaFreeAsync(out_copy, s);
        if (job.copied) cudaEventDestroy(job.copied);
        cudaGetLastError();
        return false;
    }
    job.names = names;
    job.frame = {static_cast<const std::uint8_t*>(frame_copy), frame.width, frame.height, frame.pitch,
                 MemorySpace::kDevice};
    job.problem = p;
    job.out = {static_cast<float*>(out_copy), out.width, out.height, out.pitch, MemorySpace::kDevice};
    job.templ = std::move(templ);
    job.templ_size = templ_size;
    job.done = std::move(done);
    worker().push(std::move(job));
    return true;
}

}  // namespace corrtrack
