// One update's forward and backward passes data-parallel over the CPU's threads, inside one
// process: each worker thread (one intra-op thread) takes a fixed contiguous share of every
// micro-batch's rows, runs the model's loss on it and differentiates with autograd::grad into
// its own gradient buffers; the shares are then summed parameter by parameter (in worker
// order, the parameters dealt out over the workers) into each parameter's .grad.
//
// Why: splitting every op of a small model across ATen's threads synchronises the threads
// hundreds of times an update and moves every activation between the cores. On this project's
// 2-vCPU machines the host moves the virtual CPUs between core complexes while a run goes on,
// and a core-to-core round trip then costs 330 ns instead of 57: per-op splitting halved its
// speed for whole minutes (measured: docs/performance.md, "Speed on the CPU"). Two passes over
// halves of the batch share nothing but the (read-only) weights.
//
// Does not: clip, step or look at the gradients (the trainer does, with every thread); run on
// CUDA or beside data-parallel ranks (the trainer decides when it applies).
// Legend: B micro-batch rows, T sequence length.
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <utility>
#include <vector>

#include "model/decoder.h"
#include "train/worker_team.h"

namespace depthlab::train {

/// The contiguous row ranges [begin, end) of `rows` rows dealt over `workers` (the first
/// rows % workers shares one row longer); never more shares than rows.
std::vector<std::pair<int64_t, int64_t>> rowShares(int64_t rows, int workers);

struct RowSplitResult {
  torch::Tensor lossSum;     // () sum over the micro-batches of each one's mean loss
  bool interrupted = false;  // the flag was set between micro-batches: gradients left unset
};

/// Forward and backward of every micro-batch (inputs and targets (B, T), the same B for all),
/// rows dealt over `team`'s threads; leaves params[i].grad() = d(mean over micro-batches of
/// their mean loss)/d params[i] (undefined for a parameter no loss reaches). A micro-batch's
/// mean is over its targets that count (pads, data::kIgnoreTarget, do not), as one pass over
/// it takes it: each share weighs by its counted targets. `params` must be every trainable
/// parameter of `model`.
RowSplitResult rowSplitBackward(model::Decoder& model, const std::vector<torch::Tensor>& params,
                                const std::vector<std::pair<torch::Tensor, torch::Tensor>>& micro,
                                WorkerTeam& team, const std::atomic<bool>* interrupt);

}  // namespace depthlab::train
