#include "app/bench/target_grid.h"

#include <algorithm>
#include <cmath>

namespace corrtrack {
namespace {

// Sums and sums of squares over any rectangle in O(1): (width+1) x (height+1) tables.
struct Integrals {
    int w = 0;
    std::vector<double> sum, sq;
    Integrals(const std::uint8_t* luma, int width, int height)
        : w(width + 1), sum(static_cast<std::size_t>(w) * (height + 1)), sq(sum.size()) {
        for (int y = 0; y < height; ++y) {
            double row = 0, row_sq = 0;
            for (int x = 0; x < width; ++x) {
                const double v = luma[static_cast<std::size_t>(y) * width + x];
                row += v;
                row_sq += v * v;
                sum[at(x + 1, y + 1)] = sum[at(x + 1, y)] + row;
                sq[at(x + 1, y + 1)] = sq[at(x + 1, y)] + row_sq;
            }
        }
    }
    std::size_t at(int x, int y) const { return static_cast<std::size_t>(y) * w + x; }
    double rect(const std::vector<double>& t, int x, int y, int bw, int bh) const {
        return t[at(x + bw, y + bh)] - t[at(x, y + bh)] - t[at(x + bw, y)] + t[at(x, y)];
    }
    double std_dev(int x, int y, int bw, int bh) const {
        const double n = static_cast<double>(bw) * bh;
        const double mean = rect(sum, x, y, bw, bh) / n;
        return std::sqrt(std::max(0.0, rect(sq, x, y, bw, bh) / n - mean * mean));
    }
};

}  // namespace

namespace {

struct Cell {
    BoxF box;
    double std_dev;
};

// m cells of a cols x rows grid (square-ish: cols / rows close to the frame's aspect ratio),
// each with its most textured box position.
std::vector<Cell> grid_cells(const Integrals& ii, int width, int height, int box_w, int box_h, int m, int step,
                             int* cols_out, int* rows_out) {
    const int cols = std::clamp(static_cast<int>(std::ceil(std::sqrt(static_cast<double>(m) * width / height))), 1, m);
    const int rows = (m + cols - 1) / cols;
    *cols_out = cols;
    *rows_out = rows;
    const double cell_w = static_cast<double>(width) / cols, cell_h = static_cast<double>(height) / rows;
    std::vector<Cell> cells;
    for (int k = 0; k < cols * rows; ++k) {
        const int cx = k % cols, cy = k / cols;
        const int x0 = static_cast<int>(std::floor(cx * cell_w)), y0 = static_cast<int>(std::floor(cy * cell_h));
        const int x1 = static_cast<int>(std::floor((cx + 1) * cell_w)),
                  y1 = static_cast<int>(std::floor((cy + 1) * cell_h));
        // Top-left corners that keep the box in its cell, or the centred one when it is larger.
        int lo_x = x0, hi_x = x1 - box_w, lo_y = y0, hi_y = y1 - box_h;
        if (hi_x < lo_x) lo_x = hi_x = std::clamp((x0 + x1 - box_w) / 2, 0, width - box_w);
        if (hi_y < lo_y) lo_y = hi_y = std::clamp((y0 + y1 - box_h) / 2, 0, height - box_h);
        Cell best{{static_cast<double>(lo_x), static_cast<double>(lo_y), static_cast<double>(box_w),
                   static_cast<double>(box_h)},
                  -1};
        for (int y = lo_y; y <= hi_y; y += step)
            for (int x = lo_x; x <= hi_x; x += step) {
                const double sd = ii.std_dev(x, y, box_w, box_h);
                if (sd > best.std_dev)
                    best = {{static_cast<double>(x), static_cast<double>(y), best.box.width, best.box.height}, sd};
            }
        cells.push_back(best);
    }
    return cells;
}

}  // namespace

TargetGrid grid_targets(const std::uint8_t* luma, int width, int height, int box_w, int box_h, int n, int step) {
    TargetGrid g;
    if (n < 1 || box_w < 1 || box_h < 1 || box_w > width || box_h > height) return g;
    if (step <= 0) step = std::max(1, std::min(box_w, box_h) / 4);
    const Integrals ii(luma, width, height);
    // n cells, or, where flat cells leave fewer than n textured ones, finer grids (up to 64 n
    // cells; boxes then overlap) until n are textured.
    std::vector<Cell> cells;
    for (long m = n; m <= 64L * n; m *= 2) {
        cells = grid_cells(ii, width, height, box_w, box_h, static_cast<int>(m), step, &g.cols, &g.rows);
        const long textured =
            std::count_if(cells.begin(), cells.end(), [](const Cell& c) { return c.std_dev >= kTexturedStdDev; });
        if (textured >= n || static_cast<double>(width) / g.cols < 2 || static_cast<double>(height) / g.rows < 2) break;
    }
    // n of them spread evenly over the textured cells in grid order; short of those, the most
    // textured of the rest.
    std::vector<Cell> textured, flat;
    for (const Cell& c : cells) (c.std_dev >= kTexturedStdDev ? textured : flat).push_back(c);
    std::vector<Cell> chosen;
    const std::size_t want = static_cast<std::size_t>(n);
    if (textured.size() >= want) {
        for (std::size_t i = 0; i < want; ++i) chosen.push_back(textured[i * textured.size() / want]);
    } else {
        chosen = textured;
        std::stable_sort(flat.begin(), flat.end(), [](const Cell& a, const Cell& b) { return a.std_dev > b.std_dev; });
        for (std::size_t i = 0; chosen.size() < want && i < flat.size(); ++i) chosen.push_back(flat[i]);
    }
    for (const Cell& c : chosen) {
        g.boxes.push_back(c.box);
        g.std_dev.push_back(c.std_dev);
        if (c.std_dev >= kTexturedStdDev) ++g.textured;
    }
    return g;
}

const char* to_string(TargetLayout layout) { return layout == TargetLayout::kCrowded ? "crowded" : "grid"; }

bool parse_target_layout(const std::string& text, TargetLayout* out) {
    if (text == "grid")
        *out = TargetLayout::kGrid;
    else if (text == "crowded")
        *out = TargetLayout::kCrowded;
    else
        return false;
    return true;
}

CrowdPitch crowd_pitch(int box_w, int box_h) {
    return {std::max(1, static_cast<int>(std::lround(box_w * 1.45))), std::max(1, box_h - box_h / 5)};
}

TargetGrid crowd_targets(const std::uint8_t* luma, int width, int height, int box_w, int box_h, int n) {
    TargetGrid g;
    if (n < 1 || box_w < 1 || box_h < 1 || box_w > width || box_h > height) return g;
    const Integrals ii(luma, width, height);
    const CrowdPitch p = crowd_pitch(box_w, box_h);
    // The origin moves towards the corner where the frame is too small for it.
    const int x0 = std::min(kCrowdOrigin, width - box_w), y0 = std::min(kCrowdOrigin, height - box_h);
    const int cols = std::min(kCrowdColumns, (width - x0 - box_w) / p.across + 1);
    const int rows = (height - y0 - box_h) / p.down + 1;
    g.cols = cols;
    // Layers shifted by half a pitch; after those of one shift, the pattern starts again (the
    // boxes then repeat, only where n exceeds every position with texture).
    const int layers = (p.across > 1 || p.down > 1) ? 2 : 1;
    for (int pass = 0; static_cast<int>(g.boxes.size()) < n && pass < 64; ++pass) {
        const int layer = pass % layers;
        const int lx = x0 + layer * (p.across / 2), ly = y0 + layer * (p.down / 2);
        const int before = static_cast<int>(g.boxes.size());
        for (int r = 0; r < rows && static_cast<int>(g.boxes.size()) < n; ++r)
            for (int c = 0; c < cols && static_cast<int>(g.boxes.size()) < n; ++c) {
                const int x = lx + c * p.across, y = ly + r * p.down;
                if (x + box_w > width || y + box_h > height) continue;
                const double sd = ii.std_dev(x, y, box_w, box_h);
                if (sd < kFlatStdDev) continue;
                if (pass == 0) g.rows = r + 1;
                g.boxes.push_back({static_cast<double>(x), static_cast<double>(y), static_cast<double>(box_w),
                                   static_cast<double>(box_h)});
                g.std_dev.push_back(sd);
                if (sd >= kTexturedStdDev) ++g.textured;
            }
        if (pass + 1 >= layers && static_cast<int>(g.boxes.size()) == before) break;  // nothing textured left
    }
    return g;
}

TargetGrid layout_targets(TargetLayout layout, const std::uint8_t* luma, int width, int height, int box_w, int box_h,
                          int n) {
    return layout == TargetLayout::kCrowded ? crowd_targets(luma, width, height, box_w, box_h, n)
                                            : grid_targets(luma, width, height, box_w, box_h, n);
}

}  // namespace corrtrack
