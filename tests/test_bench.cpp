// `corrtrack bench` end to end through the CLI binary on tiny CPU cases (CSV columns, one row
// per case, consistent metrics, PNG, bad options), and the gnuplot wrapper on its own (--e2e:
// test_bench_e2e.cpp).
// The binary is CORRTRACK_BINARY, or $CORRTRACK_BINARY when the build moved (GPU host).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/eval/plot.h"
#include "corrtrack/correlator.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;

std::string binary() {
    const char* env = std::getenv("CORRTRACK_BINARY");
    return env && *env ? env : CORRTRACK_BINARY;
}

std::string sh_quote(const std::string& s) {
    std::string r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class ScratchDir {
public:
    ScratchDir() {
        std::string templ = (fs::temp_directory_path() / "corrtrack-test-bench-XXXXXX").string();
        path_ = ::mkdtemp(templ.data()) ? templ : std::string();
    }
    ~ScratchDir() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    fs::path operator/(const std::string& name) const { return path_ / name; }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

struct CliRun {
    int code = -1;
    std::string output;  // stdout and stderr together
};

CliRun run_cli(const ScratchDir& dir, const std::string& args) {
    const fs::path log = dir / "cli.log";
    const std::string cmd = sh_quote(binary()) + " " + args + " >" + sh_quote(log.string()) + " 2>&1";
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = status == -1 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    r.output = read_file(log);
    return r;
}

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
                fields.back() += '"', ++i;
            else if (c == '"')
                quoted = false;
            else
                fields.back() += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else {
            fields.back() += c;
        }
    }
    return fields;
}

struct Csv {
    std::vector<std::string> comments, columns;
    std::vector<std::map<std::string, std::string>> rows;
};

Csv read_csv(const fs::path& p) {
    Csv csv;
    std::ifstream in(p);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("#", 0) == 0) {
            csv.comments.push_back(line);
        } else if (csv.columns.empty()) {
            csv.columns = split_csv_line(line);
        } else if (!line.empty()) {
            const auto fields = split_csv_line(line);
            EXPECT_EQ(fields.size(), csv.columns.size()) << line;
            std::map<std::string, std::string> row;
            for (std::size_t i = 0; i < fields.size() && i < csv.columns.size(); ++i) row[csv.columns[i]] = fields[i];
            csv.rows.push_back(row);
        }
    }
    return csv;
}

// A bench run writing its CSV to dir/name (--csv appended to args), and that CSV read back.
struct BenchCsv {
    CliRun run;
    Csv csv;
};

BenchCsv run_bench_csv(const ScratchDir& dir, const std::string& args, const std::string& name) {
    const fs::path csv_path = dir / name;
    BenchCsv b;
    b.run = run_cli(dir, args + " --csv " + sh_quote(csv_path.string()));
    b.csv = read_csv(csv_path);
    return b;
}

Size parse_size(const std::string& s) {
    const auto x = s.find('x');
    return {std::stoi(s.substr(0, x)), std::stoi(s.substr(x + 1))};
}

// Output positions of a case, computed independently of the bench: the window is 3x the
// template side, clipped to the frame.
long long positions(Size frame, Size templ, const std::string& mode) {
    int w = frame.width, h = frame.height;
    if (mode == "window") {
        w = std::min(3 * templ.width, frame.width);
        h = std::min(3 * templ.height, frame.height);
    }
    return static_cast<long long>(w - templ.width + 1) * (h - templ.height + 1);
}

bool has_png_signature(const fs::path& p) {
    const std::string bytes = read_file(p);
    return bytes.size() > 8 && bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0;
}

void expect_near_rel(double got, double want, double rel, const std::string& what) {
    EXPECT_NEAR(got, want, std::fabs(want) * rel + 1e-12) << what;
}

TEST(Bench, TinyCpuSweepWritesConsistentCsvAndPlot) {
    ScratchDir dir;
    ASSERT_FALSE(dir.path().empty());
    const fs::path csv_path = dir / "bench.csv", png_path = dir / "bench.png", json_path = dir / "bench.json";
    const CliRun run = run_cli(dir,
                               "bench --kernels cpu_ref,cpu_fast --sizes 160x120 --templates 8,13x7 "
                               "--modes full,window --runs 3 --warmup 1 --ratio-to cpu_ref --csv " +
                                   sh_quote(csv_path.string()) + " --plot " + sh_quote(png_path.string()) + " --json " +
                                   sh_quote(json_path.string()));
    const bool gnuplot = plot::gnuplot_available();
    // Without gnuplot (e.g. a GPU host) the plot fails with a clear message and a saved script.
    EXPECT_EQ(run.code, gnuplot ? 0 : 1) << run.output;
    EXPECT_NE(run.output.find("median ms"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("8 cases: 8 ok"), std::string::npos) << run.output;

    const Csv csv = read_csv(csv_path);
    const std::vector<std::string> columns = {
        "kernel",     "size",          "template",      "mode",       "median_ms",     "mpos_per_s",
        "gmac_per_s", "dp4a_peak_pct", "x_cuda_shared", "x_cuda_fft", "x_cpu_ref",     "min_ms",
        "p90_ms",     "runs",          "status",        "floor_us",   "mem_floor_pct", "mma_peak_pct"};
    EXPECT_EQ(csv.columns, columns);
    for (const char* key : {"# gpu: ", "# driver: ", "# cuda runtime: ", "# cpu: ", "# date: ", "# command: "}) {
        bool found = false;
        for (const std::string& c : csv.comments) found = found || c.rfind(key, 0) == 0;
        EXPECT_TRUE(found) << "no '" << key << "' header line";
    }
    bool command_found = false;
    for (const std::string& c : csv.comments)
        command_found = command_found || (c.find("bench --kernels cpu_ref,cpu_fast") != std::string::npos);
    EXPECT_TRUE(command_found) << "the command line is missing from the header";

    ASSERT_EQ(csv.rows.size(), 2u * 1u * 2u * 2u);
    std::set<std::string> seen;
    std::map<std::string, double> ref_ms;  // case -> cpu_ref median
    for (const auto& row : csv.rows)
        if (row.at("kernel") == "cpu_ref")
            ref_ms[row.at("size") + row.at("template") + row.at("mode")] = std::stod(row.at("median_ms"));
    for (const auto& row : csv.rows) {
        const std::string where =
            row.at("kernel") + " " + row.at("size") + " " + row.at("template") + " " + row.at("mode");
        EXPECT_TRUE(seen.insert(where).second) << "duplicate row " << where;
        EXPECT_TRUE(row.at("kernel") == "cpu_ref" || row.at("kernel") == "cpu_fast") << where;
        EXPECT_EQ(row.at("size"), "160x120") << where;
        EXPECT_TRUE(row.at("template") == "8x8" || row.at("template") == "13x7") << where;
        EXPECT_TRUE(row.at("mode") == "full" || row.at("mode") == "window") << where;
        ASSERT_EQ(row.at("status"), "ok") << where;
        EXPECT_EQ(row.at("runs"), "3") << where;
        const double median = std::stod(row.at("median_ms")), lo = std::stod(row.at("min_ms")),
                     p90 = std::stod(row.at("p90_ms"));
        EXPECT_GT(lo, 0) << where;
        EXPECT_LE(lo, median) << where;
        EXPECT_LE(median, p90) << where;
        const Size templ = parse_size(row.at("template"));
        const double pos = static_cast<double>(positions(parse_size(row.at("size")), templ, row.at("mode")));
        // Values carry 6 significant digits: allow a few parts in 1e5.
        expect_near_rel(std::stod(row.at("mpos_per_s")), pos / (median * 1e-3) / 1e6, 5e-5, where + " Mpos/s");
        expect_near_rel(std::stod(row.at("gmac_per_s")), pos * templ.area() / (median * 1e-3) / 1e9, 5e-5,
                        where + " GMAC/s");
        EXPECT_EQ(row.at("dp4a_peak_pct"), "") << "CPU rows have no DP4A fraction: " << where;
        // No CPU peak stated: bandwidth measured, MAC peak from the ISA (none for scalar).
        for (const char* c : {"floor_us", "mem_floor_pct"})
            EXPECT_NE(row.at(c), "") << "CPU roofline worked out: " << c << " " << where;
        EXPECT_EQ(row.at("x_cuda_shared"), "") << where;
        EXPECT_EQ(row.at("x_cuda_fft"), "") << where;
        const double ref = ref_ms.at(row.at("size") + row.at("template") + row.at("mode"));
        expect_near_rel(std::stod(row.at("x_cpu_ref")), ref / median, 1e-3, where + " x cpu_ref");
    }

    if (gnuplot) {
        EXPECT_TRUE(has_png_signature(png_path)) << run.output;
    } else {
        EXPECT_TRUE(fs::exists(dir / "bench.gp")) << run.output;
        EXPECT_NE(run.output.find("gnuplot not found"), std::string::npos) << run.output;
    }

    const auto doc = nlohmann::json::parse(read_file(json_path));
    EXPECT_EQ(doc.at("results").size(), 8u);
    EXPECT_EQ(doc.at("results")[0].at("runs_ms").size(), 3u);
}

TEST(Bench, BatchColumnsTimeTargetsBatchedAndSeparately) {
    ScratchDir dir;
    ASSERT_FALSE(dir.path().empty());
    const fs::path csv_path = dir / "batch.csv", json_path = dir / "batch.json";
    const CliRun run = run_cli(dir,
                               "bench --kernels cpu_ref,cpu_fast --sizes 160x120 --templates 8,13x7 "
                               "--modes full,window --runs 3 --warmup 1 --batch 3 --quiet --csv " +
                                   sh_quote(csv_path.string()) + " --json " + sh_quote(json_path.string()));
    EXPECT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("batch_ms"), std::string::npos) << "no batch columns in the table: " << run.output;
    EXPECT_NE(run.output.find("per_target_ms"), std::string::npos) << run.output;

    const Csv csv = read_csv(csv_path);
    // The existing columns keep their order; the roofline's, then the batch columns follow them.
    const std::vector<std::string> columns = {
        "kernel",     "size",          "template",      "mode",          "median_ms",    "mpos_per_s",
        "gmac_per_s", "dp4a_peak_pct", "x_cuda_shared", "x_cuda_fft",    "min_ms",       "p90_ms",
        "runs",       "status",        "floor_us",      "mem_floor_pct", "mma_peak_pct", "batch_n",
        "batch_ms",   "per_target_ms", "batch_speedup", "batch_status"};
    EXPECT_EQ(csv.columns, columns);
    bool header = false;
    for (const std::string& c : csv.comments) header = header || c.rfind("# batch: ", 0) == 0;
    EXPECT_TRUE(header) << "no '# batch: ' header line saying what the columns mean";
    ASSERT_EQ(csv.rows.size(), 8u);
    int window_rows = 0;
    for (const auto& row : csv.rows) {
        const std::string where = row.at("kernel") + " " + row.at("template") + " " + row.at("mode");
        ASSERT_EQ(row.at("status"), "ok") << where;
        if (row.at("mode") == "full") {
            // Batches are timed in window mode only.
            for (const char* c : {"batch_n", "batch_ms", "per_target_ms", "batch_speedup", "batch_status"})
                EXPECT_EQ(row.at(c), "") << where << " " << c;
            continue;
        }
        ++window_rows;
        EXPECT_EQ(row.at("batch_n"), "3") << where;
        ASSERT_EQ(row.at("batch_status"), "ok") << where;
        const double batch = std::stod(row.at("batch_ms")), separate = std::stod(row.at("per_target_ms")),
                     speedup = std::stod(row.at("batch_speedup"));
        EXPECT_GT(batch, 0) << where;
        EXPECT_GT(separate, 0) << where;
        EXPECT_GT(speedup, 0) << where;
        expect_near_rel(speedup, separate / batch, 1e-3, where + " batch_speedup");
    }
    EXPECT_EQ(window_rows, 4);

    const auto doc = nlohmann::json::parse(read_file(json_path));
    int batched = 0;
    for (const auto& r : doc.at("results")) {
        if (r.at("mode") != "window") {
            EXPECT_FALSE(r.contains("batch")) << r.dump();
            continue;
        }
        ASSERT_TRUE(r.contains("batch")) << r.dump();
        const auto& b = r.at("batch");
        EXPECT_EQ(b.at("n"), 3);
        EXPECT_EQ(b.at("status"), "ok");
        EXPECT_GT(b.at("batch_ms").get<double>(), 0);
        EXPECT_GT(b.at("per_target_ms").get<double>(), 0);
        EXPECT_GT(b.at("batch_speedup").get<double>(), 0);
        EXPECT_EQ(b.at("batch_runs_ms").size(), 3u);
        EXPECT_EQ(b.at("per_target_runs_ms").size(), 3u);
        ++batched;
    }
    EXPECT_EQ(batched, 4);
}

TEST(Bench, BatchOffKeepsTheColumnsAndBadBatchIsABadOption) {
    ScratchDir dir;
    const auto [run, csv] =
        run_bench_csv(dir,
                      "bench --kernels cpu_fast --sizes 160x120 --templates 8 --modes window --runs 1 "
                      "--warmup 0 --quiet",
                      "plain.csv");
    EXPECT_EQ(run.code, 0) << run.output;
    ASSERT_FALSE(csv.columns.empty());
    EXPECT_EQ(csv.columns.back(), "mma_peak_pct") << "batch columns without --batch";
    EXPECT_EQ(run.output.find("batch"), std::string::npos) << run.output;
    const CliRun bad = run_cli(dir, "bench --kernels cpu_fast --sizes 160x120 --templates 8 --runs 1 --batch -2");
    EXPECT_EQ(bad.code, 2) << bad.output;
    EXPECT_NE(bad.output.find("--batch"), std::string::npos) << bad.output;
}

TEST(Bench, UnknownKernelIsABadOption) {
    ScratchDir dir;
    const CliRun run = run_cli(dir, "bench --kernels cpu_ref,no_such_kernel --sizes 160x120 --templates 8 --runs 1");
    EXPECT_NE(run.code, 0);
    EXPECT_NE(run.output.find("no_such_kernel"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("median ms"), std::string::npos) << "nothing should run: " << run.output;
}

TEST(Bench, MalformedSizeListIsABadOption) {
    ScratchDir dir;
    CliRun run = run_cli(dir, "bench --kernels cpu_ref --sizes 640by480 --templates 8 --runs 1");
    EXPECT_NE(run.code, 0);
    EXPECT_NE(run.output.find("640by480"), std::string::npos) << run.output;
    run = run_cli(dir, "bench --kernels cpu_ref --sizes 160x120 --templates 8x --runs 1");
    EXPECT_NE(run.code, 0);
    EXPECT_NE(run.output.find("8x"), std::string::npos) << run.output;
    run = run_cli(dir, "bench --kernels cpu_ref --sizes 160x120 --templates 8 --modes full,sideways --runs 1");
    EXPECT_NE(run.code, 0);
    EXPECT_NE(run.output.find("sideways"), std::string::npos) << run.output;
}

TEST(Bench, SlowAndUnsupportedCasesAreReportedNotFatal) {
    ScratchDir dir;
    // One cpu_ref run of a 64x64 template over 320x240 takes far more than a millisecond; a
    // template larger than the frame is refused by every kernel.
    const auto [run, csv] =
        run_bench_csv(dir,
                      "bench --kernels cpu_ref --sizes 320x240,64x48 --templates 64,300 --modes full "
                      "--runs 3 --warmup 1 --max-seconds 0.001 --quiet",
                      "slow.csv");
    EXPECT_EQ(run.code, 0) << run.output;
    ASSERT_EQ(csv.rows.size(), 4u);
    for (const auto& row : csv.rows) {
        const std::string where = row.at("size") + " " + row.at("template");
        if (row.at("template") == "300x300" || row.at("size") == "64x48") {
            EXPECT_EQ(row.at("status").rfind("unsupported: ", 0), 0u) << where << ": " << row.at("status");
        } else {
            EXPECT_EQ(row.at("status").rfind("skipped: too slow", 0), 0u) << where << ": " << row.at("status");
        }
        EXPECT_EQ(row.at("median_ms"), "") << where;
    }
}

TEST(Bench, HungCallStopsTheBenchWithItsResults) {
    ScratchDir dir;
    // One cpu_ref run of a 256x256 template over 640x480 is 5.7e9 multiply-adds: far longer
    // than the 0.2 s after which the watchdog gives up on it.
    const auto [run, csv] = run_bench_csv(dir,
                                          "bench --kernels cpu_ref --sizes 640x480 --templates 256 --modes full,window "
                                          "--runs 3 --max-seconds 100 --hang-seconds 0.2 --quiet",
                                          "hang.csv");
    EXPECT_EQ(run.code, 1) << run.output;
    EXPECT_NE(run.output.find("hung"), std::string::npos) << run.output;
    ASSERT_EQ(csv.rows.size(), 2u) << run.output;
    EXPECT_EQ(csv.rows[0].at("mode"), "full");
    EXPECT_EQ(csv.rows[0].at("status").rfind("error: hung", 0), 0u) << csv.rows[0].at("status");
    EXPECT_EQ(csv.rows[1].at("status").rfind("skipped: not run", 0), 0u) << csv.rows[1].at("status");
}

TEST(Bench, ComparesTheCpuKernels) {
    if (!find_kernel("cpu_opencv")) GTEST_SKIP() << "built without OpenCV: no cpu_opencv to compare with";
    ScratchDir dir;
    const CliRun run = run_cli(dir,
                               "bench --kernels cpu_fast,cpu_opencv --sizes 160x120 --templates 8,16 "
                               "--modes full --runs 3 --warmup 1 --quiet");
    EXPECT_EQ(run.code, 0) << run.output;
    EXPECT_NE(run.output.find("cpu_fast vs cpu_opencv  160x120 8x8 full: cpu_fast is "), std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("geometric mean over 2 cases"), std::string::npos) << run.output;
}

// With stated CPU peaks the CPU rows get the roofline's columns, worked out here from the case:
// bytes = the searched region (u8) + the map (float), MACs = positions x template pixels.
TEST(Bench, RooflineColumnsOnTheCpuPathWithStatedPeaks) {
    ScratchDir dir;
    ASSERT_FALSE(dir.path().empty());
    const fs::path json_path = dir / "roof.json";
    const double bw_gbps = 2, tmacs = 0.001;
    const BenchCsv b = run_bench_csv(dir,
                                     "bench --kernels cpu_fast --sizes 160x120 --templates 8,32 --modes full,window "
                                     "--runs 3 --warmup 1 --quiet --cpu-peak-bw 2 --cpu-peak-macs 0.001 --json " +
                                         sh_quote(json_path.string()),
                                     "roof.csv");
    ASSERT_EQ(b.run.code, 0) << b.run.output;
    for (const char* title : {"floor_us", "% of mem floor", "% of MMA peak"})
        EXPECT_NE(b.run.output.find(title), std::string::npos) << title << "\n" << b.run.output;
    EXPECT_NE(b.run.output.find("# cpu bandwidth: 2 GB/s (--cpu-peak-bw)"), std::string::npos) << b.run.output;
    ASSERT_EQ(b.csv.rows.size(), 4u);
    const auto doc = nlohmann::json::parse(read_file(json_path));
    ASSERT_EQ(doc.at("results").size(), 4u);
    EXPECT_DOUBLE_EQ(doc.at("roofline").at("cpu").at("mem_gbps").get<double>(), bw_gbps);
    for (std::size_t i = 0; i < b.csv.rows.size(); ++i) {
        const auto& row = b.csv.rows[i];
        const std::string where = row.at("template") + " " + row.at("mode");
        const Size frame = parse_size(row.at("size")), templ = parse_size(row.at("template"));
        const bool window = row.at("mode") == "window";
        const double region =
            window ? std::min(3 * templ.width, frame.width) * std::min(3 * templ.height, frame.height) : frame.area();
        const double pos = static_cast<double>(positions(frame, templ, row.at("mode")));
        const double bytes = region + 4 * pos, macs = pos * templ.area();
        const double mem_us = bytes / (bw_gbps * 1e9) * 1e6, mma_us = macs / (tmacs * 1e12) * 1e6;
        const double median_us = std::stod(row.at("median_ms")) * 1e3;
        expect_near_rel(std::stod(row.at("floor_us")), std::max(mem_us, mma_us), 5e-5, where + " floor_us");
        expect_near_rel(std::stod(row.at("mem_floor_pct")), 100 * mem_us / median_us, 1e-3, where + " mem %");
        expect_near_rel(std::stod(row.at("mma_peak_pct")), 100 * mma_us / median_us, 1e-3, where + " mma %");
        // The MMA fraction is the achieved MAC rate over the stated peak.
        expect_near_rel(std::stod(row.at("mma_peak_pct")), std::stod(row.at("gmac_per_s")) / (tmacs * 1e3) * 100, 1e-3,
                        where + " mma % vs GMAC/s");
        const auto& j = doc.at("results")[i];
        EXPECT_EQ(j.at("kernel"), "cpu_fast");
        EXPECT_DOUBLE_EQ(j.at("bytes").get<double>(), bytes) << where;
        EXPECT_DOUBLE_EQ(j.at("macs").get<double>(), macs) << where;
        expect_near_rel(j.at("mem_floor_us").get<double>(), mem_us, 1e-12, where + " json mem floor");
        expect_near_rel(j.at("mma_floor_us").get<double>(), mma_us, 1e-12, where + " json mma floor");
        expect_near_rel(j.at("mem_floor_pct").get<double>(), 100 * mem_us / median_us, 1e-3, where + " json mem %");
        expect_near_rel(j.at("mma_peak_pct").get<double>(), 100 * mma_us / median_us, 1e-3, where + " json mma %");
    }
}

plot::Figure two_panel_figure() {
    plot::Figure fig;
    fig.title = "it's a test";
    plot::Panel a;
    a.title = "log y, labelled ticks, a gap";
    a.log_y = true;
    a.x_tics = {{0, "8x8"}, {1, "16x16"}, {2, "48x24"}};
    a.series.push_back({"cpu_ref", {0, 1, 2}, {1, NAN, 3}});
    a.series.push_back({"nothing", {0}, {-1}});
    plot::Panel b;
    b.title = "no data at all";
    fig.panels = {a, b};
    return fig;
}

TEST(Plot, RendersAPng) {
    if (!plot::gnuplot_available()) GTEST_SKIP() << "gnuplot is not installed here";
    ScratchDir dir;
    const fs::path png = dir / "it's a plot.png";
    const plot::RenderResult r = plot::render_png(two_panel_figure(), png.string());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(has_png_signature(png));
}

TEST(Plot, MissingGnuplotIsAClearError) {
    const char* old = std::getenv("CORRTRACK_GNUPLOT");
    const std::string saved = old ? old : "";
    ::setenv("CORRTRACK_GNUPLOT", "/nonexistent/gnuplot", 1);
    ScratchDir dir;
    const plot::RenderResult r = plot::render_png(two_panel_figure(), (dir / "x.png").string());
    if (old)
        ::setenv("CORRTRACK_GNUPLOT", saved.c_str(), 1);
    else
        ::unsetenv("CORRTRACK_GNUPLOT");
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("gnuplot not found"), std::string::npos) << r.error;
    EXPECT_FALSE(fs::exists(dir / "x.png"));
    // The script stays usable: it names the output and carries its data inline.
    const std::string script = plot::gnuplot_script(two_panel_figure(), "out.png");
    EXPECT_NE(script.find("set output 'out.png'"), std::string::npos);
    EXPECT_NE(script.find("$p0s0 << EOD"), std::string::npos);
    EXPECT_NE(script.find("'it''s a test'"), std::string::npos);
}

}  // namespace
}  // namespace corrtrack
