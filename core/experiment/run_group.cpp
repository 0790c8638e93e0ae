// runGroup: starts a paired group (see run_group.h); resumeRun is in run_resume.cpp. The loop
// itself is experiment/train_loop.
#include "experiment/run_group.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include "distributed/process_group.h"
#include "experiment/checkpoint_folder.h"
#include "experiment/group_names.h"
#include "experiment/micro_batch.h"
#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "experiment/train_loop.h"
#include "store/metric_catalogue.h"
#include "train/checkpoint.h"
#include "train/checkpoint_tensors.h"
#include "train/devices.h"

namespace depthlab::experiment {

namespace {

// The group's name without --name: its preset, as the window and the docs say ("tiny", then
// "tiny 2" when taken: uniqueGroupName), not a timestamp.
std::string defaultGroupName(const ExperimentConfig& c) {
  return c.preset.empty() ? std::string("custom") : c.preset;
}

// A data-parallel rank other than 0 keeps its runs in a scratch store in memory.
store::RunStore scratchStore() { return store::RunStore::open(":memory:"); }

// A new run never inherits files: a folder of its id that holds checkpoints is moved aside
// (said on m.setAsideNote); one that cannot be moved refuses the group, its runs (created, not
// yet started) deleted again.
void claimRunFolder(Member& m, store::RunStore& store, const std::vector<int64_t>& runIds,
                    const RunGroupOptions& options) {
  std::string aside;
  try {
    aside = setAsideInheritedFolder(m.checkpointDir);
  } catch (const std::exception&) {
    for (int64_t id : runIds) store.deleteRun(id);
    throw;
  }
  if (aside.empty()) return;
  m.setAsideNote = "the folder " + m.checkpointDir +
                   " held checkpoints of an earlier run with this id; moved to " + aside;
  if (options.onNotice) options.onNotice(m.setAsideNote);
}

}  // namespace

GroupResult runGroup(const ExperimentConfig& input, store::RunStore& callerStore,
                     const RunGroupOptions& options) {
  requireValid(input);
  const auto started = Clock::now();
  auto phase = [&](const std::string& what) {
    if (options.onPhase) options.onPhase(since(started), what);
  };
  distributed::DistContext* dist = options.dist;
  const bool writer = !dist || dist->rank() == 0;
  std::optional<store::RunStore> scratch;
  if (!writer) scratch.emplace(scratchStore());
  store::RunStore& store = writer ? callerStore : *scratch;
  // Before any data is read: a folder that cannot take checkpoints refuses the group, and a
  // copied database takes its own id (experiment/checkpoint_folder).
  const std::string checkpointBase = absoluteCheckpointBase(options.checkpointDir);
  const std::string copyNote = writer ? claimCheckpointFolder(store, checkpointBase) : "";
  if (!copyNote.empty() && options.onNotice) options.onNotice(copyNote);
  ExperimentConfig config = input;
  makePathsAbsolute(config);  // a run resumed from another directory reads the same files
  const torch::Device device = dist ? dist->device() : train::resolveDevice(config.run.device);
  requireFitsBeforeData(config, device);  // every size, before a token is read or a byte allocated
  std::string microBatchChoice;
  // bad corpora fail here, before any run; so does a model that does not fit the GPU at all.
  // Data-parallel: rank 0 reads (and if need be prepares) the corpus and chooses the
  // micro-batch first; the others then map the same token store with that choice.
  auto loadData = [&]() -> data::TokenDataset {
    if (writer) {
      auto d = loadDataset(
          config, [&] { microBatchChoice = chooseMicroBatch(config, device); }, phase, options.stopFlag);
      if (dist) {
        dist->setValue("depthlab/batch", std::to_string(config.optim.batchSize) + " " +
                                             std::to_string(config.optim.gradAccum));
      }
      return d;
    }
    phase("waiting for rank 0 to read the corpus");
    std::istringstream batch(dist->waitValue("depthlab/batch", "rank 0 to read the corpus"));
    batch >> config.optim.batchSize >> config.optim.gradAccum;
    return loadDataset(config, {}, phase, options.stopFlag);
  };
  data::TokenDataset dataset = loadData();
  applyThreads(config);
  requireFitsDevice(config, device);  // a model that cannot fit is refused before it allocates
  phase("building " + std::to_string(config.schemes.size()) + " model(s)");
  std::vector<Member> members;
  std::vector<store::NewRun> newRuns;
  for (const auto& scheme : config.schemes) {
    Member m;
    m.config = config;
    m.writer = writer;
    m.trainer = std::make_unique<train::Trainer>(trainerConfig(config), scheme, device);
    store::NewRun nr;
    nr.scheme = scheme;
    nr.device = train::describeDevice(device);
    if (dist) nr.device += " x" + std::to_string(dist->worldSize()) + " " + dist->backend();
    nr.seed = config.run.seed;
    if (writer) nr.checkpointBase = checkpointBase;
    newRuns.push_back(std::move(nr));
    members.push_back(std::move(m));
  }
  if (dist) phase("joining " + std::to_string(dist->worldSize()) + " data-parallel ranks");
  joinTrainers(members, options);
  // The group's name is chosen and its runs created in one store transaction: a name in use
  // (by any process) gets the next free " N" suffix.
  const std::string base = config.name.empty() ? defaultGroupName(config) : config.name;
  const auto [groupName, runIds] = store.createGroup(
      std::move(newRuns), [&](const std::set<std::string>& taken) { return uniqueGroupName(base, taken); },
      [&](const std::string& group, store::NewRun& nr) {
        ExperimentConfig runConfig = config;
        runConfig.name = group;
        runConfig.schemes = {nr.scheme};
        nr.name = defaultRunName(group, nr.scheme, config.run.seed);
        nr.configJson = toJson(runConfig).dump();
      });
  config.name = groupName;
  GroupResult result;
  result.groupName = config.name;
  for (size_t i = 0; i < members.size(); ++i) {
    Member& m = members[i];
    m.config.name = config.name;
    m.runId = runIds[i];
    if (writer) {
      m.checkpointDir = runCheckpointDir(store, m.runId, checkpointBase);
      claimRunFolder(m, store, runIds, options);
    }
    m.storeId = store.storeId();
    m.progress = {m.runId, config.schemes[i], store::RunStatus::Running, 0, 0, std::nullopt, 0, std::nullopt};
  }
  if (options.onRunsStarted && writer) {
    std::vector<int64_t> ids;
    for (const auto& m : members) ids.push_back(m.runId);
    options.onRunsStarted(ids);
  }
  for (auto& m : members) {
    store.markRunning(m.runId);
    store::WriteBatch b;
    if (!m.setAsideNote.empty()) b.event(0, store::EventLevel::Warning, m.setAsideNote);
    if (!microBatchChoice.empty()) b.event(0, store::EventLevel::Info, microBatchChoice);
    if (dist) b.event(0, store::EventLevel::Info, dataParallelNote(config, *dist));
    if (!copyNote.empty()) b.event(0, store::EventLevel::Warning, copyNote);
    if (!b.empty()) store.write(m.runId, b);
  }
  phase("first step of group " + config.name + " (probes of the initial state, then one update per model)");
  trainLoop(members, config, dataset, store, options, 0, result, [&] { phase("first step done; training"); });
  return result;
}

}  // namespace depthlab::experiment
