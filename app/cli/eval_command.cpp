// `corrtrack eval DATASET`: OTB one-pass evaluation over OTB-style sequence folders.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
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

int run_eval(const EvalArgs& a) {
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
    announce_compute_path();
    if (!a.results.empty()) std::filesystem::create_directories(a.results);

    std::vector<std::string> names;
    std::vector<SequenceMetrics> per;
    nlohmann::json doc = {{"dataset", a.dataset}, {"kernel", kernel}, {"sequences", nlohmann::json::object()}};
    if (!a.quiet) std::printf("%-20s %7s %7s %7s %9s %6s\n", "sequence", "frames", "AUC", "P@20", "fps", "lost");
    int failures = 0;
    for (const SequenceInfo& seq : sequences) {
        std::vector<BoxF> boxes;
        std::size_t truth_rows = 0;
        SequenceMetrics m;
        if (!evaluate_sequence(seq, a.tracker, &m, &boxes, &truth_rows, &error)) {
            std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
            ++failures;
            continue;
        }
        if (boxes.size() != truth_rows && !a.quiet)
            std::fprintf(stderr, "corrtrack eval: %s: %zu frames but %zu ground-truth rows; scoring the overlap\n",
                         seq.name.c_str(), boxes.size(), truth_rows);
        names.push_back(seq.name);
        per.push_back(m);
        doc["sequences"][seq.name] = {{"auc", m.auc},     {"prec20", m.prec20},     {"fps", m.fps},
                                      {"frames", m.frames}, {"evaluated", m.evaluated}, {"lost", m.lost},
                                      {"mean_iou", m.mean_iou}};
        if (!a.quiet)
            std::printf("%-20s %7ld %7.3f %7.3f %9.1f %6ld\n", seq.name.c_str(), m.frames, m.auc, m.prec20, m.fps, m.lost);
        if (!a.results.empty() &&
            !write_otb_results((std::filesystem::path(a.results) / (seq.name + ".txt")).string(), boxes, &error)) {
            std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
            ++failures;
        }
    }
    if (per.empty()) {
        std::fprintf(stderr, "corrtrack eval: no sequence could be evaluated\n");
        return kExitInput;
    }
    const SequenceMetrics mean = mean_metrics(per);
    std::vector<double> fps;
    for (const SequenceMetrics& m : per) fps.push_back(m.fps);
    doc["mean"] = {{"auc", mean.auc}, {"prec20", mean.prec20}, {"fps", mean.fps}, {"median_fps", median(fps)},
                   {"frames", mean.frames}, {"sequences", per.size()}};
    if (!a.quiet)
        std::printf("%-20s %7ld %7.3f %7.3f %9.1f   (median fps %.1f)\n", "mean", mean.frames, mean.auc, mean.prec20,
                    mean.fps, median(fps));
    if (!a.json.empty() && !write_json_file(a.json, doc, &error)) {
        std::fprintf(stderr, "corrtrack eval: %s\n", error.c_str());
        return kExitInput;
    }
    if (!a.plot.empty()) {
        const plot::RenderResult r = plot::render_png(make_figure(names, per, mean, kernel), a.plot);
        if (!r.ok) {
            std::fprintf(stderr, "corrtrack eval: plot: %s\n", r.error.c_str());
            return kExitInput;
        }
    }
    return failures > 0 ? kExitInput : 0;
}

}  // namespace

void register_eval_command(CLI::App& root, CommandOutcome& outcome) {
    auto args = std::make_shared<EvalArgs>();
    CLI::App* cmd = root.add_subcommand("eval", "OTB one-pass evaluation over OTB-style sequence folders");
    cmd->add_option("dataset", args->dataset, "folder of sequences (<name>/img/%05d.jpg or video.mkv + groundtruth_rect.txt)")
        ->required();
    cmd->add_option("--sequences", args->only, "evaluate only these sequence names")->delimiter(',');
    cmd->add_option("--json", args->json, "metrics as JSON: sequences.<name>.{auc,prec20,fps,frames}, mean.{auc,prec20,fps}");
    cmd->add_option("--plot", args->plot, "success and precision plots (PNG, drawn by gnuplot)");
    cmd->add_option("--results", args->results, "write each sequence's boxes to DIR/<name>.txt (x,y,w,h, 1-based)");
    cmd->add_flag("--quiet,-q", args->quiet, "no table");
    add_tracker_options(*cmd, args->tracker);
    cmd->callback([args, &outcome] { outcome.exit_code = run_eval(*args); });
}

}  // namespace corrtrack
