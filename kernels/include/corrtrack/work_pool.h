// A process-wide pool of worker threads for the CPU kernels' full-frame loops and the tracker's
// per-target work of a crowd (app/track/tracker.cpp: learning, planning, taking hits). Unlike an
// OpenMP team it never waits for a worker that has not started: the caller works on the
// items too, and returns once every item is done, so a core taken by another process delays
// one item, not the whole loop (an OpenMP region ends at a barrier that every thread of the
// team must reach, a full scheduler time slice when one is descheduled).
// Thread rules: parallel_for may be called from any thread; while one call holds the pool, a
// concurrent call runs its items on its own thread.
#pragma once

#include <functional>

namespace corrtrack {

// Calls fn(i) for every i in [0, n), on the calling thread and the pool's workers (one per
// usable core besides the caller; OMP_NUM_THREADS, read once, overrides the count). Returns when all calls have returned.
void parallel_for(int n, const std::function<void(int)>& fn);

// Workers the pool holds (threads - 1), for the tests.
int work_pool_workers();

}  // namespace corrtrack
