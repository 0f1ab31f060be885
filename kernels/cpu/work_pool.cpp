#include "corrtrack/work_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace corrtrack {
namespace {

struct Job {
    const std::function<void(int)>* fn;
    int n;
    std::atomic<int> next{0};
    std::atomic<int> done{0};
};

// The cores this process may use (its affinity mask), or OMP_NUM_THREADS where set, as the
// OpenMP loops elsewhere in the library read it.
int threads_wanted() {
    if (const char* v = std::getenv("OMP_NUM_THREADS"))
        if (const int n = std::atoi(v); n > 0) return n;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

class WorkPool {
public:
    WorkPool() {
        for (int i = 1; i < threads_wanted(); ++i) threads_.emplace_back([this] { work(); });
    }
    ~WorkPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);  // guards stop_
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : threads_) t.join();
    }
    int workers() const { return static_cast<int>(threads_.size()); }

    void run(int n, const std::function<void(int)>& fn) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy.owns_lock() || threads_.empty() || n <= 1) {
            for (int i = 0; i < n; ++i) fn(i);
            return;
        }
        auto job = std::make_shared<Job>();
        job->fn = &fn;
        job->n = n;
        {
            std::lock_guard<std::mutex> lock(mutex_);  // guards job_
            job_ = job;
        }
        wake_.notify_all();
        claim(*job);
        // Items a worker has claimed are still running; wait for them (briefly spinning: they
        // are short), never for a worker that claimed nothing.
        for (int spins = 0; job->done.load(std::memory_order_acquire) < n; ++spins)
            if (spins > 2000) {
                std::unique_lock<std::mutex> lock(mutex_);
                finished_.wait(lock, [&] { return job->done.load(std::memory_order_acquire) >= n; });
            }
        std::lock_guard<std::mutex> lock(mutex_);  // guards job_
        job_.reset();
    }

private:
    // Runs items until none is left; a worker that wakes after the job ended finds next >= n
    // and never touches fn (which lives on the caller's stack).
    void claim(Job& job) {
        for (int i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < job.n;) {
            (*job.fn)(i);
            if (job.done.fetch_add(1, std::memory_order_acq_rel) + 1 == job.n) {
                std::lock_guard<std::mutex> lock(mutex_);  // pairs with the caller's wait
                finished_.notify_all();
            }
        }
    }
    void work() {
        std::shared_ptr<Job> seen;
        for (;;) {
            std::shared_ptr<Job> job;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || (job_ && job_ != seen); });
                if (stop_) return;
                job = job_;
            }
            seen = job;
            claim(*job);
        }
    }

    std::vector<std::thread> threads_;
    std::mutex busy_;   // one parallel_for at a time holds the workers
    std::mutex mutex_;  // guards job_ and stop_
    std::condition_variable wake_, finished_;
    std::shared_ptr<Job> job_;
    bool stop_ = false;
};

// Never destroyed: a thread still inside parallel_for when the process exits (an eval job
// interrupted) must not find its pool's mutex and condition variables gone; the workers sleep
// in wait() until the process ends.
WorkPool& pool() {
    static WorkPool* p = new WorkPool;
    return *p;
}

}  // namespace

void parallel_for(int n, const std::function<void(int)>& fn) { pool().run(n, fn); }

int work_pool_workers() { return pool().workers(); }

}  // namespace corrtrack
