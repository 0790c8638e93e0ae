// Looks at a database file before RunStore opens it (run_store.cpp): whether its folder can be
// written, a read-only connection, and a check that the file is a DepthLab database of a schema
// this build knows, made without writing a byte. Does not open the store itself.
#pragma once

#include <cstdint>
#include <string>

#include "store/sqlite_db.h"

namespace depthlab::store {

/// PRAGMA application_id of a DepthLab database ("DPLB").
inline constexpr int64_t kApplicationId = 0x44504C42;

/// The folder holding `path` ("." for a bare name).
std::string folderOf(const std::string& path);
/// True when SQLite can write the database and its -wal and -shm files beside it.
bool writable(const std::string& path);
/// A read-only connection; `immutable` where the file or its folder cannot be written.
SqliteDb openForReading(const std::string& path);
/// True when the file exists and is not empty.
bool fileHasBytes(const std::string& path);
/// Throws StoreError when the existing file must not be touched (not SQLite, not DepthLab's, a
/// newer schema, or, with `checkEveryPage`, corrupt); writes nothing.
void inspectExisting(const std::string& path, bool checkEveryPage);

}  // namespace depthlab::store
