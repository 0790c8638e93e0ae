// A recipe's runs laid beside the paper: per arm and scheme the final validation perplexity,
// the paper's, the difference and whether it lies within the reproduction band; LNS's gain over
// Pre-LN in PPL and percent beside the paper's gain; the last layer's output variance (Fig. 4's
// quantity). Reads the store only (a recipe's runs carry the tag recipeTag()); no torch, no
// printing (the CLI formats it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/paper_recipes.h"
#include "store/run_store.h"

namespace depthlab::experiment {

/// The tag that marks the runs of `recipe`'s arm `arm` (an index).
std::string recipeTag(const PaperRecipe& recipe, size_t arm);

/// The newest run of each scheme of each arm of `recipe` in the store (arm order, then the
/// arm's scheme order); schemes never launched are absent.
std::vector<store::RunInfo> recipeRuns(store::RunStore& store, const PaperRecipe& recipe);

struct ReproductionRow {
  std::string arm, scheme;
  int64_t runId = 0;
  store::RunStatus status = store::RunStatus::Queued;
  int64_t step = 0, steps = 0;  // updates done, and planned
  std::optional<double> valLoss, perplexity, paperPerplexity;
  std::optional<double> lastLayerVariance;
  /// perplexity - paperPerplexity, and whether |that| <= the recipe's band
  std::optional<double> difference;
  bool withinBand = false;
};

struct ReproductionGain {  // LNS over Pre-LN within one arm
  std::string arm;
  double ppl = 0, percent = 0;                   // measured: pre_ln - lns, and its share
  std::optional<double> paperPpl, paperPercent;  // the paper's
};

struct ReproductionReport {
  std::vector<ReproductionRow> rows;
  std::vector<ReproductionGain> gains;
  bool complete = false;  // every scheme of every arm trained all its steps
};

ReproductionReport reproductionReport(store::RunStore& store, const PaperRecipe& recipe);

}  // namespace depthlab::experiment
