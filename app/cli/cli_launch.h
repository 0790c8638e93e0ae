// What depthlab-cli's command line asks for before CLI11 parses it: which subcommand, and
// whether that subcommand computes with LibTorch (only those are worth restarting the program
// for OpenBLAS's kernels: util/openblas_kernels.h). No parsing of the subcommands' own options.
#pragma once

#include <set>
#include <string>

namespace depthlab::cli {

/// Index in argv of the subcommand: the first argument after the global options (--db PATH,
/// --db=PATH, --json); argc when there is none. `db` (optional) receives the --db value.
int subcommandIndex(int argc, char** argv, std::string* db = nullptr);

/// The top-level subcommands that multiply matrices (train, bench, ...) and those that only
/// read or list (runs, report, ...), from the command table (commands.h): every subcommand
/// depthlab-cli has is in exactly one (a test checks them against `depthlab-cli --help`).
const std::set<std::string>& computingSubcommands();
const std::set<std::string>& readingSubcommands();

/// True when the subcommand is one of computingSubcommands(); false for the others, and when
/// there is none (--help, --version) or CLI11 will refuse it (a typo).
bool subcommandComputes(int argc, char** argv);

}  // namespace depthlab::cli
