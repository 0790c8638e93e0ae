// See reproduction.h.
#include "experiment/reproduction.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <filesystem>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "data/corpus_prepare.h"
#include "data/token_dataset.h"
#include "experiment/config_set.h"
#include "experiment/preflight.h"
#include "experiment/reproduction_report.h"
#include "experiment/resource_estimate.h"
#include "experiment/run_cost.h"
#include "experiment/step_timing.h"
#include "util/remove_tree.h"

namespace depthlab::experiment {

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

ExperimentConfig armConfig(const PaperRecipe& recipe, size_t arm, const ReproduceOptions& o) {
  ExperimentConfig c = recipe.config(arm);
  if (!o.corpus.empty()) c.data.corpus = o.corpus;
  if (!o.tokenizer.empty()) c.data.tokenizer = o.tokenizer;
  c.run.device = o.device;
  if (c.run.device == "cpu") c.run.bf16 = false;  // autocast is the GPU's
  for (const auto& s : o.sets) applyConfigAssignment(c, s);
  return c;
}

// The fields --set changed from the recipe's own: "section.key = new (the recipe's: old)".
std::vector<std::string> departures(const PaperRecipe& recipe, const ReproduceOptions& o) {
  ReproduceOptions without = o;
  without.sets.clear();
  const auto before = toJson(armConfig(recipe, 0, without));
  const auto after = toJson(armConfig(recipe, 0, o));
  std::vector<std::string> out;
  for (const auto& [section, fields] : after.items()) {
    if (!fields.is_object() || !before.contains(section)) continue;
    for (const auto& [key, value] : fields.items()) {
      const auto old = before[section].value(key, nlohmann::json());
      if (old != value) {
        out.push_back(section + "." + key + " = " + value.dump() + " (the recipe's: " + old.dump() + ")");
      }
    }
  }
  return out;
}

// Reads the corpus for inspectCorpus; what this look created beside the corpus (its token
// store, and for spm:N the sample and the SentencePiece model trained on it, all named after
// the corpus) is removed again when the corpus is then refused: a refused recipe leaves nothing.
struct FreshFilesGuard {
  std::string folder, prefix;          // where the store goes, and the corpus's file name + "."
  std::set<std::string> before;        // names in that folder before the look
  explicit FreshFilesGuard(const data::DataConfig& d) {
    if (d.corpus.empty()) return;
    const std::filesystem::path store(data::storeDirFor(d.corpus, d.tokenizer));
    folder = store.parent_path().string();
    std::filesystem::path corpus = std::filesystem::path(d.corpus).lexically_normal();
    if (corpus.filename().empty()) corpus = corpus.parent_path();
    prefix = corpus.filename().string() + ".";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
      before.insert(e.path().filename().string());
    }
  }
  void removeFresh() const {
    if (folder.empty()) return;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) == 0 && !before.count(name)) util::removeTree(e.path().string());
    }
  }
};

// Reads the corpus (preparing its token store): refuses one whose training split the recipe
// would read more than once, as the paper reads C4 once, saying what it has and needs in the
// recipe's own unit (documents when one a row); for a paper-size recipe, sizes the evaluation to
// the paper's 10M non-pad validation tokens from the validation documents' lengths.
void inspectCorpus(ReproductionPlan& p, const PaperRecipe& recipe, bool force,
                   const std::function<void(const std::string&)>& phase) {
  const ExperimentConfig& c = p.arms.front().config;
  const FreshFilesGuard fresh(c.data);
  std::optional<data::CorpusTokens> corpus;
  std::optional<data::TokenDataset> made;
  try {
    corpus = data::loadCorpusTokens(c.data, phase);
    made.emplace(data::makeDataset(*corpus, c.data, c.model.seqLen, c.optim.batchSize));
  } catch (const std::exception& e) {
    corpus.reset();
    fresh.removeFresh();
    std::string why = e.what();
    // The advice in reproduce's own words: its settings change through --set.
    if (auto at = why.find("Use data.packing = packed"); at != std::string::npos) {
      why.replace(at, 25, "Pass --set data.packing=packed (no longer the paper's one document a row)");
    }
    throw ConfigError(why);
  }
  const auto& dataset = *made;
  const double rowsNeeded = static_cast<double>(c.optim.steps) * recipe.globalBatch;
  const double slotsNeeded = rowsNeeded * c.model.seqLen;
  const auto* docs = dataset.documents();
  if (docs && recipe.paperSize && !docs->val().empty()) {
    double targets = 0;  // non-pad targets of a validation row, on average
    for (const auto& d : docs->val()) {
      targets += static_cast<double>(std::min<uint64_t>(d.length, c.model.seqLen + 1) - 1);
    }
    targets /= static_cast<double>(docs->val().size());
    const int batches =
        static_cast<int>(std::ceil(kPaperEvalTokens / (targets * c.optim.batchSize)));
    for (auto& a : p.arms) a.config.run.evalBatches = std::max(a.config.run.evalBatches, batches);
    p.costLines.push_back("evaluation: " + formatThousands(batches) + " batches of " +
                          std::to_string(c.optim.batchSize) + " validation documents (" +
                          formatCount(targets) +
                          " non-pad tokens each on average: >= 10M tokens, as "
                          "the paper) every " +
                          formatThousands(c.run.evalEvery) + " updates");
  }
  if (force) return;
  std::ostringstream why;
  if (docs) {
    const double have = static_cast<double>(docs->train().size());
    if (have >= rowsNeeded) return;
    why << "the corpus's training split holds " << formatCount(have) << " documents ("
        << formatCount(static_cast<double>(dataset.trainTokens())) << " tokens); " << recipe.name
        << " reads " << formatThousands(static_cast<int64_t>(rowsNeeded))
        << " documents, one a row (" << formatCount(slotsNeeded)
        << " token slots): it would pass over the corpus "
        << formatCount(rowsNeeded / std::max(have, 1.0)) << " times, where the paper reads C4 once";
  } else {
    const double have = static_cast<double>(dataset.trainTokens());
    if (have >= slotsNeeded) return;
    why << "the corpus's training split holds " << formatCount(have) << " tokens; " << recipe.name
        << " reads " << formatCount(slotsNeeded) << " (" << formatCount(slotsNeeded / have)
        << " passes)";
  }
  fresh.removeFresh();
  throw ConfigError(why.str() +
                    ". Give it a bigger corpus (C4 en holds ~365M documents, ~156B "
                    "tokens) or --force to train on this one anyway.");
}

void addCost(ReproductionPlan& p, store::RunStore& store) {
  const std::string kind =
      p.arms.empty() || p.arms.front().config.run.device == "cpu" ? "cpu" : "cuda";
  const auto calibration = calibrateTime(store.listRuns(), kind);
  double tokens = 0, disk = 0, memoryMB = 0;
  int runs = 0;
  for (const auto& a : p.arms) {
    for (const auto& scheme : a.toLaunch) {
      const RunEstimate e = estimateRun(a.config, scheme, calibration);
      p.seconds += e.seconds;
      memoryMB += e.memoryMB;
      tokens += static_cast<double>(a.config.optim.steps) * a.config.optim.batchSize *
                a.config.optim.gradAccum * a.config.model.seqLen;
      disk += checkpointBytes(a.config, scheme) * (a.config.run.checkpointKeep + 2);
      ++runs;
    }
    if (!a.toLaunch.empty()) disk += tokenStoreBytesNeeded(a.config.data);
  }
  std::vector<int64_t> resume;
  for (const auto& a : p.arms) resume.insert(resume.end(), a.toResume.begin(), a.toResume.end());
  double gpuSeconds = 0;  // the same runs on one H200, at the lab's measured rate
  for (const auto& a : p.arms) {
    for (const auto& scheme : a.toLaunch) gpuSeconds += h200Seconds(a.config, scheme);
  }
  if (runs > 0) {
    p.h200Seconds = gpuSeconds;
    p.costLines.push_back(std::to_string(runs) + " run(s) to train: " + formatCount(tokens) +
                          " token slots in all (pads included), ~" + formatLongDuration(p.seconds) +
                          " on this " + kind +
                          (calibration.groups > 0
                               ? " (estimate calibrated on " + std::to_string(calibration.groups) +
                                     " finished groups)"
                               : " (uncalibrated FLOP-rate estimate; the first update's time is "
                                 "printed once measured)"));
    p.costLines.push_back("on one NVIDIA H200: ~" + formatLongDuration(gpuSeconds) +
                          " (the lab's measured 669k tokens/s at LLaMA-130M in bf16, scaled by "
                          "FLOPs; the CUDA build is `make run-torch2`, build/torch2)");
    p.costLines.push_back("disk: up to " + formatBytes(disk) +
                          " (the token store if not prepared yet, and each run's kept checkpoints)"
                          "; memory: ~" +
                          formatBytes(memoryMB * 1e6) + " while the schemes train in turn");
  }
  if (!resume.empty()) {
    std::string ids;
    for (int64_t id : resume) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    p.costLines.push_back("to resume from their newest checkpoints: run(s) " + ids);
  }
}

// One update timed here (two rows of a micro-batch on a CPU, scaled), made into the time of
// every update left to launch.
void addMeasuredTime(ReproductionPlan& p, const std::function<void(const std::string&)>& phase) {
  int64_t updates = 0;
  const ArmPlan* first = nullptr;
  for (const auto& a : p.arms) {
    if (a.toLaunch.empty()) continue;
    if (!first) first = &a;
    updates += static_cast<int64_t>(a.config.optim.steps) * static_cast<int64_t>(a.toLaunch.size());
  }
  if (!first) return;
  const ExperimentConfig& c = first->config;
  if (phase) phase("timing one update of " + first->toLaunch.front() + " on " + c.run.device);
  const MeasuredUpdate m = measureUpdate(c, first->toLaunch.front(), c.run.device == "cpu" ? 2 : 0);
  p.measuredSeconds = m.seconds * static_cast<double>(updates);
  const int global = c.optim.batchSize * c.optim.gradAccum;
  p.costLines.push_back(
      "measured here: one update (" + std::to_string(global) + " sequences) takes " +
      formatDuration(m.seconds) +
      (m.rowsTimed < global ? " (" + std::to_string(m.rowsTimed) + " sequences timed, scaled)"
                            : "") +
      ": " + formatThousands(updates) + " updates ~ " + formatLongDuration(p.measuredSeconds) +
      " of training here, evaluations and probes besides");
}

}  // namespace

double recipeH200Seconds(const PaperRecipe& recipe, const std::vector<std::string>& schemes) {
  double seconds = 0;
  for (size_t i = 0; i < recipe.arms.size(); ++i) {
    const ExperimentConfig c = recipe.config(i);
    for (const auto& s : recipe.arms[i].schemes) {
      if (schemes.empty() || has(schemes, s)) seconds += h200Seconds(c, s);
    }
  }
  return seconds;
}

bool ReproductionPlan::nothingToDo() const {
  for (const auto& a : arms) {
    if (!a.toLaunch.empty() || !a.toResume.empty()) return false;
  }
  return true;
}

ReproductionPlan planReproduction(store::RunStore& store, const PaperRecipe& recipe,
                                  const ReproduceOptions& o,
                                  const std::function<void(const std::string&)>& phase) {
  for (const auto& s : o.schemes) {
    bool known = false;
    for (const auto& a : recipe.arms) known |= has(a.schemes, s);
    if (!known) throw ConfigError("recipe " + recipe.name + " has no scheme '" + s + "'");
  }
  ReproductionPlan p;
  p.recipe = &recipe;
  p.departures = departures(recipe, o);
  for (const auto& d : p.departures) p.costLines.push_back("not the paper's: " + d);
  const auto existing = recipeRuns(store, recipe);
  for (size_t i = 0; i < recipe.arms.size(); ++i) {
    ArmPlan a;
    a.arm = i;
    a.config = armConfig(recipe, i, o);
    const std::string tag = recipeTag(recipe, i);
    for (const auto& scheme : recipe.arms[i].schemes) {
      if (!o.schemes.empty() && !has(o.schemes, scheme)) continue;
      auto run = std::find_if(existing.begin(), existing.end(), [&](const store::RunInfo& r) {
        return r.scheme == scheme && has(r.tags, tag);
      });
      if (run == existing.end())
        a.toLaunch.push_back(scheme);
      else if (run->status == store::RunStatus::Finished)
        a.done.push_back(run->id);
      else
        a.toResume.push_back(run->id);
    }
    a.config.schemes = a.toLaunch;
    p.arms.push_back(std::move(a));
  }
  addCost(p, store);
  const bool launches = std::any_of(p.arms.begin(), p.arms.end(),
                                    [](const ArmPlan& a) { return !a.toLaunch.empty(); });
  if (launches && recipe.paperSize && o.device == "cpu" && !o.force) {
    throw ConfigError(recipe.name + " is a paper-size recipe: ~" + formatLongDuration(p.seconds) +
                      " of training on this CPU by the estimate, ~" +
                      formatLongDuration(p.h200Seconds) +
                      " on one H200. Run it on a GPU (--device cuda, with the CUDA build: "
                      "build/torch2) or pass --force to start it here anyway.");
  }
  if (launches && o.corpus.empty()) {
    throw ConfigError(
        "reproduce needs --corpus: a recipe reads one document a row (.jsonl records "
        "such as C4's en .json.gz files, or a folder of text files), and the lab's "
        "default corpus is one text file, one document");
  }
  // Every arm reads the same corpus the same way: one look serves them all.
  if (launches && o.checkCorpus) inspectCorpus(p, recipe, o.force, phase);
  if (launches && o.checkCorpus && o.measureStep) addMeasuredTime(p, phase);
  return p;
}

void runReproduction(store::RunStore& store, const ReproductionPlan& plan,
                     const RunGroupOptions& options) {
  auto stopped = [&] { return options.stopFlag && options.stopFlag->load(); };
  for (const auto& a : plan.arms) {
    for (int64_t id : a.toResume) {
      if (stopped()) return;
      resumeRun(id, store, options);
    }
    if (a.toLaunch.empty() || stopped()) continue;
    RunGroupOptions o = options;
    const std::string tag = recipeTag(*plan.recipe, a.arm);
    o.onRunsStarted = [&](const std::vector<int64_t>& ids) {
      for (int64_t id : ids) {
        store.addTag(id, tag);
        if (plan.departures.empty()) continue;
        store::WriteBatch b;  // the run's own record of what is not the paper's
        for (const auto& d : plan.departures) {
          b.event(0, store::EventLevel::Warning, "not the paper's recipe: " + d);
        }
        store.write(id, b);
      }
      if (options.onRunsStarted) options.onRunsStarted(ids);
    };
    runGroup(a.config, store, o);
  }
}

}  // namespace depthlab::experiment
