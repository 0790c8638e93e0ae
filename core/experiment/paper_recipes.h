// The paper's experiments as recipes: the exact configuration of each Table 1 row (LLaMA-130M,
// 250M, 350M, 1B), Fig. 4's 130M variance run, a short 71M recipe that shows the effect within
// an hour on one GPU, and a tiny one that runs the whole path on a CPU in a minute. Each holds
// the paper's numbers to lay a reproduction beside and says, where the paper and the official
// code disagree, which it follows and why. Data only: the values come from
// ../shared/reference/curse-of-depth-facts.md (sections named beside each); launching is
// experiment/reproduction's, printing the CLI's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

/// One group of a recipe: schemes trained side by side under the same scheme options.
struct RecipeArm {
  std::string label;  // "" for the main arm, else e.g. "scaled init"
  std::vector<std::string> schemes;
  bool scaledInit = false;  // Pre-LN + Scaled Initialization (Fig. 4's middle panel)
};

/// A number the paper reports for one arm's scheme.
struct PaperNumber {
  std::string scheme;
  std::string arm;        // RecipeArm::label
  double perplexity = 0;  // validation perplexity on C4 (Table 1)
};

struct PaperRecipe {
  std::string name;    // "table1-130m"
  std::string title;   // one line for lists
  std::string source;  // where the numbers and the settings come from
  std::string preset;  // the model shape (experiment/presets)
  std::vector<RecipeArm> arms;
  int steps = 0, warmupSteps = 0;
  double lr = 0;
  int globalBatch = 512;             // sequences per update
  int microBatch = 64;               // per forward pass (GPU: chosen from memory at launch)
  bool paperSize = true;             // refused on a CPU unless forced
  std::vector<PaperNumber> paper;    // empty: no perplexity to compare (figure recipes)
  double band = 0.5;                 // PPL: the reproduction gap seen on the official code
  std::vector<std::string> choices;  // where paper and code disagree: what this follows, why
  /// The group config of `arm` (an index into arms): preset shape + the paper's recipe.
  ExperimentConfig config(size_t arm) const;
  /// The paper's perplexity for `scheme` in `arm`, if it reports one.
  std::optional<double> paperPerplexity(const std::string& scheme, const std::string& arm) const;
};

const std::vector<PaperRecipe>& paperRecipes();
/// The recipe; ConfigError naming the known ones otherwise.
const PaperRecipe& requireRecipe(const std::string& name);

/// Validation tokens the paper's evaluation reads (non-pad, C4 validation).
inline constexpr double kPaperEvalTokens = 10e6;

}  // namespace depthlab::experiment
