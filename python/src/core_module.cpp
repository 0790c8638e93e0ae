// depthlab._core: the Python binding of DepthLab's C++ core (pybind11, built against the user's
// own pip torch, whose tensors pass in and out without a copy). It binds what a watched training
// loop needs: the watched run (watch::WatchedRun: the store, the run, the rows), the probe
// statistics of a traced pass (probes::statsOfTrace), the per-sequence losses and the paired
// differences the pruning probes use, and the store's default path. The Python side
// (depthlab/watch.py) finds the blocks, runs the probe pass with hooks and hands the residual
// streams here; every statistic is the core's.
// Does not: run a model, hold weights, or touch the training loop's RNG or gradients.
// Legend: L blocks, B probe rows, T sequence length, C width, V vocabulary.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <optional>
#include <string>
#include <vector>

#include "probes/depth_probes.h"
#include "probes/probe_math.h"
#include "probes/probe_tokens.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "util/paths.h"
#include "watch/watched_run.h"

namespace py = pybind11;
using namespace depthlab;

namespace {

// streams: L+1 tensors (B, T, C); attn/ffn: L tensors or None each (no such norm).
model::ForwardTrace traceOf(const std::vector<torch::Tensor>& streams,
                            const std::vector<std::optional<torch::Tensor>>& attn,
                            const std::vector<std::optional<torch::Tensor>>& ffn) {
  if (streams.size() < 2)
    throw std::invalid_argument("a traced pass needs at least 2 residual streams");
  const size_t L = streams.size() - 1;
  if ((!attn.empty() && attn.size() != L) || (!ffn.empty() && ffn.size() != L)) {
    throw std::invalid_argument("the norm outputs must be one per block (" + std::to_string(L) +
                                ") or none");
  }
  model::ForwardTrace trace;
  for (const auto& s : streams) trace.blockInputs.push_back(s.detach());
  trace.blocks.resize(L);
  for (size_t l = 0; l < L; ++l) {
    if (!attn.empty() && attn[l]) trace.blocks[l].attnNormOut = attn[l]->detach();
    if (!ffn.empty() && ffn[l]) trace.blocks[l].ffnNormOut = ffn[l]->detach();
  }
  return trace;
}

torch::Tensor optionalTensor(const std::optional<torch::Tensor>& t) {
  return t ? t->detach() : torch::Tensor();
}

store::RunStatus statusOf(const std::string& s) {
  auto status = store::runStatusFromString(s);
  if (!status || store::isActive(*status)) {
    throw std::invalid_argument("a watched run ends finished, stopped, diverged or crashed (got '" +
                                s + "')");
  }
  return *status;
}

store::EventLevel levelOf(const std::string& s) {
  if (s == "info") return store::EventLevel::Info;
  if (s == "warning") return store::EventLevel::Warning;
  if (s == "error") return store::EventLevel::Error;
  throw std::invalid_argument("an event level is info, warning or error (got '" + s + "')");
}

// Keyed as the store keys them (the metric catalogue's names), the matrix as "angular".
py::dict statsDict(const probes::ForwardProbes& f) {
  py::dict d;
  d[metrics::kVariance] = f.variance;
  d[metrics::kNormVarAttn] = f.normVarAttn;
  d[metrics::kNormVarFfn] = f.normVarFfn;
  d[metrics::kAngularAdjacent] = f.angularAdjacent;
  d[metrics::kBlockInfluence] = f.blockInfluence;
  d[metrics::kEffectiveness] = f.effectiveness;
  d[metrics::kAngular] = f.angularMatrix;
  return d;
}

void bindWatchedRun(py::module_& m) {
  py::class_<watch::WatchedRun>(m, "WatchedRun",
                                "A run of the lab's store fed by this process's training loop.")
      .def(py::init([](const std::string& storePath, const watch::WatchSpec& spec) {
             return std::make_unique<watch::WatchedRun>(storePath, spec);
           }),
           py::arg("store_path"), py::arg("spec"))
      .def_property_readonly("run_id", &watch::WatchedRun::runId)
      .def_property_readonly("group", &watch::WatchedRun::groupName)
      .def("scalar", &watch::WatchedRun::scalar, py::arg("step"), py::arg("key"), py::arg("value"))
      .def("layer", &watch::WatchedRun::layer, py::arg("step"), py::arg("metric"),
           py::arg("values"))
      .def(
          "event",
          [](watch::WatchedRun& r, std::optional<int64_t> step, const std::string& level,
             const std::string& message) { r.event(step, levelOf(level), message); },
          py::arg("step"), py::arg("level"), py::arg("message"))
      .def(
          "forward",
          [](watch::WatchedRun& r, int64_t step, const std::vector<torch::Tensor>& streams,
             const std::vector<std::optional<torch::Tensor>>& attn,
             const std::vector<std::optional<torch::Tensor>>& ffn,
             const std::optional<torch::Tensor>& targets, double probeLoss, bool matrix) {
            auto trace = traceOf(streams, attn, ffn);
            auto t = optionalTensor(targets);
            py::gil_scoped_release release;
            r.forward(step, trace, t, probeLoss, matrix);
          },
          py::arg("step"), py::arg("streams"), py::arg("attn_norm_out"), py::arg("ffn_norm_out"),
          py::arg("targets"), py::arg("probe_loss"), py::arg("matrix"))
      .def("flush", &watch::WatchedRun::flush, py::arg("force") = false)
      .def("stop_requested", &watch::WatchedRun::stopRequested)
      .def(
          "finish",
          [](watch::WatchedRun& r, const std::string& status, int64_t lastStep) {
            r.finish(statusOf(status), lastStep);
          },
          py::arg("status"), py::arg("last_step"))
      .def_property_readonly("last_error", &watch::WatchedRun::lastError)
      .def_property_readonly("failed_writes", &watch::WatchedRun::failedWrites)
      .def("set_flush_seconds", &watch::WatchedRun::setFlushSeconds, py::arg("seconds"));
}

void bindSpec(py::module_& m) {
  py::class_<probes::ProbeConfig>(m, "ProbeConfig")
      .def(py::init<>())
      .def_readwrite("forward_every", &probes::ProbeConfig::forwardEvery)
      .def_readwrite("angular_matrix_every", &probes::ProbeConfig::angularMatrixEvery)
      .def_readwrite("pruning_every", &probes::ProbeConfig::pruningEvery)
      .def_readwrite("last_token_only", &probes::ProbeConfig::lastTokenOnly)
      .def_readwrite("lazy_threshold", &probes::ProbeConfig::lazyThreshold)
      .def_readwrite("low_threshold", &probes::ProbeConfig::lowThreshold);
  py::class_<watch::WatchRecord>(m, "WatchRecord")
      .def(py::init<>())
      .def_readwrite("framework", &watch::WatchRecord::framework)
      .def_readwrite("model_class", &watch::WatchRecord::modelClass)
      .def_readwrite("layers_path", &watch::WatchRecord::layersPath)
      .def_readwrite("device", &watch::WatchRecord::device)
      .def_readwrite("probe_rows", &watch::WatchRecord::probeRows)
      .def_readwrite("probe_length", &watch::WatchRecord::probeLength);
  py::class_<watch::WatchSpec>(m, "WatchSpec")
      .def(py::init<>())
      .def_readwrite("name", &watch::WatchSpec::name)
      .def_readwrite("scheme", &watch::WatchSpec::scheme)
      .def_readwrite("n_layers", &watch::WatchSpec::nLayers)
      .def_readwrite("d_model", &watch::WatchSpec::dModel)
      .def_readwrite("n_heads", &watch::WatchSpec::nHeads)
      .def_readwrite("vocab_size", &watch::WatchSpec::vocabSize)
      .def_readwrite("planned_steps", &watch::WatchSpec::plannedSteps)
      .def_readwrite("probes", &watch::WatchSpec::probes)
      .def_readwrite("seed", &watch::WatchSpec::seed)
      .def_readwrite("record", &watch::WatchSpec::record);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "DepthLab's C++ core, bound for depthlab.watch (see depthlab/__init__.py)";
  m.attr("version") = DEPTHLAB_VERSION;
  py::register_exception<store::StoreError>(m, "StoreError", PyExc_RuntimeError);
  bindSpec(m);
  bindWatchedRun(m);
  m.def(
      "default_store_path", [] { return util::defaultDatabasePath(); },
      "The lab's default database (where `make run` and depthlab-cli look without --db).");
  m.def(
      "probe_stats",
      [](const std::vector<torch::Tensor>& streams,
         const std::vector<std::optional<torch::Tensor>>& attn,
         const std::vector<std::optional<torch::Tensor>>& ffn,
         const std::optional<torch::Tensor>& targets, bool lastTokenOnly, bool matrix) {
        auto trace = traceOf(streams, attn, ffn);
        auto t = optionalTensor(targets);
        probes::ForwardProbes f;
        {
          py::gil_scoped_release release;
          f = probes::statsOfTrace(trace, t, {lastTokenOnly, matrix});
        }
        return statsDict(f);
      },
      py::arg("streams"), py::arg("attn_norm_out") = std::vector<std::optional<torch::Tensor>>{},
      py::arg("ffn_norm_out") = std::vector<std::optional<torch::Tensor>>{},
      py::arg("targets") = py::none(), py::arg("last_token_only") = false,
      py::arg("matrix") = false,
      "The lab's forward statistics of L+1 residual streams (B, T, C): variance, norm-output "
      "variance, adjacent angular distance, Block Influence, E_l (and, as 'angular', the L x L "
      "angular matrix, "
      "row-major, NaN past the last block). targets (B, T): -100 marks pads.");
  m.def(
      "sequence_losses",
      [](const torch::Tensor& logits, const torch::Tensor& targets) {
        auto counted = probes::countedTargets(targets);
        return probes::sequenceLosses(logits.detach(), targets, counted);
      },
      py::arg("logits"), py::arg("targets"),
      "(B) mean cross-entropy of each sequence of logits (B, T, V) over its targets (B, T) that "
      "are not -100, in float32, on the logits' device.");
  m.def(
      "paired_difference",
      [](const std::vector<double>& a, const std::vector<double>& b) {
        if (a.size() != b.size()) throw std::invalid_argument("paired values must be as many");
        auto r = probes::pairedDifference(a.data(), b.data(), static_cast<int64_t>(a.size()));
        return py::make_tuple(r.mean, r.standardError);
      },
      py::arg("a"), py::arg("b"),
      "(mean, standard error) of the paired differences a_i - b_i (NaN error with one pair).");
}
