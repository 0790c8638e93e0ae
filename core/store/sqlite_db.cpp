// SQLite RAII wrappers; see sqlite_db.h.
#include "store/sqlite_db.h"

#include <utility>

namespace depthlab::store {

SqliteDb::SqliteDb(const std::string& path, int flags) : m_path(path) {
  int rc = sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    sqlite3_close_v2(m_db);
    m_db = nullptr;
    throw StoreError("cannot open database '" + path + "': " + msg);
  }
  sqlite3_extended_result_codes(m_db, 1);
}

SqliteDb::~SqliteDb() {
  if (m_db) sqlite3_close_v2(m_db);
}

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)) {}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
  if (this != &other) {
    if (m_db) sqlite3_close_v2(m_db);
    m_db = std::exchange(other.m_db, nullptr);
    m_path = std::move(other.m_path);
  }
  return *this;
}

void SqliteDb::fail(int rc, std::string_view what) const {
  const int primary = rc & 0xff;
  std::string msg = "database '" + m_path + "'" +
                    (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? " is corrupt: " : ": ");
  msg += what;
  msg += ": ";
  msg += m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
  throw StoreError(msg);
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw StoreError("database '" + m_path + "': SQL failed (" + msg + ")");
  }
}

int64_t SqliteDb::queryInt(const std::string& sql) {
  SqliteStatement st(*this, sql);
  return st.step() ? st.columnInt(0) : 0;
}

std::string SqliteDb::queryText(const std::string& sql) {
  SqliteStatement st(*this, sql);
  return st.step() ? st.columnText(0) : std::string();
}

SqliteStatement::SqliteStatement(const SqliteDb& db, std::string_view sql) : m_db(db) {
  int rc = sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &m_stmt,
                              nullptr);
  if (rc != SQLITE_OK) db.fail(rc, "prepare");
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(m_stmt); }

SqliteStatement& SqliteStatement::bind(int i, int64_t v) {
  if (int rc = sqlite3_bind_int64(m_stmt, i, v); rc != SQLITE_OK) m_db.fail(rc, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int i, double v) {
  if (int rc = sqlite3_bind_double(m_stmt, i, v); rc != SQLITE_OK) m_db.fail(rc, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) m_db.fail(rc, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bindBlob(int i, const void* data, size_t bytes) {
  int rc = sqlite3_bind_blob(m_stmt, i, data, static_cast<int>(bytes), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) m_db.fail(rc, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bindNull(int i) {
  if (int rc = sqlite3_bind_null(m_stmt, i); rc != SQLITE_OK) m_db.fail(rc, "bind");
  return *this;
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(m_stmt);
  m_db.fail(rc, "step");
}

void SqliteStatement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

int64_t SqliteStatement::columnInt(int i) const { return sqlite3_column_int64(m_stmt, i); }
double SqliteStatement::columnDouble(int i) const { return sqlite3_column_double(m_stmt, i); }
std::string SqliteStatement::columnText(int i) const {
  const unsigned char* t = sqlite3_column_text(m_stmt, i);
  return t ? std::string(reinterpret_cast<const char*>(t),
                         static_cast<size_t>(sqlite3_column_bytes(m_stmt, i)))
           : std::string();
}
bool SqliteStatement::columnIsNull(int i) const {
  return sqlite3_column_type(m_stmt, i) == SQLITE_NULL;
}
const void* SqliteStatement::columnBlob(int i) const { return sqlite3_column_blob(m_stmt, i); }
int SqliteStatement::columnBytes(int i) const { return sqlite3_column_bytes(m_stmt, i); }

SqliteTransaction::SqliteTransaction(SqliteDb& db) : m_db(db) { m_db.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!m_done) sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  m_db.exec("COMMIT");
  m_done = true;
}

}  // namespace depthlab::store
