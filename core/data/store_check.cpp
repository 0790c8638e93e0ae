// See store_check.h.
#include "data/store_check.h"

#include <filesystem>

#include "data/mapped_file.h"
#include "util/content_hash.h"
#include "util/stream_hash.h"

namespace depthlab::data {

namespace {

uint64_t hexValue(const std::string& s) { return s.empty() ? 0 : std::stoull(s, nullptr, 16); }

// Why shard `i` of `index` is not what the index records ("" when it is).
std::string shardProblem(const std::string& path, const StoreIndex& index, size_t i, bool hashes) {
  const StoreShard& s = index.shards[i];
  ShardHeader h;
  try {
    h = readShardHeader(path);
  } catch (const DataError& e) {
    return e.what();
  }
  if (h.shardNumber != i || util::hex64(h.tokenizerHash) != index.tokenizerHash ||
      h.buildId != hexValue(index.buildId)) {
    return "token shard '" + path + "' belongs to another preparation";
  }
  if (h.count != s.tokens) {
    return "token shard '" + path + "' holds " + std::to_string(h.count) +
           " tokens where the index records " + std::to_string(s.tokens);
  }
  if (static_cast<int>(h.vocab) != index.vocab || static_cast<int>(h.bytesPerToken) != index.bytesPerToken) {
    return "token shard '" + path + "' has a vocabulary of " + std::to_string(h.vocab) + " ids in " +
           std::to_string(h.bytesPerToken) + "-byte tokens where the index records " +
           std::to_string(index.vocab) + " in " + std::to_string(index.bytesPerToken);
  }
  if (!hashes || s.hash.empty()) return "";
  const MappedFile f(path);
  util::StreamHash hash;
  hash.update(f.data() + kShardHeaderBytes, f.size() - kShardHeaderBytes);
  if (util::hex64(hash.digest()) != s.hash) {
    return "token shard '" + path + "' no longer holds the tokens it was written with (its hash changed)";
  }
  return "";
}

}  // namespace

std::optional<ShardDamage> firstDamagedShard(const std::string& dir, const StoreIndex& index,
                                             bool hashes) {
  for (size_t i = 0; i < index.shards.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / index.shards[i].file).string();
    if (auto why = shardProblem(path, index, i, hashes); !why.empty()) return ShardDamage{i, why};
  }
  return std::nullopt;
}

}  // namespace depthlab::data
