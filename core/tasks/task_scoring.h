// The log-likelihood of a continuation after a context, as lm-eval's `loglikelihood` computes it
// for a causal model: the model reads context + continuation less its last token in one pass,
// and the log-probabilities of the continuation's tokens at the positions that predict them are
// summed. Requests are batched, right-padded (a causal model's positions before the pad do not
// see it), and only the rows that predict a continuation token go through the head (no
// (B, T, V) logits). float32 log-softmax, sums in float64.
// Does not: tokenize (the caller splits the ids as lm-eval does: tasks/task_file.h's requests,
// hf/task_eval.cpp), choose answers, or store.
// Legend: B requests in a batch, T their longest input, C width, V vocabulary, M scored tokens.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "model/decoder.h"

namespace depthlab::tasks {

struct TokenizedRequest {
  std::vector<int32_t> context;       // at least one id
  std::vector<int32_t> continuation;  // at least one id
};

/// sum_i log p(continuation_i | context, continuation_<i) of every request, in order; `batch`
/// requests a forward pass, on the model's device (ids as int64 there). `opts.skip`: blocks
/// removed (the identity), as the pruning probes remove them.
std::vector<double> logLikelihoods(model::Decoder& model,
                                   const std::vector<TokenizedRequest>& requests, int batch,
                                   const model::ForwardOptions& opts = {});

}  // namespace depthlab::tasks
