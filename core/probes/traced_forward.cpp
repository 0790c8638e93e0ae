// See traced_forward.h.
#include "probes/traced_forward.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "train/thread_share.h"
#include "train/worker_team.h"

namespace depthlab::probes {

std::vector<std::pair<int64_t, int64_t>> tracedChunks(int64_t rows, int64_t seqLen) {
  const int64_t perChunk = std::max<int64_t>(1, kTracedChunkTokens / std::max<int64_t>(1, seqLen));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t b = 0; b < rows; b += perChunk) out.emplace_back(b, std::min(rows, b + perChunk));
  return out;
}

namespace {

// The chunks' (two or more) tensors joined along the batch; undefined when the chunks' are
// (a block without that norm).
torch::Tensor joined(const std::vector<torch::Tensor>& parts) {
  if (!parts.front().defined()) return {};
  return torch::cat(parts, 0);
}

// One team of threads kept for the probes' traced passes (they come every few dozen updates;
// starting threads each time cost 7-13 ms of a ~30 ms pass). Whoever holds `lock` uses it; a
// second caller meanwhile (another thread's probes) runs its chunks in turn instead.
struct KeptTeam {
  std::mutex lock;
  std::unique_ptr<train::WorkerTeam> team;
};
// Never destroyed: joining its threads during static destruction, after LibTorch's own
// globals may be gone, could crash a program at exit; the idle threads end with the process.
KeptTeam& keptTeam() {
  static KeptTeam* kept = new KeptTeam;
  return *kept;
}

}  // namespace

torch::Tensor tracedForward(model::Decoder& model, const torch::Tensor& inputs,
                            model::ForwardTrace& trace) {
  const auto chunks = inputs.device().is_cpu() ? tracedChunks(inputs.size(0), inputs.size(1))
                                               : std::vector<std::pair<int64_t, int64_t>>{};
  if (chunks.size() <= 1) return model->forward(inputs, {}, &trace);
  const size_t n = chunks.size();
  std::vector<model::ForwardTrace> traces(n);
  for (auto& t : traces) t.detailed = trace.detailed;
  std::vector<torch::Tensor> logits(n);
  const int wanted = static_cast<int>(std::min<size_t>(n, std::max(1, at::get_num_threads())));
  // Chunk i on worker i % workers; every chunk single-threaded, so its bits do not depend on
  // how many workers there are.
  auto runChunks = [&](int worker, int workers) {
    for (size_t i = static_cast<size_t>(worker); i < n; i += static_cast<size_t>(workers)) {
      logits[i] =
          model->forward(inputs.slice(0, chunks[i].first, chunks[i].second), {}, &traces[i]);
    }
  };
  auto& kept = keptTeam();
  std::unique_lock<std::mutex> held(kept.lock, std::defer_lock);
  if (wanted > 1 && held.try_lock()) {
    if (!kept.team || kept.team->size() != wanted) {
      kept.team.reset();
      kept.team = std::make_unique<train::WorkerTeam>(wanted, train::WorkerTeam::Caller::Waits);
    }
    kept.team->run([&](int worker) { runChunks(worker, wanted); });
    held.unlock();
  } else {
    train::IntraOpThreads one(1);
    runChunks(0, 1);
  }
  const size_t L = traces[0].blocks.size();
  trace.blockInputs.clear();
  trace.blocks.assign(L, {});
  std::vector<torch::Tensor> parts(n);
  for (size_t l = 0; l < traces[0].blockInputs.size(); ++l) {
    for (size_t i = 0; i < n; ++i) parts[i] = traces[i].blockInputs[l];
    trace.blockInputs.push_back(joined(parts));
  }
  for (size_t l = 0; l < L; ++l) {  // every tensor BlockTrace has, joined over the chunks
    for (auto member : {&model::BlockTrace::attnNormOut, &model::BlockTrace::ffnNormOut,
                        &model::BlockTrace::attnNormIn, &model::BlockTrace::ffnNormIn,
                        &model::BlockTrace::attnDelta, &model::BlockTrace::ffnDelta,
                        &model::BlockTrace::attnStream, &model::BlockTrace::ffnStream,
                        &model::BlockTrace::attnEntropy, &model::BlockTrace::attnFirstKey}) {
      for (size_t i = 0; i < n; ++i) parts[i] = traces[i].blocks[l].*member;
      trace.blocks[l].*member = joined(parts);
    }
  }
  return torch::cat(logits, 0);
}

}  // namespace depthlab::probes
