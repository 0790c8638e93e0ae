// Helpers shared by the depthlab-cli subcommands: options every command takes (--db, --json)
// and opening the run store with a user-facing error. No command logic here.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::cli {

struct GlobalOptions {
  std::string db;     // --db PATH (else $DEPTHLAB_DB, else the data folder's depthlab.db)
  bool json = false;  // --json: machine-readable output
  std::vector<std::string> argv;  // the command line (argv[1..]), for commands that relaunch it
  int exitCode = 0;               // what main returns when a command ends without an exception
};

/// An error that ends depthlab-cli with its own exit code instead of 1 (main prints the message).
class ExitCodeError : public std::runtime_error {
 public:
  ExitCodeError(int code, const std::string& what) : std::runtime_error(what), m_code(code) {}
  int code() const { return m_code; }

 private:
  int m_code;
};

/// Opens the store named by the options; creates the data folder for the default path.
store::RunStore openStore(const GlobalOptions& g,
                          store::RunStore::Mode mode = store::RunStore::Mode::ReadWrite);
/// For commands that only read: read-write when possible (runs whose process died are marked
/// crashed first), else read-only (a read-only file or folder, a full disk).
store::RunStore openStoreToRead(const GlobalOptions& g);
nlohmann::json runToJson(const store::RunInfo& r);
std::string formatTime(double unixSeconds);

/// The options of `command` given on the command line ("--step", "--nproc", ...): what a
/// command's run function asks instead of the parser (its Args carries them).
std::set<std::string> givenOptions(const CLI::App* command);

// Each declares one top-level subcommand (commands.cpp lists them): its options into its Args,
// its callback calling its run function.
void addTrainCommand(CLI::App& app, GlobalOptions& g);
void addResumeCommand(CLI::App& app, GlobalOptions& g);
void addPresetsCommand(CLI::App& app, GlobalOptions& g);
void addAnalyzeCommand(CLI::App& app, GlobalOptions& g);
void addReportCommand(CLI::App& app, GlobalOptions& g);
void addImportHfCommand(CLI::App& app, GlobalOptions& g);
void addEvalCommand(CLI::App& app, GlobalOptions& g);
void addExportHfCommand(CLI::App& app, GlobalOptions& g);
void addExportCommand(CLI::App& app, GlobalOptions& g);
void addRunsCommand(CLI::App& app, GlobalOptions& g);
void addBenchCommand(CLI::App& app, GlobalOptions& g);
void addCorpusCommand(CLI::App& app, GlobalOptions& g);
void addReproduceCommand(CLI::App& app, GlobalOptions& g);
void addSchemesCommand(CLI::App& app, GlobalOptions& g);
void addImportTensorBoardCommand(CLI::App& app, GlobalOptions& g);
/// `export --tensorboard DIR --runs IDS` (cli_tensorboard.cpp).
void runTensorBoardExport(GlobalOptions& g, const std::string& dir, const std::string& runs);
/// `bench data` (cli_bench_data.cpp), registered under `bench` by addBenchCommand.
void addBenchData(CLI::App* bench, GlobalOptions& g);
/// `bench checkpoint` (cli_bench_checkpoint.cpp), registered under `bench` likewise.
void addBenchCheckpoint(CLI::App* bench, GlobalOptions& g);
/// Path of an executable installed next to depthlab-cli (depthlab-export, depthlab-bench-gui).
std::string siblingExecutable(const std::string& name);
/// Runs depthlab-export when argv asks for `export` (does not return then); -1 otherwise.
int runExportIfAsked(int argc, char** argv);

}  // namespace depthlab::cli
