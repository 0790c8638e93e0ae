// What depthlab-cli's command line asks for before CLI11 parses it: which subcommand, and
// whether that subcommand computes with LibTorch (only those are worth restarting the program
// for OpenBLAS's kernels: util/openblas_kernels.h). No parsing of the subcommands' own options.
#pragma once

#include <string>

namespace depthlab::cli {

/// Index in argv of the subcommand: the first argument after the global options (--db PATH,
/// --db=PATH, --json); argc when there is none. `db` (optional) receives the --db value.
int subcommandIndex(int argc, char** argv, std::string* db = nullptr);

/// True unless the subcommand only reads or lists (runs, report, presets, corpus, export), or
/// there is none (--help, --version, a typo CLI11 will answer).
bool subcommandComputes(int argc, char** argv);

}  // namespace depthlab::cli
