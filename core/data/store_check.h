// Checking a token store's shards against its index before it is reused: each shard file is
// there, of the size and header (build, tokenizer, position, count) the index records, and,
// when asked (`corpus prepare --verify`), its token bytes still hash to the recorded value. A
// damaged store is then rebuilt from its first damaged shard (corpus_prepare resumes there)
// rather than reported "up to date". Does not read the corpus; does not write anything.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "data/token_store.h"

namespace depthlab::data {

struct ShardDamage {
  size_t shard = 0;  // position in the index
  std::string why;   // "shard-000003.dltok is missing", "... is truncated: ..."
};

/// The first shard of `index` (the store in `dir`) that is missing or does not match the index;
/// with `hashes`, also one whose bytes no longer hash to the recorded value (shards of stores
/// from before shards were hashed are checked by size and header alone). nullopt: all sound.
std::optional<ShardDamage> firstDamagedShard(const std::string& dir, const StoreIndex& index,
                                             bool hashes);

}  // namespace depthlab::data
