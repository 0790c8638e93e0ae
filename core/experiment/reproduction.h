// Running a paper recipe (experiment/paper_recipes) on the user's corpus and device: a plan that
// says what exists (each arm's runs in the store, finished or to resume) and what the rest will
// cost here (tokens, time from the calibrated estimate, disk for the store and checkpoints,
// memory), refusing a paper-size recipe on a CPU and a corpus too small for the recipe's budget
// unless forced; then the training itself, resuming unfinished runs and launching the missing
// schemes tagged as the recipe's. Rerunning the same command after a crash continues it. The
// report is experiment/reproduction_report's; printing is the CLI's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiment/paper_recipes.h"
#include "experiment/run_group.h"
#include "store/run_store.h"

namespace depthlab::experiment {

struct ReproduceOptions {
  std::string corpus;     // "" = the default corpus
  std::string tokenizer;  // "" = the recipe's (spm:32000 for the paper sizes)
  std::string device = "cpu";
  std::vector<std::string> schemes;  // only these of the recipe's (empty: all)
  std::vector<std::string> sets;     // "section.key=value" over every arm's config (--set);
                                     // each change is said as a departure from the paper
  bool force = false;                // a paper size on a CPU, a corpus read more than once
  bool checkCorpus = true;           // false: the plan and cost without reading the corpus (the
                                     // window's dialog, as the user types)
  bool measureStep = true;           // with checkCorpus: time one update here for the cost
                                     // (experiment/step_timing)
};

struct ArmPlan {
  size_t arm = 0;
  ExperimentConfig config;            // the recipe's, with the user's corpus, tokenizer, device
  std::vector<std::string> toLaunch;  // schemes with no run yet
  std::vector<int64_t> toResume;      // runs that have not trained all their steps
  std::vector<int64_t> done;          // finished runs
};

struct ReproductionPlan {
  const PaperRecipe* recipe = nullptr;
  std::vector<ArmPlan> arms;
  std::vector<std::string> costLines;  // what the rest will cost here, to print before it starts
  std::vector<std::string> departures; // "data.packing = packed (the recipe's: document)": the
                                       // --set changes that make it no longer the paper's
  double seconds = 0;                  // the estimate for what remains (calibrated FLOP rate)
  double measuredSeconds = 0;          // the same from an update timed here (0: not measured)
  double h200Seconds = 0;              // the same on one H200 at the lab's measured rate
  bool nothingToDo() const;
};

/// The plan; reads the corpus (preparing its token store) when anything is left to launch and
/// options.checkCorpus.
/// Seconds the recipe's runs (every arm and scheme, or only `schemes` when not empty) would
/// train on one H200 at the lab's measured rate (experiment/resource_estimate's h200Seconds).
double recipeH200Seconds(const PaperRecipe& recipe, const std::vector<std::string>& schemes = {});

/// A corpus refused after its token store was first written here leaves no store behind.
/// Throws ConfigError when the recipe may not start as asked: a paper-size recipe on a CPU
/// (with its time estimate), a corpus whose training split the recipe would read more than once
/// (with the tokens and documents it has and needs), a scheme the recipe does not have.
ReproductionPlan planReproduction(store::RunStore& store, const PaperRecipe& recipe,
                                  const ReproduceOptions& options,
                                  const std::function<void(const std::string&)>& phase = {});

/// Trains what `plan` leaves: each unfinished run resumed, each arm's missing schemes launched
/// as one group (their runs tagged recipeTag()). Stops early when options.stopFlag is set.
void runReproduction(store::RunStore& store, const ReproductionPlan& plan,
                     const RunGroupOptions& options);

}  // namespace depthlab::experiment
