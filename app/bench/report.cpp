#include "app/bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"  // kExitInput
#include "app/cli/interrupt.h"
#include "app/eval/plot.h"
#include "app/io/output_file.h"

namespace corrtrack::bench {
namespace {

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
    std::fprintf(f, "\n%-*s %10s %9s %-6s %11s %10s %10s %7s %10s %14s %13s", static_cast<int>(kw), "kernel", "size",
                 "template", "mode", "median ms", "Mpos/s", "GMAC/s", "%DP4A", "floor_us", "% of mem floor",
                 "% of MMA peak");
    for (const std::string& t : ratio_titles)
        std::fprintf(f, " %*s", static_cast<int>(std::max<std::size_t>(t.size(), 6)), t.c_str());
    if (rep.batch > 0) std::fprintf(f, " %7s %11s %13s %7s", "batch_n", "batch_ms", "per_target_ms", "x batch");
    std::fprintf(f, "  status\n");
    const auto cell = [](double v, const char* format) {
        const std::string s = fmt(v, format);
        return s.empty() ? std::string("-") : s;
    };
    for (const Result& r : rep.rows) {
        const bool ok = r.ok();
        std::fprintf(f, "%-*s %10s %9s %-6s %11s %10s %10s %7s %10s %14s %13s", static_cast<int>(kw), r.kernel->name,
                     size_text(r.c.frame).c_str(), size_text(r.c.templ).c_str(), mode_name(r.c.mode),
                     cell(ok ? r.median_ms : NAN, "%.4f").c_str(), cell(ok ? r.mpos_per_s() : NAN, "%.1f").c_str(),
                     cell(ok ? r.gmac_per_s() : NAN, "%.1f").c_str(), cell(rep.dp4a_pct(r), "%.1f").c_str(),
                     cell(rep.floors(r).floor_us(), "%.2f").c_str(), cell(rep.mem_floor_pct(r), "%.2f").c_str(),
                     cell(rep.mma_peak_pct(r), "%.2f").c_str());
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
                         size_text(a->c.frame).c_str(), size_text(a->c.templ).c_str(), mode_name(a->c.mode), p.a->name,
                         x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower", a->median_ms, b->median_ms);
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
    // The roofline's columns came later: after the first ones, so those keep their positions.
    out << ",min_ms,p90_ms,runs,status,floor_us,mem_floor_pct,mma_peak_pct";
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
            << (ok ? std::to_string(r.ms.size()) : "") << "," << csv_field(r.status_text()) << ","
            << fmt(rep.floors(r).floor_us(), "%.6g") << "," << fmt(rep.mem_floor_pct(r), "%.4g") << ","
            << fmt(rep.mma_peak_pct(r), "%.4g");
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
    const auto peaks = [&](const Peaks& p) {
        return json{{"mem_gbps", num(p.mem_gbps > 0 ? p.mem_gbps : NAN)},
                    {"mma_tmacs", num(p.mma_tmacs > 0 ? p.mma_tmacs : NAN)},
                    {"mem_note", p.mem_note},
                    {"mma_note", p.mma_note}};
    };
    doc["roofline"] = {{"gpu", peaks(rep.gpu_peaks)}, {"cpu", peaks(rep.cpu_peaks)}};
    doc["interrupted"] = rep.interrupted.empty() ? json(nullptr) : json(rep.interrupted);
    doc["results"] = json::array();
    for (const Result& r : rep.rows) {
        json j{{"kernel", r.kernel->name},
               {"device", r.gpu() ? "cuda" : "cpu"},
               {"size", size_text(r.c.frame)},
               {"template", size_text(r.c.templ)},
               {"mode", mode_name(r.c.mode)},
               {"positions", r.c.positions()},
               {"status", r.ok() ? "ok" : r.status_text()}};
        const Floors fl = rep.floors(r);
        j["bytes"] = fl.bytes;
        j["macs"] = fl.macs;
        j["mem_floor_us"] = num(fl.mem_us);
        j["mma_floor_us"] = num(fl.mma_us);
        j["floor_us"] = num(fl.floor_us());
        if (r.ok()) {
            j["median_ms"] = r.median_ms;
            j["min_ms"] = r.min_ms;
            j["p90_ms"] = r.p90_ms;
            j["runs_ms"] = r.ms;
            j["mpos_per_s"] = r.mpos_per_s();
            j["gmac_per_s"] = r.gmac_per_s();
            j["dp4a_peak_pct"] = num(rep.dp4a_pct(r));
            j["mem_floor_pct"] = num(rep.mem_floor_pct(r));
            j["mma_peak_pct"] = num(rep.mma_peak_pct(r));
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
            doc["cpu_comparison"].push_back({{"first", p.a->name},
                                             {"second", p.b->name},
                                             {"size", size_text(a->c.frame)},
                                             {"template", size_text(a->c.templ)},
                                             {"mode", mode_name(a->c.mode)},
                                             {"ratio", b->median_ms / a->median_ms}});
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
                const Result* r = rep.find(k->name, KernelCase{size, plan.templates[t], mode});
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

}  // namespace

Report make_report(const BenchOptions& o) {
    Report rep;
    rep.gpu = query_gpu(o.peak_gmacs);
    rep.gpu_peaks = gpu_peaks(rep.gpu, o.peak_bw_gbps, o.peak_tmacs);
    rep.cpu_peaks = cpu_peaks_detected(o.cpu_peak_bw_gbps, o.cpu_peak_tmacs);
    rep.batch = o.batch;
    rep.header = {
        {"corrtrack bench", "NCC kernel timings"},
        {"gpu", rep.gpu.present ? rep.gpu.description : "none (no usable CUDA device)"},
        {"driver", driver_text()},
        {"cuda runtime", cuda_runtime_text()},
        {"cpu", cpu_text()},
        {"date", utc_now_iso()},
        {"command", command_line()},
        {"timing",
         "GPU: CUDA events around run() on one stream, synchronized per run; CPU: steady_clock. "
         "set_template untimed. Median of the timed runs after " +
             std::to_string(o.warmup) + " warm-up run(s); CPU cases time fewer runs (>= " +
             std::to_string(kMinCpuRuns) + ") to fit --max-seconds " + fmt(o.max_seconds, "%g")},
        {"metrics",
         "Mpos/s = output positions / median / 1e6; GMAC/s = template pixels x positions / "
         "median / 1e9 (effective: FFT kernels do fewer operations); %DP4A = GMAC/s / DP4A peak; "
         "x K = median(K) / median(row) on the same case (> 1: the row is faster than K)"},
        {"peak", rep.gpu.peak_note.empty() ? "no GPU; give --peak-gmacs for a %DP4A column" : rep.gpu.peak_note},
        {"roofline",
         "floor_us = max(bytes / bandwidth, MACs / int8 MMA peak) of the row's device; bytes = the searched "
         "region (full: the frame; window: the window) read once as u8 + the float map written once (the "
         "template is left out); MACs = positions x template pixels; % of mem floor = memory floor / median; "
         "% of MMA peak = MAC floor / median (GMAC/s / peak, effective for FFT kernels); '-': peak unknown"},
        {"gpu bandwidth", rep.gpu.present || o.peak_bw_gbps > 0 ? rep.gpu_peaks.mem_note : "no GPU"},
        {"gpu int8 mma peak", rep.gpu.present || o.peak_tmacs > 0 ? rep.gpu_peaks.mma_note : "no GPU"},
        {"cpu bandwidth", rep.cpu_peaks.mem_note},
        {"cpu mac peak", rep.cpu_peaks.mma_note},
        {"window mode",
         "search region " + std::to_string(kWindowFactor) + "x the template's width and height, centred"},
    };
    if (o.batch > 0)
        rep.header.push_back(
            {"batch", "window cases also time " + std::to_string(o.batch) + " targets: one batched run (an atlas of " +
                          std::to_string(o.batch) +
                          " search windows of the frame stacked vertically, templates=" + std::to_string(o.batch) +
                          ", template_roi_step=window height) and " + std::to_string(o.batch) +
                          " separate run() calls (one correlator per target) on the same windows and templates; "
                          "batch_ms = median of the batched run, per_target_ms = median of the " +
                          std::to_string(o.batch) +
                          " separate calls together, batch_speedup = per_target_ms / "
                          "batch_ms (> 1: the batch is faster); n/a: the kernel does not run batches (its reason)"});
    return rep;
}

int finish_report(const BenchOptions& o, const Plan& plan, Report rep, std::vector<Result> results) {
    std::set<std::string> seen;
    for (const Result& r : results) seen.insert(std::string(r.kernel->name) + "|" + r.c.key());
    const std::vector<KernelCase> cases = plan.cases();
    for (const KernelEntry* k : plan.kernels)
        for (const KernelCase& c : cases) {
            if (seen.count(std::string(k->name) + "|" + c.key())) continue;
            Result r;
            r.kernel = k;
            r.c = c;
            r.status = Status::kSkipped;
            r.note = "not run: the bench stopped after a hung case";
            results.push_back(std::move(r));
        }
    // A signal (InterruptGuard): the cases after it were skipped; the outputs say so.
    if (InterruptGuard::signal_number() != 0) {
        rep.interrupted = InterruptGuard::signal_name();
        rep.header.push_back({"interrupted", rep.interrupted + ": the cases after it were not run (skipped)"});
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
        if (write_csv(rep, o.csv, &error))
            std::fprintf(stderr, "corrtrack bench: wrote %s\n", o.csv.c_str());
        else
            fail(error);
    }
    if (!o.json.empty()) {
        if (write_json(rep, pairs, o.json, &error))
            std::fprintf(stderr, "corrtrack bench: wrote %s\n", o.json.c_str());
        else
            fail(error);
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

}  // namespace corrtrack::bench
