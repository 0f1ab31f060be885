// The parts the GUI drives, without a display: one MultiTracker over all targets (removing one
// leaves the others as they were) and the recording through the CLI's video queue. Part of
// test_gui; built only with the GUI.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "app/io/frame_source.h"
#include "app/track/tracker.h"
#include "corrtrack/correlator.h"
#include "render/gui_export.h"
#include "tests/support/read_source.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

// The GUI tracks all targets with one MultiTracker and drops or re-selects one with
// remove_target: the targets left must track exactly as if the removed one had never been there.
TEST(GuiTracker, RemoveTargetLeavesTheOthersAsTheyWere) {
    SyntheticClipSpec spec;
    spec.width = 240;
    spec.height = 180;
    spec.frames = 12;
    const SyntheticScene scene(spec);
    std::vector<std::uint8_t> luma;
    auto frame = [&](int i) {
        scene.render(i, luma);
        return ImageView{luma.data(), spec.width, spec.height, static_cast<std::size_t>(spec.width),
                         MemorySpace::kHost};
    };
    const TruthBox t = scene.box(0);
    const BoxF moving{t.x, t.y, t.w, t.h}, still{150, 110, 36, 30}, other{20, 120, 30, 30};
    for (const char* kernel : {"cpu_fast", "auto"}) {
        TrackerOptions o;
        o.kernel = kernel;
        MultiTracker both(o), alone(o);
        std::string error;
        ASSERT_EQ(both.add_target(frame(0), other, &error), 0) << error;
        ASSERT_EQ(both.add_target(frame(0), moving, &error), 1) << error;
        ASSERT_EQ(both.add_target(frame(0), still, &error), 2) << error;
        ASSERT_EQ(alone.add_target(frame(0), moving, &error), 0) << error;
        ASSERT_EQ(alone.add_target(frame(0), still, &error), 1) << error;
        for (int i = 1; i < spec.frames; ++i) {
            const auto& rb = both.update(frame(i));
            ASSERT_EQ(rb.size(), static_cast<std::size_t>(both.size()));
            const std::vector<TrackResult> r_both(rb.begin(), rb.end());
            const auto& ra = alone.update(frame(i));
            const int first = both.size() - 2;  // the moving target's index in `both`
            // Bit for bit on the CPU; a GPU kernel may lay the atlas out differently around
            // the extra target, so allow float noise there.
            const double tol = both.on_gpu() ? 1e-3 : 0.0;
            for (int k = 0; k < 2; ++k) {
                EXPECT_NEAR(r_both[first + k].box.x, ra[k].box.x, tol) << kernel << " frame " << i << " target " << k;
                EXPECT_NEAR(r_both[first + k].box.y, ra[k].box.y, tol) << kernel << " frame " << i << " target " << k;
                EXPECT_NEAR(r_both[first + k].score, ra[k].score, tol) << kernel << " frame " << i << " target " << k;
            }
            if (i == 4) {
                both.remove_target(0);
                EXPECT_EQ(both.size(), 2);
            }
        }
        // Ids stay: the removed one is gone, the others keep theirs.
        EXPECT_FALSE(both.remove_target(0));
        EXPECT_EQ(both.ids(), (std::vector<TargetId>{1, 2}));
        // set_options keeps the kernel (and stream): only set_kernel swaps it.
        const Stream stream = both.stream();
        TrackerOptions changed = o;
        changed.kernel = "cpu_ref";
        changed.search_factor = 3.0;
        both.set_options(changed);
        EXPECT_EQ(both.kernel_name(), kernel);
        EXPECT_EQ(both.options().kernel, kernel);
        EXPECT_EQ(both.options().search_factor, 3.0);
        EXPECT_EQ(both.stream(), stream);
    }
}

// The GUI's recording goes through the CLI's video queue and annotate_frame(): every frame
// recorded comes back from the file, with the box drawn in the target's colour. Host RGB
// frames only (no GL needed: the frame sink is read back only for frames without host RGB).
TEST(GuiExport, RecordingWritesEveryFrameThroughTheVideoQueue) {
    TempDir dir("gui_export");
    GuiModel model;
    model.video_path = dir.path() + "/rec.mp4";
    EventLog log;
    GuiExport out(model, log);
    const Size size{160, 120};
    out.toggle_recording(true, 10.0, size);
    ASSERT_TRUE(out.recording()) << model.export_message;
    Frame f;
    f.width = size.width;
    f.height = size.height;
    f.rgb.assign(static_cast<std::size_t>(size.width) * 3 * size.height, 100);
    std::unique_ptr<FrameSink> sink = make_cpu_frame_sink();
    AnnotatedTarget t;
    t.box = {40, 30, 48, 40};
    t.color = {60, 255, 90};
    const int kFrames = 12;
    for (int i = 0; i < kFrames; ++i) {
        f.index = i;
        out.record(f, *sink, {t});
    }
    EXPECT_EQ(model.recorded_frames, kFrames);
    out.toggle_recording(true, 10.0, size);
    EXPECT_FALSE(out.recording());
    EXPECT_FALSE(model.export_error) << model.export_message;
    EXPECT_NE(model.export_message.find("(12 frames)"), std::string::npos) << model.export_message;

    std::string error;
    auto video = open_source(model.video_path, &error);
    ASSERT_TRUE(video) << error;
    Frame g;
    long n = 0;
    int green = 0;
    while (video->read(g) == ReadStatus::kFrame) {
        ++n;
        // The box's top edge (row 30, 2 px thick outwards) is green on the grey frame.
        const std::uint8_t* p = g.rgb.data() + (30 * g.width + 64) * 3;
        green = std::max(green, p[1] - p[0]);
    }
    EXPECT_EQ(n, kFrames);
    EXPECT_GT(green, 60) << "the box is not drawn";
}

// The Export panel saves the history with the table's own sinks (app/cli/output_sinks.h): a
// line for every output that is one file of rows, the same rows `corrtrack track` writes.
TEST(GuiExport, ExportPanelSavesEveryRowOutputOfTheTable) {
    TempDir dir("gui_export_rows");
    GuiModel model;
    EventLog log;
    GuiExport out(model, log);
    std::vector<FrameRecord> history;
    for (long frame = 0; frame < 3; ++frame)
        for (int target = 0; target < 2; ++target) {
            FrameRecord rec;
            rec.frame = frame;
            rec.target = target;
            rec.result.box = {10.0f + frame, 20.0f + target, 30, 40};
            history.push_back(rec);
        }
    int saved = 0;
    for (const OutputSpec& spec : output_table()) {
        if (!gui_exports(spec)) continue;
        SCOPED_TRACE(spec.name);
        const std::size_t k = static_cast<std::size_t>(spec.kind);
        EXPECT_EQ(model.export_paths[k], std::string("corrtrack_boxes.") + spec.extension) << "the default name";
        model.export_paths[k] = dir.path() + "/boxes." + spec.extension;
        out.save(spec, history, "in.mp4", "cpu_fast");
        EXPECT_FALSE(model.export_error) << model.export_message;
        EXPECT_EQ(model.export_message, "wrote " + model.export_paths[k]);
        ++saved;
    }
    EXPECT_EQ(saved, 2) << "csv and json";
    std::ifstream csv(dir.path() + "/boxes.csv");
    std::vector<std::string> lines;
    for (std::string line; std::getline(csv, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 7u);
    EXPECT_EQ(lines[0], CsvWriter::header());
    EXPECT_EQ(lines[6].rfind("2,0.000000,1,12.000,21.000,30.000,40.000,", 0), 0u) << lines[6];
    const nlohmann::json doc = nlohmann::json::parse(test::read_text(dir.path() + "/boxes.json"));
    EXPECT_EQ(doc["input"], "in.mp4");
    EXPECT_EQ(doc["kernel"], "cpu_fast");
    ASSERT_EQ(doc["results"].size(), 6u);
    EXPECT_EQ(doc["results"][5], to_json(history[5]));
}

}  // namespace
}  // namespace corrtrack
