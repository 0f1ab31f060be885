// OTB one-pass evaluation from Python: the sequences, runs and metrics of `corrtrack eval`
// (app/eval/otb.h), returned as the dictionary its --json writes, plus the curves.
#include <filesystem>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <optional>
#include <string>
#include <vector>

#include "app/eval/otb.h"
#include "app/io/result_writers.h"
#include "bindings.h"

namespace corrtrack::py {
namespace {

nb::dict metrics_dict(const SequenceMetrics& m, bool per_sequence) {
    nb::dict d;
    d["auc"] = m.auc;
    d["prec20"] = m.prec20;
    d["fps"] = m.fps;
    d["frames"] = m.frames;
    if (per_sequence) {
        d["evaluated"] = m.evaluated;
        d["lost"] = m.lost;
        d["mean_iou"] = m.mean_iou;
    }
    d["success"] = m.success;      // success rate at IoU 0, 0.05, ..., 1
    d["precision"] = m.precision;  // precision at centre error 0..50 px
    return d;
}

[[noreturn]] void raise_os_error(const std::string& msg) {
    PyErr_SetString(PyExc_OSError, msg.c_str());
    throw nb::python_error();
}

nb::dict eval_otb(const std::string& dataset, std::optional<std::vector<std::string>> only,
                  std::optional<std::string> results_dir, const nb::kwargs& options) {
    TrackerOptions topt = tracker_options_from(options);
    topt.keep_maps = false;  // nobody looks at the maps here, as in `corrtrack eval`
    const std::string kernel = resolve_kernel_name(topt.kernel);
    if (std::string why; !make_correlator(kernel, &why)) throw nb::value_error(why.c_str());
    std::vector<SequenceInfo> sequences;
    std::string error;
    if (!find_sequences(dataset, &sequences, &error)) raise_os_error(error);
    if (only) {
        std::vector<SequenceInfo> kept;
        for (const std::string& name : *only) {
            bool found = false;
            for (const SequenceInfo& s : sequences)
                if (s.name == name) {
                    kept.push_back(s);
                    found = true;
                    break;
                }
            if (!found) throw nb::value_error(("sequence '" + name + "' is not in '" + dataset + "'").c_str());
        }
        sequences = kept;
    }
    if (results_dir) std::filesystem::create_directories(*results_dir);

    nb::dict per, failed;
    std::vector<SequenceMetrics> all;
    const GpuContext gpu;  // every sequence's trackers, one after another
    for (const SequenceInfo& seq : sequences) {
        SequenceMetrics m;
        std::vector<BoxF> boxes;
        std::size_t truth_rows = 0;
        bool ok;
        {
            nb::gil_scoped_release unlocked;
            ok = evaluate_sequence(seq, topt, gpu, &m, &boxes, &truth_rows, &error);
            if (ok && results_dir)
                ok = write_otb_results((std::filesystem::path(*results_dir) / (seq.name + ".txt")).string(), boxes,
                                       &error);
        }
        if (!ok) {
            failed[seq.name.c_str()] = error;
            continue;
        }
        per[seq.name.c_str()] = metrics_dict(m, true);
        all.push_back(m);
    }
    if (all.empty()) {
        std::string why = "no sequence could be evaluated in '" + dataset + "'";
        for (const auto& [name, msg] : failed) why += "; " + nb::cast<std::string>(msg);
        raise_os_error(why);
    }
    nb::dict mean = metrics_dict(mean_metrics(all), false);
    mean["sequences"] = all.size();
    nb::dict doc;
    doc["dataset"] = dataset;
    doc["kernel"] = kernel;
    doc["sequences"] = per;
    doc["mean"] = mean;
    doc["failed"] = failed;
    return doc;
}

}  // namespace

void register_eval(nb::module_& m) {
    m.def(
        "find_sequences",
        [](const std::string& dataset) {
            std::vector<SequenceInfo> found;
            std::string error;
            if (!find_sequences(dataset, &found, &error)) raise_os_error(error);
            std::vector<std::string> names;
            for (const SequenceInfo& s : found) names.push_back(s.name);
            return names;
        },
        nb::arg("dataset"), "Names of the OTB-style sequences in `dataset`, as `corrtrack eval` finds them.");
    m.def("eval_otb", &eval_otb, nb::arg("dataset"), nb::arg("sequences") = nb::none(),
          nb::arg("results_dir") = nb::none(), nb::arg("tracker_options"),
          "OTB one-pass evaluation, as `corrtrack eval` (see corrtrack.eval_otb).");
}

}  // namespace corrtrack::py
