// The _corrtrack extension module: the C++ half of the corrtrack Python package (the public
// API, its docstrings and the framework/stream handling are in python/corrtrack/__init__.py).
#include "app/cli/version.h"
#include "bindings.h"

NB_MODULE(_corrtrack, m) {
    m.doc() = "corrtrack's C++ core (kernels, tracker, decode thread, OTB evaluation); import corrtrack instead.";
    // The CMake project's version (app/cli/version.h), not a second copy: corrtrack.__version__.
    m.attr("__version__") = corrtrack::corrtrack_version();
    m.attr("__revision__") = corrtrack::corrtrack_revision();
    corrtrack::py::register_match(m);
    corrtrack::py::register_tracker(m);
    corrtrack::py::register_video(m);
    corrtrack::py::register_eval(m);
}
