// RunStore: the SQLite file that keeps every DepthLab run, and the bus between a training
// process (which writes in batches) and any viewer (which polls the change counter).
// Opening never modifies a file that is not a DepthLab database, is corrupt, or was written by
// a newer schema: it throws StoreError first. Only RunStore issues SQL.
// Thread-safety: one RunStore per thread; open a second one for a second thread or process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/sqlite_db.h"
#include "store/store_types.h"

namespace depthlab::store {

class RunStore {
 public:
  enum class Mode { ReadWrite, ReadOnly };

  /// Opens (creating and migrating when needed) the database at `path`; ":memory:" works. An
  /// existing file is inspected first without writing to it (not SQLite, another program's, a
  /// newer schema: StoreError, file untouched); a read-write open also runs SQLite's quick_check
  /// over every page, a read-only one leaves corrupt pages to fail the reads that meet them.
  static RunStore open(const std::string& path, Mode mode = Mode::ReadWrite);
  /// Schema version this binary writes (number of embedded migrations).
  static int latestSchemaVersion();
  /// Applies migrations 1..version to an open connection (tests build older files with it).
  static void migrateTo(SqliteDb& db, int version);

  RunStore(RunStore&&) noexcept;
  RunStore& operator=(RunStore&&) noexcept;
  ~RunStore();

  const std::string& path() const { return m_path; }
  int schemaVersion();
  /// How long a write waits for another connection's lock before failing (default 10 s).
  void setBusyTimeout(int milliseconds);
  /// This database's unique id (32 hex digits, made when it was created or upgraded).
  std::string storeId();
  /// The ids this database had before (a copy renews its id the first time it writes
  /// checkpoints: its older checkpoint files name an id it once had). Oldest first.
  std::vector<std::string> formerStoreIds();
  /// Gives the database a new id when its id is still `expected` (the old one joins
  /// formerStoreIds()); when another process renewed it first, adopts that one. Returns the id.
  std::string renewStoreId(const std::string& expected);

  // --- runs ---------------------------------------------------------------------------
  int64_t createRun(const NewRun& run);
  /// The runs of one new group, created in one write transaction so that no other process can
  /// take the same group name in between: `pickName(taken)` chooses the group's name given every
  /// group name in the store, `complete(name, run)` fills what depends on it (run name, config).
  /// Returns the name and the run ids, in order.
  std::pair<std::string, std::vector<int64_t>> createGroup(
      std::vector<NewRun> runs, const std::function<std::string(const std::set<std::string>&)>& pickName,
      const std::function<void(const std::string&, NewRun&)>& complete);
  /// Claims a run for this process: status running, host/boot/pid recorded, heartbeat now.
  void markRunning(int64_t runId);
  /// Ends a run with a final status (finished, stopped, diverged, crashed).
  void finishRun(int64_t runId, RunStatus status);
  void setStatus(int64_t runId, RunStatus status);
  void heartbeat(int64_t runId);
  std::optional<RunInfo> run(int64_t runId);
  std::vector<RunInfo> listRuns();
  /// Deletes a run and every row that belongs to it; returns false when it did not exist.
  bool deleteRun(int64_t runId);
  void renameRun(int64_t runId, const std::string& name);
  /// The absolute folder the run's checkpoints go under from now on (resume elsewhere).
  void setCheckpointBase(int64_t runId, const std::string& base);
  /// Replaces a run's config (JSON): a run trained further than planned records its new length.
  void setRunConfig(int64_t runId, const std::string& configJson);
  void addTag(int64_t runId, const std::string& tag);
  void removeTag(int64_t runId, const std::string& tag);
  void setNotes(int64_t runId, const std::string& notes);
  void requestStop(int64_t runId);
  bool stopRequested(int64_t runId);
  /// Marks `running` runs whose process is gone as `crashed` (same host: the pid and its start
  /// time; other hosts: no heartbeat for `staleAfterSeconds`). Returns the ids it changed.
  std::vector<int64_t> reapCrashedRuns(double staleAfterSeconds = 600.0);
  /// "pid P on HOST" when `runId` is running and its process is alive (as reapCrashedRuns
  /// judges it); nullopt otherwise. deleteRun refuses such a run, resume does not take it over.
  std::optional<std::string> liveOwner(int64_t runId, double staleAfterSeconds = 600.0);

  // --- metrics ------------------------------------------------------------------------
  /// Commits everything in `batch` for `runId` in one transaction.
  void write(int64_t runId, const WriteBatch& batch);
  void addCheckpoint(int64_t runId, const CheckpointInfo& ckpt);
  /// Forgets the checkpoint row of `runId` at `step` (the file is the caller's business).
  void removeCheckpoint(int64_t runId, int64_t step);

  /// Latest train step and validation loss of every run, in one query.
  std::map<int64_t, RunSummary> runSummaries();
  std::vector<std::string> scalarKeys(int64_t runId);
  std::vector<ScalarPoint> scalarSeries(int64_t runId, const std::string& key,
                                        int64_t stepFrom = INT64_MIN,
                                        int64_t stepTo = INT64_MAX);
  /// Last (step, value) of every scalar key of a run.
  std::map<std::string, ScalarPoint> latestScalars(int64_t runId);
  std::vector<std::string> layerMetrics(int64_t runId);
  LayerSeries layerSeries(int64_t runId, const std::string& metric,
                          int64_t stepFrom = INT64_MIN, int64_t stepTo = INT64_MAX);
  /// At most `samples` rows of `metric`: for each of `samples` evenly spaced positions from
  /// the first to the last step, the row whose step is nearest (a tie goes to the later step,
  /// as figures' heatmap columns choose), each found by index seeks; a row nearest to several
  /// positions comes once. For plots of long runs: 400 rows of a 20,000-row series without
  /// reading the other pages (~20 ms a run for the whole series on a 2-vCPU machine).
  LayerSeries layerSeriesSampled(int64_t runId, const std::string& metric, int samples);
  /// The last step with a row of `metric` (one index seek), nullopt when it has none: with
  /// layerSeries(id, metric, step, step), a run's final per-layer values without its history.
  std::optional<int64_t> lastLayerStep(int64_t runId, const std::string& metric,
                                       int64_t atOrBefore = INT64_MAX);
  std::vector<std::string> matrixKinds(int64_t runId);
  std::vector<int64_t> matrixSteps(int64_t runId, const std::string& kind);
  std::optional<Matrix> matrix(int64_t runId, const std::string& kind, int64_t step);
  std::vector<CheckpointInfo> checkpoints(int64_t runId);
  std::vector<EventInfo> events(int64_t runId, int64_t afterId = 0);

  // --- display names (run_store_display_names.cpp) -----------------------------------
  /// What figures, `export` and LaTeX tables call schemes and runs, as named in the figure
  /// window: keys "scheme:pre_ln" and "run:7". Empty when none was named.
  std::map<std::string, std::string> displayNames();
  /// Names a scheme or run ("scheme:lns", "run:7"); an empty `name` removes the name.
  void setDisplayName(const std::string& key, const std::string& name);

  // --- change tracking ----------------------------------------------------------------
  /// Increases whenever anything is written, by any connection.
  int64_t changeCounter();
  /// Ids of runs changed after counter value `since` (cheap: one indexed query).
  std::vector<int64_t> runsChangedSince(int64_t since);
  /// SQLite's PRAGMA data_version: changes when another connection committed.
  int64_t dataVersion();
  std::string integrityCheck();

 private:
  RunStore(std::string path, SqliteDb db, bool readOnly);
  static RunStore openOnce(const std::string& path, Mode mode);
  int64_t insertRun(const NewRun& run);  // inside a transaction
  int64_t bumpCounter();        // inside a transaction
  void touchRun(int64_t runId); // bump + set runs.version
  void requireWritable() const;
  RunInfo readRunRow(SqliteStatement& st);

  struct Statements;
  std::string m_path;
  SqliteDb m_db;
  bool m_readOnly = false;
  std::unique_ptr<Statements> m_st;
  std::string m_storeId;  // cached
};

}  // namespace depthlab::store
