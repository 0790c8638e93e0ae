// The probes' traced forward pass (every block's input and scaled norm outputs kept), on the
// CPU split into fixed chunks of rows that run side by side on the caller's intra-op threads,
// each chunk a single-threaded pass (train/thread_share.h), the chunks' traces then joined
// along the batch. Why: the chunks depend only on the batch's shape, so the numbers are the
// same at 1, 2 or 16 threads (and beside training, where the probes get one thread); and at the
// lab's small widths whole passes side by side beat ops split over threads (measured on a
// 2-vCPU machine: ~46 -> ~41 ms a cpu-demo probe pass). On other devices: one pass, as before.
// Does not: compute any statistic (depth_probes.cpp does) or change grad mode / train mode.
// Legend: B rows, T sequence length, C width, V vocabulary.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "model/decoder.h"

namespace depthlab::probes {

/// A chunk is about this many tokens (whole rows, at least one): enough for the GEMMs to run
/// well, small enough to give two or more threads work at the probes' default 8 x 64 batch.
constexpr int64_t kTracedChunkTokens = 256;

/// The contiguous row ranges [begin, end) a (rows, seqLen) probe batch is cut into on the CPU.
std::vector<std::pair<int64_t, int64_t>> tracedChunks(int64_t rows, int64_t seqLen);

/// The logits (B, T, V) of inputs (B, T) int64, with `trace` filled for every block as
/// model->forward(inputs, {}, &trace) fills it.
torch::Tensor tracedForward(model::Decoder& model, const torch::Tensor& inputs,
                            model::ForwardTrace& trace);

}  // namespace depthlab::probes
