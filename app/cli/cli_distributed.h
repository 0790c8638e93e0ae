// The data-parallel options of `train` and `resume` (--nproc, --backend, --dist-timeout,
// --bucket-mb) and what they lead to: launching local ranks (this process only waits), or
// joining the group a launcher (torchrun, srun, --nproc) started this process in.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli_common.h"
#include "distributed/local_launcher.h"
#include "experiment/data_parallel.h"

namespace depthlab::cli {

struct DistArgs {
  int nproc = 0;                 // 0: the config's run.processes (1 = one process)
  std::string backend = "auto";  // auto | gloo | nccl
  double timeoutSeconds = 1800;  // a collective or the rendezvous waiting longer fails
  double bucketMB = 25;
};

void addDistOptions(CLI::App* command, DistArgs& a);
/// Throws std::runtime_error naming the option when a value is out of range.
void requireValid(const DistArgs& a, bool nprocGiven);

/// N ranks of this executable with this command line (`extraArgs` appended), on this machine.
distributed::LocalLaunch selfLaunch(const GlobalOptions& g, int processes, double graceSeconds,
                                    const std::vector<std::string>& extraArgs = {});

/// When `processes` (--nproc, else the config's) asks for more than one rank and no launcher
/// started this process: starts them here (each rank reruns this command line) and returns
/// their exit code. nullopt: this process trains itself.
std::optional<int> launchLocalRanksIfAsked(const DistArgs& a, int processes, const GlobalOptions& g,
                                           const std::string& device);

/// This process's data-parallel group when a launcher made it one rank of several; nullopt for
/// a single process. `processes` as above: a launcher's world size that contradicts an explicit
/// --nproc is refused.
std::optional<experiment::DataParallelGroup> joinLaunchedGroup(const DistArgs& a, bool nprocGiven,
                                                               const std::string& device);

}  // namespace depthlab::cli
