// cuda_mma_fused's in-kernel window sums without a GPU: the block's own code (stage_tile from
// mma_block.cuh, box_phase and fused_epilogue from mma_box_sums.cuh) runs on the host, thread
// by thread and phase by phase as the kernel's barriers order it, against checking operations:
// every frame read inside its frame row and 4-byte aligned, every tile read inside the tile and
// staged, every sum-table access inside the table, no read of an entry nobody wrote, no two
// threads touching one entry in one phase unless both only read it. Each output's SI and SII
// must equal a direct sum over the frame, every output of the map must be stored exactly once,
// and its NCC (from a directly summed numerator in the accumulator register the PTX C-fragment
// layout assigns it) must equal the formula on direct sums. Only the mma loop, already the
// GPU-tested cuda_mma one, and the barriers themselves are left to the GPU sweep.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/mma_block.cuh"
#include "cuda/mma_box_sums.cuh"

namespace corrtrack {
namespace {

using namespace mma;  // NOLINT

// The kernel's shapes (FusedCfg in corr_mma_fused.cu).
template <int R_, int W_>
struct Shape {
    enum : int { R = R_, W = W_, kThreads = kWarp * W_, kRows = R_ * W_, A32 = 1 };
};

struct Case {
    int frame_w, frame_h, pitch_pad, base_offset;  // frame rows pitch_pad bytes wider, base offset bytes
    Rect roi;
    int tw, th;
    int fill;  // -1: random frame; else every pixel this value
};

std::string describe(const Case& c) {
    return "frame " + std::to_string(c.frame_w) + "x" + std::to_string(c.frame_h) + " +" + std::to_string(c.pitch_pad) +
           " @" + std::to_string(c.base_offset) + " roi " + std::to_string(c.roi.x) + "," + std::to_string(c.roi.y) +
           " " + std::to_string(c.roi.width) + "x" + std::to_string(c.roi.height) + " templ " + std::to_string(c.tw) +
           "x" + std::to_string(c.th) + (c.fill >= 0 ? " fill " + std::to_string(c.fill) : "");
}

// Host operations with checks; failures are collected as text (the first few are reported).
struct CheckOps {
    const std::uint8_t* frame = nullptr;  // row 0
    std::size_t pitch = 0;
    int frame_w = 0, frame_h = 0;
    std::uint8_t* tile = nullptr;
    std::size_t tile_size = 0;
    uint2* sums = nullptr;
    std::size_t sums_size = 0;  // entries
    // Shadow state of the current block.
    mutable std::vector<bool> staged;
    mutable std::vector<int> writer, write_phase, reader, read_phase;  // reader -2: several threads
    mutable int tid = 0, phase = -1;
    mutable std::vector<std::string>* errors = nullptr;
    // The epilogue's stores.
    struct Stored {
        std::uint32_t si, sii, sit;
        int count;
    };
    mutable std::vector<Stored>* stored = nullptr;
    int out_w = 0;

    void fail(const std::string& what) const {
        if (errors->size() < 8)
            errors->push_back(what + " (thread " + std::to_string(tid) + ", phase " + std::to_string(phase) + ")");
        else if (errors->size() == 8)
            errors->push_back("...");
    }
    void check_frame(const std::uint8_t* p, int bytes) const {
        const std::ptrdiff_t off = p - frame;
        const std::ptrdiff_t row = off >= 0 ? off / static_cast<std::ptrdiff_t>(pitch) : -1;
        const std::ptrdiff_t col = off - row * static_cast<std::ptrdiff_t>(pitch);
        if (row < 0 || row >= frame_h || col < 0 || col + bytes > frame_w) fail("frame read outside a frame row");
    }
    std::uint32_t frame_word(const std::uint8_t* p) const {
        check_frame(p, 4);
        if (reinterpret_cast<std::uintptr_t>(p) & 3u) fail("unaligned 4-byte frame read");
        std::uint32_t v = 0;
        for (int q = 0; q < 4; ++q) v |= static_cast<std::uint32_t>(p[q]) << (8 * q);
        return v;
    }
    std::uint8_t frame_byte(const std::uint8_t* p) const {
        check_frame(p, 1);
        return *p;
    }
    void smem_word(std::uint8_t* p, std::uint32_t v) const {
        const std::ptrdiff_t off = p - tile;
        if (off < 0 || off + 4 > static_cast<std::ptrdiff_t>(tile_size) || (off & 3)) {
            fail("tile write outside the tile or unaligned");
            return;
        }
        for (int q = 0; q < 4; ++q) {
            p[q] = static_cast<std::uint8_t>(v >> (8 * q));
            staged[off + q] = true;
        }
    }
    std::uint32_t tile_byte(const std::uint8_t* p) const {
        const std::ptrdiff_t off = p - tile;
        if (off < 0 || off >= static_cast<std::ptrdiff_t>(tile_size)) {
            fail("tile read outside the tile");
            return 0;
        }
        if (!staged[off]) fail("tile read of an unstaged byte");
        return *p;
    }
    std::ptrdiff_t entry(const uint2* p) const {
        const std::ptrdiff_t e = p - sums;
        if (e < 0 || e >= static_cast<std::ptrdiff_t>(sums_size)) {
            fail("sum table access outside the table");
            return -1;
        }
        return e;
    }
    uint2 sums_load(const uint2* p) const {
        const std::ptrdiff_t e = entry(p);
        if (e < 0) return make_uint2(0u, 0u);
        if (writer[e] < 0) fail("read of an unwritten sum entry " + std::to_string(e));
        if (write_phase[e] == phase && writer[e] != tid) fail("read of an entry another thread wrote in this phase");
        if (read_phase[e] != phase) {
            read_phase[e] = phase;
            reader[e] = tid;
        } else if (reader[e] != tid) {
            reader[e] = -2;
        }
        return *p;
    }
    uint4 sums_load_pair(const uint2* p) const {
        const std::ptrdiff_t e = entry(p);
        if (e >= 0 && (e & 1)) fail("16-byte sum table load at an odd entry");
        const uint2 a = sums_load(p), b = sums_load(p + 1);
        return make_uint4(a.x, a.y, b.x, b.y);
    }
    void sums_store(uint2* p, uint2 v) const {
        const std::ptrdiff_t e = entry(p);
        if (e < 0) return;
        if (write_phase[e] == phase && writer[e] != tid) fail("two threads write one entry in one phase");
        if (read_phase[e] == phase && reader[e] != tid) fail("write of an entry another thread read in this phase");
        writer[e] = tid;
        write_phase[e] = phase;
        *p = v;
    }
    void store_ncc(int x, int y, std::uint32_t si, std::uint32_t sii, std::uint32_t sit) const {
        if (x < 0 || x >= out_w || y < 0 || static_cast<std::size_t>(y) * out_w + x >= stored->size()) {
            fail("store outside the map");
            return;
        }
        Stored& s = (*stored)[static_cast<std::size_t>(y) * out_w + x];
        s = {si, sii, sit, s.count + 1};
    }
};

// Direct window sums over the roi (exact, 64-bit).
struct Direct {
    std::uint64_t si, sii, sit;
};

// A case's frame (inside a larger buffer, at the case's offset from a 64-byte boundary), its
// template and the direct sums of every output.
struct Prepared {
    std::vector<std::uint8_t> storage, templ;
    const std::uint8_t* frame = nullptr;
    std::size_t pitch = 0;
    int out_w = 0, out_h = 0;
    std::int64_t st = 0, stt = 0;
    std::vector<Direct> direct;
};

Prepared prepare(const Case& c, std::uint32_t seed) {
    Prepared pr;
    const std::size_t pitch = static_cast<std::size_t>(c.frame_w) + c.pitch_pad;
    pr.storage.resize(pitch * c.frame_h + 64 + c.base_offset);
    std::uint8_t* frame =
        pr.storage.data() + ((64 - reinterpret_cast<std::uintptr_t>(pr.storage.data()) % 64) % 64) + c.base_offset;
    std::mt19937 rng(seed);
    for (int y = 0; y < c.frame_h; ++y)
        for (int x = 0; x < c.frame_w; ++x)
            frame[y * pitch + x] = static_cast<std::uint8_t>(c.fill >= 0 ? c.fill : static_cast<int>(rng() & 255u));
    std::vector<std::uint8_t>& templ = pr.templ;
    templ.resize(static_cast<std::size_t>(c.tw) * c.th);
    for (auto& t : templ) t = static_cast<std::uint8_t>(c.fill >= 0 ? c.fill : static_cast<int>(rng() & 255u));

    const int out_w = c.roi.width - c.tw + 1, out_h = c.roi.height - c.th + 1;
    auto pix = [&](int x, int y) -> std::uint64_t { return frame[(c.roi.y + y) * pitch + c.roi.x + x]; };
    std::vector<Direct>& direct = pr.direct;
    direct.resize(static_cast<std::size_t>(out_w) * out_h);
    for (std::uint8_t t : templ) pr.st += t, pr.stt += static_cast<std::int64_t>(t) * t;
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x) {
            Direct d{0, 0, 0};
            for (int j = 0; j < c.th; ++j)
                for (int k = 0; k < c.tw; ++k) {
                    const std::uint64_t p = pix(x + k, y + j);
                    d.si += p;
                    d.sii += p * p;
                    d.sit += p * templ[static_cast<std::size_t>(j) * c.tw + k];
                }
            direct[static_cast<std::size_t>(y) * out_w + x] = d;
        }
    pr.frame = frame;
    pr.pitch = pitch;
    pr.out_w = out_w;
    pr.out_h = out_h;
    return pr;
}

template <class Cfg>
void check_shape(const Case& c, const Prepared& pr) {
    SCOPED_TRACE("shape R" + std::to_string(Cfg::R) + " W" + std::to_string(Cfg::W));
    const std::uint8_t* frame = pr.frame;
    const std::size_t pitch = pr.pitch;
    const int out_w = pr.out_w, out_h = pr.out_h;
    const std::vector<Direct>& direct = pr.direct;
    const std::int64_t st = pr.st, stt = pr.stt;
    const int kblocks = k_blocks(c.tw);
    const MmaArgs a{frame,
                    pitch,
                    c.roi.x,
                    c.roi.y,
                    c.roi.width,
                    c.roi.height,
                    c.th,
                    kblocks,
                    tile_pitch(kblocks),
                    tile_rows(Cfg::R, c.th, Cfg::W),
                    nullptr,
                    out_w,
                    out_h};
    const BoxLayout box = box_layout(c.tw, c.th, a.tile_pitch, Cfg::kThreads / Cfg::kRows);
    ASSERT_GE(a.tile_pitch, kTileOutputs - 1 + c.tw);  // the tile holds every column a window reads
    ASSERT_EQ(box_table_bytes(Cfg::kRows, c.tw), static_cast<std::size_t>(Cfg::kRows) * box.pitch * sizeof(uint2));

    std::vector<std::string> errors;
    std::vector<CheckOps::Stored> stored(direct.size(), CheckOps::Stored{0, 0, 0, 0});
    std::vector<std::uint8_t> tile(static_cast<std::size_t>(a.tile_pitch) * a.tile_rows);
    std::vector<uint2> sums(static_cast<std::size_t>(Cfg::kRows) * box.pitch);
    CheckOps ops;
    ops.frame = frame;
    ops.pitch = pitch;
    ops.frame_w = c.frame_w;
    ops.frame_h = c.frame_h;
    ops.tile = tile.data();
    ops.tile_size = tile.size();
    ops.sums = sums.data();
    ops.sums_size = sums.size();
    ops.errors = &errors;
    ops.stored = &stored;
    ops.out_w = out_w;

    const int grid_x = div_up(out_w, kTileOutputs), grid_y = div_up(out_h, Cfg::kRows);
    for (int by = 0; by < grid_y; ++by)
        for (int bx = 0; bx < grid_x; ++bx) {
            // A fresh block: poisoned memory, empty shadow state.
            std::fill(tile.begin(), tile.end(), std::uint8_t{0xA5});
            std::fill(sums.begin(), sums.end(), make_uint2(0xDEADBEEFu, 0xDEADBEEFu));
            ops.staged.assign(tile.size(), false);
            ops.writer.assign(sums.size(), -1);
            ops.reader.assign(sums.size(), -1);
            ops.write_phase.assign(sums.size(), -1);
            ops.read_phase.assign(sums.size(), -1);
            const int x0 = bx * kTileOutputs, y0 = by * Cfg::kRows;
            // fused_block's order: stage, barrier, each box phase then a barrier, the epilogue.
            ops.phase = -1;
            for (int tid = 0; tid < Cfg::kThreads; ++tid) {
                ops.tid = tid;
                stage_tile<Cfg::kThreads>(ops, a, tile.data(), tid, x0, y0);
            }
            std::vector<uint2> carry(Cfg::kThreads, make_uint2(0u, 0u));
            for (int phase = 0; phase < kBoxPhases; ++phase) {
                ops.phase = phase;
                for (int tid = 0; tid < Cfg::kThreads; ++tid) {
                    ops.tid = tid;
                    box_phase<Cfg::kThreads, Cfg::kRows>(ops, phase, box, tile.data(), sums.data(), tid, carry[tid]);
                }
            }
            ops.phase = kBoxPhases;
            for (int warp = 0; warp < Cfg::W; ++warp) {
                if (y0 + warp * Cfg::R >= out_h) continue;  // the kernel's early return
                for (int lane = 0; lane < kWarp; ++lane) {
                    ops.tid = warp * kWarp + lane;
                    // The accumulators as mma.sync leaves them: PTX's m16n8 C fragment puts
                    // c0, c1 at (row g, col 2t, 2t+1) and c2, c3 at row g + 8; row m of A is
                    // the chunk of outputs 8m .. 8m + 7, col n the offset in the chunk.
                    int acc[Cfg::R][4];
                    const int g = lane >> 2, t = lane & 3;
                    for (int i = 0; i < Cfg::R; ++i)
                        for (int reg = 0; reg < 4; ++reg) {
                            const int x = x0 + 8 * (reg < 2 ? g : g + 8) + 2 * t + (reg & 1);
                            const int y = y0 + warp * Cfg::R + i;
                            const bool inside = x < out_w && y < out_h;
                            acc[i][reg] = inside ? static_cast<int>(static_cast<std::uint32_t>(
                                                       direct[static_cast<std::size_t>(y) * out_w + x].sit))
                                                 : 0;
                        }
                    fused_epilogue<Cfg>(ops, box, sums.data(), warp, lane, x0, y0, out_w, out_h, acc);
                }
            }
            ASSERT_TRUE(errors.empty()) << "block " << bx << "," << by << ": " << errors[0]
                                        << (errors.size() > 1 ? " and more: " + errors[1] : "");
        }

    int wrong = 0;
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x) {
            const std::size_t i = static_cast<std::size_t>(y) * out_w + x;
            const Direct& d = direct[i];
            const CheckOps::Stored& s = stored[i];
            const bool ok = s.count == 1 && s.si == d.si && s.sii == d.sii && s.sit == d.sit;
            if (!ok && ++wrong <= 3)
                ADD_FAILURE() << "output " << x << "," << y << ": stored " << s.count << "x, SI " << s.si << " vs "
                              << d.si << ", SII " << s.sii << " vs " << d.sii << ", SIT " << s.sit << " vs " << d.sit;
            // The combine: the stored sums through the one formula equal it on the direct sums.
            const std::int64_t n = static_cast<std::int64_t>(c.tw) * c.th;
            if (ok) {
                ASSERT_EQ(ncc_from_sums(n, s.si, s.sii, s.sit, st, stt),
                          ncc_from_sums(n, static_cast<std::int64_t>(d.si), static_cast<std::int64_t>(d.sii),
                                        static_cast<std::int64_t>(d.sit), st, stt));
            }
        }
    EXPECT_EQ(wrong, 0) << "of " << out_w * out_h << " outputs";
}

std::vector<Case> cases() {
    std::vector<Case> v;
    // Every template side of note from 1 to 256 (K-block edges tw + 7 = 32k, 32k + 1; the
    // 128-output tile edge; the largest), square and not, on frames a little larger.
    const int sides[] = {1,  2,  3,  7,  8,  15, 16, 17,  25,  26,  31,  32,
                         33, 57, 58, 63, 64, 65, 89, 127, 128, 129, 255, 256};
    for (int tw : sides) {
        const int th = tw == 256 ? 129 : (tw * 7) % 61 + 1;  // a shuffled height for each width
        v.push_back({tw + 150, th + 40, 3, 1, {1, 2, tw + 140, th + 35}, tw, th, -1});
        v.push_back({tw + 9, th + 9, 0, 0, {0, 0, tw + 9, th + 9}, tw, th, -1});  // roi = frame
    }
    for (int th : sides) v.push_back({140, th + 50, 1, 2, {3, 1, 133, th + 49}, 5, th, -1});  // tall templates
    // Width 1: one-pixel templates and one-column outputs.
    v.push_back({37, 29, 0, 0, {0, 0, 37, 29}, 1, 1, -1});
    v.push_back({33, 70, 1, 3, {32, 0, 1, 70}, 1, 40, -1});   // roi of width 1 at the right edge
    v.push_back({90, 41, 2, 1, {17, 3, 64, 38}, 64, 1, -1});  // output width 1
    // Rois at every edge of the frame, odd offsets and pitches, multi-block grids.
    v.push_back({700, 150, 5, 3, {0, 0, 700, 150}, 64, 64, -1});
    v.push_back({700, 150, 0, 1, {3, 5, 697, 145}, 64, 64, -1});
    v.push_back({333, 171, 3, 2, {333 - 300, 171 - 120, 300, 120}, 45, 27, -1});  // bottom right
    v.push_back({1003, 71, 1, 0, {0, 1, 1001, 70}, 100, 60, -1});
    v.push_back({517, 60, 0, 3, {2, 0, 515, 60}, 130, 11, -1});
    v.push_back({260, 300, 7, 1, {1, 1, 259, 299}, 129, 256, -1});
    v.push_back({300, 200, 0, 0, {0, 0, 300, 200}, 256, 129, -1});
    // The bounds: all-255 frames at the largest supported areas and at 256x256 (SII of a window
    // 4.26e9, SI 16.7e6: both below 2^32, differences exact), flat windows (SII * n = SI^2).
    v.push_back({300, 140, 0, 0, {0, 0, 300, 140}, 256, 129, 255});
    v.push_back({150, 270, 0, 2, {1, 1, 149, 269}, 129, 256, 255});
    v.push_back({260, 260, 0, 0, {0, 0, 260, 260}, 256, 256, 255});
    v.push_back({200, 90, 0, 1, {0, 0, 200, 90}, 16, 16, 141});
    return v;
}

// cuda_mma_fused's shape (32 rows), cuda_mma_fused_w4's (16 rows), and 8 rows per warp (4 scan
// segments a row instead of 8), so the scan holds for any shape the mma code supports.
TEST(MmaBoxSums, EveryOutputExact) {
    std::uint32_t seed = 11;
    int checked = 0;
    for (const Case& c : cases()) {
        SCOPED_TRACE(describe(c));
        ASSERT_GT(c.roi.width - c.tw, -1);
        ASSERT_GT(c.roi.height - c.th, -1);
        ASSERT_LE(c.roi.x + c.roi.width, c.frame_w);
        ASSERT_LE(c.roi.y + c.roi.height, c.frame_h);
        const Prepared pr = prepare(c, seed++);
        check_shape<Shape<4, 8>>(c, pr);
        check_shape<Shape<4, 4>>(c, pr);
        check_shape<Shape<8, 4>>(c, pr);
        checked += 3;
    }
    EXPECT_EQ(checked, 3 * static_cast<int>(cases().size()));
}

// The scan's layout promise (box_scan_thread): in every phase-2/4 step the 16 lanes of each
// half-warp touch 16 distinct bank pairs (8-byte entries mod 16), for every template width.
template <class Cfg>
int scan_conflicts() {
    int conflicts = 0;
    for (int tw = 1; tw <= 256; ++tw) {
        const BoxLayout box = box_layout(tw, 1, 0, Cfg::kThreads / Cfg::kRows);
        for (int half = 0; half < Cfg::kThreads / 16; ++half) {
            unsigned used = 0;
            for (int lane = 0; lane < 16; ++lane) {
                int r = 0, k = 0;
                box_scan_thread<Cfg::kThreads, Cfg::kRows>(16 * half + lane, r, k);
                if (k * box.seg_len >= box.entries) continue;  // an idle (empty) segment
                const unsigned bank_pair = 1u << ((r * box.pitch + k * box.seg_len) % 16);
                if (used & bank_pair) ++conflicts;
                used |= bank_pair;
            }
        }
    }
    return conflicts;
}

TEST(MmaBoxSums, ScanLanesHitDistinctBankPairs) {
    EXPECT_EQ((scan_conflicts<Shape<4, 8>>()), 0);
    EXPECT_EQ((scan_conflicts<Shape<4, 4>>()), 0);
    EXPECT_EQ((scan_conflicts<Shape<8, 4>>()), 0);
}

// Every thread of the block gets a distinct (row, segment) of the scan.
TEST(MmaBoxSums, ScanThreadsCoverRowsAndSegmentsOnce) {
    using Cfg = Shape<4, 8>;
    std::vector<int> seen(Cfg::kThreads, 0);
    for (int tid = 0; tid < Cfg::kThreads; ++tid) {
        int r = 0, k = 0;
        box_scan_thread<Cfg::kThreads, Cfg::kRows>(tid, r, k);
        ASSERT_LT(r, Cfg::kRows);
        ASSERT_LT(k, Cfg::kThreads / Cfg::kRows);
        ++seen[k * Cfg::kRows + r];
    }
    for (int n : seen) EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace corrtrack
