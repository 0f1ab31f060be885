// Decode modes: names, defaults, and --decode nvdec without a GPU (the CPU decodes, and says
// why); on a GPU, NVDEC frames on the device equal the software decode, with host luma and RGB
// when asked, held frames, limited range, and the fallback for a profile NVDEC refuses.
// Part of test_io (test_io_*.cpp).
#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
}

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "app/io/frame_convert.h"
#include "app/io/frame_source.h"
#include "app/io/libav_handles.h"
#include "corrtrack/correlator.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

TEST(DecodeMode, NamesRoundTripAndBadNamesAreRefused) {
    EXPECT_STREQ(to_string(DecodeMode::kSoftware), "sw");
    EXPECT_STREQ(to_string(DecodeMode::kNvdec), "nvdec");
    EXPECT_STREQ(to_string(DecodeMode::kAuto), "auto");
    for (DecodeMode m : {DecodeMode::kSoftware, DecodeMode::kNvdec, DecodeMode::kAuto}) {
        DecodeMode back = m == DecodeMode::kAuto ? DecodeMode::kSoftware : DecodeMode::kAuto;
        EXPECT_TRUE(parse_decode_mode(to_string(m), &back)) << to_string(m);
        EXPECT_EQ(back, m);
    }
    for (const char* bad : {"", "NVDEC", "Sw", "gpu", "cuda", "software", "nvdec ", "auto\n"}) {
        DecodeMode kept = DecodeMode::kAuto;
        EXPECT_FALSE(parse_decode_mode(bad, &kept)) << "'" << bad << "'";
        EXPECT_EQ(kept, DecodeMode::kAuto) << "a refused name leaves the value alone";
    }
    const SourceOptions defaults;
    EXPECT_EQ(defaults.decode, DecodeMode::kSoftware);
    EXPECT_EQ(defaults.cuda_stream, nullptr);
    EXPECT_TRUE(defaults.want_host_luma);
    EXPECT_EQ(defaults.held_frames, 6);
}

// Everything a consumer sees of a decode, with the luma plane on the host whichever way it
// was decoded (device planes are downloaded with cudaMemcpy2D).
struct Decoded {
    std::vector<std::vector<std::uint8_t>> luma, rgb;
    std::vector<double> pts;
    std::vector<long> index;
    long device_frames = 0, host_luma_frames = 0;
    ReadStatus status = ReadStatus::kError;
    std::string error, mode, note, description;
};

std::vector<std::uint8_t> download_device_luma(const Frame& f, cudaStream_t stream) {
    std::vector<std::uint8_t> host(static_cast<std::size_t>(f.width) * f.height);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(
        cudaMemcpy2D(host.data(), f.width, f.device.data, f.device.pitch, f.width, f.height, cudaMemcpyDeviceToHost),
        cudaSuccess);
    return host;
}

// Frames are dropped as they are read (an NVDEC frame holds a decoder surface), unless
// `hold` asks to keep that many of them alive at once, as the frame ring does.
Decoded decode(const std::string& path, DecodeMode mode, bool want_rgb = true, bool want_host_luma = true,
               cudaStream_t stream = nullptr, int hold = 0) {
    Decoded d;
    std::string error;
    auto source = FrameSource::open(decode_options(path, mode, want_rgb, want_host_luma, stream), &error);
    if (!source) {
        d.error = error;
        return d;
    }
    d.mode = source->decode_mode();
    d.note = source->decode_note();
    d.description = source->description();
    std::deque<Frame> held;
    Frame f;
    while ((d.status = source->read(f)) == ReadStatus::kFrame) {
        d.pts.push_back(f.pts);
        d.index.push_back(f.index);
        d.rgb.emplace_back(f.rgb.begin(), f.rgb.end());
        if (f.on_device()) {
            ++d.device_frames;
            d.luma.push_back(download_device_luma(f, stream));
            if (f.has_host_luma()) {
                ++d.host_luma_frames;
                EXPECT_TRUE(std::equal(f.luma.begin(), f.luma.end(), d.luma.back().begin()))
                    << "host luma differs from the device plane at frame " << f.index;
            }
        } else {
            if (f.has_host_luma()) ++d.host_luma_frames;
            d.luma.emplace_back(f.luma.begin(), f.luma.end());
        }
        if (hold > 0) {
            held.push_back(f);
            if (static_cast<int>(held.size()) > hold) held.pop_front();
        }
    }
    d.error = source->error();
    return d;
}

void expect_identical(const Decoded& a, const Decoded& b) {
    EXPECT_EQ(a.status, b.status) << a.error << " / " << b.error;
    EXPECT_EQ(a.error, b.error);
    ASSERT_EQ(a.luma.size(), b.luma.size());
    EXPECT_EQ(a.pts, b.pts);
    EXPECT_EQ(a.index, b.index);
    for (std::size_t i = 0; i < a.luma.size(); ++i) {
        EXPECT_EQ(a.luma[i], b.luma[i]) << "luma of frame " << i;
        EXPECT_EQ(a.rgb[i], b.rgb[i]) << "rgb of frame " << i;
    }
}

struct Diff {
    double mean = 0;
    int max = 0;
};
Diff luma_diff(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    Diff d;
    if (a.size() != b.size() || a.empty()) return {1e9, 255};
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const int e = std::abs(int(a[i]) - int(b[i]));
        sum += e;
        d.max = std::max(d.max, e);
    }
    d.mean = sum / static_cast<double>(a.size());
    return d;
}

// An 8-bit 4:2:0 H.264 clip (libx264, B-frames), the kind NVDEC decodes. Lossless x264 (the
// VideoWriter's crf 0) is High 4:4:4, which NVDEC does not take. Full range stores the scene's
// grey levels as they are, so the software GRAY8 and the raw Y plane hold the same values;
// limited range stores 16 + 219/255 of them.
bool write_h264_420(const std::string& path, const SyntheticClipSpec& spec, bool full_range, std::string* error) {
    const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
    if (!codec) {
        *error = "this FFmpeg has no libx264 encoder";
        return false;
    }
    AVFormatContext* raw_fc = nullptr;
    if (avformat_alloc_output_context2(&raw_fc, nullptr, nullptr, path.c_str()) < 0) {
        *error = "no muxer for " + path;
        return false;
    }
    std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> fc(raw_fc, [](AVFormatContext* c) {
        if (c->pb) avio_closep(&c->pb);
        avformat_free_context(c);
    });
    std::unique_ptr<AVCodecContext, CodecFreer> cc(avcodec_alloc_context3(codec));
    AVStream* st = avformat_new_stream(fc.get(), nullptr);
    const int fps = static_cast<int>(spec.fps);
    cc->width = spec.width;
    cc->height = spec.height;
    cc->time_base = {1, fps};
    cc->framerate = {fps, 1};
    cc->pix_fmt = AV_PIX_FMT_YUV420P;
    cc->color_range = full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    cc->gop_size = 12;
    cc->max_b_frames = 2;
    cc->thread_count = 1;
    av_opt_set(cc->priv_data, "preset", "veryfast", 0);
    av_opt_set(cc->priv_data, "crf", "12", 0);
    if (fc->oformat->flags & AVFMT_GLOBALHEADER) cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (avcodec_open2(cc.get(), codec, nullptr) < 0 || avcodec_parameters_from_context(st->codecpar, cc.get()) < 0) {
        *error = "cannot start libx264";
        return false;
    }
    st->time_base = cc->time_base;
    if (avio_open(&fc->pb, path.c_str(), AVIO_FLAG_WRITE) < 0 || avformat_write_header(fc.get(), nullptr) < 0) {
        *error = "cannot write " + path;
        return false;
    }
    std::unique_ptr<AVFrame, FrameFreer> frame(av_frame_alloc());
    std::unique_ptr<AVPacket, PacketFreer> pkt(av_packet_alloc());
    frame->format = cc->pix_fmt;
    frame->width = spec.width;
    frame->height = spec.height;
    frame->color_range = cc->color_range;
    if (av_frame_get_buffer(frame.get(), 0) < 0) return false;
    SyntheticScene scene(spec);
    std::vector<std::uint8_t> luma;
    auto drain = [&]() {
        while (avcodec_receive_packet(cc.get(), pkt.get()) == 0) {
            pkt->duration = 1;  // else mp4's edit list ends before the last frame
            av_packet_rescale_ts(pkt.get(), cc->time_base, st->time_base);
            pkt->stream_index = st->index;
            if (av_interleaved_write_frame(fc.get(), pkt.get()) < 0) return false;
        }
        return true;
    };
    for (int i = 0; i < spec.frames; ++i) {
        if (av_frame_make_writable(frame.get()) < 0) return false;
        scene.render(i, luma);
        for (int y = 0; y < spec.height; ++y)
            for (int x = 0; x < spec.width; ++x) {
                const int v = luma[static_cast<std::size_t>(y) * spec.width + x];
                frame->data[0][y * frame->linesize[0] + x] = full_range ? v : limited_y(v);
            }
        for (int p = 1; p < 3; ++p)
            for (int y = 0; y < spec.height / 2; ++y)
                std::memset(frame->data[p] + y * frame->linesize[p], 128, spec.width / 2);
        frame->pts = i;
        if (avcodec_send_frame(cc.get(), frame.get()) < 0 || !drain()) {
            *error = "encoding failed at frame " + std::to_string(i);
            return false;
        }
    }
    if (avcodec_send_frame(cc.get(), nullptr) < 0 || !drain() || av_write_trailer(fc.get()) < 0) {
        *error = "cannot finish " + path;
        return false;
    }
    return true;
}

// The Y planes of every frame as libavcodec decodes them, with no conversion: what the
// tracker's luma must be for YUV input.
std::vector<std::vector<std::uint8_t>> raw_y_planes(const std::string& path) {
    std::vector<std::vector<std::uint8_t>> planes;
    AVFormatContext* raw = nullptr;
    if (avformat_open_input(&raw, path.c_str(), nullptr, nullptr) < 0) return planes;
    std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> fc(
        raw, [](AVFormatContext* c) { avformat_close_input(&c); });
    if (avformat_find_stream_info(fc.get(), nullptr) < 0) return planes;
    const int si = av_find_best_stream(fc.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (si < 0) return planes;
    const AVCodec* codec = avcodec_find_decoder(fc->streams[si]->codecpar->codec_id);
    std::unique_ptr<AVCodecContext, CodecFreer> cc(avcodec_alloc_context3(codec));
    if (!codec || !cc || avcodec_parameters_to_context(cc.get(), fc->streams[si]->codecpar) < 0 ||
        avcodec_open2(cc.get(), codec, nullptr) < 0)
        return planes;
    std::unique_ptr<AVPacket, PacketFreer> pkt(av_packet_alloc());
    std::unique_ptr<AVFrame, FrameFreer> frame(av_frame_alloc());
    auto drain = [&] {
        while (avcodec_receive_frame(cc.get(), frame.get()) >= 0) {
            std::vector<std::uint8_t> y(static_cast<std::size_t>(frame->width) * frame->height);
            for (int r = 0; r < frame->height; ++r)
                std::memcpy(&y[static_cast<std::size_t>(r) * frame->width],
                            frame->data[0] + static_cast<std::ptrdiff_t>(r) * frame->linesize[0], frame->width);
            planes.push_back(std::move(y));
        }
    };
    while (av_read_frame(fc.get(), pkt.get()) >= 0) {
        if (pkt->stream_index == si && avcodec_send_packet(cc.get(), pkt.get()) >= 0) drain();
        av_packet_unref(pkt.get());
    }
    avcodec_send_packet(cc.get(), nullptr);
    drain();
    return planes;
}

// Software decode hands the tracker YUV's Y plane as decoded, limited range or full: no
// range expansion, the same bytes NVDEC leaves on the device.
TEST(Nvdec, SoftwareLumaIsTheRawYPlane) {
    TempDir dir("io");
    std::string error;
    for (bool full : {false, true}) {
        SCOPED_TRACE(full ? "full range" : "limited range");
        const std::string path = dir.file(full ? "full.mp4" : "limited.mp4");
        ASSERT_TRUE(write_h264_420(path, small_spec(12), full, &error)) << error;
        const auto raw = raw_y_planes(path);
        const Decoded sw = decode(path, DecodeMode::kSoftware, /*want_rgb=*/true);
        ASSERT_EQ(raw.size(), 12u);
        ASSERT_EQ(sw.luma.size(), raw.size()) << sw.error;
        for (std::size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(luma_diff(sw.luma[i], raw[i]).max, 0) << "frame " << i;
        // Limited range stays in 16..235 (the scene's 0..255 stored as video levels).
        const auto [lo, hi] = std::minmax_element(sw.luma[5].begin(), sw.luma[5].end());
        if (!full) {
            EXPECT_GE(*lo, 14);
            EXPECT_LE(*hi, 237);
        }
    }
}

// The annotated video's YUV 4:2:0 (Frame::yuv): every frame, its Y plane the tracker's luma,
// and the source's range in its tags; 4:2:0 planes are the decoder's own, 4:4:4 ones become
// 4:2:0 with the same luma.
struct YuvFrames {
    std::vector<std::vector<std::uint8_t>> yuv, luma;
    std::vector<YuvFormat> format;
    std::string mode, error;
};

YuvFrames read_yuv(const std::string& path, DecodeMode mode, bool want_host_luma, cudaStream_t stream = nullptr) {
    YuvFrames r;
    SourceOptions so = decode_options(path, mode, /*want_rgb=*/false, want_host_luma, stream);
    so.want_yuv = true;
    auto source = FrameSource::open(so, &r.error);
    if (!source) return r;
    r.mode = source->decode_mode();
    Frame f;
    while (source->read(f) == ReadStatus::kFrame) {
        EXPECT_EQ(f.yuv.size(), yuv420_bytes(f.width, f.height));
        EXPECT_TRUE(f.rgb.empty());
        r.yuv.emplace_back(f.yuv.begin(), f.yuv.end());
        r.luma.emplace_back(f.luma.begin(), f.luma.end());
        r.format.push_back(f.yuv_format);
    }
    return r;
}

TEST(FrameYuv, TheDecodersPlanesWithTheSourcesRange) {
    TempDir dir("io");
    std::string error;
    for (bool full : {false, true}) {
        SCOPED_TRACE(full ? "full range" : "limited range");
        const std::string path = dir.file(full ? "full.mp4" : "limited.mp4");
        ASSERT_TRUE(write_h264_420(path, small_spec(6), full, &error)) << error;
        const auto raw = raw_y_planes(path);
        const YuvFrames got = read_yuv(path, DecodeMode::kSoftware, true);
        ASSERT_EQ(got.yuv.size(), 6u) << got.error;
        for (std::size_t i = 0; i < got.yuv.size(); ++i) {
            EXPECT_TRUE(std::equal(raw[i].begin(), raw[i].end(), got.yuv[i].begin())) << "frame " << i;
            EXPECT_EQ(got.luma[i], raw[i]);
            EXPECT_EQ(got.format[i].full_range, full);
            EXPECT_EQ(got.format[i].matrix, YuvMatrix::kBt601);  // untagged: BT.601, as swscale assumes
        }
    }
    // Lossless x264 is 4:4:4 full range: converted to 4:2:0, the luma unchanged.
    const WrittenClip lossless("io_yuv444", small_spec(4));
    ASSERT_EQ(lossless.truth.size(), 4u) << lossless.error;
    const YuvFrames got = read_yuv(lossless.path, DecodeMode::kSoftware, true);
    ASSERT_EQ(got.yuv.size(), 4u) << got.error;
    for (std::size_t i = 0; i < got.yuv.size(); ++i) {
        EXPECT_TRUE(std::equal(got.luma[i].begin(), got.luma[i].end(), got.yuv[i].begin())) << "frame " << i;
        EXPECT_TRUE(got.format[i].full_range);
    }
}

// Without a GPU, --decode nvdec opens, says why it decodes on the CPU, and decodes exactly
// as software does.
// A damaged stream's colour tags reach AVFrame's enums unchecked (fuzz_track met colorspace
// 214): the converter reads them as plain integers, treats an unknown matrix as unspecified
// (BT.601) and an unknown range as limited, so such a frame converts like an untagged one.
// The sanitizer build (scripts/sanitize.sh) flags any load of the enums themselves.
TEST(FrameConvert, ColourTagsOutsideTheirEnumsConvertAsUntagged) {
    auto convert = [](int colorspace, int range, Frame& out) {
        std::unique_ptr<AVFrame, FrameFreer> f(av_frame_alloc());
        f->format = AV_PIX_FMT_YUV420P;
        f->width = 32;
        f->height = 24;
        EXPECT_EQ(av_frame_get_buffer(f.get(), 0), 0);
        for (int p = 0; p < 3; ++p)
            for (int y = 0; y < (p ? 12 : 24); ++y)
                for (int x = 0; x < (p ? 16 : 32); ++x)
                    f->data[p][y * f->linesize[p] + x] = static_cast<std::uint8_t>(16 + (x * 7 + y * 5 + p * 60) % 220);
        std::memcpy(&f->colorspace, &colorspace, sizeof colorspace);  // as FFmpeg stores a stream's value
        std::memcpy(&f->color_range, &range, sizeof range);
        FrameConverter c;
        c.configure("tags", /*want_rgb=*/true, /*want_yuv=*/false, /*want_host_luma=*/true);
        EXPECT_TRUE(c.convert(f.get(), out)) << c.error();
    };
    Frame odd, plain;
    convert(214, 77, odd);
    convert(AVCOL_SPC_UNSPECIFIED, AVCOL_RANGE_UNSPECIFIED, plain);
    ASSERT_EQ(odd.width, 32);
    ASSERT_EQ(odd.luma.size(), plain.luma.size());
    ASSERT_EQ(odd.rgb.size(), plain.rgb.size());
    EXPECT_TRUE(std::equal(odd.luma.data(), odd.luma.data() + odd.luma.size(), plain.luma.data()));
    EXPECT_TRUE(std::equal(odd.rgb.data(), odd.rgb.data() + odd.rgb.size(), plain.rgb.data()));
    EXPECT_EQ(odd.luma.data()[1], 16 + 7);  // the raw Y plane
}

TEST(Nvdec, WithoutGpuDecodesOnTheCpuAndSaysWhy) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA GPU is present: the NvdecGpu tests run instead";
    TempDir dir("io");
    std::string error;
    const std::string lossless = dir.file("lossless.mkv");
    ASSERT_FALSE(write_synthetic_clip(lossless, small_spec(20), &error).empty()) << error;
    const std::string lossy = dir.file("lossy.mp4");
    ASSERT_TRUE(write_h264_420(lossy, small_spec(20), /*full_range=*/false, &error)) << error;
    const std::string full = dir.file("full.mp4");
    ASSERT_TRUE(write_h264_420(full, small_spec(20), /*full_range=*/true, &error)) << error;
    for (const std::string& path : {lossless, lossy, full}) {
        SCOPED_TRACE(path);
        const Decoded sw = decode(path, DecodeMode::kSoftware);
        ASSERT_EQ(sw.luma.size(), 20u) << sw.error;
        EXPECT_EQ(sw.status, ReadStatus::kEnd) << sw.error;
        EXPECT_EQ(sw.mode, "sw");
        EXPECT_EQ(sw.note, "");
        // The software decode gives the Y values as stored: the scene, limited to 16..235 in
        // the limited-range clip.
        SyntheticScene scene(small_spec(20));
        std::vector<std::uint8_t> truth;
        scene.render(7, truth);
        if (path == lossy)
            for (std::uint8_t& v : truth) v = limited_y(v);
        EXPECT_LT(mean_abs_diff(sw.luma[7].data(), 320, truth.data(), 320, 320, 240), 3.0);

        const Decoded nv = decode(path, DecodeMode::kNvdec, true, /*want_host_luma=*/false);
        std::printf("--decode nvdec note: %s\n", nv.note.c_str());
        EXPECT_EQ(nv.mode, "sw");
        EXPECT_NE(nv.note.find("NVDEC"), std::string::npos) << nv.note;
        EXPECT_NE(nv.note.find("CPU"), std::string::npos) << nv.note;
        EXPECT_EQ(nv.note.find('\n'), std::string::npos) << "one line: " << nv.note;
        EXPECT_EQ(nv.description, sw.description);
        EXPECT_EQ(nv.device_frames, 0);
        EXPECT_EQ(nv.host_luma_frames, 20) << "software frames always carry host luma";
        expect_identical(nv, sw);

        const Decoded au = decode(path, DecodeMode::kAuto);
        EXPECT_EQ(au.mode, "sw");
        EXPECT_EQ(au.note, "") << "auto without a GPU is no news";
        expect_identical(au, sw);
    }
}

TEST(Nvdec, ImageSequencesDecodeOnTheCpu) {
    TempDir dir("io");
    std::string error;
    const std::string pattern = dir.file("frames/%05d.png");
    ASSERT_EQ(write_synthetic_sequence(pattern, small_spec(5), &error).size(), 5u) << error;
    const Decoded sw = decode(pattern, DecodeMode::kSoftware);
    const Decoded nv = decode(pattern, DecodeMode::kNvdec);
    EXPECT_EQ(nv.mode, "sw");
    EXPECT_NE(nv.note.find("NVDEC"), std::string::npos) << nv.note;
    expect_identical(nv, sw);
    const Decoded au = decode(pattern, DecodeMode::kAuto);
    EXPECT_EQ(au.mode, "sw");
    EXPECT_EQ(au.note, "");
}

// NVDEC and libavcodec decode H.264 8-bit 4:2:0 bit-exactly, and a full-range clip makes the
// software GRAY8 equal to the raw Y plane, so the device plane must equal the software luma.
TEST(NvdecGpu, DeviceFramesMatchTheSoftwareDecode) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("full.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(30), /*full_range=*/true, &error)) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware, /*want_rgb=*/false);
    ASSERT_EQ(sw.luma.size(), 30u) << sw.error;

    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    const Decoded nv = decode(path, DecodeMode::kNvdec, /*want_rgb=*/false,
                              /*want_host_luma=*/false, stream);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    EXPECT_EQ(nv.note, "");
    EXPECT_EQ(nv.description, sw.description + ", nvdec");
    EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
    ASSERT_EQ(nv.luma.size(), 30u) << nv.error;
    EXPECT_EQ(nv.device_frames, 30);
    EXPECT_EQ(nv.host_luma_frames, 0) << "want_host_luma=false leaves Frame::luma empty";
    EXPECT_EQ(nv.pts, sw.pts);
    EXPECT_EQ(nv.index, sw.index);
    for (std::size_t i = 0; i < nv.luma.size(); ++i) {
        EXPECT_TRUE(nv.rgb[i].empty());
        const Diff d = luma_diff(nv.luma[i], sw.luma[i]);
        EXPECT_EQ(d.max, 0) << "frame " << i << ", mean " << d.mean;
        if (i == 0 || d.max > 0) std::printf("frame %zu: mean %.4f max %d\n", i, d.mean, d.max);
    }
    EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(NvdecGpu, HostLumaAndRgbComeWithTheDevicePlane) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("full.mkv");
    ASSERT_TRUE(write_h264_420(path, small_spec(20), /*full_range=*/true, &error)) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware);
    ASSERT_EQ(sw.luma.size(), 20u) << sw.error;
    // The legacy default stream (cuda_stream null); decode() checks host == device bytes.
    const Decoded nv = decode(path, DecodeMode::kNvdec, /*want_rgb=*/true, /*want_host_luma=*/true);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
    ASSERT_EQ(nv.luma.size(), 20u);
    EXPECT_EQ(nv.device_frames, 20);
    EXPECT_EQ(nv.host_luma_frames, 20);
    for (std::size_t i = 0; i < nv.luma.size(); ++i) {
        const Diff d = luma_diff(nv.luma[i], sw.luma[i]);
        EXPECT_EQ(d.max, 0) << "frame " << i << ", mean " << d.mean;
        const Diff c = luma_diff(nv.rgb[i], sw.rgb[i]);  // NV12 vs planar 4:2:0 through swscale
        EXPECT_LT(c.mean, 1.0) << "rgb of frame " << i << ", max " << c.max;
    }
}

// NVDEC frames for the annotated video: the NV12 surface downloaded to the same 4:2:0 planes a
// software decode gives, also when the tracker's luma stays on the device.
TEST(NvdecGpu, YuvForTheVideoEqualsTheSoftwareDecode) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("limited.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(10), /*full_range=*/false, &error)) << error;
    const YuvFrames sw = read_yuv(path, DecodeMode::kSoftware, true);
    const YuvFrames nv = read_yuv(path, DecodeMode::kNvdec, /*want_host_luma=*/false);
    EXPECT_EQ(nv.mode, "nvdec");
    ASSERT_EQ(nv.yuv.size(), sw.yuv.size()) << nv.error;
    for (std::size_t i = 0; i < nv.yuv.size(); ++i) {
        EXPECT_TRUE(nv.luma[i].empty());
        EXPECT_EQ(nv.yuv[i], sw.yuv[i]) << "frame " << i;
        EXPECT_EQ(nv.format[i], sw.format[i]);
    }
}

// The consumer may hold held_frames frames (the ring's slots) without starving the decoder.
TEST(NvdecGpu, HoldingHeldFramesKeepsDecoding) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("full.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(40), /*full_range=*/true, &error)) << error;
    const Decoded nv = decode(path, DecodeMode::kNvdec, false, false, nullptr,
                              /*hold=*/SourceOptions{}.held_frames);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
    EXPECT_EQ(nv.device_frames, 40);
}

// Limited range: NVDEC's device plane and the software decode both give the raw Y values
// (no range expansion), so the two are the same bytes and track the same boxes.
TEST(NvdecGpu, LimitedRangeDevicePlaneEqualsTheSoftwareLuma) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("limited.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(10), /*full_range=*/false, &error)) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware, false);
    const Decoded nv = decode(path, DecodeMode::kAuto, false, false);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    ASSERT_EQ(nv.luma.size(), sw.luma.size());
    for (std::size_t i = 0; i < nv.luma.size(); ++i) {
        const Diff d = luma_diff(nv.luma[i], sw.luma[i]);
        EXPECT_EQ(d.max, 0) << "frame " << i << ", mean " << d.mean;
    }
}

// Lossless x264 is High 4:4:4 Predictive: NVDEC refuses it at the first frame and the packets
// go to a software decoder, so every frame still arrives, equal to a software decode. (If a
// GPU ever decodes it, the frames must still match.)
TEST(NvdecGpu, StreamNvdecRefusesFallsBackWithoutLosingFrames) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("lossless.mkv");
    ASSERT_FALSE(write_synthetic_clip(path, small_spec(20), &error).empty()) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware, false);
    const Decoded nv = decode(path, DecodeMode::kNvdec, false, true);
    std::printf("lossless 4:4:4 with --decode nvdec: mode %s, note '%s'\n", nv.mode.c_str(), nv.note.c_str());
    if (nv.mode == "sw") {
        EXPECT_NE(nv.note.find("NVDEC"), std::string::npos);
        EXPECT_EQ(nv.device_frames, 0);
        expect_identical(nv, sw);
    } else {
        EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
        ASSERT_EQ(nv.luma.size(), sw.luma.size());
        for (std::size_t i = 0; i < nv.luma.size(); ++i)
            EXPECT_LT(luma_diff(nv.luma[i], sw.luma[i]).mean, 0.5) << "frame " << i;
    }
}

}  // namespace
}  // namespace corrtrack
