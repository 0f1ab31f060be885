// `corrtrack track INPUT --box x,y,w,h`: runs the tracker over a video, image sequence,
// camera, pipe or URL, and writes the outputs of app/cli/output_sinks.h's table. Several inputs
// (`--input FILE --box ... --input FILE --box ...`, or `--inputs LIST`) run as streams of their
// own in one process (app/cli/track_streams.h); one input runs as it always has
// (app/cli/track_stream.h). Here: the options, the streams' targets and output paths, and the
// checks before anything runs (no output may overwrite an input or another output).
#include <cstdio>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/cli/output_paths.h"
#include "app/cli/output_sinks.h"
#include "app/cli/track_stream.h"
#include "app/cli/track_streams.h"

namespace corrtrack {
namespace {

// What the command line gave one --input group, in command-line order.
struct InputGroup {
    std::string input;
    std::vector<std::string> boxes, box_files;
};

// The groups from CLI11's parse order: every --box and --box-file belongs to the --input
// before it; those before the first --input (or with the positional INPUT) are left in
// *loose_boxes / *loose_files.
std::vector<InputGroup> input_groups(const CLI::App& cmd, const CLI::Option* input_opt, const CLI::Option* box_opt,
                                     const CLI::Option* box_file_opt, std::vector<std::string>* loose_boxes,
                                     std::vector<std::string>* loose_files) {
    std::vector<InputGroup> groups;
    std::size_t ni = 0, nb = 0, nf = 0;
    for (const CLI::Option* o : cmd.parse_order()) {
        if (o == input_opt && ni < input_opt->results().size()) {
            groups.push_back({input_opt->results()[ni++], {}, {}});
        } else if (o == box_opt && nb < box_opt->results().size()) {
            (groups.empty() ? *loose_boxes : groups.back().boxes).push_back(box_opt->results()[nb++]);
        } else if (o == box_file_opt && nf < box_file_opt->results().size()) {
            (groups.empty() ? *loose_files : groups.back().box_files).push_back(box_file_opt->results()[nf++]);
        }
    }
    return groups;
}

// A stream's targets: --box values, else its box file (the given one, or INPUT.box when there
// is no --box). False + *error (a usage error).
bool stream_targets(const std::string& input, const std::vector<std::string>& box_texts,
                    const std::vector<std::string>& box_files, StreamPlan* plan, std::string* error) {
    for (const std::string& s : box_texts) {
        BoxF b;
        if (!parse_box(s, &b, error)) return false;
        plan->boxes.push_back(b);
    }
    if (box_files.size() > 1) {
        *error = "--box-file is given " + std::to_string(box_files.size()) + " times for '" + input + "': give one";
        return false;
    }
    const std::string given = box_files.empty() ? "" : box_files[0];
    plan->box_file = !given.empty() ? given : (plan->boxes.empty() ? default_box_file(input) : "");
    if (!plan->box_file.empty() && !read_box_file(plan->box_file, &plan->boxes, error)) return false;
    if (plan->boxes.empty()) {
        *error = "no target: give --box x,y,w,h or --box-file FILE";
        return false;
    }
    return true;
}

// Fills the plans' names and per-stream output paths (several streams), or the outputs as
// given (one).
bool assign_outputs(const TrackArgs& a, std::vector<StreamPlan>* plans, std::string* error) {
    const bool several = plans->size() > 1;
    std::vector<std::string> inputs;
    for (const StreamPlan& p : *plans) inputs.push_back(p.input);
    const std::vector<std::string> names =
        several ? unique_stream_names(inputs) : std::vector<std::string>(plans->size());
    for (std::size_t i = 0; i < plans->size(); ++i) {
        StreamPlan& p = (*plans)[i];
        p.name = names[i];
        p.decode = a.decode;
        for (const OutputSpec& spec : output_table()) {
            const std::size_t k = static_cast<std::size_t>(spec.kind);
            if (!several)
                p.outputs[k] = a.outputs[k];
            else if (!stream_output_path(a.outputs[k], p.name, spec.flag, &p.outputs[k], error))
                return false;
        }
    }
    return true;
}

int usage(const std::string& why) {
    std::fprintf(stderr, "corrtrack track: %s\n", why.c_str());
    return kExitUsage;
}

int run_track(TrackArgs a, const std::vector<InputGroup>& groups, const std::vector<std::string>& loose_boxes,
              const std::vector<std::string>& loose_files, bool dry_run) {
    std::string error;
    std::vector<StreamPlan> plans;
    if (!groups.empty() || !a.inputs_list.empty()) {
        if (!a.input.empty())
            return usage("give one INPUT, or --input FILE (each followed by its --box) / --inputs LIST, not both");
        if (!loose_boxes.empty() || !loose_files.empty())
            return usage("with --input, every --box and --box-file follows the --input it belongs to");
        for (const InputGroup& g : groups) {
            StreamPlan p;
            p.input = g.input;
            if (!stream_targets(g.input, g.boxes, g.box_files, &p, &error))
                return usage(groups.size() > 1 || !a.inputs_list.empty() ? "'" + g.input + "': " + error : error);
            plans.push_back(std::move(p));
        }
        if (!a.inputs_list.empty()) {
            std::vector<InputEntry> entries;
            if (!read_inputs_list(a.inputs_list, &entries, &error)) return usage(error);
            for (InputEntry& e : entries) {
                StreamPlan p;
                p.input = e.input;
                p.boxes = std::move(e.boxes);
                plans.push_back(std::move(p));
            }
        }
    } else if (a.input.empty()) {
        return usage("no input: give INPUT, or --input FILE --box x,y,w,h (repeat for more streams), or --inputs LIST");
    } else {
        StreamPlan p;
        p.input = a.input;
        if (!stream_targets(a.input, loose_boxes, loose_files, &p, &error)) return usage(error);
        plans.push_back(std::move(p));
    }
    if (!assign_outputs(a, &plans, &error)) return usage(error);
    const bool several = plans.size() > 1;
    // No output may overwrite an input or another output: every stream's against every
    // stream's (and, with several, the summary --json).
    std::vector<NamedPath> inputs, outputs;
    for (const StreamPlan& p : plans) {
        for (const std::string& path : input_paths(p.input)) inputs.push_back({path, "the input", false});
        if (!p.box_file.empty()) inputs.push_back({p.box_file, "the box file", false});
    }
    if (!a.inputs_list.empty()) inputs.push_back({a.inputs_list, "the input list", false});
    if (several) outputs.push_back({a.output(OutputKind::kJson), "--json", false});  // the summary
    for (const StreamPlan& p : plans)
        for (const OutputSpec& spec : output_table())
            for (const std::string& path : p.files(spec.kind)) outputs.push_back({path, spec.flag, spec.pattern_ok});
    if (!check_output_paths(inputs, outputs, &error)) return usage(error);
    for (const StreamPlan& p : plans) {
        for (const OutputSpec& spec : output_table())
            if (spec.check_path && !p.output(spec.kind).empty() && !spec.check_path(p.output(spec.kind), &error))
                return usage(error);
        if (!check_camera_input(p.input, a.camera, &error)) return usage(error);
    }
    const std::string kernel = resolve_kernel_name(a.tracker.kernel);
    if (std::string why; !make_correlator(kernel, &why)) return usage(why);
    if (dry_run) return 0;
    // From here on the first Ctrl-C / SIGTERM / SIGHUP ends every stream with its outputs
    // complete.
    InterruptGuard interrupt;
    if (several) return run_streams(a, plans, kernel);
    // One input: one GPU context, made before the stream's tracker and session and destroyed
    // after them.
    const GpuContext gpu;
    StreamResult result;
    const int rc = run_stream(a, plans[0], kernel, gpu, &result);
    print_stream_summary(a, plans[0], kernel, result);
    return rc;
}

}  // namespace

void register_track_command(CLI::App& root, CommandOutcome& outcome) {
    auto args = std::make_shared<TrackArgs>();
    CLI::App* cmd = root.add_subcommand("track", "track targets through a video, image sequence, camera, pipe or URL");
    cmd->add_option("input", args->input,
                    "video file, image pattern (img/%05d.jpg), OTB folder, /dev/videoN, a FIFO, - or pipe:0 "
                    "(standard input), or a URL");
    CLI::Option* input_opt = cmd->add_option(
        "--input", args->inputs,
        "several inputs in one process: --input FILE, followed by its --box (or --box-file); repeat per input. "
        "Outputs become one file per stream: --csv out.csv gives out.<stream>.csv");
    cmd->add_option("--inputs", args->inputs_list,
                    "text file of inputs, one per line: `input x,y,w,h [x,y,w,h ...]` ('#' comments)");
    cmd->add_option("--jobs", args->jobs,
                    "streams tracked at once, one thread each (0, the default: every stream at once, as live "
                    "sources need)")
        ->check(CLI::Range(0, 4096));
    CLI::Option* box_opt = cmd->add_option("--box,-b", args->boxes,
                                           "target box x,y,w,h in pixels (0-based top-left); repeat for more targets");
    CLI::Option* box_file_opt = cmd->add_option("--box-file", args->box_files,
                                                "file with one x,y,w,h per line (default: INPUT with .box extension)")
                                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    for (const OutputSpec& spec : output_table())
        cmd->add_option(spec.flag, args->outputs[static_cast<std::size_t>(spec.kind)], spec.help);
    cmd->add_option_function<std::string>(
        "--video-quality",
        [args](const std::string& s) {
            if (!parse_video_quality(s, &args->video_quality))
                throw CLI::ValidationError("--video-quality", "must be fast, balanced or best");
        },
        "encoder speed vs file size for --video: fast (default) | balanced | best; NVENC (h264_nvenc) when a "
        "GPU has it, else libx264 (superfast / veryfast / medium)");
    cmd->add_flag("!--no-heatmap", args->heatmap, "leave the heatmap inset and search window out of the video");
    cmd->add_option("--frames", args->max_frames, "stop after this many frames (-1: all)")->check(frame_count());
    cmd->add_option("--read-timeout", args->read_timeout,
                    "seconds a camera, stream, pipe or FIFO may stall before giving up")
        ->check(finite_range(0.1, kMaxReadTimeoutS))
        ->capture_default_str();
    cmd->add_flag("--realtime", args->realtime,
                  "pace files to their timestamps; frames that fall behind are dropped and counted");
    cmd->add_flag("--allow-damaged", args->allow_damaged,
                  "exit 0 when the input is damaged (frames that do not decode, a truncated file) and the other "
                  "frames were tracked; the summary still counts what was lost");
    cmd->add_option_function<std::string>(
        "--decode",
        [args](const std::string& s) {
            if (!parse_decode_mode(s, &args->decode))
                throw CLI::ValidationError("--decode", "must be sw, nvdec or auto");
        },
        "sw | nvdec | auto (default auto: NVDEC when a GPU tracker runs and the codec allows; with several "
        "inputs, NVDEC while it has room (--nvdec-streams, --nvdec-rate) and the CPU for the rest)");
    add_ranged_option(*cmd, "--nvdec-streams", args->nvdec_streams,
                      "with several inputs and --decode auto: at most this many full-speed streams decode on NVDEC "
                      "at once, the others on the CPU (NVDEC saturates at about 8 sessions on an H200)",
                      1, kMaxNvdecStreams);
    add_ranged_option(*cmd, "--nvdec-rate", args->nvdec_rate,
                      "with several inputs and --decode auto: paced streams (--realtime, URLs) decode on NVDEC while "
                      "their width x height x fps add up to at most this many Mpixel/s, the others on the CPU "
                      "(default 2400: 80% of an H200's NVDEC; about 350 per NVDEC engine)",
                      1.0, kMaxNvdecMpixPerS);
    cmd->add_flag("--quiet,-q", args->quiet, "no progress or summary");
    add_camera_options(*cmd, args->camera);
    add_tracker_options(*cmd, args->tracker);
    add_no_cache_option(*cmd);
    cmd->footer(
        "Exit status: 0 done; 1 the input cannot be read, a target cannot be initialised or an output cannot be "
        "written; 2 bad options or output paths (an output that would overwrite an input or another output); 3 the "
        "input is damaged (frames lost or truncated) and the other frames were tracked (0 with --allow-damaged); "
        "130/143/129 stopped by SIGINT/SIGTERM/SIGHUP after writing the outputs. With several inputs the worst "
        "stream decides: 1 if any failed, else 128+N after a signal, else 3 if any was damaged, else 0.");
    cmd->callback([args, &outcome, cmd, input_opt, box_opt, box_file_opt] {
        std::vector<std::string> loose_boxes, loose_files;
        const auto groups = input_groups(*cmd, input_opt, box_opt, box_file_opt, &loose_boxes, &loose_files);
        outcome.exit_code = run_track(*args, groups, loose_boxes, loose_files, outcome.dry_run);
    });
}

}  // namespace corrtrack
