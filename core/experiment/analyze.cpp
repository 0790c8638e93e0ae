// See analyze.h.
#include "experiment/analyze.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "data/token_dataset.h"
#include "experiment/probe_schedule.h"
#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "experiment/tuned_lens_run.h"
#include "model/decoder.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace depthlab::experiment {

std::set<std::string> parseProbeList(const std::string& list) {
  std::set<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "all") {
      out.insert(kProbeNames.begin(), kProbeNames.end());
    } else if (std::find(kProbeNames.begin(), kProbeNames.end(), item) != kProbeNames.end() ||
               item == kTunedLensFamily) {
      out.insert(item);
    } else if (!item.empty()) {
      std::string known = "all";
      for (const auto& k : kProbeNames) known += ", " + k;
      known += std::string(", ") + kTunedLensFamily + " (on demand: not in all)";
      throw ConfigError("unknown probe '" + item + "' (known: " + known + ")");
    }
  }
  if (out.empty()) throw ConfigError("no probes chosen");
  return out;
}

namespace {

// (R, T) the run's fixed validation batches, the held-out rows the tuned lens trains on.
torch::Tensor validationRows(const data::TokenDataset& data, int batches, torch::Device device) {
  std::vector<torch::Tensor> rows;
  for (int i = 0; i < std::max(1, batches); ++i) {
    auto b = data.valBatch(i, std::max(1, batches));
    rows.push_back(torch::from_blob(b.inputs.data(), {b.batch, b.seqLen}, torch::kInt64).clone());
  }
  return torch::cat(rows).to(device);
}

}  // namespace

AnalyzeResult analyzeCheckpoint(store::RunStore& store, int64_t runId, std::optional<int64_t> step,
                                std::set<std::string> which, int tunedLensSteps) {
  const bool tuned = which.erase(kTunedLensFamily) > 0;
  auto run = store.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  if (step && *step < 0)
    throw ConfigError("--step must be >= 0 (got " + std::to_string(*step) + ")");
  // The newest checkpoint at or before `step` that verifies as this run's (throws, listing
  // why each candidate was refused, when none does).
  const auto byHeader = newestVerifiedCheckpoint(store, *run, step);  // refused before the corpus

  ExperimentConfig config = configOf(*run);
  const auto t0 = std::chrono::steady_clock::now();
  auto corpus = data::loadCorpusTokens(config.data);
  if (config.model.vocabSize != corpus.vocabSize) {  // e.g. byte runs from before the EOD id
    throw ConfigError("run " + std::to_string(runId) + " was trained on a vocabulary of " +
                      std::to_string(config.model.vocabSize) +
                      " ids; its corpus's tokens now have " + std::to_string(corpus.vocabSize) +
                      " (" + corpus.tokenizerName +
                      ", an end-of-document id included), which its checkpoints do not fit");
  }
  data::TokenDataset data = data::makeDataset(std::move(corpus), config.data, config.model.seqLen,
                                              config.optim.batchSize);
  torch::Device device = train::resolveDevice(config.run.device);
  model::Decoder model(config.model, config.options, run->scheme);
  model->to(device);
  auto verified = newestVerifiedCheckpoint(
      store, *run, byHeader.info.step,
      [&](const std::string& path) { return train::loadCheckpoint(path, model, nullptr, device); });
  verified.skipped.insert(verified.skipped.begin(), byHeader.skipped.begin(),
                          byHeader.skipped.end());
  const store::CheckpointInfo* chosen = &verified.info;
  const auto& meta = verified.meta;
  ProbeSchedule probes(config.probes, data, device);
  store::WriteBatch batch;
  if (!which.empty()) probes.run(model, meta.step, which, batch);
  if (tuned) {
    TunedLensJob job;
    job.text = validationRows(data, config.run.evalBatches, device);
    job.folder = std::filesystem::path(chosen->path).parent_path().string();
    job.steps = tunedLensSteps;
    runTunedLens(model, probes.inputs(), probes.targets(), meta.step, job, batch);
  }
  for (const auto& why : verified.skipped) {
    batch.event(meta.step, store::EventLevel::Warning, "analyze skipped the checkpoint at " + why);
  }
  const std::string gap = step ? "" : checkpointGapNote(store, *run, meta.step);
  batch.event(meta.step, gap.empty() ? store::EventLevel::Info : store::EventLevel::Warning,
              "analyzed checkpoint " + chosen->path + (gap.empty() ? "" : " (" + gap + ")"));
  store.write(runId, batch);
  AnalyzeResult r;
  r.step = meta.step;
  r.checkpointPath = chosen->path;
  r.skipped = verified.skipped;
  if (!step) r.gapNote = checkpointGapNote(store, *run, meta.step);  // asked for the newest
  r.valuesWritten = batch.valueCount();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace depthlab::experiment
