// Checks of a database file before it is opened; see store_file.h.
#include "store/store_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>

#include "store/run_store.h"

namespace depthlab::store {

namespace {

// The first `n` bytes of the file at `path` into `out`; returns how many were read. Through a
// descriptor kept open for the life of the process: closing any descriptor of a file drops
// every POSIX lock this process holds on it, SQLite's included, so reading the header of a
// database another connection of this process has open (the window's loader thread opening
// its own) with a stream that closes would let a trainer process delete the WAL under that
// connection and corrupt the file.
ssize_t readHeader(const std::string& path, char (&out)[16]) {
  static std::mutex lock;
  static std::map<std::string, int>* kept = new std::map<std::string, int>;  // never closed
  std::lock_guard<std::mutex> guard(lock);
  struct stat now {};
  if (::stat(path.c_str(), &now) != 0) return -1;
  auto it = kept->find(path);
  if (it != kept->end()) {
    struct stat held {};
    if (::fstat(it->second, &held) != 0 || held.st_ino != now.st_ino || held.st_dev != now.st_dev) {
      it = kept->end();  // another file now has the name; the old descriptor stays as it is
    }
  }
  if (it == kept->end()) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    it = kept->insert_or_assign(path, fd).first;
  }
  return ::pread(it->second, out, sizeof(out), 0);
}

}  // namespace

std::string folderOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

// SQLite in WAL mode writes -wal and -shm files beside the database: it needs the folder too.
bool writable(const std::string& path) {
  return ::access(folderOf(path).c_str(), W_OK) == 0 &&
         (::access(path.c_str(), F_OK) != 0 || ::access(path.c_str(), W_OK) == 0);
}

// A read-only connection; `immutable` where the file or its folder cannot be written (then
// SQLite may not create its shared-memory file, and nobody can be writing it either).
SqliteDb openForReading(const std::string& path) {
  if (writable(path)) return SqliteDb(path, SQLITE_OPEN_READONLY);
  return SqliteDb("file:" + path + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

bool fileHasBytes(const std::string& path) {
  struct stat sb {};
  return ::stat(path.c_str(), &sb) == 0 && sb.st_size > 0;
}

// Reads the file without writing a byte and throws StoreError when it must not be touched.
// `checkEveryPage`: SQLite's quick_check besides, which reads the whole file (~0.3 s for 150 MB):
// done before writing to a file (a write into a corrupt file can lose what it still holds);
// a read-only connection cannot lose anything, and a corrupt page it reads fails that read
// with a clear "is corrupt" StoreError (SqliteDb::fail).
void inspectExisting(const std::string& path, bool checkEveryPage) {
  {
    char header[16] = {};
    if (readHeader(path, header) < 16 || std::memcmp(header, "SQLite format 3", 16) != 0) {
      throw StoreError("'" + path + "' is not a DepthLab database (not an SQLite file); "
                       "it was left untouched. Choose another file with --db.");
    }
  }
  try {
    SqliteDb db = openForReading(path);
    db.exec("PRAGMA busy_timeout = 10000");  // another process may be creating it right now
    // One read transaction for the three looks, so a creator's commit cannot fall between them.
    db.exec("BEGIN");
    int64_t appId = db.queryInt("PRAGMA application_id");
    int64_t version = db.queryInt("PRAGMA user_version");
    int64_t tables = db.queryInt("SELECT count(*) FROM sqlite_master");
    db.exec("COMMIT");
    if (appId != kApplicationId && !(appId == 0 && version == 0 && tables == 0)) {
      throw StoreError("'" + path + "' is an SQLite file but not a DepthLab database "
                       "(application_id " + std::to_string(appId) + "); it was left untouched.");
    }
    if (version > RunStore::latestSchemaVersion()) {
      throw StoreError("'" + path + "' was written by a newer DepthLab (schema v" +
                       std::to_string(version) + ", this build knows up to v" +
                       std::to_string(RunStore::latestSchemaVersion()) +
                       "); update DepthLab. The file was left untouched.");
    }
    std::string check = checkEveryPage ? db.queryText("PRAGMA quick_check") : std::string("ok");
    if (check != "ok") {
      throw StoreError("'" + path + "' is corrupt (" + check + "); it was left untouched. "
                       "Restore a backup or open another file with --db.");
    }
  } catch (const StoreError& e) {
    std::string what = e.what();
    if (what.rfind("'" + path + "'", 0) == 0) throw;
    throw StoreError("'" + path + "' is corrupt or not a DepthLab database (" + what +
                     "); it was left untouched.");
  }
}


}  // namespace depthlab::store
