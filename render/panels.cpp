#include "render/panels.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "corrtrack/correlator.h"
#include "imgui_stdlib.h"

namespace corrtrack {
namespace {

const ImVec4 kErrorColor{1.0f, 0.42f, 0.42f, 1.0f};
const ImVec4 kOkColor{0.45f, 0.9f, 0.5f, 1.0f};
const ImVec4 kDimColor{0.62f, 0.62f, 0.66f, 1.0f};

ImTextureID texture_id(unsigned t) { return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(t)); }

// Label on the left, widget filling the rest of the line: reads better in a narrow column
// than ImGui's default of labels on the right.
void row_label(const char* label, float label_w) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(-1);
}

void input_panel(GuiModel& m, GuiActions& a) {
    if (!ImGui::CollapsingHeader("Input", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const float open_w = ImGui::CalcTextSize("Open").x + ImGui::GetStyle().FramePadding.x * 2;
    ImGui::SetNextItemWidth(-open_w - ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::InputTextWithHint("##path", "file, image pattern, folder or URL", &m.path_edit,
                                 ImGuiInputTextFlags_EnterReturnsTrue))
        a.open_path = true;
    ImGui::SameLine();
    if (ImGui::Button("Open")) a.open_path = true;

    const char* none = "no camera found";
    const float rescan_w = ImGui::CalcTextSize("Rescan").x + ImGui::GetStyle().FramePadding.x * 2;
    ImGui::SetNextItemWidth(-open_w - rescan_w - 2 * ImGui::GetStyle().ItemSpacing.x);
    const bool any = !m.cameras.empty();
    m.camera_choice = std::clamp(m.camera_choice, 0, std::max(0, static_cast<int>(m.cameras.size()) - 1));
    if (ImGui::BeginCombo("##camera", any ? m.cameras[m.camera_choice].c_str() : none)) {
        for (int i = 0; i < static_cast<int>(m.cameras.size()); ++i)
            if (ImGui::Selectable(m.cameras[i].c_str(), i == m.camera_choice) && i != m.camera_choice) {
                m.camera_choice = i;
                a.camera_chosen = true;
            }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(!any);
    if (ImGui::Button("Open##camera")) a.open_camera = true;
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Rescan")) a.rescan_cameras = true;
    if (any) {
        // The chosen camera's modes: one entry per format and size, at its highest rate.
        m.camera_mode_choice = std::clamp(m.camera_mode_choice, 0, static_cast<int>(m.camera_modes.size()));
        const int k = m.camera_mode_choice;
        const std::string current =
            k == 0 ? std::string("default mode") : describe_mode(m.camera_modes[static_cast<std::size_t>(k - 1)]);
        row_label("Mode", ImGui::CalcTextSize("Mode").x + ImGui::GetStyle().ItemSpacing.x);
        if (ImGui::BeginCombo("##camera_mode", current.c_str())) {
            if (ImGui::Selectable("default mode", m.camera_mode_choice == 0)) m.camera_mode_choice = 0;
            for (int i = 0; i < static_cast<int>(m.camera_modes.size()); ++i) {
                CameraMode top = m.camera_modes[static_cast<std::size_t>(i)];
                if (top.fps.size() > 1) top.fps.resize(1);
                ImGui::PushID(i);
                if (ImGui::Selectable(describe_mode(top).c_str(), m.camera_mode_choice == i + 1))
                    m.camera_mode_choice = i + 1;
                ImGui::PopID();
            }
            ImGui::EndCombo();
        }
        if (!m.camera_modes_error.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, kDimColor);
            ImGui::TextWrapped("modes: %s", m.camera_modes_error.c_str());
            ImGui::PopStyleColor();
        }
    }

    if (!m.description.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kDimColor);
        ImGui::TextWrapped("%s", m.description.c_str());
        ImGui::PopStyleColor();
    }
    if (!m.input_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
        ImGui::TextWrapped("%s", m.input_error.c_str());
        ImGui::PopStyleColor();
    }
}

void playback_panel(GuiModel& m, GuiActions& a) {
    if (!ImGui::CollapsingHeader("Playback", ImGuiTreeNodeFlags_DefaultOpen)) return;
    const float w = (ImGui::GetContentRegionAvail().x - 3 * ImGui::GetStyle().ItemSpacing.x) / 4;
    if (ImGui::Button(m.paused || m.ended ? "Play" : "Pause", {w, 0})) a.toggle_pause = true;
    ImGui::SameLine();
    ImGui::BeginDisabled(m.live);
    if (ImGui::Button("< Back", {w, 0})) a.step_back = true;
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Step >", {w, 0})) a.step = true;
    ImGui::SameLine();
    if (ImGui::Button("Reset", {w, 0})) a.reset = true;

    if (m.frame_count > 0 && !m.live) {
        // While the slider is held it shows where it will seek; seeking re-decodes from the
        // start, so it happens on release, not while dragging.
        int frame = static_cast<int>(m.seek_edit >= 0 ? m.seek_edit : std::max(0L, m.frame_index));
        ImGui::SetNextItemWidth(-1);
        char fmt[48];
        std::snprintf(fmt, sizeof fmt, "frame %%d / %ld", m.frame_count);
        ImGui::SliderInt("##seek", &frame, 0, static_cast<int>(m.frame_count - 1), fmt, ImGuiSliderFlags_AlwaysClamp);
        m.seek_edit = ImGui::IsItemActive() ? frame : -1;
        if (ImGui::IsItemDeactivatedAfterEdit() && frame != m.frame_index) a.seek = frame;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("seek: re-opens the input and decodes up to the frame");
    } else {
        ImGui::Text("frame %ld%s", m.frame_index, m.live ? "  (live: no seeking)" : "");
    }

    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Speed");
    ImGui::SameLine();
    ImGui::BeginDisabled(m.max_speed);
    if (ImGui::Button(" - ")) a.speed_factor = 0.5;
    ImGui::SameLine();
    ImGui::Text("%.3gx", m.speed);
    ImGui::SameLine();
    if (ImGui::Button(" + ")) a.speed_factor = 2.0;
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Checkbox("Max speed", &m.max_speed)) a.pacing_changed = true;
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("process frames as fast as they decode instead of at their timestamps");
    ImGui::Checkbox("Loop", &m.loop);
    ImGui::SameLine();
    if (ImGui::Checkbox("Vsync", &m.vsync)) a.vsync_changed = true;

    ImGui::TextColored(kDimColor, "Keys: space  Left Right  + -  R  Q");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "space  play / pause\n"
            "Right  next frame (pauses)\n"
            "Left   previous frame (files: re-opens and decodes up to it)\n"
            "+ -    double / halve the speed\n"
            "R  reset: re-open the input, targets back on their start boxes\n"
            "Q  quit");
}

void kernels_panel(GuiModel& m, GuiActions& a) {
    m.kernel_buttons.clear();
    if (!ImGui::CollapsingHeader("Kernels", ImGuiTreeNodeFlags_DefaultOpen)) return;
    int unavailable = 0;
    for (const KernelEntry& k : kernel_registry()) {
        if (!k.available()) {
            ++unavailable;
            continue;
        }
        if (ImGui::RadioButton(k.name, m.kernel == k.name)) a.kernel = k.name;
        const ImVec2 p0 = ImGui::GetItemRectMin(), p1 = ImGui::GetItemRectMax();
        m.kernel_buttons[k.name] = {p0.x, p0.y, p1.x - p0.x, p1.y - p0.y};
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.summary);
        if (m.kernel == k.name && m.kernel_running != k.name) {
            ImGui::SameLine();
            ImGui::TextColored(kDimColor, "runs %s", m.kernel_running.c_str());
        }
    }
    if (unavailable > 0) {
        char label[64];
        std::snprintf(label, sizeof label, "%d not available here", unavailable);
        if (ImGui::TreeNode(label)) {
            for (const KernelEntry& k : kernel_registry())
                if (!k.available()) {
                    ImGui::TextDisabled("%s", k.name);
                    if (ImGui::IsItemHovered())
                        ImGui::SetTooltip("%s%s", k.summary, k.device == Device::kCuda ? " (needs a CUDA GPU)" : "");
                }
            ImGui::TreePop();
        }
    }
}

void tracker_panel(GuiModel& m, GuiActions& a) {
    if (!ImGui::CollapsingHeader("Tracker")) return;
    TrackerOptions& o = m.tracker;
    const float lw = ImGui::GetFontSize() * 8.5f;
    auto slider = [&](const char* label, double* v, double lo, double hi, const char* fmt) {
        float f = static_cast<float>(*v);
        row_label(label, lw);
        ImGui::PushID(label);
        if (ImGui::SliderFloat("##v", &f, static_cast<float>(lo), static_cast<float>(hi), fmt,
                               ImGuiSliderFlags_AlwaysClamp))
            *v = f;
        ImGui::PopID();
    };
    slider("Search factor", &o.search_factor, 1.2, 5.0, "%.2f x box");
    slider("Motion penalty", &o.motion_penalty, 0.0, 1.0, "%.2f");
    row_label("Update", lw);
    int policy = static_cast<int>(o.update);
    if (ImGui::Combo("##update", &policy, "none\0keyframe\0blend\0")) o.update = static_cast<UpdatePolicy>(policy);
    if (o.update == UpdatePolicy::kBlend) slider("Blend rate", &o.blend_rate, 0.0, 0.5, "%.3f");
    if (o.update == UpdatePolicy::kKeyframe) {
        row_label("Keyframe every", lw);
        ImGui::SliderInt("##kf", &o.keyframe_interval, 1, 200, "%d frames", ImGuiSliderFlags_AlwaysClamp);
    }
    slider("Update above", &o.update_min_score, 0.0, 1.0, "NCC %.2f");
    slider("Lost below", &o.lost_score, 0.0, 1.0, "NCC %.2f");
    slider("Recover above", &o.recover_score, 0.0, 1.0, "NCC %.2f");
    row_label("Scales", lw);
    ImGui::SliderInt("##scales", &o.scales, 1, 7, "%d", ImGuiSliderFlags_AlwaysClamp);
    if (o.scales > 1) slider("Scale step", &o.scale_step, 1.0, 1.2, "%.3f");
    slider("Gradient", &o.gradient, 0.0, 1.0, "%.2f of each match");
    // The cues (correlation_filter.h, colour_model.h, the look-alike term); they step aside
    // beyond cue_targets.
    slider("Filter", &o.filter, 0.0, 1.0, "at most %.2f of each match");
    if (o.filter > 0) slider("Filter support", &o.filter_support, 0.0, 3.0, "%.2f x the box (0: all)");
    slider("Colour", &o.colour, 0.0, 1.0, "%.2f of each match");
    if (o.colour > 0) slider("Colour extent", &o.colour_extent, 0.0, 1.0, "box size rate %.2f");
    slider("Look-alikes", &o.distractor_weight, 0.0, 1.0, "weight %.2f");
    if (o.distractor_weight > 0) slider("Look-alike claim", &o.lookalike_claim, 0.0, 1.0, "at NCC %.2f (0: off)");
    row_label("Max template", lw);
    ImGui::SliderInt("##maxt", &o.max_template_side, 8, 128, "%d px", ImGuiSliderFlags_AlwaysClamp);
    if (ImGui::Button("Apply to current targets")) a.apply_tracker = true;
    ImGui::PushStyleColor(ImGuiCol_Text, kDimColor);
    ImGui::TextWrapped(
        "All targets share these settings (one tracking pass). Apply re-initialises the "
        "current targets at their boxes on this frame; reset and opening an input use them too.");
    ImGui::PopStyleColor();
}

void view_panel(GuiModel& m, GuiActions& a) {
    if (!ImGui::CollapsingHeader("Heatmap")) return;
    int mode = static_cast<int>(m.view.heatmap);
    ImGui::RadioButton("Over search", &mode, static_cast<int>(HeatmapMode::kOverlay));
    ImGui::SameLine();
    ImGui::RadioButton("Pane", &mode, static_cast<int>(HeatmapMode::kPane));
    ImGui::SameLine();
    ImGui::RadioButton("Off", &mode, static_cast<int>(HeatmapMode::kOff));
    m.view.heatmap = static_cast<HeatmapMode>(mode);

    const float lw = ImGui::GetFontSize() * 5.5f;
    row_label("Colormap", lw);
    if (ImGui::BeginCombo("##cmap", to_string(m.heat.colormap))) {
        for (Colormap c : kColormaps)
            if (ImGui::Selectable(to_string(c), c == m.heat.colormap)) {
                m.heat.colormap = c;
                a.heat_style_changed = true;
            }
        ImGui::EndCombo();
    }
    ImGui::BeginDisabled(m.view.heatmap != HeatmapMode::kOverlay);
    row_label("Blend", lw);
    ImGui::SliderFloat("##blend", &m.view.blend, 0.0f, 1.0f, "%.2f", ImGuiSliderFlags_AlwaysClamp);
    ImGui::EndDisabled();
    if (ImGui::Checkbox("Stretch", &m.heat.stretch)) a.heat_style_changed = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("colour the map's own min..max instead of NCC -1..1");
    ImGui::SameLine();
    ImGui::Checkbox("Search box", &m.view.show_search);
    ImGui::SameLine();
    ImGui::Checkbox("Labels", &m.view.show_labels);
}

void timings_panel(GuiModel& m) {
    if (!ImGui::CollapsingHeader("Timings", ImGuiTreeNodeFlags_DefaultOpen)) return;
    if (m.paused || m.ended)
        ImGui::Text("Tracking: paused");
    else
        ImGui::Text("Tracking: %.1f fps", m.process_fps);
    ImGui::Text("GPU: %s", m.gpu.c_str());
    ImGui::Text("Decode: %s   dropped %ld frames", m.decode_mode == "nvdec" ? "nvdec (GPU)" : "sw (CPU)", m.dropped);
    if (!m.decode_note.empty()) ImGui::TextWrapped("%s", m.decode_note.c_str());
    if (!m.frame_path.empty()) ImGui::TextWrapped("Frames to GL: %s", m.frame_path.c_str());
    // One row per stage: name and last value in a fixed column, the last 240 frames plotted
    // beside it (0 to twice the median, so spikes show without flattening the usual values).
    const StageHistory& h = m.history;
    const float label_w = ImGui::CalcTextSize("correlate 000.00 ms").x + ImGui::GetStyle().ItemSpacing.x;
    for (int s = 0; s < StageHistory::kStages; ++s) {
        ImGui::PushID(s);
        ImGui::AlignTextToFramePadding();
        ImGui::Text("%s", StageHistory::name(s));
        ImGui::SameLine(ImGui::CalcTextSize("correlate  ").x);
        ImGui::Text("%6.2f ms", h.latest(s));
        ImGui::SameLine(label_w);
        ImGui::PlotLines("##plot", h.values(s), std::min(h.count(), StageHistory::kCapacity), h.offset(), nullptr, 0.0f,
                         std::max(1.0f, 2.0f * h.median(s)),
                         {ImGui::GetContentRegionAvail().x, ImGui::GetFrameHeight()});
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s: median %.2f ms over the last %d frames", StageHistory::name(s), h.median(s),
                              h.count());
        ImGui::PopID();
    }
}

// A map scaled into a w x w box, with a cross on its integer peak (map pixels; the texture
// holds one texel per `factor` of them).
void ab_image(const HeatmapSink* heat, float w, const int peak[2], int factor, const char* caption) {
    ImGui::BeginGroup();
    if (heat && heat->texture() && heat->size().width > 0) {
        const Size s = heat->size();
        const float k = std::min(w / s.width, w / s.height);
        ImGui::Image(texture_id(heat->texture()), {s.width * k, s.height * k});
        const ImVec2 o = ImGui::GetItemRectMin();
        const ImVec2 c{o.x + (peak[0] / factor + 0.5f) * k, o.y + (peak[1] / factor + 0.5f) * k};
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddLine({c.x - 6, c.y}, {c.x + 6, c.y}, IM_COL32(255, 255, 255, 255), 1.5f);
        dl->AddLine({c.x, c.y - 6}, {c.x, c.y + 6}, IM_COL32(255, 255, 255, 255), 1.5f);
    } else {
        ImGui::Dummy({w, w * 0.5f});
    }
    ImGui::TextUnformatted(caption);
    ImGui::EndGroup();
}

// Window or full-frame scope, and the full frame's template side.
void ab_scope(AbModel& ab, GuiActions& a) {
    int scope = ab.full_frame ? 1 : 0;
    const bool window = ImGui::RadioButton("Search window", &scope, 0);
    ImGui::SameLine();
    const bool full = ImGui::RadioButton("Full frame", &scope, 1);
    if (window || full) {
        ab.full_frame = scope == 1;
        a.ab_changed = true;
    }
    if (!ab.full_frame) return;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Template");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("128x128").x + ImGui::GetFrameHeight() * 1.5f);
    const std::string current = std::to_string(ab.templ_side) + "x" + std::to_string(ab.templ_side);
    if (ImGui::BeginCombo("##template", current.c_str())) {
        for (int side : kAbTemplateSides) {
            const std::string label = std::to_string(side) + "x" + std::to_string(side);
            if (ImGui::Selectable(label.c_str(), side == ab.templ_side) && side != ab.templ_side) {
                ab.templ_side = side;
                a.ab_changed = true;
            }
        }
        ImGui::EndCombo();
    }
}

void ab_panel(GuiModel& m, GuiActions& a) {
    AbModel& ab = m.ab;
    if (ab.open_panel) {
        ImGui::SetNextItemOpen(true);
        ab.open_panel = false;
    }
    if (!ImGui::CollapsingHeader("A/B")) return;
    if (ImGui::Checkbox(ab.full_frame ? "Compare (rate-limited)" : "Compare on every frame", &ab.enabled))
        a.ab_changed = true;
    ab_scope(ab, a);
    const float spacing = ImGui::GetStyle().ItemSpacing.x;
    const float half = (ImGui::GetContentRegionAvail().x - spacing) / 2;
    const float tag_w = ImGui::CalcTextSize("A").x + spacing;
    auto pick = [&](const char* tag, std::string* name) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(tag);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(half - tag_w);
        ImGui::PushID(tag);
        if (ImGui::BeginCombo("##kernel", name->c_str())) {
            for (const KernelEntry& k : kernel_registry())
                if (k.available() && std::string(k.name) != "auto" && ImGui::Selectable(k.name, *name == k.name)) {
                    *name = k.name;
                    a.ab_changed = true;
                }
            ImGui::EndCombo();
        }
        ImGui::PopID();
    };
    const float x0 = ImGui::GetCursorPosX();
    pick("A", &ab.a);
    ImGui::SameLine(x0 + half + spacing);
    pick("B", &ab.b);
    ImGui::PushStyleColor(ImGuiCol_Text, kDimColor);
    if (!ab.enabled && !ab.full_frame)
        ImGui::TextWrapped(
            "Runs both kernels on the selected target's search window (scale 1, template from "
            "its box) and compares time, maps and peaks.");
    else if (!ab.enabled)
        ImGui::TextWrapped(
            "Runs both kernels on the whole frame, the template cut at the selected target's "
            "centre (or the frame's), and times the kernels alone over several runs (CUDA "
            "events on the GPU, wall clock on the CPU): the time ratio is the kernels' "
            "throughput ratio. cpu_ref (brute force) is refused above 2.5e8 multiply-adds.");
    else if (ab.valid)
        ImGui::TextWrapped("%s; %s", ab.problem.c_str(), ab.timing.c_str());
    ImGui::PopStyleColor();
    if (!ab.enabled) return;
    if (!ab.error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
        ImGui::TextWrapped("%s", ab.error.c_str());
        ImGui::PopStyleColor();
    }
    if (!ab.valid) return;
    char ca[64], cb[64];
    std::snprintf(ca, sizeof ca, "A  %.2f ms", ab.ms_a);
    std::snprintf(cb, sizeof cb, "B  %.2f ms", ab.ms_b);
    const float img = ab.full_frame ? half : std::min(half, ImGui::GetFontSize() * 9);
    ab_image(ab.heat_a, img, ab.peak_a, ab.view_factor, ca);
    ImGui::SameLine(x0 + half + spacing);
    ab_image(ab.heat_b, img, ab.peak_b, ab.view_factor, cb);
    ImGui::Text("Time A/B: %.2fx (median of %d %s)", ab.ratio, ab.samples, ab.full_frame ? "runs" : "frames");
    ImGui::Text("Max |A-B|: %.3g over %dx%d", ab.max_diff, ab.map_size[0], ab.map_size[1]);
    if (ab.peaks_agree)
        ImGui::TextColored(kOkColor, "Peaks agree at (%d, %d)", ab.peak_a[0], ab.peak_a[1]);
    else
        ImGui::TextColored(kErrorColor, "Peaks differ: A (%d, %d), B (%d, %d)", ab.peak_a[0], ab.peak_a[1],
                           ab.peak_b[0], ab.peak_b[1]);
}

void export_panel(GuiModel& m, GuiActions& a) {
    if (!ImGui::CollapsingHeader("Export")) return;
    const float bw = ImGui::CalcTextSize("Stop recording").x + ImGui::GetStyle().FramePadding.x * 2;
    auto line = [&](const char* id, std::string* path, const char* button, bool* act) {
        ImGui::SetNextItemWidth(-bw - ImGui::GetStyle().ItemSpacing.x);
        ImGui::InputText(id, path);
        ImGui::SameLine();
        if (ImGui::Button(button, {bw, 0})) *act = true;
    };
    // One line per output of the table that the GUI saves from its history.
    for (const OutputSpec& spec : output_table()) {
        if (!gui_exports(spec)) continue;
        std::string button = "Save ";  // "Save CSV"
        for (const char* c = spec.name; *c; ++c)
            button += static_cast<char>(std::toupper(static_cast<unsigned char>(*c)));
        bool pressed = false;
        line(("##" + std::string(spec.name)).c_str(), &m.export_paths[static_cast<std::size_t>(spec.kind)],
             button.c_str(), &pressed);
        if (pressed) a.save_output = static_cast<int>(spec.kind);
    }
    ImGui::BeginDisabled(m.recording);
    ImGui::SetNextItemWidth(-bw - ImGui::GetStyle().ItemSpacing.x);
    ImGui::InputText("##video", &m.video_path);
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button(m.recording ? "Stop recording" : "Record video", {bw, 0})) a.toggle_recording = true;
    line("##png", &m.png_path, "Screenshot", &a.save_png);
    ImGui::TextColored(kDimColor, "%ld box rows so far%s", m.history_rows,
                       m.recording ? (", recording frame " + std::to_string(m.recorded_frames)).c_str() : "");
    if (!m.export_message.empty())
        ImGui::TextColored(m.export_error ? kErrorColor : kOkColor, "%s", m.export_message.c_str());
}

}  // namespace

const char* StageHistory::name(int stage) {
    static const char* names[kStages] = {"decode", "upload", "correlate", "peak", "render"};
    return names[stage];
}

void StageHistory::push(const std::array<float, kStages>& sample) {
    for (int s = 0; s < kStages; ++s) values_[s][next_] = sample[s];
    next_ = (next_ + 1) % kCapacity;
    count_ = std::min(count_ + 1, kCapacity);
}

float StageHistory::latest(int stage) const {
    return count_ ? values_[stage][(next_ + kCapacity - 1) % kCapacity] : 0.0f;
}

float StageHistory::median(int stage) const {
    if (!count_) return 0;
    std::vector<float> v(values_[stage].begin(), values_[stage].begin() + count_);
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

void draw_panels(GuiModel& m, GuiActions& a, ImVec2 pos, ImVec2 size) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
    ImGui::Begin("corrtrack", nullptr, flags);
    input_panel(m, a);
    playback_panel(m, a);
    kernels_panel(m, a);
    timings_panel(m);
    view_panel(m, a);
    tracker_panel(m, a);
    ab_panel(m, a);
    export_panel(m, a);
    ImGui::End();
}

}  // namespace corrtrack
