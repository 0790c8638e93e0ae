// `depthlab-cli eval --run ID --task FILE`: a multiple-choice task's accuracy for any run (its
// newest verified checkpoint) or import, scored the way lm-eval scores it: every choice's
// continuation gets its summed log-likelihood after the prompt (tasks/task_scoring.h), acc is
// the share of documents whose best choice is the answer, acc_norm the same with each
// log-likelihood divided by its choice's length in characters; both with lm-eval's standard
// error (the sample standard deviation over sqrt(n)). Tokenization as lm-eval's: trailing
// whitespace of the prompt moves to the continuation, prompt and prompt + continuation are
// encoded, the continuation is what the whole has past the prompt's ids.
// Does not: store anything (a read-only command), or prune (#66's later points).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::hf {

struct TaskEvalOptions {
  std::string taskFile;
  std::string templ = "plain";  // tasks/task_file.h's templates
  int limit = 0;                // documents, 0 = all
  int batch = 8;                // requests a forward pass
  std::string device = "cpu";
  int threads = 0;  // CPU threads; 0 = every core
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
};

/// Throws tasks::TaskError (the file), HfModelError (tokenizer, a request longer than the
/// context, ...) before the model runs.
TaskEvalResult evaluateTask(store::RunStore& store, int64_t runId, const TaskEvalOptions& o);

}  // namespace depthlab::hf
