// Line plots rendered to PNG by an external gnuplot: one or more panels side by side, each
// with named series. Used by `corrtrack bench` (throughput) and `corrtrack eval` (OTB plots).
// Thread rules: plain functions over values; each render uses its own temporary files.
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace corrtrack::plot {

struct Series {
    std::string title;
    std::vector<double> x, y;  // same length; a non-finite y (or y <= 0 on a log axis) is a gap
};

struct Panel {
    std::string title, x_label, y_label;
    bool log_x = false, log_y = false;
    double x_min = NAN, x_max = NAN, y_min = NAN, y_max = NAN;  // NaN: automatic
    std::vector<std::pair<double, std::string>> x_tics;         // labelled ticks; empty: automatic
    std::string key = "top left";                               // gnuplot `set key` placement; "off" hides the legend
    std::vector<Series> series;
};

struct Figure {
    std::string title;          // above all panels; may be empty
    std::vector<Panel> panels;  // laid out in one row
    int panel_width = 800;      // pixels per panel
    int panel_height = 560;
};

struct RenderResult {
    bool ok = false;
    std::string error;  // why not, when !ok: gnuplot missing, or gnuplot's own message
};

// The gnuplot program render_png runs: $CORRTRACK_GNUPLOT when set, else "gnuplot".
std::string gnuplot_program();
// True when gnuplot_program() names an executable (a path, or a name found in $PATH).
bool gnuplot_available();

// A self-contained gnuplot script (data inline as datablocks, gnuplot >= 5.0) that writes
// png_path with the pngcairo terminal, or the libgd png terminal where cairo is missing.
// Callers keep it when the measuring machine has no gnuplot: `gnuplot F.gp` renders it later.
std::string gnuplot_script(const Figure& fig, const std::string& png_path);

// Writes the script to a temporary file and runs gnuplot on it. Never throws for a missing
// or failing gnuplot: the result says what went wrong.
RenderResult render_png(const Figure& fig, const std::string& png_path);

}  // namespace corrtrack::plot
