// RunStore: opening (checks before any write), migrations, and the runs table.
// Metric writes and reads live in run_store_metrics.cpp.
#include "store/run_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "store/run_store_statements.h"
#include "store/store_file.h"
#include "store/schema_migrations.h"
#include "util/process_identity.h"

namespace depthlab::store {

namespace {

double nowSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace


int RunStore::latestSchemaVersion() { return static_cast<int>(kSchemaMigrations.size()); }

void RunStore::migrateTo(SqliteDb& db, int version) {
  if (db.queryInt("PRAGMA user_version") >= version) return;
  // The version is read again under the write lock: another process may have migrated the
  // file between the first look and BEGIN IMMEDIATE (two trainers opening a new database).
  SqliteTransaction tx(db);
  int current = static_cast<int>(db.queryInt("PRAGMA user_version"));
  if (current >= version) return;
  if (current == 0) db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  for (int v = current; v < version; ++v) {
    try {
      db.exec(std::string(kSchemaMigrations[static_cast<size_t>(v)]));
    } catch (const StoreError& e) {
      throw StoreError("migration " + std::to_string(v + 1) + " failed: " + e.what());
    }
  }
  db.exec("PRAGMA user_version = " + std::to_string(version));
  tx.commit();
}

RunStore RunStore::open(const std::string& path, Mode mode) {
  // Processes opening a brand-new file together can meet SQLite's deadlock guard (SQLITE_BUSY
  // without waiting, e.g. while another switches the file to WAL): such an open is tried again
  // for up to 10 s. Every other error is final.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int attempt = 0;; ++attempt) {
    try {
      return openOnce(path, mode);
    } catch (const StoreError& e) {
      const std::string what = e.what();
      const bool busy = what.find("database is locked") != std::string::npos ||
                        what.find("database table is locked") != std::string::npos;
      if (!busy || std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(10 + 10 * (attempt % 5)));
    }
  }
}

RunStore RunStore::openOnce(const std::string& path, Mode mode) {
  bool memory = path == ":memory:" || path.empty();
  if (!memory && fileHasBytes(path)) inspectExisting(path, mode == Mode::ReadWrite);
  if (mode == Mode::ReadOnly && !memory && !fileHasBytes(path)) {
    throw StoreError("no DepthLab database at '" + path + "'");
  }
  if (mode == Mode::ReadWrite && !memory && !writable(path)) {
    throw StoreError("'" + path + "' cannot be written (the file or its folder " + folderOf(path) +
                     " is read-only; SQLite needs to create its log files beside it). Commands "
                     "that only read it (runs list, runs show, report, export) still work.");
  }
  SqliteDb db = memory ? SqliteDb(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
                : mode == Mode::ReadOnly ? openForReading(path)
                                         : SqliteDb(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                                                              SQLITE_OPEN_NOMUTEX);
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("PRAGMA foreign_keys = ON");
  if (mode == Mode::ReadWrite) {
    if (!memory) db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    migrateTo(db, latestSchemaVersion());
  } else if (db.queryInt("PRAGMA user_version") != latestSchemaVersion()) {
    throw StoreError("'" + path + "' has schema v" +
                     std::to_string(db.queryInt("PRAGMA user_version")) +
                     "; open it once read-write to upgrade it to v" +
                     std::to_string(latestSchemaVersion()));
  }
  return RunStore(memory ? std::string(":memory:") : path, std::move(db),
                  mode == Mode::ReadOnly);
}

RunStore::RunStore(std::string path, SqliteDb db, bool readOnly)
    : m_path(std::move(path)), m_db(std::move(db)), m_readOnly(readOnly),
      m_st(readOnly ? nullptr : std::make_unique<Statements>(m_db)) {}

RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;
RunStore::~RunStore() = default;

int RunStore::schemaVersion() { return static_cast<int>(m_db.queryInt("PRAGMA user_version")); }

void RunStore::setBusyTimeout(int milliseconds) {
  m_db.exec("PRAGMA busy_timeout = " + std::to_string(milliseconds));
}

std::string RunStore::storeId() {
  if (m_storeId.empty()) {
    m_storeId = m_db.queryText("SELECT value FROM store_info WHERE key = 'store_id'");
  }
  return m_storeId;
}

void RunStore::requireWritable() const {
  if (m_readOnly) throw StoreError("the run store '" + m_path + "' was opened read-only");
}

int64_t RunStore::bumpCounter() {
  m_st->bump.step();
  int64_t v = m_st->bump.columnInt(0);
  m_st->bump.reset();
  return v;
}

void RunStore::touchRun(int64_t runId) {
  int64_t v = bumpCounter();
  m_st->touch.bind(1, runId).bind(2, v).run();
}

int64_t RunStore::insertRun(const NewRun& r) {
  SqliteStatement st(m_db,
                     // the id after the highest ever given (migration 005): never a deleted run's
                     "INSERT INTO runs(id, name, group_name, scheme, config_json, device, seed, "
                     "created_at, checkpoint_base) VALUES (1 + max(coalesce((SELECT max(id) FROM runs), 0), "
                     "coalesce((SELECT value FROM store_meta WHERE key = 'run_id_high_water'), 0)),"
                     "?1,?2,?3,?4,?5,?6,?7,?8)");
  st.bind(1, r.name).bind(2, r.groupName).bind(3, r.scheme).bind(4, r.configJson)
      .bind(5, r.device).bind(6, r.seed).bind(7, nowSeconds()).bind(8, r.checkpointBase);
  st.run();
  const int64_t id = sqlite3_last_insert_rowid(m_db.handle());
  touchRun(id);
  return id;
}

int64_t RunStore::createRun(const NewRun& r) {
  requireWritable();
  SqliteTransaction tx(m_db);
  const int64_t id = insertRun(r);
  tx.commit();
  return id;
}

std::pair<std::string, std::vector<int64_t>> RunStore::createGroup(
    std::vector<NewRun> runs, const std::function<std::string(const std::set<std::string>&)>& pickName,
    const std::function<void(const std::string&, NewRun&)>& complete) {
  requireWritable();
  SqliteTransaction tx(m_db);  // BEGIN IMMEDIATE: other writers wait until the group exists
  std::set<std::string> taken;
  {
    SqliteStatement st(m_db, "SELECT DISTINCT group_name FROM runs");
    while (st.step()) taken.insert(st.columnText(0));
  }
  const std::string name = pickName(taken);
  std::vector<int64_t> ids;
  for (auto& r : runs) {
    r.groupName = name;
    if (complete) complete(name, r);
    ids.push_back(insertRun(r));
  }
  tx.commit();
  return {name, ids};
}

void RunStore::markRunning(int64_t runId) {
  requireWritable();
  auto me = util::currentProcess();
  SqliteTransaction tx(m_db);
  SqliteStatement st(m_db,
                     "UPDATE runs SET status='running', started_at=coalesce(started_at, ?2), "
                     // a resumed run: the time since it last trained (stopped, or its last
                     // heartbeat when it crashed) was a pause
                     "paused_seconds=paused_seconds + CASE WHEN started_at IS NULL THEN 0 ELSE "
                     "max(0, ?2 - coalesce(finished_at, heartbeat_at, ?2)) END, "
                     "finished_at=NULL, host=?3, boot_id=?4, pid=?5, pid_start=?6, "
                     "heartbeat_at=?2, stop_requested=0 WHERE id=?1");
  st.bind(1, runId).bind(2, nowSeconds()).bind(3, me.host).bind(4, me.bootId)
      .bind(5, me.pid).bind(6, me.startTicks);
  st.run();
  if (sqlite3_changes(m_db.handle()) == 0) throw StoreError("no run " + std::to_string(runId));
  touchRun(runId);
  tx.commit();
}

void RunStore::finishRun(int64_t runId, RunStatus status) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement st(m_db, "UPDATE runs SET status=?2, finished_at=?3, heartbeat_at=?3 WHERE id=?1");
  st.bind(1, runId).bind(2, std::string_view(toString(status))).bind(3, nowSeconds());
  st.run();
  touchRun(runId);
  tx.commit();
}

void RunStore::setStatus(int64_t runId, RunStatus status) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement st(m_db, "UPDATE runs SET status=?2 WHERE id=?1");
  st.bind(1, runId).bind(2, std::string_view(toString(status))).run();
  touchRun(runId);
  tx.commit();
}

void RunStore::heartbeat(int64_t runId) {
  requireWritable();
  SqliteStatement st(m_db, "UPDATE runs SET heartbeat_at=?2 WHERE id=?1");
  st.bind(1, runId).bind(2, nowSeconds()).run();
}

static const char* kRunColumns =
    "id, name, group_name, scheme, status, config_json, device, seed, created_at, started_at, "
    "finished_at, heartbeat_at, notes, host, pid, stop_requested, version, "
    "(SELECT group_concat(tag, char(31)) FROM (SELECT tag FROM run_tags t WHERE t.run_id = runs.id "
    "ORDER BY tag)), paused_seconds, checkpoint_base";

RunInfo RunStore::readRunRow(SqliteStatement& st) {
  RunInfo r;
  r.id = st.columnInt(0);
  r.name = st.columnText(1);
  r.groupName = st.columnText(2);
  r.scheme = st.columnText(3);
  r.status = runStatusFromString(st.columnText(4)).value_or(RunStatus::Crashed);
  r.configJson = st.columnText(5);
  r.device = st.columnText(6);
  r.seed = st.columnInt(7);
  r.createdAt = st.columnDouble(8);
  if (!st.columnIsNull(9)) r.startedAt = st.columnDouble(9);
  if (!st.columnIsNull(10)) r.finishedAt = st.columnDouble(10);
  if (!st.columnIsNull(11)) r.heartbeatAt = st.columnDouble(11);
  r.notes = st.columnText(12);
  r.host = st.columnText(13);
  r.pid = st.columnInt(14);
  r.stopRequested = st.columnInt(15) != 0;
  r.version = st.columnInt(16);
  r.pausedSeconds = st.columnDouble(18);
  r.checkpointBase = st.columnText(19);
  std::string tags = st.columnText(17);
  size_t start = 0;
  while (!tags.empty() && start <= tags.size()) {
    size_t end = tags.find('\x1f', start);
    if (end == std::string::npos) end = tags.size();
    r.tags.push_back(tags.substr(start, end - start));
    start = end + 1;
  }
  return r;
}

std::optional<RunInfo> RunStore::run(int64_t runId) {
  SqliteStatement st(m_db, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id=?1");
  st.bind(1, runId);
  if (!st.step()) return std::nullopt;
  return readRunRow(st);
}

std::vector<RunInfo> RunStore::listRuns() {
  SqliteStatement st(m_db, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  std::vector<RunInfo> out;
  while (st.step()) out.push_back(readRunRow(st));
  return out;
}

bool RunStore::deleteRun(int64_t runId) {
  requireWritable();
  if (auto who = liveOwner(runId)) {
    throw StoreError("run " + std::to_string(runId) + " is still training (" + *who +
                     "); stop it first (Stop in the window, or Ctrl-C where it runs), then delete it");
  }
  SqliteTransaction tx(m_db);
  SqliteStatement st(m_db, "DELETE FROM runs WHERE id=?1");
  st.bind(1, runId).run();
  bool existed = sqlite3_changes(m_db.handle()) > 0;
  bumpCounter();
  tx.commit();
  return existed;
}

void RunStore::setCheckpointBase(int64_t runId, const std::string& base) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "UPDATE runs SET checkpoint_base=?2 WHERE id=?1").bind(1, runId).bind(2, base).run();
  touchRun(runId);
  tx.commit();
}

void RunStore::renameRun(int64_t runId, const std::string& name) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "UPDATE runs SET name=?2 WHERE id=?1").bind(1, runId).bind(2, name).run();
  touchRun(runId);
  tx.commit();
}

void RunStore::setRunConfig(int64_t runId, const std::string& configJson) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "UPDATE runs SET config_json=?2 WHERE id=?1")
      .bind(1, runId)
      .bind(2, configJson)
      .run();
  touchRun(runId);
  tx.commit();
}

void RunStore::addTag(int64_t runId, const std::string& tag) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "INSERT OR IGNORE INTO run_tags(run_id, tag) VALUES (?1, ?2)")
      .bind(1, runId).bind(2, tag).run();
  touchRun(runId);
  tx.commit();
}

void RunStore::removeTag(int64_t runId, const std::string& tag) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "DELETE FROM run_tags WHERE run_id=?1 AND tag=?2")
      .bind(1, runId).bind(2, tag).run();
  touchRun(runId);
  tx.commit();
}

void RunStore::setNotes(int64_t runId, const std::string& notes) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "UPDATE runs SET notes=?2 WHERE id=?1").bind(1, runId).bind(2, notes).run();
  touchRun(runId);
  tx.commit();
}

void RunStore::requestStop(int64_t runId) {
  requireWritable();
  SqliteTransaction tx(m_db);
  SqliteStatement(m_db, "UPDATE runs SET stop_requested=1 WHERE id=?1").bind(1, runId).run();
  touchRun(runId);
  tx.commit();
}

bool RunStore::stopRequested(int64_t runId) {
  SqliteStatement st(m_db, "SELECT stop_requested FROM runs WHERE id=?1");
  st.bind(1, runId);
  return st.step() && st.columnInt(0) != 0;
}

namespace {
struct Owner { int64_t id; util::ProcessIdentity who; std::optional<double> heartbeat; };

// A running run's process is gone: same host, by pid and start time; elsewhere, by heartbeat.
bool ownerGone(const Owner& c, double staleAfterSeconds) {
  if (c.who.host == util::hostName()) return !util::isAlive(c.who);
  return !c.heartbeat || nowSeconds() - *c.heartbeat > staleAfterSeconds;
}

std::vector<Owner> runningOwners(SqliteDb& db, std::optional<int64_t> only) {
  std::vector<Owner> out;
  SqliteStatement st(db, "SELECT id, host, boot_id, pid, pid_start, heartbeat_at FROM runs "
                         "WHERE status='running' AND (?1 < 0 OR id = ?1)");
  st.bind(1, only.value_or(-1));
  while (st.step()) {
    Owner c{st.columnInt(0), {st.columnText(1), st.columnText(2), st.columnInt(3),
                              st.columnInt(4)}, std::nullopt};
    if (!st.columnIsNull(5)) c.heartbeat = st.columnDouble(5);
    out.push_back(std::move(c));
  }
  return out;
}
}  // namespace

std::optional<std::string> RunStore::liveOwner(int64_t runId, double staleAfterSeconds) {
  for (const auto& c : runningOwners(m_db, runId)) {
    if (!ownerGone(c, staleAfterSeconds)) {
      return "pid " + std::to_string(c.who.pid) + " on " + c.who.host;
    }
  }
  return std::nullopt;
}

std::vector<int64_t> RunStore::reapCrashedRuns(double staleAfterSeconds) {
  if (m_readOnly) return {};
  const double now = nowSeconds();
  std::vector<int64_t> dead;
  for (const auto& c : runningOwners(m_db, std::nullopt)) {
    if (ownerGone(c, staleAfterSeconds)) dead.push_back(c.id);
  }
  if (dead.empty()) return dead;
  SqliteTransaction tx(m_db);
  SqliteStatement st(m_db, "UPDATE runs SET status='crashed', finished_at=?2 "
                           "WHERE id=?1 AND status='running'");
  SqliteStatement ev(m_db, "INSERT INTO events(run_id, time, level, message) "
                           "VALUES (?1, ?2, 'error', ?3)");
  for (int64_t id : dead) {
    st.bind(1, id).bind(2, now).run();
    ev.bind(1, id).bind(2, now)
        .bind(3, std::string_view("the training process is gone; run marked crashed"))
        .run();
    touchRun(id);
  }
  tx.commit();
  return dead;
}

int64_t RunStore::changeCounter() {
  return m_db.queryInt("SELECT value FROM store_meta WHERE key='change_counter'");
}

std::vector<int64_t> RunStore::runsChangedSince(int64_t since) {
  SqliteStatement st(m_db, "SELECT id FROM runs WHERE version > ?1 ORDER BY id");
  st.bind(1, since);
  std::vector<int64_t> ids;
  while (st.step()) ids.push_back(st.columnInt(0));
  return ids;
}

int64_t RunStore::dataVersion() { return m_db.queryInt("PRAGMA data_version"); }

std::string RunStore::integrityCheck() { return m_db.queryText("PRAGMA integrity_check"); }

}  // namespace depthlab::store
