// A stored run's model ready to evaluate: an imported run's weights from its folder, or a
// trained run's newest checkpoint that verifies (the ones refused said), on a device, in eval
// mode. Shared by `analyze`, `eval` and `eval --task` (hf/model_analysis.cpp, hf/task_eval.cpp).
// Does not: tokenize text or run probes.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"
#include "hf/hf_import.h"
#include "model/decoder.h"
#include "store/run_store.h"

namespace depthlab::hf {

struct LoadedModel {
  model::Decoder decoder{nullptr};
  experiment::ExperimentConfig config;
  std::optional<ImportRecord> imported;
  std::string from;
  int64_t step = 0;                  // the checkpoint's step (an import: 0)
  std::vector<std::string> skipped;  // newer checkpoints passed over: "step N: why"
};

/// The default context of an imported model: `wanted`, fewer when its positions or its attention
/// window are fewer.
int contextFor(const ImportRecord& rec, int wanted);

/// `imported`: the run's import record (importRecordOf), read once by the caller.
LoadedModel loadRunModel(store::RunStore& store, const store::RunInfo& run,
                         std::optional<ImportRecord> imported, int seqLen, torch::Device device);

}  // namespace depthlab::hf
