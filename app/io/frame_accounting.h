// Which source frame each decoded frame is, and which frames were lost, from the timestamps
// of the packets sent to the decoder. Every video packet is one frame of the source; decoders
// hand frames out in presentation order, so when the frame with timestamp P comes out, a packet
// with a smaller timestamp still waiting will never produce one: it was lost in decoding. A
// packet the demuxer itself skipped (a damaged block) leaves a hole in the timestamps instead:
// when P lies more than half a frame beyond the previous frame's end (its timestamp plus its
// packet's duration), the frames that fit in the hole are lost too. A frame's index is the
// number of frames before it, decoded or lost.
// Timestamps that go back (concatenated streams, a restarted encoder) start a new epoch: the
// epochs are kept apart and no hole is measured across them. Frames whose timestamp matches
// no packet (timestamps missing or rewritten) are numbered in order and declare no loss where
// they are; at the end, packets that gave no frame are still counted lost.
// Thread rules: belongs to the thread that owns the FrameSource.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace corrtrack {

class FrameAccounting {
public:
    static constexpr std::int64_t kNoTimestamp = INT64_MIN;  // = AV_NOPTS_VALUE
    static constexpr std::size_t kListed = 20;               // lost indices kept for messages
    // A hole of more frames than this is taken for a timestamp jump, not for lost frames.
    static constexpr std::int64_t kMaxHole = 250;

    // A packet went to the decoder: presentation and decoding timestamps and duration, in the
    // stream's time base (kNoTimestamp / 0 when unknown).
    void packet_sent(std::int64_t pts, std::int64_t dts = kNoTimestamp, std::int64_t duration = 0);
    // A frame came out; returns its source index.
    long frame_out(std::int64_t pts);
    // The decoder is drained: packets still waiting are lost.
    void end_of_stream();
    // `n` source frames are gone before the decoder saw them (counted lost, indices advance).
    void lose(long n);

    long lost() const { return lost_; }
    const std::vector<long>& lost_at() const { return lost_at_; }  // the first kListed
    long packets() const { return packets_; }
    long next_index() const { return next_; }

private:
    using Key = std::pair<long, std::int64_t>;  // epoch, pts
    void mark_lost(long count);

    std::multimap<Key, std::int64_t> pending_;  // packets whose frame has not come out -> duration
    long epoch_ = 0;
    std::int64_t last_dts_ = kNoTimestamp;
    bool have_previous_ = false;  // the last frame out: its epoch, pts and duration
    Key previous_{0, 0};
    std::int64_t previous_duration_ = 0;
    bool unmatched_ = false;  // some frame matched no packet: timestamps cannot be trusted
    long next_ = 0;           // source index of the next frame
    long lost_ = 0;
    long packets_ = 0;
    std::vector<long> lost_at_;
};

}  // namespace corrtrack
