// `corrtrack eval DATASET`: OTB one-pass evaluation over OTB-style sequence folders.
#include <algorithm>
#include <cstdio>
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/cli/output_paths.h"
#include "app/eval/otb.h"
#include "app/eval/plot.h"
#include "app/io/result_writers.h"

namespace corrtrack {
namespace {

struct EvalArgs {
    std::string dataset;
    std::vector<std::string> only;
    std::string json, plot, results;
    bool quiet = false;
    int sre = 1;
    int jobs = 1;
    TrackerOptions tracker;
};

plot::Figure make_figure(const std::vector<std::string>& names, const std::vector<SequenceMetrics>& per,
                         const SequenceMetrics& mean, const std::string& kernel) {
    plot::Panel success, precision;
    success.title = "Success plot (one-pass)";
    success.x_label = "overlap threshold (IoU)";
    success.y_label = "success rate";
    precision.title = "Precision plot (one-pass)";
    precision.x_label = "location error threshold (px)";
    precision.y_label = "precision";
    success.x_min = 0, success.x_max = 1, success.y_min = 0, success.y_max = 1;
    precision.x_min = 0, precision.x_max = 50, precision.y_min = 0, precision.y_max = 1;
    success.key = "bottom left";
    precision.key = "bottom right";
    auto add = [&](const std::string& name, const SequenceMetrics& m) {
        char label[160];
        std::snprintf(label, sizeof label, "%s [%.3f]", name.c_str(), m.auc);
        plot::Series s{label, {}, {}};
        for (int t = 0; t < kSuccessThresholds; ++t) {
            s.x.push_back(t / 20.0);
            s.y.push_back(m.success[t]);
        }
        success.series.push_back(s);
        std::snprintf(label, sizeof label, "%s [%.3f]", name.c_str(), m.prec20);
        plot::Series p{label, {}, {}};
        for (int t = 0; t < kPrecisionThresholds; ++t) {
            p.x.push_back(t);
            p.y.push_back(m.precision[t]);
        }
        precision.series.push_back(p);
    };
    add("mean", mean);
    for (std::size_t i = 0; i < names.size(); ++i) add(names[i], per[i]);
    plot::Figure fig;
    fig.title = "corrtrack eval, kernel " + kernel + " (AUC / P@20 in brackets)";
    fig.panels = {success, precision};
    fig.panel_width = 720;
    fig.panel_height = 540;
    return fig;
}

int run_eval(const EvalArgs& a, bool dry_run) {
    std::string error;
    const std::string kernel = resolve_kernel_name(a.tracker.kernel);
    if (std::string why; !make_correlator(kernel, &why)) {
        std::fprintf(stderr, "corrtrack eval: %s\n", why.c_str());
        return kExitUsage;
    }
    std::vector<SequenceInfo> sequences;
    if (!find_sequences(a.dataset, &sequences, &error)) {
        std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
        return kExitInput;
    }
    if (!a.only.empty()) {
        std::vector<SequenceInfo> kept;
        for (const auto& s : sequences)
            if (std::find(a.only.begin(), a.only.end(), s.name) != a.only.end()) kept.push_back(s);
        if (kept.size() != a.only.size()) {
            std::fprintf(stderr, "corrtrack eval: some of --sequences are not in '%s'\n", a.dataset.c_str());
            return kExitUsage;
        }
        sequences = kept;
    }
    // No output may overwrite a sequence's files (its ground truth, images, video) or another.
    std::vector<NamedPath> inputs{{a.dataset, "the dataset", false}}, outputs;
    for (const SequenceInfo& s : sequences) inputs.push_back({s.input, "sequence '" + s.name + "'", false});
    outputs.push_back({a.json, "--json", false});
    outputs.push_back({a.plot, "--plot", false});
    if (!a.results.empty())
        for (const SequenceInfo& s : sequences)
            outputs.push_back({(std::filesystem::path(a.results) / (s.name + ".txt")).string(), "--results", false});
    if (!check_output_paths(inputs, outputs, &error)) {
        std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
        return kExitUsage;
    }
    if (dry_run) return 0;
    // The first SIGINT, SIGTERM or SIGHUP: the sequences in flight finish, no other starts,
    // and every output is written for the sequences done (eval.json says "interrupted").
    InterruptGuard interrupt("finishing the sequences in flight");
    const auto interrupted = [] { return InterruptGuard::signal_number() != 0; };
    announce_compute_path();
    if (std::error_code ec; !a.results.empty() && !std::filesystem::create_directories(a.results, ec) && ec) {
        std::fprintf(stderr, "corrtrack eval: cannot create --results folder '%s': %s\n", a.results.c_str(),
                     ec.message().c_str());
        return kExitInput;
    }

    // Sequences are independent: with --jobs they run on that many threads, each with its
    // own decoder and trackers and a GPU context of its own (made here, before the threads,
    // destroyed after they joined: jobs never wait on one another's kernels); the table comes
    // out in name order either way.
    struct Outcome {
        bool run = false;  // false: a signal came before it started
        bool ok = false;
        std::string error;
        SequenceMetrics metrics;
        std::vector<BoxF> boxes;  // the one-pass run, for --results
        std::size_t truth_rows = 0;
    };
    std::vector<Outcome> outcomes(sequences.size());
    const int jobs = std::max(1, std::min<int>(a.jobs, static_cast<int>(sequences.size())));
    std::vector<std::unique_ptr<GpuContext>> contexts;
    for (int j = 0; j < jobs; ++j) contexts.push_back(std::make_unique<GpuContext>());
    std::atomic<std::size_t> next{0};
    auto work = [&](const GpuContext& gpu) {
        for (std::size_t i = next++; i < sequences.size(); i = next++) {
            if (interrupted()) return;
            const SequenceInfo& seq = sequences[i];
            Outcome& out = outcomes[i];
            out.run = true;
            out.ok =
                evaluate_sequence(seq, a.tracker, gpu, &out.metrics, &out.boxes, &out.truth_rows, &out.error, a.sre);
        }
    };
    std::vector<std::thread> pool;
    for (int j = 1; j < jobs; ++j) pool.emplace_back(work, std::cref(*contexts[j]));
    work(*contexts[0]);
    for (std::thread& t : pool) t.join();

    std::vector<std::string> names;
    std::vector<SequenceMetrics> per;
    nlohmann::json doc = {{"dataset", a.dataset},
                          {"kernel", kernel},
                          {"sre_runs", a.sre},
                          {"sequences", nlohmann::json::object()},
                          {"failed", nlohmann::json::object()}};
    if (!a.quiet) std::printf("%-20s %7s %7s %7s %9s %6s\n", "sequence", "frames", "AUC", "P@20", "fps", "lost");
    int failures = 0;
    nlohmann::json not_run = nlohmann::json::array();
    for (std::size_t i = 0; i < sequences.size(); ++i) {
        const SequenceInfo& seq = sequences[i];
        const Outcome& out = outcomes[i];
        if (!out.run) {
            not_run.push_back(seq.name);
            continue;
        }
        if (!out.ok) {
            std::fprintf(stderr, "corrtrack eval: %s\n", out.error.c_str());
            doc["failed"][seq.name] = out.error;  // as Python's eval_otb reports it
            ++failures;
            continue;
        }
        if (out.boxes.size() != out.truth_rows && !a.quiet)
            std::fprintf(stderr, "corrtrack eval: %s: %zu frames but %zu ground-truth rows; scoring the overlap\n",
                         seq.name.c_str(), out.boxes.size(), out.truth_rows);
        const SequenceMetrics& m = out.metrics;
        names.push_back(seq.name);
        per.push_back(m);
        doc["sequences"][seq.name] = {{"auc", m.auc},
                                      {"prec20", m.prec20},
                                      {"fps", m.fps},
                                      {"frames", m.frames},
                                      {"evaluated", m.evaluated},
                                      {"lost", m.lost},
                                      {"mean_iou", m.mean_iou},
                                      {"wrong", m.wrong},
                                      {"lost_wrong", m.lost_wrong},
                                      {"lost_right", m.lost_right}};
        if (!a.quiet)
            std::printf("%-20s %7ld %7.3f %7.3f %9.1f %6ld\n", seq.name.c_str(), m.frames, m.auc, m.prec20, m.fps,
                        m.lost);
        if (!a.results.empty() &&
            !write_otb_results((std::filesystem::path(a.results) / (seq.name + ".txt")).string(), out.boxes, &error)) {
            std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
            ++failures;
        }
    }
    doc["interrupted"] = interrupted() ? nlohmann::json(InterruptGuard::signal_name()) : nlohmann::json(nullptr);
    doc["not_run"] = not_run;
    if (interrupted()) {
        std::fprintf(stderr, "corrtrack eval: stopped by %s: %zu of %zu sequences evaluated, %zu not run\n",
                     InterruptGuard::signal_name(), per.size(), sequences.size(), not_run.size());
        if (per.empty()) {  // nothing to average or draw: the JSON says so
            doc["mean"] = nullptr;
            if (!a.json.empty() && !write_json_file(a.json, doc, &error))
                std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
            if (!a.plot.empty()) std::fprintf(stderr, "corrtrack eval: no plot: no sequence was evaluated\n");
            return InterruptGuard::exit_code();
        }
    }
    if (per.empty()) {
        std::fprintf(stderr, "corrtrack eval: no sequence could be evaluated\n");
        // The JSON still says why each one failed.
        if (!a.json.empty() && !write_json_file(a.json, doc, &error))
            std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
        return kExitInput;
    }
    SequenceMetrics mean = mean_metrics(per);
    std::vector<double> fps;
    for (const SequenceMetrics& m : per) fps.push_back(m.fps);
    // How much the lost flag means: the share of wrong boxes (IoU < 0.1) it flags, the share of
    // its flags that are on wrong boxes, and the share of all boxes that are wrong (what a flag
    // raised at random would reach).
    const double wrong_rate = mean.evaluated > 0 ? static_cast<double>(mean.wrong) / mean.evaluated : 0.0;
    const double flag_recall = mean.wrong > 0 ? static_cast<double>(mean.lost_wrong) / mean.wrong : 1.0;
    const long flags = mean.lost_wrong + mean.lost_right;
    const double flag_precision = flags > 0 ? static_cast<double>(mean.lost_wrong) / flags : 1.0;
    doc["mean"] = {{"auc", mean.auc},
                   {"prec20", mean.prec20},
                   {"fps", mean.fps},
                   {"median_fps", median(fps)},
                   {"frames", mean.frames},
                   {"sequences", per.size()},
                   {"lost_flag_recall", flag_recall},
                   {"lost_flag_precision", flag_precision},
                   {"wrong_rate", wrong_rate}};
    if (!a.quiet)
        std::printf(
            "%-20s %7ld %7.3f %7.3f %9.1f   (median fps %.1f)\n"
            "lost flag: on %.1f%% of wrong boxes (IoU < 0.1), %.1f%% of flags on wrong boxes (%.1f%% of all "
            "boxes are wrong)\n",
            "mean", mean.frames, mean.auc, mean.prec20, mean.fps, median(fps), 100 * flag_recall, 100 * flag_precision,
            100 * wrong_rate);
    bool written = true;
    if (!a.json.empty() && !write_json_file(a.json, doc, &error)) {
        std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
        written = false;
    }
    if (!a.plot.empty()) {
        const plot::RenderResult r = plot::render_png(make_figure(names, per, mean, kernel), a.plot);
        if (!r.ok) {
            std::fprintf(stderr, "corrtrack eval: plot: %s\n", r.error.c_str());
            written = false;
        }
    }
    if (interrupted()) return InterruptGuard::exit_code();
    return failures > 0 || !written ? kExitInput : 0;
}

}  // namespace

void register_eval_command(CLI::App& root, CommandOutcome& outcome) {
    auto args = std::make_shared<EvalArgs>();
    CLI::App* cmd = root.add_subcommand("eval", "OTB one-pass evaluation over OTB-style sequence folders");
    cmd->add_option("dataset", args->dataset,
                    "folder of sequences (<name>/img/%05d.jpg or video.mkv + groundtruth_rect.txt)")
        ->required();
    cmd->add_option("--sequences", args->only, "evaluate only these sequence names")->delimiter(',');
    cmd->add_option("--json", args->json,
                    "metrics as JSON: sequences.<name>.{auc,prec20,fps,frames}, mean.{auc,prec20,fps}");
    cmd->add_option("--plot", args->plot, "success and precision plots (PNG, drawn by gnuplot)");
    cmd->add_option("--results", args->results, "write each sequence's boxes to DIR/<name>.txt (x,y,w,h, 1-based)");
    cmd->add_flag("--quiet,-q", args->quiet, "no table");
    cmd->add_option("--sre", args->sre,
                    "runs per sequence: 1 = OTB one-pass; up to 13 adds OTB's spatial robustness runs "
                    "(first box shifted by 10% or scaled by 0.8-1.2), metrics averaged")
        ->check(CLI::Range(1, 13))
        ->capture_default_str();
    cmd->add_option("--jobs,-j", args->jobs, "sequences evaluated at once (fps is per tracker; more jobs share cores)")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    add_tracker_options(*cmd, args->tracker);
    add_no_cache_option(*cmd);
    cmd->callback([args, &outcome] { outcome.exit_code = run_eval(*args, outcome.dry_run); });
}

}  // namespace corrtrack
