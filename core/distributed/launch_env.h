// LaunchEnv: which rank of how many this process is, read from the environment a launcher
// sets: torchrun / torch.distributed (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
// or Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; MASTER_ADDR / MASTER_PORT still
// come from the job script). Parsing only: no sockets, no torch.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace depthlab::distributed {

struct LaunchEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  std::string source;  // "torchrun", "slurm" or "depthlab" (train --nproc), for messages
  bool agentStore = false;  // torchrun's agent already serves the TCPStore at MASTER_PORT
                            // (TORCHELASTIC_USE_AGENT_STORE=True): rank 0 connects as a client
};

/// Reads the launcher's variables through `getenv` (std::getenv when empty). nullopt when no
/// launcher set them (a plain single-process run). Throws std::runtime_error naming the
/// variable when one is malformed (not a number, rank outside [0, world), a bad port).
std::optional<LaunchEnv> readLaunchEnv(
    const std::function<const char*(const char*)>& getenv = {});

/// The variables a worker of `env` gets (what torchrun sets), for launching local workers.
std::vector<std::pair<std::string, std::string>> launchVariables(const LaunchEnv& env);

}  // namespace depthlab::distributed
