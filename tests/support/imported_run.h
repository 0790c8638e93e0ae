// Runs recorded as imported Hugging Face models, with the probe rows `analyze` writes at step 0,
// for the family-table tests (core, CLI and window). No weights: only the store's records.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/model_fixtures.h"

namespace depthlab::test {

/// Per-layer probe rows (empty: not written) and the probe batch's loss.
struct ImportedProbes {
  std::vector<float> effectiveness, pruneDelta, pruneDeltaError, angularAdjacent;
  double probeLoss = 3.0;
};

/// A run of smallConfig(layers) recorded as imported from `architecture` (source
/// /models/NAME; "" : trained here), with its lazy threshold.
inline int64_t addImportedRun(store::RunStore& s, const std::string& name,
                              const std::string& architecture, int layers,
                              double lazyThreshold = 0.05) {
  auto c = smallConfig(layers);
  c.probes.lazyThreshold = lazyThreshold;
  auto j = experiment::toJson(c);
  if (!architecture.empty()) j["import"] = {{"architecture", architecture}, {"source", "/models/" + name}};
  store::NewRun nr;
  nr.name = name;
  nr.scheme = "pre_ln";
  nr.configJson = j.dump();
  return s.createRun(nr);
}

/// Writes `p`'s rows at step 0 of run `id`.
inline void writeImportedProbes(store::RunStore& s, int64_t id, const ImportedProbes& p) {
  store::WriteBatch b;
  if (!p.effectiveness.empty()) b.layer(0, metrics::kEffectiveness, p.effectiveness);
  if (!p.pruneDelta.empty()) b.layer(0, metrics::kPruneDelta, p.pruneDelta);
  if (!p.pruneDeltaError.empty()) b.layer(0, metrics::kPruneDeltaError, p.pruneDeltaError);
  if (!p.angularAdjacent.empty()) b.layer(0, metrics::kAngularAdjacent, p.angularAdjacent);
  b.scalar(0, metrics::kLossProbe, p.probeLoss);
  s.write(id, b);
}

}  // namespace depthlab::test
