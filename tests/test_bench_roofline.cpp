// The bench's roofline arithmetic (app/bench/roofline.h) on known cases, worked by hand: the
// bytes and multiply-adds a case must do, its floors at given peaks, the fractions of them a
// measured time reaches, and the GPU peaks from the device's numbers and the table.
// Part of test_bench; the columns in the bench's CSV and JSON are test_bench.cpp's.
#include <gtest/gtest.h>

#include <cmath>

#include "app/bench/roofline.h"

namespace corrtrack::bench {
namespace {

// H200 SXM as the datasheet has it: 4.8 TB/s, 1979 dense INT8 TOPS = 989.5 TMAC/s.
Peaks h200_datasheet() {
    Peaks p;
    p.mem_gbps = 4800;
    p.mma_tmacs = 989.5;
    return p;
}

TEST(Roofline, FullFrame1080pTemplate64) {
    const Floors f = case_floors(KernelCase({1920, 1080}, {64, 64}, Mode::kFull), h200_datasheet());
    // 1857 x 1017 = 1888569 positions; frame 1920 x 1080 = 2073600 bytes, map 4 x 1888569.
    EXPECT_DOUBLE_EQ(f.bytes, 2073600.0 + 7554276.0);
    EXPECT_DOUBLE_EQ(f.macs, 1888569.0 * 4096.0);
    EXPECT_NEAR(f.mem_us, 9627876.0 / 4.8e12 * 1e6, 1e-12);  // 2.005808 us
    EXPECT_NEAR(f.mem_us, 2.005808, 1e-6);
    EXPECT_NEAR(f.mma_us, 7735578624.0 / 989.5e12 * 1e6, 1e-12);  // 7.817664 us
    EXPECT_NEAR(f.mma_us, 7.817664, 1e-6);
    EXPECT_DOUBLE_EQ(f.floor_us(), f.mma_us);  // compute-bound at this template size
    // cuda_mma's 91 us (docs/results.md, H200): 2.2% of the memory floor, 8.6% of the MMA peak.
    EXPECT_NEAR(f.mem_pct(0.091), 100 * 2.0058075 / 91, 1e-6);
    EXPECT_NEAR(f.mma_pct(0.091), 100 * 7.8176641 / 91, 1e-6);
    EXPECT_NEAR(f.mma_pct(f.mma_us * 1e-3), 100.0, 1e-9);  // at the floor: 100%
}

TEST(Roofline, SmallTemplateIsMemoryBound) {
    const Floors f = case_floors(KernelCase({1920, 1080}, {8, 8}, Mode::kFull), h200_datasheet());
    // 1913 x 1073 = 2052649 positions: 2073600 + 8210596 bytes, 131369536 MACs.
    EXPECT_DOUBLE_EQ(f.bytes, 10284196.0);
    EXPECT_DOUBLE_EQ(f.macs, 131369536.0);
    EXPECT_NEAR(f.mem_us, 2.142541, 1e-6);
    EXPECT_NEAR(f.mma_us, 0.132763, 1e-6);
    EXPECT_DOUBLE_EQ(f.floor_us(), f.mem_us);
}

TEST(Roofline, WindowCountsTheWindowNotTheFrame) {
    // 3x the template: a 192 x 192 window, 129 x 129 positions.
    const Floors f = case_floors(KernelCase({1920, 1080}, {64, 64}, Mode::kWindow), h200_datasheet());
    EXPECT_DOUBLE_EQ(f.bytes, 192.0 * 192 + 4.0 * 129 * 129);
    EXPECT_DOUBLE_EQ(f.macs, 129.0 * 129 * 4096);
}

TEST(Roofline, UnknownPeaksLeaveTheirFloorsEmpty) {
    const KernelCase c({640, 480}, {16, 16}, Mode::kFull);
    const Floors none = case_floors(c, Peaks{});
    EXPECT_DOUBLE_EQ(none.bytes, 640.0 * 480 + 4.0 * 625 * 465);
    EXPECT_TRUE(std::isnan(none.mem_us));
    EXPECT_TRUE(std::isnan(none.mma_us));
    EXPECT_TRUE(std::isnan(none.floor_us()));
    EXPECT_TRUE(std::isnan(none.mem_pct(1.0)));
    Peaks bw_only;
    bw_only.mem_gbps = 10;
    const Floors mem = case_floors(c, bw_only);
    EXPECT_NEAR(mem.mem_us, (307200.0 + 1162500.0) / 10e9 * 1e6, 1e-9);  // 146.97 us
    EXPECT_DOUBLE_EQ(mem.floor_us(), mem.mem_us);
    EXPECT_TRUE(std::isnan(mem.mma_pct(1.0)));
    EXPECT_TRUE(std::isnan(mem.mem_pct(0.0))) << "no fraction of a time that was not measured";
}

TEST(Roofline, GpuPeaksFromTheDeviceAndTheTable) {
    EXPECT_NEAR(dram_bandwidth_gbps(2619000, 5120), 3352.32, 1e-9);  // H100 SXM5: 2619 MHz, 5120 bit
    EXPECT_EQ(int8_mma_macs_per_clock_per_sm(9, 0), 4096);
    EXPECT_EQ(int8_mma_macs_per_clock_per_sm(8, 0), 2048);
    EXPECT_EQ(int8_mma_macs_per_clock_per_sm(8, 9), 1024);
    EXPECT_EQ(int8_mma_macs_per_clock_per_sm(7, 0), 0);  // Volta: no int8 MMA

    GpuInfo g;
    g.present = true;
    g.name = "NVIDIA H200";
    g.sms = 132;
    g.major = 9;
    g.clock_mhz = 1830;
    g.mem_clock_khz = 3201000;
    g.mem_bus_bits = 6144;
    const Peaks p = gpu_peaks(g, 0, 0);
    EXPECT_NEAR(p.mma_tmacs, 132 * 1830e6 * 4096 / 1e12, 1e-9);  // 989.43: the datasheet's 1979 TOPS
    EXPECT_NEAR(p.mem_gbps, 3201e6 * 2 * 768 / 1e9, 1e-9);       // 4916.7
    EXPECT_NE(p.mma_note.find("132 SMs x 1830 MHz x 4096"), std::string::npos) << p.mma_note;

    const Peaks over = gpu_peaks(g, 4800, 989.5);
    EXPECT_DOUBLE_EQ(over.mem_gbps, 4800);
    EXPECT_DOUBLE_EQ(over.mma_tmacs, 989.5);
    EXPECT_NE(over.mem_note.find("--peak-bw"), std::string::npos);

    g.mem_clock_khz = 0;  // not reported: the datasheet table by name
    EXPECT_DOUBLE_EQ(gpu_peaks(g, 0, 0).mem_gbps, 4800);
    g.major = 7;  // no int8 MMA: unknown, and the note says how to give it
    const Peaks volta = gpu_peaks(g, 0, 0);
    EXPECT_DOUBLE_EQ(volta.mma_tmacs, 0);
    EXPECT_NE(volta.mma_note.find("--peak-macs"), std::string::npos) << volta.mma_note;

    EXPECT_DOUBLE_EQ(gpu_peaks(GpuInfo{}, 0, 0).mma_tmacs, 0);  // no GPU
    const Peaks cpu = cpu_peaks(20, 0);
    EXPECT_DOUBLE_EQ(cpu.mem_gbps, 20);
    EXPECT_DOUBLE_EQ(cpu.mma_tmacs, 0);
}

}  // namespace
}  // namespace corrtrack::bench
