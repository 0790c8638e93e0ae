// Data-parallel options of the CLI; see cli_distributed.h.
#include "cli_distributed.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "distributed/launch_env.h"
#include "distributed/local_launcher.h"
#include "distributed/process_group.h"

namespace depthlab::cli {

void addDistOptions(CLI::App* command, DistArgs& a) {
  command->add_option("--nproc", a.nproc,
                      "Data-parallel ranks started on this machine: GPUs (one each, NCCL) or CPU "
                      "processes (Gloo); default: the config's run.processes. Under torchrun or "
                      "srun the launcher's ranks are used");
  command->add_option("--backend", a.backend,
                      "c10d backend: auto (NCCL on CUDA, else Gloo), gloo, nccl");
  command->add_option(
      "--dist-timeout", a.timeoutSeconds,
      "Seconds a rank waits for the others (rendezvous, each collective) before failing");
  command->add_option("--bucket-mb", a.bucketMB, "Gradient all-reduce bucket size (MB)");
}

void requireValid(const DistArgs& a, bool nprocGiven) {
  // Checked here rather than by CLI11, so that a bad value is a clean error (exit code 1).
  if (nprocGiven && (a.nproc < 1 || a.nproc > 1024)) {
    throw std::runtime_error("--nproc must be in [1, 1024] (got " + std::to_string(a.nproc) + ")");
  }
  if (a.backend != "auto" && a.backend != "gloo" && a.backend != "nccl") {
    throw std::runtime_error("--backend must be auto, gloo or nccl (got '" + a.backend + "')");
  }
  if (!(a.timeoutSeconds >= 1 && a.timeoutSeconds <= 86400)) {
    throw std::runtime_error("--dist-timeout must be in [1, 86400] seconds");
  }
  if (!(a.bucketMB >= 0.001 && a.bucketMB <= 4096)) {
    throw std::runtime_error("--bucket-mb must be in [0.001, 4096]");
  }
}

distributed::LocalLaunch selfLaunch(const GlobalOptions& g, int processes, double graceSeconds,
                                    const std::vector<std::string>& extraArgs) {
  distributed::LocalLaunch l;
  std::error_code ec;
  l.executable = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || l.executable.empty())
    throw std::runtime_error("cannot find this executable to start its ranks");
  l.args = g.argv;
  l.args.insert(l.args.end(), extraArgs.begin(), extraArgs.end());
  l.processes = processes;
  l.graceSeconds = graceSeconds;
  l.onNotice = [](const std::string& s) {
    std::fprintf(stderr, "\ndepthlab-cli: %s\n", s.c_str());
  };
  return l;
}

std::optional<int> launchLocalRanksIfAsked(const DistArgs& a, int processes, const GlobalOptions& g,
                                           const std::string& device) {
  if (processes <= 1 || distributed::readLaunchEnv()) return std::nullopt;
  if (a.backend == "nccl" && device == "cpu") {  // said once here, not once per rank
    throw std::runtime_error(
        "--backend nccl needs a CUDA device (--device cuda); the CPU uses gloo");
  }
  auto l = selfLaunch(g, processes, a.timeoutSeconds + 30);
  std::fprintf(stderr, "depthlab-cli: starting %d data-parallel ranks on this machine\n",
               processes);
  return distributed::runLocalRanks(l);
}

std::optional<experiment::DataParallelGroup> joinLaunchedGroup(const DistArgs& a, bool nprocGiven,
                                                               const std::string& device) {
  const auto env = distributed::readLaunchEnv();
  if (!env) return std::nullopt;
  if (nprocGiven && a.nproc != env->worldSize) {
    throw std::runtime_error("--nproc " + std::to_string(a.nproc) + " but the launcher (" +
                             env->source + ") started " + std::to_string(env->worldSize) +
                             " ranks; leave --nproc out under torchrun or srun");
  }
  if (env->worldSize <= 1) return std::nullopt;
  try {
    return experiment::joinDataParallel(*env, device, a.backend, a.timeoutSeconds);
  } catch (const distributed::PortTakenError& e) {
    // The launcher chose the port and starts the group again on another: a distinct exit code.
    const char* retry = std::getenv(distributed::kPortRetryVariable);
    if (retry && std::string(retry) == "1")
      throw ExitCodeError(distributed::kExitPortTaken, e.what());
    throw;
  }
}

}  // namespace depthlab::cli
