// The window sums SI (pixels) and SII (squares) of a cuda_mma_fused block's outputs, computed
// from the frame tile the block has staged for its mmas, instead of integral images over the
// whole roi: per tile column a running sum down th rows (one value per block output row), then
// per block output row a prefix sum over the columns, so a window's sums are one difference of
// two prefix entries. Design and bounds: kernels/cuda/NOTES_mma_fused.md.
// Written against the block body's Ops (tile_byte, sums_load(_pair), sums_store, prefix_entry,
// store_ncc) so a host test runs the very same phases thread by thread
// (kernels/tests/test_mma_box_sums.cpp).
// Thread rules: every thread of a block calls box_phase for each phase in order, with a block
// barrier after each; fused_epilogue reads the table after the last barrier.
#pragma once

#include <cstdint>

#include "cuda/integral.cuh"
#include "cuda/mma_block.cuh"

namespace corrtrack {
namespace mma {

// The sum table, in shared memory after the tile: block output row r has `pitch` uint2 entries;
// entry e holds (sum, sum of squares) over tile columns [0, e) and tile rows [r, r + th), for
// e in [0, entries): the th x w box sums of row r's windows are differences of two entries.
// Every value is kept modulo 2^32; a window's true SI and SII are below 2^32 (SII <= 65536 *
// 255^2 = 4.26e9 for any template up to 256x256), so the differences are exact.
struct BoxLayout {
    int tw, th;
    int tile_pitch;  // bytes per tile row
    int entries;     // kTileOutputs + tw: the prefixes 0 .. 127 + tw of the 127 + tw columns read
    int pitch;       // entries per table row, = 2 mod 4 (see box_scan_thread)
    int seg_len;     // entries per scan segment, odd (see box_scan_thread)
};

// Table rows of 2 mod 4 entries: 16-byte aligned (the epilogue loads entry pairs as 16 bytes),
// and 8 consecutive rows fall on 8 distinct even bank pairs.
CORRTRACK_HD int box_pitch(int entries) { return entries + (6 - entries % 4) % 4; }

inline BoxLayout box_layout(int tw, int th, int tile_pitch, int segments) {
    const int entries = kTileOutputs + tw;
    const int seg_len = div_up(entries, segments);
    return {tw, th, tile_pitch, entries, box_pitch(entries), seg_len | 1};
}
inline std::size_t box_table_bytes(int block_rows, int tw) {
    return static_cast<std::size_t>(block_rows) * box_pitch(kTileOutputs + tw) * sizeof(uint2);
}

// The scan's thread -> (row, segment): a half-warp is 8 consecutive rows x 2 neighbouring
// segments. Its 16 entries e + r * pitch (+ seg_len) then hit 16 distinct bank pairs: r * pitch
// covers the 8 even residues mod 16 (pitch = 2 mod 4), seg_len is odd. Needs kRows % 8 == 0
// and an even number of segments.
template <int kThreads, int kRows>
CORRTRACK_HD void box_scan_thread(int tid, int& row, int& seg) {
    static_assert(kRows % 8 == 0 && kThreads % (2 * kRows) == 0, "8-row groups, an even number of segments");
    row = (tid & 7) | (((tid >> 4) % (kRows / 8)) << 3);
    seg = ((tid >> 3) & 1) | ((tid / (2 * kRows)) << 1);
}

// The phases, each followed by a block barrier:
//   kBoxColumns  thread per tile column c: the running th-row sums of column c for every block
//                output row, into entry c + 1 of each row (entry 0 := 0)
//   kBoxScan     thread (row r, segment s) (box_scan_thread): entries of segment s of row r ->
//                their prefix inside the segment
//   kBoxCarry    the same thread: the sum of the segments before s (their last entries), kept
//                in a register
//   kBoxAdd      the same thread: carry added to segment s (the barrier between carry and add
//                keeps the last entries unchanged while other threads read them)
enum BoxPhase : int { kBoxColumns, kBoxScan, kBoxCarry, kBoxAdd, kBoxPhases };

// One phase for thread `tid` of a block of kThreads threads and kRows output rows. `carry` is
// the thread's state between kBoxCarry and kBoxAdd.
template <int kThreads, int kRows, class Ops>
CORRTRACK_HD void box_phase(const Ops& ops, int phase, const BoxLayout& L, const std::uint8_t* tile, uint2* sums,
                            int tid, uint2& carry) {
    if (phase == kBoxColumns) {
        // Lanes take consecutive columns: a warp reads 32 consecutive tile bytes (one shared
        // wavefront) and writes 32 consecutive entries. The column's sums only grow by
        // (in - out) and (in - out)(in + out) = in^2 - out^2 per row, so the loop needs no
        // 64-bit or signed state.
        const int cols = L.entries - 1;
        for (int c = tid; c < cols; c += kThreads) {
            const std::uint8_t* col = tile + c;
            std::uint32_t s = 0, q = 0;
#pragma unroll 4
            for (int j = 0; j < L.th; ++j) {
                const std::uint32_t v = ops.tile_byte(col + j * L.tile_pitch);
                s += v;
                q += v * v;
            }
            uint2* out = sums + c + 1;
            ops.sums_store(out, make_uint2(s, q));
#pragma unroll 8
            for (int r = 1; r < kRows; ++r) {
                const std::uint32_t in = ops.tile_byte(col + (r + L.th - 1) * L.tile_pitch);
                const std::uint32_t gone = ops.tile_byte(col + (r - 1) * L.tile_pitch);
                s += in - gone;  // modulo 2^32: exact once the result is
                q += (in - gone) * (in + gone);
                ops.sums_store(out + r * L.pitch, make_uint2(s, q));
            }
        }
        if (tid < kRows) ops.sums_store(sums + tid * L.pitch, make_uint2(0u, 0u));
        return;
    }
    int r = 0, k = 0;
    box_scan_thread<kThreads, kRows>(tid, r, k);
    uint2* row = sums + r * L.pitch;
    const int lo = k * L.seg_len;
    if (lo >= L.entries) return;  // an empty segment (more segments than the row needs)
    const int hi = lo + L.seg_len < L.entries ? lo + L.seg_len : L.entries;
    if (phase == kBoxScan) {
        uint2 run = make_uint2(0u, 0u);
#pragma unroll 4
        for (int e = lo; e < hi; ++e) {
            const uint2 v = ops.sums_load(row + e);
            run.x += v.x;
            run.y += v.y;
            ops.sums_store(row + e, run);
        }
    } else if (phase == kBoxCarry) {
        // Every segment before a non-empty one is full: its last entry is at (k + 1) seg_len - 1.
        carry = make_uint2(0u, 0u);
        for (int e = L.seg_len - 1; e < lo; e += L.seg_len) {
            const uint2 v = ops.sums_load(row + e);
            carry.x += v.x;
            carry.y += v.y;
        }
    } else if (phase == kBoxAdd && lo > 0) {
#pragma unroll 4
        for (int e = lo; e < hi; ++e) {
            const uint2 v = ops.sums_load(row + e);
            ops.sums_store(row + e, make_uint2(v.x + carry.x, v.y + carry.y));
        }
    }
}

// Template k's sums from the stack's (rows + 1)-entry prefix table (TemplatePrefix: built on
// the device when the template is set; Ops::prefix_entry loads one entry). 32 bits hold them
// exactly: sum <= 65536 x 255 and sum_sq <= 65536 x 255^2 < 2^32 for any template up to 256x256.
struct TemplateSums {
    std::uint32_t sum, sum_sq;
};

template <class Ops>
CORRTRACK_HD TemplateSums template_sums(const Ops& ops, const TemplatePrefix* prefix, int k, int th) {
    const std::size_t lo = static_cast<std::size_t>(k) * th;
    const TemplatePrefix a = ops.prefix_entry(prefix + lo), b = ops.prefix_entry(prefix + lo + th);
    return {static_cast<std::uint32_t>(b.sum - a.sum), static_cast<std::uint32_t>(b.sum_sq - a.sum_sq)};
}

// Where a block keeps its template's sums from the staging barrier to the epilogue: the last 8
// bytes of tile row 0 (8-aligned), which stage_tile writes but nothing reads. tile_pitch is
// 128 + 32 kblocks; the A fragments read columns < 120 + 32 kblocks, the box sums columns
// < 127 + tw <= 120 + 32 kblocks. So the slot costs no shared memory (32 bytes more would have
// cost a block per SM in some shapes, e.g. _w4 at 40x40: 7 -> 6).
CORRTRACK_HD TemplateSums* sums_slot(std::uint8_t* tile, int tile_pitch) {
    return reinterpret_cast<TemplateSums*>(tile + tile_pitch - static_cast<int>(sizeof(TemplateSums)));
}

// The map a block writes: template k's (output rows from row0 = k * out_h of the stacked
// output) and that template's exact statistics. One template: k = 0.
struct FusedMap {
    std::size_t row0;
    DeviceTemplateStats stats;
};

CORRTRACK_HD FusedMap fused_map(TemplateSums t, int k, int tw, int th, int out_h) {
    return {
        static_cast<std::size_t>(k) * out_h,
        {static_cast<std::int64_t>(tw) * th, static_cast<std::int64_t>(t.sum), static_cast<std::int64_t>(t.sum_sq)}};
}

// Warp `warp`'s outputs of the block at (x0, y0) of map `map`: accumulator acc[i][c] is the
// numerator of output (x0 + c_fragment_column(lane, c), y0 + warp * R + i) (mma_accumulate);
// each output inside the map (out_w x out_h) gets store_ncc(map, x, y, SI, SII, SIT), which
// combines them as every kernel does.
// SI, SII = entry (r, x + tw) - entry (r, x). c = 2h and 2h + 1 are the outputs x, x + 1 (x
// even): their left entries are one 16-byte load, their right ones too when tw is even (the 32
// lanes then read 64 consecutive entries per load: 4 wavefronts for 2 outputs each).
// `first_row`: the block output row the table's row 0 holds (a table of half the rows serves
// each half of the block in turn: cuda_mma_fused_h2).
template <class Cfg, class Ops>
CORRTRACK_HD void fused_epilogue(const Ops& ops, const BoxLayout& L, const uint2* sums, int warp, int lane, int x0,
                                 int y0, int out_w, int out_h, const FusedMap& map, const int (&acc)[Cfg::R][4],
                                 int first_row = 0) {
#pragma unroll
    for (int i = 0; i < Cfg::R; ++i) {
        const int r = warp * Cfg::R + i;
        if (y0 + r >= out_h) continue;
        const uint2* row = sums + (r - first_row) * L.pitch;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int x = c_fragment_column(lane, 2 * h);
            if (x0 + x >= out_w) continue;
            const uint4 left = ops.sums_load_pair(row + x);
            uint4 right;
            if ((L.tw & 1) == 0) {
                right = ops.sums_load_pair(row + x + L.tw);
            } else {
                const uint2 a = ops.sums_load(row + x + L.tw), b = ops.sums_load(row + x + L.tw + 1);
                right = make_uint4(a.x, a.y, b.x, b.y);
            }
            ops.store_ncc(map, x0 + x, y0 + r, right.x - left.x, right.y - left.y,
                          static_cast<std::uint32_t>(acc[i][2 * h]));
            if (x0 + x + 1 < out_w)
                ops.store_ncc(map, x0 + x + 1, y0 + r, right.z - left.z, right.w - left.w,
                              static_cast<std::uint32_t>(acc[i][2 * h + 1]));
        }
    }
}

}  // namespace mma
}  // namespace corrtrack
