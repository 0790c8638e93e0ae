// Thin RAII wrappers over the SQLite C API: a connection (SqliteDb) and a prepared statement
// (SqliteStatement). They turn every error code into a StoreError carrying SQLite's message.
// They know nothing about DepthLab's schema; RunStore is the only user.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace depthlab::store {

/// Every run-store failure: a message meant for the user, naming the file when there is one.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SqliteDb {
 public:
  SqliteDb() = default;
  SqliteDb(const std::string& path, int flags);  // throws StoreError
  ~SqliteDb();
  SqliteDb(SqliteDb&& other) noexcept;
  SqliteDb& operator=(SqliteDb&& other) noexcept;
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* handle() const { return m_db; }
  const std::string& path() const { return m_path; }
  void exec(const std::string& sql);                 // runs one or more statements
  int64_t queryInt(const std::string& sql);          // first column of the first row
  std::string queryText(const std::string& sql);     // first column of the first row
  [[noreturn]] void fail(int rc, std::string_view what) const;

 private:
  sqlite3* m_db = nullptr;
  std::string m_path;
};

/// A prepared statement. bind*() take 1-based indexes; step() returns true while a row is ready.
class SqliteStatement {
 public:
  SqliteStatement(const SqliteDb& db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int i, int64_t v);
  SqliteStatement& bind(int i, double v);
  SqliteStatement& bind(int i, std::string_view v);
  SqliteStatement& bindBlob(int i, const void* data, size_t bytes);
  SqliteStatement& bindNull(int i);
  bool step();
  void run() { step(); reset(); }
  void reset();

  int64_t columnInt(int i) const;
  double columnDouble(int i) const;
  std::string columnText(int i) const;
  bool columnIsNull(int i) const;
  const void* columnBlob(int i) const;
  int columnBytes(int i) const;

 private:
  const SqliteDb& m_db;
  sqlite3_stmt* m_stmt = nullptr;
};

/// BEGIN IMMEDIATE on construction, ROLLBACK unless commit() was called.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  void commit();

 private:
  SqliteDb& m_db;
  bool m_done = false;
};

}  // namespace depthlab::store
