// The set-up steps runGroup and resumeRun share before their training loop (see train_loop.h):
// the corpus as a dataset, the thread count, the memory checks before anything is allocated,
// joining data-parallel ranks. Does not train, create runs or choose checkpoints.
#include "experiment/train_loop.h"

#include "data/corpus.h"
#include "data/tokenizer.h"
#include "distributed/batch_shard.h"
#include "distributed/process_group.h"
#include "experiment/resource_estimate.h"
#include "train/devices.h"
#include "train/thread_share.h"

namespace depthlab::experiment {

data::TokenDataset loadDataset(ExperimentConfig& config, const std::function<void()>& beforeBatching,
                               const std::function<void(const std::string&)>& phase,
                               const std::atomic<bool>* stop) {
  auto corpus = data::loadCorpusTokens(config.data, phase, stop);
  config.model.vocabSize = corpus.vocabSize;
  if (beforeBatching) beforeBatching();
  return data::makeDataset(std::move(corpus), config.data, config.model.seqLen,
                           config.optim.batchSize);
}

void applyThreads(const ExperimentConfig& config) {
  const int threads = config.run.threads > 0 ? config.run.threads : train::defaultThreads(config.model);
  torch::set_num_threads(threads);
}

void requireFitsDevice(const ExperimentConfig& c, torch::Device device) {
  if (device.is_cuda()) {
    const auto [freeBytes, totalBytes] = train::cudaMemory(device.index());
    (void)totalBytes;
    if (c.optim.autoMicroBatch) return;  // chooseMicroBatch already tried it on the device
    requireFits(c, static_cast<double>(freeBytes) / 1e6, train::describeDevice(device));
  } else {
    requireFits(c, availableMemoryMB(), "this machine");
  }
}

void requireFitsBeforeData(const ExperimentConfig& c, torch::Device device) {
  ExperimentConfig guess = c;
  const auto& tok = c.data.tokenizer;
  if (tok == "byte") {
    guess.model.vocabSize = data::kByteVocab;
  } else if (tok.rfind("spm:", 0) == 0 && tok.size() > 4 &&
             tok.find_first_not_of("0123456789", 4) == std::string::npos) {
    try {
      guess.model.vocabSize = data::spmVocabSize(tok);
    } catch (const std::exception&) {  // validate() names a bad size
    }
  }
  requireFitsDevice(guess, device);
}

void joinTrainers(std::vector<Member>& members, const RunGroupOptions& o) {
  if (!o.dist) return;
  for (auto& m : members) {
    std::vector<torch::Tensor> params;
    for (const auto& p : m.trainer->model()->parameters()) params.push_back(p.detach());
    o.dist->broadcast(params, 0);
    m.trainer->setDataParallel(o.dist, o.bucketMB);
  }
}

std::string dataParallelNote(const ExperimentConfig& c, const distributed::DistContext& d) {
  const auto shards = distributed::rankShards(c.optim.batchSize, c.optim.gradAccum, 0, d.worldSize());
  return "data-parallel over " + std::to_string(d.worldSize()) + " ranks (" + d.backend() +
         "): each trains " + std::to_string(shards.size()) + " micro-batch(es) of " +
         std::to_string(shards.front().rowEnd - shards.front().rowBegin) +
         " sequences per update; the global batch stays " +
         std::to_string(c.optim.batchSize * c.optim.gradAccum);
}

}  // namespace depthlab::experiment
