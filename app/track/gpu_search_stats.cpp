#include "app/track/gpu_search_stats.h"

#include <algorithm>

namespace corrtrack {

void GpuSearchStats::print(std::FILE* out) const {
    if (frames <= 0) return;
    std::fprintf(out, "gpu search: %ld frames, %ld from the host, %.1f%% of their rows uploaded, %ld late uploads\n",
                 frames, host_frames, 100.0 * uploaded_rows / std::max(1L, frame_rows), late_uploads);
    const double n = 1000.0 / frames;  // us per frame
    std::fprintf(out,
                 "gpu search us/frame: before search %.1f, enqueue %.1f (row uploads %.1f, correlate %.1f), wait "
                 "%.1f (gpu %.1f), after search %.1f, sample %.1f, searches %.2f, pageable frames %ld\n",
                 phase_ms[kBeforeSearch] * n, phase_ms[kEnqueue] * n, upload_ms * n, correlate_ms * n,
                 phase_ms[kWait] * n, gpu_ms * n, phase_ms[kAfterSearch] * n, phase_ms[kSample] * n, searches / frames,
                 pageable_frames);
    std::fprintf(
        out,
        "gpu search us/frame detail: set_template %.1f (%.2f calls, %.0f px), correlator run %.1f (%.2f "
        "calls), prepare_levels %.1f (%.2f level launches), sample+gradient launch %.1f, peaks launch %.1f, events "
        "%.1f; gpu: sampling %.1f, correlation %.1f, peaks %.1f\n",
        set_template_ms * n, set_template_calls / frames, set_template_px / frames, run_ms * n, run_calls / frames,
        prepare_ms * n, halvings / frames, sample_launch_ms * n, peaks_launch_ms * n, event_ms * n, gpu_sample_ms * n,
        gpu_correlate_ms * n, gpu_peaks_ms * n);
    std::fprintf(out,
                 "gpu search graphs: %ld searches as one graph launch (%.1f us/frame to capture, update and launch), "
                 "%ld instantiations, %ld failed captures\n",
                 graph.launches, graph_ms * n, graph.instantiations, graph.failures);
    std::fprintf(out,
                 "gpu search host cues: %.2f requests/frame ranked on the host, %.2f only their rival found there, "
                 "%.1f us/frame\n",
                 host_ranked / frames, host_rivals / frames, host_rank_ms * n);
}

}  // namespace corrtrack
