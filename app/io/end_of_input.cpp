// The end-of-input policy; see end_of_input.h.
#include "app/io/end_of_input.h"

#include <algorithm>
#include <vector>

#include "app/io/av_log.h"
#include "app/io/libav_handles.h"
#include "app/io/sequence_pattern.h"

namespace corrtrack {
namespace {

// "frames 3, 17 and 18" / "frame 3" / "frames 3, 4, ... (20 listed of 57)"
std::string list_frames(const std::vector<long>& at, long total) {
    std::string s = at.size() == 1 ? "frame " : "frames ";
    for (std::size_t i = 0; i < at.size(); ++i)
        s += (i == 0                                                        ? ""
              : i + 1 == at.size() && static_cast<long>(at.size()) == total ? " and "
                                                                            : ", ") +
             std::to_string(at[i]);
    if (static_cast<long>(at.size()) < total)
        s += ", ... (" + std::to_string(total - static_cast<long>(at.size())) + " more)";
    return s;
}

EndVerdict damaged(std::string message) { return {EndReason::kDamaged, std::move(message)}; }
EndVerdict failed(std::string message) { return {EndReason::kFailed, std::move(message)}; }

}  // namespace

void InputTally::note_decode_error(const std::string& what) {
    if (decode_errors++ == 0) {
        first_decode_error_after = delivered;
        first_decode_error = what + log_detail(what);
    }
}

void InputTally::restart_decoding(long dropped_packets) {
    frames = FrameAccounting{};
    frames.lose(dropped_packets);
    decode_errors = 0;
    first_decode_error_after = -1;
    first_decode_error.clear();
}

long missing_at_end(const Demuxer& input, const InputTally& tally, bool finished) {
    const long declared = input.declared_frames();
    const long tolerance = input.declared_slack();  // a rounded duration x fps
    // Frames the demuxer skipped (a damaged block, an unreadable image) before the last one
    // read are lost frames (a hole in the timestamps), not missing at the end.
    const long read = std::max(tally.packets_read, tally.frames.next_index());
    if (!input.live() && declared > 0 && finished && read + tolerance < declared) return declared - read;
    return 0;
}

EndVerdict judge_end(const Demuxer& input, InputTally& tally) {
    const bool live = input.live();
    const std::string& name = input.name();
    if (!live) tally.frames.end_of_stream();
    const std::string last = tally.last_index >= 0 ? std::to_string(tally.last_index) : std::string();
    if (tally.delivered == 0) {
        std::string why = tally.demux_error     ? av_error_string(tally.demux_error) + tally.demux_error_detail
                          : tally.decode_errors ? tally.first_decode_error
                                                : std::string("the video stream has no frames");
        return failed("'" + name + "': no frame could be decoded: " + why);
    }
    // image2 probes ahead past a hole and then fails to open the missing file; the gap is
    // what the user needs to hear about.
    if (input.sequence_beyond_gap() > 0) {
        const std::string& pattern = input.input().url;
        SequencePattern sp;
        parse_sequence_pattern(pattern, &sp);
        return damaged("image sequence '" + pattern +
                       "' has a gap: " + sp.name(input.sequence_start() + input.frame_count()) + " is missing, so " +
                       std::to_string(input.sequence_beyond_gap()) + " image(s) after it were not read");
    }
    const long lost = tally.frames.lost();
    const std::string lost_text = lost > 0 ? std::to_string(lost) + " frame(s) missing or undecodable (" +
                                                 list_frames(tally.frames.lost_at(), lost) + ")"
                                           : std::string();
    if (tally.unreadable_images > 0)
        return damaged("image sequence '" + input.input().url + "': " + std::to_string(tally.unreadable_images) +
                       " image(s) could not be read, the first " + tally.first_unreadable +
                       (lost > 0 ? "; " + lost_text : std::string()));
    if (tally.demux_error) {
        const std::string error = av_error_string(tally.demux_error) + tally.demux_error_detail;
        if (live) return failed("'" + name + "' stopped after frame " + last + ": " + error);
        return damaged("'" + name + "' is corrupt after frame " + last + ": " + error +
                       (lost > 0 ? "; " + lost_text : std::string()));
    }
    if (live) return {};
    // The demuxer met the end inside a frame or an element: the file is cut short, whether or
    // not the container declares its length.
    if (!tally.eof_complaint.empty() && missing_at_end(input, tally, true) == 0)
        return damaged("'" + name + "' is cut short after frame " + last + ": " + tally.eof_complaint +
                       (lost > 0 ? "; " + lost_text : std::string()));
    const std::string errors = std::to_string(tally.decode_errors) + " decoding error(s), the first near frame " +
                               std::to_string(tally.first_decode_error_after) + ": " + tally.first_decode_error;
    // Missing frames matter most (a cut file's last packet also fails to decode, which is
    // not news); the decoding errors come second.
    if (missing_at_end(input, tally, true) > 0)
        return damaged("'" + name + "' ended early: " + std::to_string(tally.packets_read) + " of " +
                       std::to_string(input.declared_frames()) + " frames read, " + std::to_string(tally.delivered) +
                       " decoded (input truncated or corrupt after frame " + last + ")" +
                       (tally.eof_complaint.empty() ? std::string() : " (" + tally.eof_complaint + ")") +
                       (lost > 0 ? "; " + lost_text : std::string()) +
                       (tally.decode_errors > 0 ? "; " + errors : std::string()));
    if (lost > 0)
        return damaged("'" + name + "' is damaged: " + lost_text +
                       (tally.decode_errors > 0 ? "; " + errors : std::string()));
    if (tally.decode_errors > 0) return damaged("'" + name + "' is corrupt: " + errors);
    return {};
}

}  // namespace corrtrack
