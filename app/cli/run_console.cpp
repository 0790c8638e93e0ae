// See run_console.h.
#include "run_console.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "store/run_store.h"
#include "train_output.h"

namespace depthlab::cli {

std::atomic<bool> g_stop{false};

namespace {

std::atomic<int> g_signals{0};
extern "C" void onSigint(int) {
  g_signals.fetch_add(1);
  g_stop.store(true);
}

}  // namespace

SignalWatcher::SignalWatcher(std::string dbPath) : m_dbPath(std::move(dbPath)) {
  std::signal(SIGINT, onSigint);
  std::signal(SIGTERM, onSigint);
  m_thread = std::thread([this] { run(); });
}

SignalWatcher::~SignalWatcher() {
  m_done = true;
  m_thread.join();
}

void SignalWatcher::setRuns(const std::vector<int64_t>& ids) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_runs.insert(m_runs.end(), ids.begin(), ids.end());
}

void SignalWatcher::run() {
  bool told = false;
  while (!m_done) {
    const int n = g_signals.load();
    if (n == 1 && !told) {
      told = true;
      std::fprintf(stderr,
                   "\nstopping after the current micro-batch (checkpoint, then exit); "
                   "press Ctrl-C again to stop at once\n");
    }
    if (n >= 2) stopNow();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void SignalWatcher::stopNow() {
  std::vector<int64_t> runs;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    runs = m_runs;
  }
  try {
    auto store = store::RunStore::open(m_dbPath);
    for (int64_t id : runs) {
      auto r = store.run(id);
      if (!r || r->status != store::RunStatus::Running) continue;
      auto ck = store.checkpoints(id);
      store::WriteBatch b;
      b.event(std::nullopt, store::EventLevel::Warning,
              "stopped at once by a second signal; " +
                  (ck.empty() ? std::string("no checkpoint was written yet")
                              : "resume continues from the checkpoint at step " +
                                    std::to_string(ck.back().step)));
      store.write(id, b);
      store.finishRun(id, store::RunStatus::Stopped);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\ndepthlab-cli: could not mark the runs stopped: %s\n", e.what());
  }
  std::fprintf(stderr, "\nstopped at once (second signal)\n");
  std::_Exit(130);
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void printProgress(const experiment::GroupProgress& p) {
  std::fprintf(stderr, "\r%-150s", progressLine(p).substr(0, 150).c_str());
  std::fflush(stderr);
}

// "phase    12.3 s  preparing tokenizer spm:8000 ...": one line per start-up phase, also with
// --quiet (the window's launcher reads them to show what a starting group is doing).
void printPhase(double seconds, const std::string& what) {
  std::fprintf(stderr, "phase %7.1f s  %s\n", seconds, what.c_str());
  std::fflush(stderr);
}

void printNotice(const std::string& line) {
  std::fprintf(stderr, "\ndepthlab-cli: %s\n", line.c_str());
}

// Before the first update: what the run will cost here; then the first update's time.
void printCost(const std::string& line, bool warning) {
  std::fprintf(stderr, "%s\n", costLine(line, warning).c_str());
  std::fflush(stderr);
}

void printSummary(const experiment::GroupResult& r, bool json) {
  if (json) {
    std::cout << summaryJson(r).dump(2) << "\n";
    return;
  }
  std::fprintf(stderr, "\n");
  std::fputs(summaryText(r).c_str(), stdout);
}

RunConsole::RunConsole(const std::string& dbPath, bool json, bool quiet)
    : m_watcher(dbPath), m_json(json), m_quiet(quiet) {}

experiment::RunGroupOptions RunConsole::groupOptions() {
  experiment::RunGroupOptions o;
  o.stopFlag = &g_stop;
  if (!m_quiet && !m_json && isatty(STDERR_FILENO)) o.onProgress = printProgress;
  o.onNotice = printNotice;
  if (!m_json) o.onPhase = printPhase;
  o.onCost = printCost;
  o.onRunsStarted = [this](const std::vector<int64_t>& ids) { m_watcher.setRuns(ids); };
  return o;
}

}  // namespace depthlab::cli
