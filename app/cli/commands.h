// The command table of depthlab-cli: a row per top-level subcommand, in the order --help lists
// them, with its name, whether it computes with LibTorch (only those are worth restarting the
// program for OpenBLAS's kernels: cli_launch.h) and the function that declares it (its options
// into its Args, its callback calling its run function). main.cpp registers every row and
// cli_launch reads the names from here. A new command is its Args, its run function, its add
// function and a row here. Subcommands of a command (`runs list`, `bench train`) are its own.
#pragma once

#include <vector>

#include "cli_common.h"

namespace depthlab::cli {

enum class Work {
  Computes,  // multiplies matrices (train, analyze, bench, ...)
  Reads  // reads or lists (the store, a corpus file, the tables); `export` execs depthlab-export
};

struct Command {
  const char* name;
  Work work;
  void (*add)(CLI::App& app, GlobalOptions& g);
};

/// Every top-level subcommand, in --help's order.
const std::vector<Command>& commands();

}  // namespace depthlab::cli
