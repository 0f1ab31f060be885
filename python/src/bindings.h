// The pieces of the _corrtrack module, one register function per binding file.
// Thread rules: called once, at import, with the GIL held.
#pragma once

#include <nanobind/nanobind.h>

#include "app/track/tracker.h"

namespace corrtrack::py {

namespace nb = nanobind;

void register_match(nb::module_& m);    // match.cpp: Correlator, Peak, PeakFinder, kernel list
void register_tracker(nb::module_& m);  // tracker.cpp: Tracker, TrackResult, tracker options
void register_video(nb::module_& m);    // video.cpp: VideoSource (the FFmpeg decode thread)
void register_eval(nb::module_& m);     // eval.cpp: OTB evaluation

// Tracker options from Python keyword arguments (tracker.cpp: the one place that knows their
// names). Unknown names and wrong types raise TypeError.
TrackerOptions tracker_options_from(const nb::dict& options);

}  // namespace corrtrack::py
