// LaunchEnv; see launch_env.h.
#include "distributed/launch_env.h"

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace depthlab::distributed {

namespace {

int parseInt(const char* name, const char* value, int lo, int hi) {
  const std::string s = value;
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || v < lo || v > hi) {
    throw std::runtime_error(std::string("the launcher variable ") + name + "='" + s +
                             "' is not a whole number in [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "]");
  }
  return static_cast<int>(v);
}

}  // namespace

std::optional<LaunchEnv> readLaunchEnv(const std::function<const char*(const char*)>& getenvFn) {
  auto get = [&](const char* name) -> const char* {
    const char* v = getenvFn ? getenvFn(name) : std::getenv(name);
    return v && *v ? v : nullptr;
  };
  LaunchEnv env;
  const char *rank = get("RANK"), *world = get("WORLD_SIZE"), *local = get("LOCAL_RANK");
  const char* rankName = "RANK";
  const char* worldName = "WORLD_SIZE";
  const char* localName = "LOCAL_RANK";
  if (world) {
    env.source = get("DEPTHLAB_LAUNCHER") ? "depthlab" : "torchrun";
  } else if (get("SLURM_NTASKS") && get("SLURM_PROCID")) {
    rank = get("SLURM_PROCID"), world = get("SLURM_NTASKS"), local = get("SLURM_LOCALID");
    rankName = "SLURM_PROCID", worldName = "SLURM_NTASKS", localName = "SLURM_LOCALID";
    env.source = "slurm";
  } else {
    return std::nullopt;
  }
  env.worldSize = parseInt(worldName, world, 1, 1 << 20);
  if (!rank) {
    if (env.worldSize > 1) {
      throw std::runtime_error(std::string(worldName) + " is set but " + rankName +
                               " is not: every worker needs its rank");
    }
    rank = "0";
  }
  env.rank = parseInt(rankName, rank, 0, env.worldSize - 1);
  env.localRank = local ? parseInt(localName, local, 0, 1 << 20) : env.rank;
  if (const char* a = get("MASTER_ADDR")) env.masterAddr = a;
  if (const char* p = get("MASTER_PORT")) env.masterPort = parseInt("MASTER_PORT", p, 1, 65535);
  if (const char* a = get("TORCHELASTIC_USE_AGENT_STORE")) env.agentStore = std::string(a) == "True";
  return env;
}

std::vector<std::pair<std::string, std::string>> launchVariables(const LaunchEnv& env) {
  return {{"RANK", std::to_string(env.rank)},
          {"WORLD_SIZE", std::to_string(env.worldSize)},
          {"LOCAL_RANK", std::to_string(env.localRank)},
          {"LOCAL_WORLD_SIZE", std::to_string(env.worldSize)},
          {"MASTER_ADDR", env.masterAddr},
          {"MASTER_PORT", std::to_string(env.masterPort)},
          {"DEPTHLAB_LAUNCHER", "1"}};
}

}  // namespace depthlab::distributed
