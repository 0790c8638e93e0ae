// Joining a data-parallel group; see data_parallel.h.
#include "experiment/data_parallel.h"

#include "distributed/process_group.h"
#include "train/trainer.h"

namespace depthlab::experiment {

std::string DataParallelGroup::describe() const {
  return "rank " + std::to_string(rank) + " of " + std::to_string(worldSize) + " (" + backend +
         ", " + device + ")";
}

std::string rankDevice(const std::string& deviceSpec, const distributed::LaunchEnv& env) {
  if (deviceSpec == "cpu" || deviceSpec.empty()) return "cpu";
  const auto probe = train::resolveDevice("cuda");  // throws when there is no CUDA at all
  (void)probe;
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (env.localRank >= gpus) {
    throw std::runtime_error("local rank " + std::to_string(env.localRank) + " needs a GPU of its own, but this machine has " +
                             std::to_string(gpus) + " (start at most " + std::to_string(gpus) +
                             " processes per node, or train on the CPU with Gloo)");
  }
  return "cuda:" + std::to_string(env.localRank);
}

DataParallelGroup joinDataParallel(const distributed::LaunchEnv& env, const std::string& deviceSpec,
                                   const std::string& backend, double timeoutSeconds) {
  DataParallelGroup g;
  g.device = rankDevice(deviceSpec, env);
  const torch::Device device = train::resolveDevice(g.device);
  g.backend = distributed::chooseBackend(backend, device);
  g.context = distributed::DistContext::create(env, g.backend, device, timeoutSeconds);
  g.rank = env.rank;
  g.worldSize = env.worldSize;
  return g;
}

}  // namespace depthlab::experiment
