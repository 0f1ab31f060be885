// A host emulation of cuda_mma_fused's block (fused_block in corr_mma_fused.cu) for the tests
// without a GPU. The block's own code (template_view, mma_args, template_sums, sums_slot,
// fused_map, stage_tile, box_phase, mma_accumulate, fused_epilogue from mma_block.cuh and
// mma_box_sums.cuh) runs thread by thread in the order the kernel's barriers impose, for every
// block of every template (grid z), against checking operations: every frame read inside its
// frame row and 4-byte aligned, every tile read inside the tile and staged, every sum-table
// access inside the table, no read of an entry nobody wrote, no two threads on one entry in one
// phase unless both only read it, every B fragment and prefix entry read inside its buffer, no
// tile read of the template sums' slot, every store inside its map. The warp-wide mma.sync is
// computed from the PTX ISA's m16n8k32 .u8 fragment tables once all 32 lanes of a warp have
// issued it (mma_accumulate has no barrier, so lanes can run one after the other). check_shape
// then wants, for every output of every map: stored exactly once, SI, SII and SIT equal to
// direct sums over its template's roi, its template's statistics equal to direct sums, and its
// NCC the formula on direct sums, bit for bit.
// Left to the GPU sweep: that the hardware does what PTX's tables say, the barriers, the launch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/mma_block.cuh"
#include "cuda/mma_box_sums.cuh"

namespace corrtrack {
namespace fused_emu {

using namespace mma;  // NOLINT

// The kernel's shapes (FusedCfg in corr_mma_fused.cu).
template <int R_, int W_, int H_ = 1>
struct Shape {
    enum : int { R = R_, W = W_, H = H_, kThreads = kWarp * W_, kRows = R_ * W_, kTableRows = R_ * W_ / H_, A32 = 1 };
};

struct Case {
    int frame_w, frame_h, pitch_pad, base_offset;  // frame rows pitch_pad bytes wider, base offset bytes
    Rect roi;                                      // template 0's; template k's is step * k rows down
    int tw, th;
    int fill;  // -1: random frame and templates; else every pixel this value
    int templates = 1, step = 0;
    int flat_template = -1;  // this template of the stack all one value (NCC 0 everywhere)
};

inline std::string describe(const Case& c) {
    return "frame " + std::to_string(c.frame_w) + "x" + std::to_string(c.frame_h) + " +" + std::to_string(c.pitch_pad) +
           " @" + std::to_string(c.base_offset) + " roi " + std::to_string(c.roi.x) + "," + std::to_string(c.roi.y) +
           " " + std::to_string(c.roi.width) + "x" + std::to_string(c.roi.height) + " templ " + std::to_string(c.tw) +
           "x" + std::to_string(c.th) + (c.fill >= 0 ? " fill " + std::to_string(c.fill) : "") +
           (c.templates > 1 ? " x" + std::to_string(c.templates) + " step " + std::to_string(c.step) : "") +
           (c.flat_template >= 0 ? " flat " + std::to_string(c.flat_template) : "");
}

// One mma.sync as one lane issued it.
struct MmaCall {
    std::ptrdiff_t acc;  // which accumulator (index i of acc[i])
    std::uint32_t a[4];
    uint2 b;
};

// What the epilogue stored for one output.
struct Stored {
    std::uint32_t si, sii, sit;
    DeviceTemplateStats stats;
    int count;
};

// Host operations with checks; failures are collected as text (the first few are reported).
struct CheckOps {
    const std::uint8_t* frame = nullptr;  // row 0
    std::size_t pitch = 0;
    int frame_w = 0, frame_h = 0;
    std::uint8_t* tile = nullptr;
    std::size_t tile_size = 0;
    std::ptrdiff_t slot = -1;  // tile offset of the template sums' 8 bytes (sums_slot): never read
    uint2* sums = nullptr;
    std::size_t sums_size = 0;  // entries
    const uint2* bfrag = nullptr;
    std::size_t bfrag_size = 0;
    const TemplatePrefix* prefix = nullptr;
    std::size_t prefix_size = 0;
    // Shadow state of the current block.
    mutable std::vector<bool> staged;
    mutable std::vector<int> writer, write_phase, reader, read_phase;  // reader -2: several threads
    mutable int tid = 0, phase = -1;
    mutable std::vector<std::string>* errors = nullptr;
    // The current lane's mma calls and accumulator array.
    mutable std::vector<MmaCall>* calls = nullptr;
    mutable const int* acc_base = nullptr;
    // The epilogue's stores: the stacked maps, out_w x out_h each.
    mutable std::vector<Stored>* stored = nullptr;
    int out_w = 0, out_h = 0;

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
    // `bytes` staged tile bytes at p, aligned to their size (A fragments and the box sums).
    bool check_tile(const std::uint8_t* p, int bytes) const {
        const std::ptrdiff_t off = p - tile;
        if (off < 0 || off + bytes > static_cast<std::ptrdiff_t>(tile_size)) {
            fail("tile read outside the tile");
            return false;
        }
        if (off % bytes) fail("unaligned tile read");
        if (slot >= 0 && off < slot + static_cast<std::ptrdiff_t>(sizeof(TemplateSums)) && off + bytes > slot)
            fail("tile read of the template sums' slot");
        for (int q = 0; q < bytes; ++q)
            if (!staged[off + q]) fail("tile read of an unstaged byte");
        return true;
    }
    std::uint32_t tile_byte(const std::uint8_t* p) const { return check_tile(p, 1) ? *p : 0u; }
    std::uint32_t smem_u32(const std::uint8_t* p) const {
        if (!check_tile(p, 4)) return 0;
        return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
               static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
    }
    uint2 smem_pair(const std::uint8_t* p) const {
        if (!check_tile(p, 8)) return make_uint2(0u, 0u);
        return make_uint2(smem_u32(p), smem_u32(p + 4));
    }
    uint2 b_fragment(const uint2* p) const {
        const std::ptrdiff_t e = p - bfrag;
        if (e < 0 || e >= static_cast<std::ptrdiff_t>(bfrag_size)) {
            fail("B fragment read outside the packed stack");
            return make_uint2(0u, 0u);
        }
        return *p;
    }
    void mma(int (&d)[4], const std::uint32_t (&a)[4], uint2 b) const {
        MmaCall c{(&d[0] - acc_base) / 4, {a[0], a[1], a[2], a[3]}, b};
        calls->push_back(c);
    }
    TemplatePrefix prefix_entry(const TemplatePrefix* p) const {
        const std::ptrdiff_t e = p - prefix;
        if (e < 0 || e >= static_cast<std::ptrdiff_t>(prefix_size)) {
            fail("prefix table read outside the table");
            return {0, 0};
        }
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
    void store_ncc(const FusedMap& m, int x, int y, std::uint32_t si, std::uint32_t sii, std::uint32_t sit) const {
        const std::size_t i = (m.row0 + static_cast<std::size_t>(y)) * out_w + x;
        if (x < 0 || x >= out_w || y < 0 || y >= out_h || i >= stored->size()) {
            fail("store outside its map");
            return;
        }
        Stored& s = (*stored)[i];
        s = {si, sii, sit, m.stats, s.count + 1};
    }
};

// PTX's m16n8k32 .u8 fragment tables (g = lane / 4, t = lane % 4): the (row, column) of
// element e of a lane's A fragment (register e / 4, byte e % 4), of its B fragment, and of its
// accumulator register c.
struct Pos {
    int row, col;
};
inline Pos a_pos(int lane, int e) {
    const int g = lane >> 2, t = lane & 3;
    return {g + ((e & 4) ? 8 : 0), 4 * t + (e & 3) + (e >= 8 ? 16 : 0)};
}
inline Pos b_pos(int lane, int e) { return {4 * (lane & 3) + (e & 3) + (e >= 4 ? 16 : 0), lane >> 2}; }
inline Pos c_pos(int lane, int c) { return {(lane >> 2) + (c >= 2 ? 8 : 0), 2 * (lane & 3) + (c & 1)}; }

// The warp's mmas, computed from every lane's fragments with the tables above:
// acc[lane][i][c] = the sum of every call's product on accumulator i, modulo 2^32 as the
// hardware's s32 adds wrap; beyond the s32 range is an error where the kernel supports the
// template (s32_bound), and so are lanes that disagree on the calls.
template <int R>
void warp_mma(const std::vector<MmaCall> (&calls)[kWarp], int (&acc)[kWarp][R][4], bool s32_bound,
              std::vector<std::string>& errors) {
    std::int64_t sum[kWarp][R][4] = {};
    const std::size_t n = calls[0].size();
    for (int lane = 1; lane < kWarp; ++lane)
        if (calls[lane].size() != n) {
            errors.push_back("lanes issued different numbers of mmas");
            return;
        }
    for (std::size_t k = 0; k < n; ++k) {
        const std::ptrdiff_t i = calls[0][k].acc;
        if (i < 0 || i >= R) {
            errors.push_back("mma into a register outside the accumulators");
            return;
        }
        std::uint8_t A[16][32], B[32][8];
        for (int lane = 0; lane < kWarp; ++lane) {
            const MmaCall& c = calls[lane][k];
            if (c.acc != i) {
                errors.push_back("lanes of one mma name different accumulators");
                return;
            }
            for (int e = 0; e < 16; ++e) {
                const Pos p = a_pos(lane, e);
                A[p.row][p.col] = static_cast<std::uint8_t>(c.a[e >> 2] >> (8 * (e & 3)));
            }
            for (int e = 0; e < 8; ++e) {
                const Pos p = b_pos(lane, e);
                B[p.row][p.col] = static_cast<std::uint8_t>((e < 4 ? c.b.x : c.b.y) >> (8 * (e & 3)));
            }
        }
        for (int lane = 0; lane < kWarp; ++lane)
            for (int c = 0; c < 4; ++c) {
                const Pos p = c_pos(lane, c);
                std::int64_t d = 0;
                for (int kk = 0; kk < 32; ++kk) d += static_cast<std::int64_t>(A[p.row][kk]) * B[kk][p.col];
                sum[lane][i][c] += d;
            }
    }
    for (int lane = 0; lane < kWarp; ++lane)
        for (int i = 0; i < R; ++i)
            for (int c = 0; c < 4; ++c) {
                if (s32_bound && sum[lane][i][c] > 0x7fffffffLL) errors.push_back("s32 accumulator overflow");
                acc[lane][i][c] = static_cast<int>(static_cast<std::uint32_t>(sum[lane][i][c]));
            }
}

// Direct window sums (exact, 64-bit).
struct Direct {
    std::uint64_t si, sii, sit;
};

// A case's frame (inside a larger buffer, at the case's offset from a 64-byte boundary), its
// template stack, the stack's prefix table and B fragments as set_template makes them on the
// device, and the direct sums of every output of every map (stacked) and of every template.
struct Prepared {
    std::vector<std::uint8_t> storage, templ;
    const std::uint8_t* frame = nullptr;
    std::size_t pitch = 0;
    int out_w = 0, out_h = 0;
    std::vector<DeviceTemplateStats> stats;  // per template
    std::vector<TemplatePrefix> prefix;      // rows + 1 entries
    std::vector<uint2> bfrag;
    std::vector<Direct> direct;  // the maps stacked
};

inline Prepared prepare(const Case& c, std::uint32_t seed) {
    Prepared pr;
    const std::size_t pitch = static_cast<std::size_t>(c.frame_w) + c.pitch_pad;
    pr.storage.resize(pitch * c.frame_h + 64 + c.base_offset);
    std::uint8_t* frame =
        pr.storage.data() + ((64 - reinterpret_cast<std::uintptr_t>(pr.storage.data()) % 64) % 64) + c.base_offset;
    std::mt19937 rng(seed);
    const auto value = [&] { return static_cast<std::uint8_t>(c.fill >= 0 ? c.fill : static_cast<int>(rng() & 255u)); };
    for (int y = 0; y < c.frame_h; ++y)
        for (int x = 0; x < c.frame_w; ++x) frame[y * pitch + x] = value();
    const std::size_t tsize = static_cast<std::size_t>(c.tw) * c.th;
    const int rows = c.th * c.templates;
    std::vector<std::uint8_t>& templ = pr.templ;
    templ.resize(tsize * c.templates);
    for (auto& t : templ) t = value();
    if (c.flat_template >= 0)
        std::fill(templ.begin() + c.flat_template * tsize, templ.begin() + (c.flat_template + 1) * tsize, 77);

    // set_template's device work: the stack's prefix table (template_prefix_kernel) and its B
    // fragments packed as one template of th * templates rows (pack_b_kernel).
    pr.prefix.assign(rows + 1, TemplatePrefix{0, 0});
    for (int r = 0; r < rows; ++r) {
        pr.prefix[r + 1] = pr.prefix[r];
        for (int x = 0; x < c.tw; ++x) {
            const std::uint64_t v = templ[static_cast<std::size_t>(r) * c.tw + x];
            pr.prefix[r + 1].sum += v;
            pr.prefix[r + 1].sum_sq += v * v;
        }
    }
    const int nfrag = k_blocks(c.tw) * rows * kWarp;
    pr.bfrag.resize(nfrag);
    for (int i = 0; i < nfrag; ++i) pr.bfrag[i] = b_fragment_at(templ.data(), c.tw, rows, i);

    const int out_w = c.roi.width - c.tw + 1, out_h = c.roi.height - c.th + 1;
    pr.direct.resize(static_cast<std::size_t>(out_w) * out_h * c.templates);
    for (int k = 0; k < c.templates; ++k) {
        const std::uint8_t* t = templ.data() + k * tsize;
        DeviceTemplateStats s{static_cast<std::int64_t>(tsize), 0, 0};
        for (std::size_t i = 0; i < tsize; ++i) s.sum += t[i], s.sum_sq += static_cast<std::int64_t>(t[i]) * t[i];
        pr.stats.push_back(s);
        const int ry = c.roi.y + k * c.step;
        for (int y = 0; y < out_h; ++y)
            for (int x = 0; x < out_w; ++x) {
                Direct d{0, 0, 0};
                for (int j = 0; j < c.th; ++j)
                    for (int i = 0; i < c.tw; ++i) {
                        const std::uint64_t p = frame[(ry + y + j) * pitch + c.roi.x + x + i];
                        d.si += p;
                        d.sii += p * p;
                        d.sit += p * t[static_cast<std::size_t>(j) * c.tw + i];
                    }
                pr.direct[(static_cast<std::size_t>(k) * out_h + y) * out_w + x] = d;
            }
    }
    pr.frame = frame;
    pr.pitch = pitch;
    pr.out_w = out_w;
    pr.out_h = out_h;
    return pr;
}

// Every block of the run, each as fused_block runs it, then every output checked.
template <class Cfg>
void check_shape(const Case& c, const Prepared& pr) {
    SCOPED_TRACE("shape R" + std::to_string(Cfg::R) + " W" + std::to_string(Cfg::W) + " H" + std::to_string(Cfg::H));
    const int out_w = pr.out_w, out_h = pr.out_h;
    // The arguments as CudaMmaFused::run builds them.
    const NccProblem problem{{c.frame_w, c.frame_h}, {c.tw, c.th}, c.roi, c.templates, c.step};
    ASSERT_EQ(validate_problem(problem), "");
    const ImageView frame_view{pr.frame, c.frame_w, c.frame_h, pr.pitch, MemorySpace::kDevice};
    const int kblocks = k_blocks(c.tw);
    MmaArgs batch = mma_args(frame_view, problem, kblocks, pr.bfrag.data(), Cfg::R, Cfg::W);
    batch.kblock_rows = c.th * c.templates;
    const BoxLayout box = box_layout(c.tw, c.th, batch.tile_pitch, Cfg::kThreads / Cfg::kTableRows);
    ASSERT_GE(batch.tile_pitch, kTileOutputs - 1 + c.tw);  // the tile holds every column a window reads
    ASSERT_EQ(box_table_bytes(Cfg::kTableRows, c.tw),
              static_cast<std::size_t>(Cfg::kTableRows) * box.pitch * sizeof(uint2));

    std::vector<std::string> errors;
    std::vector<Stored> stored(pr.direct.size(), Stored{0, 0, 0, {0, 0, 0}, 0});
    std::vector<std::uint8_t> tile(static_cast<std::size_t>(batch.tile_pitch) * batch.tile_rows);
    const std::size_t table = static_cast<std::size_t>(Cfg::kTableRows) * box.pitch;
    std::vector<uint2> sums(table);
    CheckOps ops;
    ops.frame = pr.frame;
    ops.pitch = pr.pitch;
    ops.frame_w = c.frame_w;
    ops.frame_h = c.frame_h;
    ops.tile = tile.data();
    ops.tile_size = tile.size();
    ops.sums = sums.data();
    ops.sums_size = table;
    ops.bfrag = pr.bfrag.data();
    ops.bfrag_size = pr.bfrag.size();
    ops.prefix = pr.prefix.data();
    ops.prefix_size = pr.prefix.size();
    ops.errors = &errors;
    ops.stored = &stored;
    ops.out_w = out_w;
    ops.out_h = out_h;

    const int grid_x = div_up(out_w, kTileOutputs), grid_y = div_up(out_h, Cfg::kRows);
    std::vector<MmaCall> calls[kWarp];
    int acc[Cfg::W][kWarp][Cfg::R][4];  // every warp's, lane by lane
    for (int bz = 0; bz < c.templates; ++bz)
        for (int by = 0; by < grid_y; ++by)
            for (int bx = 0; bx < grid_x; ++bx) {
                // A fresh block: poisoned memory, empty shadow state.
                std::fill(tile.begin(), tile.end(), std::uint8_t{0xA5});
                std::fill(sums.begin(), sums.end(), make_uint2(0xDEADBEEFu, 0xDEADBEEFu));
                ops.staged.assign(tile.size(), false);
                ops.writer.assign(table, -1);
                ops.reader.assign(table, -1);
                ops.write_phase.assign(table, -1);
                ops.read_phase.assign(table, -1);
                // fused_block's order: template bz's view, its sums (thread 0), stage, barrier,
                // the sums into their slot (thread 0), each box phase then a barrier, then per
                // warp the mma loop, the map from the slot and the epilogue.
                const MmaArgs a = template_view(batch, bz);
                const int x0 = bx * kTileOutputs, y0 = by * Cfg::kRows;
                ops.phase = -1;
                ops.tid = 0;
                ops.slot = -1;
                const TemplateSums tsums = template_sums(ops, pr.prefix.data(), bz, a.th);
                for (int tid = 0; tid < Cfg::kThreads; ++tid) {
                    ops.tid = tid;
                    stage_tile<Cfg::kThreads>(ops, a, tile.data(), tid, x0, y0);
                }
                TemplateSums* slot = sums_slot(tile.data(), a.tile_pitch);
                ops.slot = reinterpret_cast<std::uint8_t*>(slot) - tile.data();
                ASSERT_EQ(ops.slot % static_cast<std::ptrdiff_t>(sizeof(TemplateSums)), 0);
                ASSERT_LT(ops.slot, a.tile_pitch);  // in row 0
                *slot = tsums;
                std::vector<uint2> carry(Cfg::kThreads, make_uint2(0u, 0u));
                // Part h of the table (its kTableRows block rows): every thread's box phases over
                // the tile from row h * kTableRows, each phase a barrier apart, with the shadow
                // state afresh (an entry this part does not write reads as unwritten).
                const auto build_part = [&](int h) {
                    ops.writer.assign(table, -1);
                    ops.reader.assign(table, -1);
                    for (int phase = 0; phase < kBoxPhases; ++phase) {
                        ops.phase = h * (kBoxPhases + 1) + phase;
                        for (int tid = 0; tid < Cfg::kThreads; ++tid) {
                            ops.tid = tid;
                            box_phase<Cfg::kThreads, Cfg::kTableRows>(ops, phase, box,
                                                                      tile.data() + h * Cfg::kTableRows * a.tile_pitch,
                                                                      sums.data(), tid, carry[tid]);
                        }
                    }
                };
                build_part(0);
                ops.phase = kBoxPhases;
                // The mma loop of every warp in the map (it has no barrier), then per part its
                // sums and the epilogue of the warps whose rows it holds (the kernel's early
                // return, or with parts its in_map flag).
                for (int warp = 0; warp < Cfg::W; ++warp) {
                    if (y0 + warp * Cfg::R >= a.out_h) continue;
                    for (int lane = 0; lane < kWarp; ++lane) {
                        ops.tid = warp * kWarp + lane;
                        calls[lane].clear();
                        ops.calls = &calls[lane];
                        ops.acc_base = &acc[warp][lane][0][0];
                        mma_accumulate<Cfg, true>(ops, a, tile.data(), warp, lane, acc[warp][lane]);
                    }
                    warp_mma<Cfg::R>(calls, acc[warp], static_cast<long long>(c.tw) * c.th <= kMaxTemplateArea, errors);
                }
                for (int h = 0; h < Cfg::H; ++h) {
                    if (h > 0) build_part(h);
                    ops.phase = h * (kBoxPhases + 1) + kBoxPhases;
                    for (int warp = 0; warp < Cfg::W; ++warp) {
                        if (y0 + warp * Cfg::R >= a.out_h || warp * Cfg::R / Cfg::kTableRows != h) continue;
                        const FusedMap map = fused_map(*slot, bz, box.tw, a.th, a.out_h);
                        for (int lane = 0; lane < kWarp; ++lane) {
                            ops.tid = warp * kWarp + lane;
                            fused_epilogue<Cfg>(ops, box, sums.data(), warp, lane, x0, y0, a.out_w, a.out_h, map,
                                                acc[warp][lane], h * Cfg::kTableRows);
                        }
                    }
                }
                ASSERT_TRUE(errors.empty()) << "block " << bx << "," << by << "," << bz << ": " << errors[0]
                                            << (errors.size() > 1 ? " and more: " + errors[1] : "");
            }

    int wrong = 0;
    for (int k = 0; k < c.templates; ++k)
        for (int y = 0; y < out_h; ++y)
            for (int x = 0; x < out_w; ++x) {
                const std::size_t i = (static_cast<std::size_t>(k) * out_h + y) * out_w + x;
                const Direct& d = pr.direct[i];
                const Stored& s = stored[i];
                const DeviceTemplateStats& t = pr.stats[k];
                const bool ok = s.count == 1 && s.si == d.si && s.sii == d.sii && s.sit == d.sit && s.stats.n == t.n &&
                                s.stats.sum == t.sum && s.stats.sum_sq == t.sum_sq;
                if (!ok && ++wrong <= 3)
                    ADD_FAILURE() << "map " << k << " output " << x << "," << y << ": stored " << s.count << "x, SI "
                                  << s.si << " vs " << d.si << ", SII " << s.sii << " vs " << d.sii << ", SIT " << s.sit
                                  << " vs " << d.sit << ", template sum " << s.stats.sum << " vs " << t.sum
                                  << ", sum_sq " << s.stats.sum_sq << " vs " << t.sum_sq;
                // The combine: the stored sums through the one formula equal it on the direct sums.
                if (ok) {
                    ASSERT_EQ(ncc_from_sums(s.stats.n, s.si, s.sii, s.sit, s.stats.sum, s.stats.sum_sq),
                              ncc_from_sums(t.n, static_cast<std::int64_t>(d.si), static_cast<std::int64_t>(d.sii),
                                            static_cast<std::int64_t>(d.sit), t.sum, t.sum_sq));
                }
            }
    EXPECT_EQ(wrong, 0) << "of " << out_w * out_h * c.templates << " outputs";
}

}  // namespace fused_emu
}  // namespace corrtrack
