// See depth_study.h.
#include "analysis/depth_study.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "model/scheme_catalogue.h"
#include "probes/lazy_layers.h"
#include "store/metric_catalogue.h"

namespace depthlab::analysis {

int deepQuarterLayers(int nLayers) { return nLayers <= 0 ? 0 : std::max(1, nLayers / 4); }

namespace {

// What one run of a scheme adds to its row.
struct RunValues {
  std::optional<double> lossVal, varianceLast, pruneDeep, effective;
  std::optional<double> pruneDeepSe;  // from the per-layer errors over the probe sequences
  int64_t steps = 0;                  // updates trained
  std::vector<float> variance;
  int nLayers = 0;
  bool diverged = false;
  bool pruneAllZero = false;  // every layer's removal changed the loss by exactly 0
};

double meanOfFinite(const std::vector<float>& v, size_t from) {
  double sum = 0;
  int n = 0;
  for (size_t i = from; i < v.size(); ++i) {
    if (std::isfinite(v[i])) sum += v[i], ++n;
  }
  return n ? sum / n : std::nan("");
}

RunValues readRun(store::RunStore& s, const store::RunInfo& run, int64_t atStep) {
  RunValues v;
  const auto report = experiment::makeRunReport(s, run.id, atStep);
  const auto config = experiment::tryConfigOf(run);
  v.nLayers = config ? config->model.nLayers : report.nLayers;
  if (report.lossVal && std::isfinite(*report.lossVal)) v.lossVal = report.lossVal;
  v.diverged = report.lossVal && !std::isfinite(*report.lossVal);
  if (auto row = experiment::lastLayerRow(s, run.id, metrics::kVariance, atStep)) {
    v.variance = row->second;
    if (!v.variance.empty() && std::isfinite(v.variance.back())) v.varianceLast = v.variance.back();
  }
  if (auto row = experiment::lastLayerRow(s, run.id, metrics::kPruneDelta, atStep)) {
    const int L = static_cast<int>(row->second.size());
    const double m = meanOfFinite(row->second, static_cast<size_t>(L - deepQuarterLayers(L)));
    if (std::isfinite(m)) v.pruneDeep = m;
    v.pruneAllZero = L > 1 && std::all_of(row->second.begin(), row->second.end(),
                                          [](float d) { return d == 0.0f; });
    // The deep quarter's mean of k independent deltas: sqrt(sum se_l^2) / k.
    const auto se = experiment::lastLayerRow(s, run.id, metrics::kPruneDeltaError, row->first);
    if (se && se->first == row->first && static_cast<int>(se->second.size()) == L) {
      double sum = 0;
      int k = 0;  // the same layers as the mean: the deep quarter's finite deltas
      for (int l = L - deepQuarterLayers(L); l < L; ++l) {
        const auto i = static_cast<size_t>(l);
        if (!std::isfinite(row->second[i])) continue;
        sum += static_cast<double>(se->second[i]) * se->second[i];
        ++k;
      }
      if (k > 0 && std::isfinite(sum)) v.pruneDeepSe = std::sqrt(sum) / k;
    }
  }
  v.steps = report.steps;
  if (auto row = experiment::lastLayerRow(s, run.id, metrics::kEffectiveness, atStep)) {
    const auto t = config ? probes::layerThresholds(config->probes) : probes::LayerThresholds{};
    const auto counts = probes::classifyLayers(row->second, t);
    if (counts.lazy + counts.low + counts.effective > 0) v.effective = counts.effective;
  }
  return v;
}

std::optional<Summary> summaryOf(const std::vector<double>& x) {
  if (x.empty()) return std::nullopt;
  return summarize(x);
}

/// True for a tanh-bounded scheme (DyT), whose outputs can stop depending on small changes.
bool saturates(const std::string& scheme) {
  const model::SchemeEntry* e = model::findScheme(scheme);
  if (!e) return false;
  model::BlockPlan p;
  e->plan(p, 1, 4, model::SchemeOptions{});
  return p.dyt;
}

/// A note on each row whose validation loss stayed more than kUntrainedGap nats above the
/// best row's: its depth numbers describe a model that has not learned what the others have.
void noteUntrained(std::vector<StudyRow>& rows) {
  constexpr double kUntrainedGap = 0.5;
  std::optional<double> best;
  for (const auto& r : rows) {
    if (r.lossVal && (!best || r.lossVal->mean < *best)) best = r.lossVal->mean;
  }
  for (auto& r : rows) {
    if (!r.lossVal || r.lossVal->mean <= *best + kUntrainedGap) continue;
    std::ostringstream why;
    why.precision(4);
    why << "validation loss " << r.lossVal->mean << " against the best " << *best
        << ": it has not learned what the others have (at this learning rate; its own "
           "curve says whether it diverged or stalled), so its depth columns describe an "
           "untrained model";
    r.notes.push_back(why.str());
  }
}

// The row of `scheme` from its runs' values; notes name what is missing and the command.
StudyRow makeRow(const std::string& scheme, const std::vector<store::RunInfo>& runs,
                 const std::vector<RunValues>& values) {
  StudyRow r;
  r.scheme = scheme;
  r.displayName = model::schemeDisplayName(scheme);
  std::vector<double> loss, var, prune, eff;
  std::vector<std::vector<float>> profiles;
  std::vector<int64_t> noPrune, noVariance, noEl;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& v = values[i];
    r.runIds.push_back(runs[i].id);
    r.seeds.push_back(runs[i].seed);
    r.nLayers = std::max(r.nLayers, v.nLayers);
    if (v.lossVal) loss.push_back(*v.lossVal);
    if (v.diverged)
      r.notes.push_back("run " + std::to_string(runs[i].id) +
                        " diverged (its validation loss is not finite)");
    if (v.varianceLast)
      var.push_back(*v.varianceLast);
    else
      noVariance.push_back(runs[i].id);
    if (v.pruneDeep)
      prune.push_back(*v.pruneDeep);
    else
      noPrune.push_back(runs[i].id);
    if (v.effective)
      eff.push_back(*v.effective);
    else
      noEl.push_back(runs[i].id);
    if (!v.variance.empty()) profiles.push_back(v.variance);
    if (v.pruneAllZero) {
      r.notes.push_back("run " + std::to_string(runs[i].id) +
                        ": removing any layer changed the probe loss by exactly 0, " +
                        (saturates(scheme)
                             ? std::string("as when its DyT norms saturate (tanh at +-1 "
                                           "maps the changed stream to the same output; "
                                           "see its dyt_saturation)")
                             : std::string("which no trained model does; the "
                                           "pruning probe may not handle this "
                                           "scheme")));
    }
  }
  r.lossVal = summaryOf(loss);
  r.varianceLast = summaryOf(var);
  r.pruneDeepQuarter = summaryOf(prune);
  if (r.pruneDeepQuarter && r.pruneDeepQuarter->n == 1) {  // one run: its own error
    for (const auto& v : values) {
      if (v.pruneDeep && v.pruneDeepSe) r.pruneDeepQuarter->se = *v.pruneDeepSe;
    }
  }
  r.effectiveLayers = summaryOf(eff);
  if (std::set<int64_t>(r.seeds.begin(), r.seeds.end()).size() < r.seeds.size()) {
    r.notes.push_back(
        "runs of the same seed (same batches and initial weights): the band is not "
        "a spread over seeds");
  }
  // The profile: the layer-wise mean over the runs whose rows have the longest depth.
  size_t L = 0;
  for (const auto& p : profiles) L = std::max(L, p.size());
  for (size_t l = 0; l < L; ++l) {
    double sum = 0;
    int n = 0;
    for (const auto& p : profiles) {
      if (p.size() == L && std::isfinite(p[l])) sum += p[l], ++n;
    }
    r.varianceProfile.push_back(n ? sum / n : std::nan(""));
  }
  auto note = [&r](const std::vector<int64_t>& ids, const char* what, const char* probes) {
    for (int64_t id : ids) {
      r.notes.push_back("run " + std::to_string(id) + " has no " + what +
                        " probe (depthlab-cli analyze --run " + std::to_string(id) + " --probes " +
                        probes + ")");
    }
  };
  note(noVariance, "variance", "variance");
  note(noPrune, "pruning", "pruning");
  note(noEl, "E_l (effectiveness)", "variance");
  if (loss.empty() &&
      std::none_of(values.begin(), values.end(), [](const RunValues& v) { return v.diverged; })) {
    r.notes.push_back(scheme + " has no validation loss (depthlab-cli eval --run " +
                      std::to_string(runs.front().id) + ")");
  }
  return r;
}

// Whether two summaries lie within their combined standard error (both must have one: a
// single value without an error of its own separates nothing and ties nothing).
bool withinError(const Summary& a, const Summary& b) {
  const bool known = (a.n > 1 || a.se > 0) && (b.n > 1 || b.se > 0);
  return known && std::abs(a.mean - b.mean) <= std::sqrt(a.se * a.se + b.se * b.se);
}

// Ranks 1.. by `better` over the rows `has` accepts (the others keep 0); a row within the
// standard error of the one before it shares that row's rank (competition ranking, "=k").
template <typename Has, typename Better, typename Of, typename Set>
void rank(std::vector<StudyRow>& rows, Has has, Better better, Of of, Set set) {
  std::vector<StudyRow*> ranked;
  for (auto& r : rows)
    if (has(r)) ranked.push_back(&r);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const StudyRow* a, const StudyRow* b) { return better(*a, *b); });
  int shared = 1;
  for (size_t i = 0; i < ranked.size(); ++i) {
    const bool tied = i > 0 && withinError(of(*ranked[i - 1]), of(*ranked[i]));
    if (!tied) shared = static_cast<int>(i) + 1;
    set(*ranked[i], shared, tied);
    if (tied) set(*ranked[i - 1], shared, true);
  }
}

// What the study as a whole cannot claim: runs too short for the paper's effects, ranks that
// rest on no measured spread, schemes the data do not tell apart.
void noteWhatCannotBeRanked(DepthStudy& study, int64_t fewestSteps) {
  constexpr int64_t kShortRun = 1000;  // updates; the paper's pattern came after ~2B tokens
  if (fewestSteps > 0 && fewestSteps < kShortRun) {
    study.notes.push_back("the runs trained " + std::to_string(fewestSteps) +
                          " updates: too short to rank the schemes (the paper's pattern came "
                          "after ~2B tokens, 20,000 updates at 130M); the table shows the layout");
  }
  int withLoss = 0, tiedLoss = 0;
  bool oneSeed = false;
  for (const auto& r : study.rows) {
    if (!r.lossVal) continue;
    ++withLoss;
    tiedLoss += r.lossTied;
    oneSeed = oneSeed || r.lossVal->n < 2;
  }
  if (oneSeed && withLoss > 1) {
    study.notes.push_back(
        "one seed per scheme: the loss ranks rest on no measured spread; a "
        "--group per seed (train --seed N) gives each its band and ties what "
        "the seeds do not separate");
  }
  if (withLoss > 2 && 2 * tiedLoss >= withLoss) {
    study.notes.push_back(std::to_string(tiedLoss) + " of " + std::to_string(withLoss) +
                          " schemes share loss ranks: the data do not tell them apart");
  }
}

}  // namespace

DepthStudy makeDepthStudy(store::RunStore& s, const std::vector<int64_t>& runIds, int64_t atStep) {
  DepthStudy study;
  std::vector<std::string> order;  // schemes in the order their first run comes
  std::map<std::string, std::vector<store::RunInfo>> runsOf;
  std::map<std::string, std::vector<RunValues>> valuesOf;
  std::set<std::string> shapes;
  for (int64_t id : runIds) {
    const auto run = s.run(id);
    if (!run) throw store::StoreError("no run with id " + std::to_string(id));
    if (experiment::isImportedRun(*run)) {
      study.notes.push_back("run " + std::to_string(id) +
                            " is an imported model, not a trained scheme: left out");
      continue;
    }
    if (!runsOf.count(run->scheme)) order.push_back(run->scheme);
    runsOf[run->scheme].push_back(*run);
    valuesOf[run->scheme].push_back(readRun(s, *run, atStep));
    if (const auto c = experiment::tryConfigOf(*run)) {
      shapes.insert(std::to_string(c->model.nLayers) + " layers x width " +
                    std::to_string(c->model.dModel));
    }
  }
  if (shapes.size() > 1) {
    std::string all;
    for (const auto& x : shapes) all += (all.empty() ? "" : "; ") + x;
    study.notes.push_back("the runs have different shapes (" + all +
                          "): a study compares schemes at one shape");
  }
  for (const auto& scheme : order) {
    study.rows.push_back(makeRow(scheme, runsOf[scheme], valuesOf[scheme]));
    study.maxSeeds = std::max(study.maxSeeds, static_cast<int>(runsOf[scheme].size()));
  }
  rank(
      study.rows, [](const StudyRow& r) { return r.lossVal.has_value(); },
      [](const StudyRow& a, const StudyRow& b) { return a.lossVal->mean < b.lossVal->mean; },
      [](const StudyRow& r) { return *r.lossVal; },
      [](StudyRow& r, int k, bool tied) { r.lossRank = k, r.lossTied = tied; });
  rank(
      study.rows, [](const StudyRow& r) { return r.pruneDeepQuarter.has_value(); },
      [](const StudyRow& a, const StudyRow& b) {
        if (a.pruneDeepQuarter->mean != b.pruneDeepQuarter->mean)
          return a.pruneDeepQuarter->mean > b.pruneDeepQuarter->mean;
        const double ea = a.effectiveLayers ? a.effectiveLayers->mean : -1,
                     eb = b.effectiveLayers ? b.effectiveLayers->mean : -1;
        return ea > eb;
      },
      [](const StudyRow& r) { return *r.pruneDeepQuarter; },
      [](StudyRow& r, int k, bool tied) { r.depthRank = k, r.depthTied = tied; });
  int64_t fewestSteps = 0;
  for (const auto& [scheme, values] : valuesOf) {
    for (const auto& v : values) {
      if (v.steps > 0) fewestSteps = fewestSteps ? std::min(fewestSteps, v.steps) : v.steps;
    }
  }
  noteWhatCannotBeRanked(study, fewestSteps);
  noteUntrained(study.rows);
  std::stable_sort(study.rows.begin(), study.rows.end(), [](const StudyRow& a, const StudyRow& b) {
    const int ra = a.lossRank ? a.lossRank : INT_MAX, rb = b.lossRank ? b.lossRank : INT_MAX;
    if (ra != rb || !a.lossVal || !b.lossVal) return ra < rb;
    return a.lossVal->mean < b.lossVal->mean;  // a shared rank: still in the order of the values
  });
  return study;
}

std::string studyCell(const std::optional<Summary>& s, const char* format, bool withError) {
  if (!s || s->n == 0) return "-";
  auto num = [format](double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  const std::string error = withError && s->se > 0 ? " ± " + num(s->se) : "";
  if (s->n == 1) return num(s->mean) + error;
  return num(s->mean) + error + " [" + num(s->min) + ", " + num(s->max) + "]";
}

std::string rankCell(int rank, bool tied) {
  if (rank <= 0) return "-";
  return (tied ? "=" : "") + std::to_string(rank);
}

std::vector<std::string> studyHeader() {
  return {"loss #",         "scheme",         "seeds",           "val loss",
          "last-layer var", "prune deep 1/4", "effective (E_l)", "depth #"};
}

std::vector<std::vector<std::string>> studyCells(const DepthStudy& study) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : study.rows) {
    std::string effective = studyCell(r.effectiveLayers, "%.3g");
    if (r.effectiveLayers && r.nLayers > 0) effective += " / " + std::to_string(r.nLayers);
    rows.push_back({rankCell(r.lossRank, r.lossTied), r.displayName,
                    std::to_string(r.runIds.size()), studyCell(r.lossVal),
                    studyCell(r.varianceLast), studyCell(r.pruneDeepQuarter, "%.4g", true),
                    effective, rankCell(r.depthRank, r.depthTied)});
  }
  return rows;
}

namespace {

nlohmann::json summaryJson(const std::optional<Summary>& s) {
  if (!s) return nullptr;
  return {{"mean", s->mean},
          {"sd", s->n > 1 ? nlohmann::json(s->std) : nlohmann::json()},
          {"se", s->se > 0 ? nlohmann::json(s->se) : nlohmann::json()},
          {"min", s->min},
          {"max", s->max},
          {"n", s->n}};
}

nlohmann::json rankJson(int rank) { return rank ? nlohmann::json(rank) : nlohmann::json(); }

}  // namespace

nlohmann::json studyJson(const DepthStudy& study) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : study.rows) {
    nlohmann::json profile = nlohmann::json::array();
    for (double v : r.varianceProfile)
      profile.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    rows.push_back({{"scheme", r.scheme},
                    {"name", r.displayName},
                    {"runs", r.runIds},
                    {"seeds", r.seeds},
                    {"layers", r.nLayers},
                    {"deep_quarter_layers", deepQuarterLayers(r.nLayers)},
                    {"loss_rank", rankJson(r.lossRank)},
                    {"loss_rank_tied", r.lossTied},
                    {"depth_rank", rankJson(r.depthRank)},
                    {"depth_rank_tied", r.depthTied},
                    {"loss_val", summaryJson(r.lossVal)},
                    {"variance_last", summaryJson(r.varianceLast)},
                    {"prune_delta_deep_quarter", summaryJson(r.pruneDeepQuarter)},
                    {"effective_layers", summaryJson(r.effectiveLayers)},
                    {"variance_profile", profile},
                    {"notes", r.notes}});
  }
  return {{"schemes", rows}, {"notes", study.notes}, {"max_seeds", study.maxSeeds}};
}

}  // namespace depthlab::analysis
