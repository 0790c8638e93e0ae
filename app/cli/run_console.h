// What `train`, `resume` and `reproduce` share on the terminal while a group trains: Ctrl-C /
// SIGTERM handling (the first stops after the current micro-batch with a checkpoint; a second
// marks the runs stopped and exits at once), the live progress line, the start-up phases, the
// cost lines and notices on stderr, and the summary. Text comes from train_output; the
// training itself is experiment/run_group's.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "experiment/run_group.h"

namespace depthlab::cli {

/// Set by the first SIGINT / SIGTERM while a SignalWatcher lives.
extern std::atomic<bool> g_stop;

// Watches for Ctrl-C / SIGTERM while a group trains. The first asks the run loop to stop
// after the current micro-batch (it checkpoints and marks the runs stopped); a second one
// marks the runs stopped through a connection of its own and exits at once, keeping the last
// checkpoint already written (resume continues from it).
class SignalWatcher {
 public:
  explicit SignalWatcher(std::string dbPath);
  ~SignalWatcher();
  void setRuns(const std::vector<int64_t>& ids);

 private:
  void run();
  [[noreturn]] void stopNow();
  std::string m_dbPath;
  std::atomic<bool> m_done{false};
  std::mutex m_mutex;
  std::vector<int64_t> m_runs;
  std::thread m_thread;
};

/// "a,b,,c" -> {"a", "b", "c"}.
std::vector<std::string> splitList(const std::string& s);
void printProgress(const experiment::GroupProgress& p);
/// "phase    12.3 s  preparing tokenizer spm:8000 ...": one line per start-up phase, also with
/// --quiet (the window's launcher reads them to show what a starting group is doing).
void printPhase(double seconds, const std::string& what);
void printNotice(const std::string& line);
/// Before the first update: what the run will cost here; then the first update's time.
void printCost(const std::string& line, bool warning);
void printSummary(const experiment::GroupResult& r, bool json);

/// The console of one command that trains (rank 0's, or a single process's): a SignalWatcher
/// and RunGroupOptions wired to the printers above.
class RunConsole {
 public:
  RunConsole(const std::string& dbPath, bool json, bool quiet = false);
  /// Options with the stop flag, the printers and the watcher's run list set.
  experiment::RunGroupOptions groupOptions();
  bool stopped() const { return g_stop.load(); }

 private:
  SignalWatcher m_watcher;
  bool m_json, m_quiet;
};

}  // namespace depthlab::cli
