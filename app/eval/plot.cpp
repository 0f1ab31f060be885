// gnuplot wrapper: builds a self-contained script (data inline) and runs gnuplot on it.
#include "app/eval/plot.h"

#include "app/io/output_file.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace corrtrack::plot {
namespace {

// gnuplot single-quoted string: no escapes are processed except '' for a quote.
std::string gp_quote(const std::string& s) {
    std::string r = "'";
    for (char c : s) {
        if (c == '\'')
            r += "''";
        else if (c == '\n')
            r += ' ';
        else
            r += c;
    }
    return r + "'";
}

std::string sh_quote(const std::string& s) {
    std::string r = "'";
    for (char c : s) {
        if (c == '\'')
            r += "'\\''";
        else
            r += c;
    }
    return r + "'";
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

// Series keep the same look in every panel: gnuplot's 8 colours, then dashed lines, with a
// point shape that cycles on a different period so that no two of the first 24 look alike.
std::string series_style(std::size_t i) {
    static const int shapes[] = {7, 5, 9, 11, 13, 15, 4, 6, 8, 10, 12, 14};
    return "lt " + std::to_string(i % 8 + 1) + " dt " + std::to_string(i / 8 % 5 + 1) + " lw 2 pt " +
           std::to_string(shapes[i % 12]) + " ps 1.2";
}

bool plottable(double v, bool log_axis) { return std::isfinite(v) && (!log_axis || v > 0); }

bool has_points(const Series& s, const Panel& p) {
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (plottable(s.x[i], p.log_x) && plottable(s.y[i], p.log_y)) return true;
    return false;
}

std::string range(double lo, double hi) {
    return "[" + (std::isfinite(lo) ? number(lo) : std::string("*")) + ":" +
           (std::isfinite(hi) ? number(hi) : std::string("*")) + "]";
}

std::string read_text(const std::string& path, std::size_t limit) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.size() > limit) text = text.substr(0, limit) + "...";
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

bool is_executable(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string gnuplot_program() {
    const char* env = std::getenv("CORRTRACK_GNUPLOT");
    return env && *env ? env : "gnuplot";
}

bool gnuplot_available() {
    const std::string prog = gnuplot_program();
    if (prog.find('/') != std::string::npos) return is_executable(prog);
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/bin:/bin");
    for (std::string dir; std::getline(dirs, dir, ':');)
        if (is_executable((dir.empty() ? std::string(".") : dir) + "/" + prog)) return true;
    return false;
}

std::string gnuplot_script(const Figure& fig, const std::string& png_path) {
    const int panels = fig.panels.empty() ? 1 : static_cast<int>(fig.panels.size());
    const int width = fig.panel_width * panels, height = fig.panel_height;
    std::ostringstream gp;
    gp << "# corrtrack plot: render with `gnuplot <this file>` (gnuplot >= 5.0)\n";
    for (std::size_t p = 0; p < fig.panels.size(); ++p) {
        const Panel& panel = fig.panels[p];
        for (std::size_t s = 0; s < panel.series.size(); ++s) {
            const Series& series = panel.series[s];
            gp << "$p" << p << "s" << s << " << EOD\n";
            for (std::size_t i = 0; i < series.x.size() && i < series.y.size(); ++i) {
                // A blank line breaks the line there, so a gap never looks like a measurement.
                if (plottable(series.x[i], panel.log_x) && plottable(series.y[i], panel.log_y))
                    gp << number(series.x[i]) << " " << number(series.y[i]) << "\n";
                else
                    gp << "\n";
            }
            gp << "EOD\n";
        }
    }
    // Cairo draws anti-aliased text and lines; the libgd png terminal is the fallback that
    // every gnuplot build has.
    gp << "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
       << "  set terminal pngcairo size " << width << "," << height << " noenhanced font 'sans,10'\n"
       << "} else {\n"
       << "  set terminal png size " << width << "," << height << " noenhanced\n"
       << "}\n"
       << "set output " << gp_quote(png_path) << "\n"
       << "set multiplot layout 1," << panels;
    if (!fig.title.empty()) gp << " title " << gp_quote(fig.title);
    gp << "\n";
    for (std::size_t p = 0; p < fig.panels.size(); ++p) {
        const Panel& panel = fig.panels[p];
        gp << "set title " << gp_quote(panel.title) << "\n"
           << "set xlabel " << gp_quote(panel.x_label) << "\n"
           << "set ylabel " << gp_quote(panel.y_label) << "\n"
           << "unset logscale\n";
        if (panel.log_x) gp << "set logscale x\n";
        if (panel.log_y) gp << "set logscale y\n";
        gp << "set xrange " << range(panel.x_min, panel.x_max) << "\n"
           << "set yrange " << range(panel.y_min, panel.y_max) << "\n";
        if (panel.x_tics.empty()) {
            gp << "set xtics autofreq\n";
        } else {
            gp << "set xtics (";
            for (std::size_t i = 0; i < panel.x_tics.size(); ++i)
                gp << (i ? ", " : "") << gp_quote(panel.x_tics[i].second) << " " << number(panel.x_tics[i].first);
            gp << ")\n";
        }
        gp << "set grid\n";
        if (panel.key == "off")
            gp << "unset key\n";
        else
            gp << "set key " << panel.key << "\n";
        std::vector<std::string> items;
        for (std::size_t s = 0; s < panel.series.size(); ++s)
            if (has_points(panel.series[s], panel))
                items.push_back("$p" + std::to_string(p) + "s" + std::to_string(s) + " using 1:2 with linespoints " +
                                series_style(s) + " title " + gp_quote(panel.series[s].title));
        if (items.empty()) {
            // Nothing to draw: keep the panel (and its title) with a note instead of failing.
            gp << "set label 1 'no data' at graph 0.5, graph 0.5 center\n"
               << "unset logscale\nset xrange [0:1]\nset yrange [0:1]\n"
               << "plot 2 notitle\nunset label 1\n";
        } else {
            gp << "plot ";
            for (std::size_t i = 0; i < items.size(); ++i) gp << (i ? ", \\\n     " : "") << items[i];
            gp << "\n";
        }
    }
    gp << "unset multiplot\nset output\n";
    return gp.str();
}

RenderResult render_png(const Figure& fig, const std::string& png_path) {
    RenderResult result;
    if (!gnuplot_available()) {
        result.error = "gnuplot not found ('" + gnuplot_program() +
                       "' is not an executable in PATH); install it (Debian/Ubuntu: apt-get install "
                       "gnuplot-nox) or point CORRTRACK_GNUPLOT at it";
        return result;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/corrtrack-plot-XXXXXX";
    if (!::mkdtemp(dir.data())) {
        result.error =
            "cannot create a temporary directory for the plot script under " + std::string(tmp && *tmp ? tmp : "/tmp");
        return result;
    }
    const std::string script = dir + "/plot.gp", log = dir + "/gnuplot.log";
    // gnuplot writes a temporary beside the destination, renamed into place when complete.
    OutputFile png;
    if (!png.open(png_path, OutputFile::Mode::kPath, &result.error)) {
        ::rmdir(dir.c_str());
        return result;
    }
    {
        std::ofstream out(script);
        out << gnuplot_script(fig, png.write_path());
        if (!out) result.error = "cannot write " + script;
    }
    if (result.error.empty()) {
        const std::string cmd = sh_quote(gnuplot_program()) + " " + sh_quote(script) + " >" + sh_quote(log) + " 2>&1";
        const int status = std::system(cmd.c_str());
        const int code = status == -1 ? -1 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        struct stat st {};
        if (code != 0) {
            result.error = "gnuplot failed (exit " + std::to_string(code) + ")";
            const std::string msg = read_text(log, 2000);
            if (!msg.empty()) result.error += ": " + msg;
        } else if (::stat(png.write_path().c_str(), &st) != 0 || st.st_size == 0) {
            result.error = "gnuplot ran but wrote no image to " + png_path;
            const std::string msg = read_text(log, 2000);
            if (!msg.empty()) result.error += ": " + msg;
        } else {
            result.ok = png.commit(&result.error);
        }
    }
    std::remove(script.c_str());
    std::remove(log.c_str());
    ::rmdir(dir.c_str());
    return result;
}

}  // namespace corrtrack::plot
