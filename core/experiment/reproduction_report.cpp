// See reproduction_report.h.
#include "experiment/reproduction_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "store/metric_catalogue.h"

namespace depthlab::experiment {

std::string recipeTag(const PaperRecipe& recipe, size_t arm) {
  const std::string& label = recipe.arms.at(arm).label;
  return "reproduce:" + recipe.name + (label.empty() ? "" : "/" + label);
}

std::vector<store::RunInfo> recipeRuns(store::RunStore& store, const PaperRecipe& recipe) {
  const auto all = store.listRuns();
  std::vector<store::RunInfo> out;
  for (size_t a = 0; a < recipe.arms.size(); ++a) {
    const std::string tag = recipeTag(recipe, a);
    for (const auto& scheme : recipe.arms[a].schemes) {
      const store::RunInfo* newest = nullptr;
      for (const auto& r : all) {
        if (r.scheme != scheme || std::find(r.tags.begin(), r.tags.end(), tag) == r.tags.end()) {
          continue;
        }
        if (!newest || r.id > newest->id) newest = &r;
      }
      if (newest) out.push_back(*newest);
    }
  }
  return out;
}

namespace {

std::string armOf(const PaperRecipe& recipe, const store::RunInfo& run) {
  for (size_t a = 0; a < recipe.arms.size(); ++a) {
    if (std::find(run.tags.begin(), run.tags.end(), recipeTag(recipe, a)) != run.tags.end()) {
      return recipe.arms[a].label;
    }
  }
  return "";
}

std::optional<double> lastLayerVariance(store::RunStore& store, int64_t runId) {
  const auto step = store.lastLayerStep(runId, metrics::kVariance);
  if (!step) return std::nullopt;
  const auto s = store.layerSeries(runId, metrics::kVariance, *step, *step);
  if (s.values.empty()) return std::nullopt;
  return s.values.back();
}

}  // namespace

ReproductionReport reproductionReport(store::RunStore& store, const PaperRecipe& recipe) {
  ReproductionReport rep;
  size_t expected = 0;
  for (const auto& a : recipe.arms) expected += a.schemes.size();
  size_t finished = 0;
  for (const auto& run : recipeRuns(store, recipe)) {
    ReproductionRow row;
    row.arm = armOf(recipe, run);
    row.scheme = run.scheme;
    row.runId = run.id;
    row.status = run.status;
    const auto latest = store.latestScalars(run.id);
    // loss_train's steps count from 0: the updates done are one more than its last step
    if (auto it = latest.find(metrics::kLossTrain); it != latest.end())
      row.step = it->second.step + 1;
    auto j = nlohmann::json::parse(run.configJson, nullptr, false);
    if (j.is_object()) row.steps = j.value("optim", nlohmann::json::object()).value("steps", 0);
    if (auto it = latest.find(metrics::kLossVal); it != latest.end()) {
      row.valLoss = it->second.value;
      row.perplexity = std::exp(it->second.value);
    }
    row.paperPerplexity = recipe.paperPerplexity(row.scheme, row.arm);
    if (row.perplexity && row.paperPerplexity) {
      row.difference = *row.perplexity - *row.paperPerplexity;
      row.withinBand = std::fabs(*row.difference) <= recipe.band;
    }
    row.lastLayerVariance = lastLayerVariance(store, run.id);
    if (run.status == store::RunStatus::Finished) ++finished;
    rep.rows.push_back(std::move(row));
  }
  rep.complete = expected > 0 && finished == expected;
  for (const auto& arm : recipe.arms) {
    const ReproductionRow *pre = nullptr, *lns = nullptr;
    for (const auto& r : rep.rows) {
      if (r.arm != arm.label || !r.perplexity) continue;
      if (r.scheme == "pre_ln") pre = &r;
      if (r.scheme == "lns") lns = &r;
    }
    if (!pre || !lns) continue;
    ReproductionGain g;
    g.arm = arm.label;
    g.ppl = *pre->perplexity - *lns->perplexity;
    g.percent = 100.0 * g.ppl / *pre->perplexity;
    if (pre->paperPerplexity && lns->paperPerplexity) {
      g.paperPpl = *pre->paperPerplexity - *lns->paperPerplexity;
      g.paperPercent = 100.0 * *g.paperPpl / *pre->paperPerplexity;
    }
    rep.gains.push_back(g);
  }
  return rep;
}

}  // namespace depthlab::experiment
