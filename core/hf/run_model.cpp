// See run_model.h.
#include "hf/run_model.h"

#include <algorithm>

#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "hf/hf_config.h"
#include "train/checkpoint.h"

namespace depthlab::hf {

int contextFor(const ImportRecord& rec, int wanted) {
  int64_t n = std::min<int64_t>(wanted, rec.maxPositions);
  if (rec.slidingWindow) n = std::min(n, *rec.slidingWindow);
  return static_cast<int>(n);
}

LoadedModel loadRunModel(store::RunStore& store, const store::RunInfo& run,
                         std::optional<ImportRecord> imported, int seqLen, torch::Device device) {
  LoadedModel m;
  m.imported = std::move(imported);
  m.config = experiment::configOf(run);
  if (m.imported) {
    m.decoder = loadImportedDecoder(*m.imported, m.config.model, seqLen, device);
    m.from = m.imported->architecture + " weights in " + m.imported->source;
    return m;
  }
  const auto verified = experiment::newestVerifiedCheckpoint(store, run);
  m.config = experiment::configFromJson(verified.meta.config);
  if (seqLen > m.config.model.seqLen) {
    throw HfModelError("run " + std::to_string(run.id) + " was trained on " +
                       std::to_string(m.config.model.seqLen) + "-token sequences; use --seq-len " +
                       std::to_string(m.config.model.seqLen) + " or less");
  }
  m.decoder = model::Decoder(m.config.model, m.config.options, run.scheme);
  m.decoder->to(device);
  const auto loaded = experiment::newestVerifiedCheckpoint(
      store, run, verified.info.step, [&](const std::string& path) {
        return train::loadCheckpoint(path, m.decoder, nullptr, device);
      });
  m.decoder->eval();
  m.step = loaded.meta.step;
  m.from = "checkpoint at step " + std::to_string(loaded.meta.step);
  if (const auto gap = experiment::checkpointGapNote(store, run, loaded.meta.step); !gap.empty()) {
    m.from += " (" + gap + ")";
  }
  m.skipped = verified.skipped;  // refused by their headers
  m.skipped.insert(m.skipped.end(), loaded.skipped.begin(), loaded.skipped.end());
  return m;
}

}  // namespace depthlab::hf
