// The end-of-input policy of FrameSource (see frame_source.h, "End of input"): what the source
// counted while reading (frames delivered, packets read, lost and concealed frames, decoding
// and demuxer errors) and what those counts mean once the input ends: clean, damaged (with the
// message that says where) or failed.
// Thread rules: belongs to the thread that owns the FrameSource.
#pragma once

#include <string>

#include "app/io/demuxer.h"
#include "app/io/frame_accounting.h"
#include "app/io/frame_source.h"

namespace corrtrack {

// What the source has seen of its input so far.
struct InputTally {
    long delivered = 0;      // frames read() returned
    long packets_read = 0;   // video packets read (replays of NVDEC's probe not again)
    long last_index = -1;    // source index of the last frame delivered
    FrameAccounting frames;  // files and sequences: source indices, lost frames
    long concealed = 0;      // frames delivered with concealed decoding errors
    long decode_errors = 0;
    long first_decode_error_after = -1;  // frames delivered before the first decode error
    std::string first_decode_error;
    int demux_error = 0;  // the demuxer's error other than EOF, or 0
    std::string demux_error_detail;
    std::string eof_complaint;     // what the demuxer logged as it met the end ("File ended prematurely")
    long unreadable_images = 0;    // images of a sequence that image2 could not read (skipped)
    std::string first_unreadable;  // "00004.png (the file is empty)"

    void note_decode_error(const std::string& what);
    // A software decoder replaces NVDEC's probe: it meets the kept packets again (and their
    // errors); the packets the probe dropped are lost frames.
    void restart_decoding(long dropped_packets);
};

// Frames the container declares beyond the last one read (0 while not finished, for live
// sources, or within the rounding of a duration x fps count).
long missing_at_end(const Demuxer& input, const InputTally& tally, bool finished);

// The end of input judged: kClean with no message, else the reason and the message for the
// user. Closes the frame accounting (non-live sources).
struct EndVerdict {
    EndReason end = EndReason::kClean;
    std::string message;
};
EndVerdict judge_end(const Demuxer& input, InputTally& tally);

}  // namespace corrtrack
