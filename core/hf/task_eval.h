// `depthlab-cli eval --run ID --task FILE`: a multiple-choice task's accuracy for any run (its
// newest verified checkpoint) or import, scored the way lm-eval scores it: every choice's
// continuation gets its summed log-likelihood after the prompt (tasks/task_scoring.h), acc is
// the share of documents whose best choice is the answer, acc_norm the same with each
// log-likelihood divided by its choice's length in characters; both with lm-eval's standard
// error (the sample standard deviation over sqrt(n)). Tokenization as lm-eval's: trailing
// whitespace of the prompt moves to the continuation, prompt and prompt + continuation are
// encoded, the continuation is what the whole has past the prompt's ids.
// With --prune, the pruning study of Gromov et al. (arXiv 2403.17887, Fig. 1): the accuracy and
// the loss beside each other as blocks are removed, stored with the run for the figure
// (`export --figure pruned-task`). Does not: heal (#66's next point).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hf/model_analysis.h"
#include "store/run_store.h"

namespace depthlab::hf {

struct TaskEvalOptions {
  std::string taskFile;
  std::string templ = "plain";  // tasks/task_file.h's templates
  int limit = 0;                // documents, 0 = all
  int batch = 8;                // requests a forward pass
  std::string device = "cpu";
  int threads = 0;  // CPU threads; 0 = every core
  // --prune: the accuracy and the loss with n = 1..maxRemoved blocks removed (0: L/2), as
  // Gromov et al. choose them (the n-block span of least angular distance d(x_l, x_l+n)) and the
  // n deepest before the last block; stored with the run (task_eval.h's rows).
  bool prune = false;
  int maxRemoved = 0;
  TextInput text;  // an import's text for the loss and the angular distances (a trained run:
                   // its own probe batch)
};

/// One point of the pruning sweep: n blocks removed from `firstBlock` (0-based).
struct PrunedTaskPoint {
  int removed = 0, firstBlock = 0;
  double acc = 0, accNorm = 0, loss = 0;
};

struct TaskEvalResult {
  int documents = 0, requests = 0;
  double acc = 0, accStderr = 0, accNorm = 0, accNormStderr = 0;
  double chance = 0;                                // mean of 1 / choices
  std::vector<std::vector<double>> logLikelihoods;  // per document, per choice
  std::vector<int> answers;                         // per document
  int context = 0;                                  // the most tokens a request may take
  std::string tokensHow, modelFrom;
  std::vector<std::string> skippedCheckpoints;  // newer ones passed over: "step N: why"
  // --prune: n = 0..N for each choice of blocks (n = 0: the whole model), the loss on
  // `lossText`; written to the run at `step` (task_acc_pruned, task_acc_norm_pruned,
  // task_loss_pruned, task_prune_first: row 0 the angular choice, row 1 the deepest).
  std::vector<PrunedTaskPoint> angular, deepest;
  int nLayers = 0;
  int64_t step = 0;
  std::string lossText;
};

/// Throws tasks::TaskError (the file), HfModelError (tokenizer, a request longer than the
/// context, an import pruned without a text, ...) before the model runs. Writes to the store only
/// with `prune`.
TaskEvalResult evaluateTask(store::RunStore& store, int64_t runId, const TaskEvalOptions& o);

}  // namespace depthlab::hf
