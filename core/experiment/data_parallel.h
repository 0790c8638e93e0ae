// Joining a data-parallel group from the command line without torch headers: the launcher's
// environment, the device and backend by name, and the group as an opaque handle the run loop
// takes (RunGroupOptions::dist). Rank 0 is the group's writer (store, checkpoints, probes).
#pragma once

#include <memory>
#include <string>

#include "distributed/launch_env.h"

namespace depthlab::distributed {
class DistContext;
}

namespace depthlab::experiment {

struct DataParallelGroup {
  std::shared_ptr<distributed::DistContext> context;
  int rank = 0, worldSize = 1;
  std::string backend, device;  // "gloo" / "nccl"; "cpu" / "cuda:N"
  std::string describe() const;  // "rank 0 of 2 (gloo, cpu)"
};

/// This rank's device for `deviceSpec` ("cpu", "cuda", "cuda:N"): on CUDA, one GPU per local
/// rank (cuda:LOCAL_RANK), refused with a message when there are fewer GPUs than local ranks.
std::string rankDevice(const std::string& deviceSpec, const distributed::LaunchEnv& env);

/// Connects to the group the launcher's environment describes; `backend` auto | gloo | nccl.
/// Throws distributed::CommError (a std::runtime_error) saying what failed.
DataParallelGroup joinDataParallel(const distributed::LaunchEnv& env, const std::string& deviceSpec,
                                   const std::string& backend, double timeoutSeconds);

}  // namespace depthlab::experiment
