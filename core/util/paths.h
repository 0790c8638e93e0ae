// Where DepthLab keeps its files: the data folder ($XDG_DATA_HOME/depthlab, falling back to
// ~/.local/share/depthlab), the default database, corpora and checkpoints. No I/O beyond mkdir.
#pragma once

#include <string>

namespace depthlab::util {

/// $XDG_DATA_HOME/depthlab or ~/.local/share/depthlab (not created).
std::string dataDir();
/// --db beats $DEPTHLAB_DB beats dataDir()/depthlab.db.
std::string defaultDatabasePath(const std::string& cliOverride = "");
/// Creates `dir` and its parents; throws std::runtime_error naming the folder on failure.
void ensureDir(const std::string& dir);
/// Whether DepthLab may put files of its own into `dir` (token stores, tokenizer models beside
/// a corpus): this process can write there and the folder's mode lets someone write. A folder
/// marked read-only for everyone (r-x: shared data, a read-only copy) counts as read-only for
/// root too, whom access() lets write anywhere.
bool folderMeantWritable(const std::string& dir);
/// Parent folder of a path ("" for a bare name).
std::string parentDir(const std::string& path);
/// "PATH.<pid>-<n>.tmp": a temporary name beside `path` that no other process or call shares,
/// to write and then rename into place. Writers that shared one temporary name (ranks of one
/// run refreshing a store's index) renamed each other's half-written files into place.
std::string writerTempPath(const std::string& path);

}  // namespace depthlab::util
