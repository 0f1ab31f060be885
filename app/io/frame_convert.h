// Decoded AVFrames into Frame pixels. Luma is YUV's raw Y plane whatever the decoder (no range
// expansion: software and NVDEC frames give the tracker the same values; 8-bit planes are
// copied, other layouts go through swscale), other inputs (RGB, palette, grey) convert to Y
// once; RGB24 for display is range-expanded with the matrix from the frame's tags; YUV 4:2:0 for
// the annotated video keeps the source's values and tags (copied when the source is 4:2:0,
// converted otherwise; RGB and grey sources become limited-range BT.601). NVDEC frames
// keep their Y plane on the device, with host copies only where asked for. Every
// frame gets the first frame's size: a frame of another size is scaled to it and counted.
// Thread rules: belongs to the thread that owns the FrameSource; Frame::device.owner may be
// released on any thread.
#pragma once

#include <memory>
#include <string>

#include "app/io/frame.h"
#include "app/io/libav_handles.h"

namespace corrtrack {

class FrameConverter {
public:
    // name: the input, for messages; want_rgb, want_yuv and want_host_luma as in SourceOptions.
    void configure(const std::string& name, bool want_rgb, bool want_yuv, bool want_host_luma);

    // f's pixels into out (width, height, luma, rgb, yuv, device, decoded_size; not index or pts),
    // reusing out's buffers. False with error().
    bool convert(const AVFrame* f, Frame& out);
    // Counts out as resized when its decoded size differs from the first frame's (after
    // convert, once out.index is set).
    void count_resize(const Frame& out);

    long resized() const { return resized_; }
    const std::string& resize_note() const { return resize_note_; }
    const std::string& error() const { return error_; }

private:
    bool convert_host(const AVFrame* f, Frame& out);
    bool convert_device(const AVFrame* f, Frame& out);
    bool prepare_conversion(const AVFrame* f);
    bool scale_rgb(const AVFrame* f, Frame& out);
    bool fill_yuv(const AVFrame* f, Frame& out);
    bool finish_host(const AVFrame* f, Frame& out);  // rgb and yuv as asked
    bool download_luma(const AVFrame* f, Frame& out);
    AVFrame* download_frame(const AVFrame* f);
    bool check(int ret, const char* call, int line);

    std::string name_;
    bool want_rgb_ = true, want_yuv_ = false, want_host_luma_ = true;
    Size out_size_;  // every frame's size: the first frame's
    std::unique_ptr<SwsContext, SwsFreer> gray_sws_, rgb_sws_, yuv_sws_;
    YuvFormat yuv_format_;   // of Frame::yuv for the current conversion
    bool yuv_copy_ = false;  // the source is 8-bit 4:2:0 planes of the output size: copied, not converted
    struct ConversionKey {
        int width = 0, height = 0, format = -1, full_range = -1, colorspace = -1;
        bool operator==(const ConversionKey& o) const {
            return width == o.width && height == o.height && format == o.format && full_range == o.full_range &&
                   colorspace == o.colorspace;
        }
    } conversion_key_;
    std::unique_ptr<AVFrame, FrameFreer> host_frame_;     // NV12 download for RGB, reused
    std::unique_ptr<AVFrame, FrameFreer> y_src_, y_dst_;  // Y-plane-only download views
    long resized_ = 0;
    std::string resize_note_;
    std::string error_;
};

}  // namespace corrtrack
