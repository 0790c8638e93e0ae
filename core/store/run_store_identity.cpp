// RunStore: the database's identity beyond storeId() (run_store.cpp): the ids it had before and
// renewing it, for a copied database that must stop sharing its original's checkpoint folder.
// Kept in store_info (key/value), so no schema change. Does not decide when to renew
// (experiment/checkpoint_folder does).
#include "store/run_store.h"

namespace depthlab::store {

namespace {

constexpr char kFormerIds[] = "former_store_ids";  // comma-separated, oldest first

std::vector<std::string> splitIds(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    if (comma > from) out.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> RunStore::formerStoreIds() {
  return splitIds(m_db.queryText(std::string("SELECT value FROM store_info WHERE key = '") +
                                 kFormerIds + "'"));
}

std::string RunStore::renewStoreId(const std::string& expected) {
  requireWritable();
  SqliteTransaction tx(m_db);  // read and replace under the write lock: one renewal wins
  const std::string current = m_db.queryText("SELECT value FROM store_info WHERE key = 'store_id'");
  if (current == expected) {
    std::string former = m_db.queryText(std::string("SELECT value FROM store_info WHERE key = '") +
                                        kFormerIds + "'");
    former += (former.empty() ? "" : ",") + current;
    SqliteStatement(m_db, "INSERT OR REPLACE INTO store_info(key, value) VALUES (?1, ?2)")
        .bind(1, std::string_view(kFormerIds)).bind(2, former).run();
    m_db.exec("UPDATE store_info SET value = lower(hex(randomblob(16))) WHERE key = 'store_id'");
    bumpCounter();
  }
  m_storeId = m_db.queryText("SELECT value FROM store_info WHERE key = 'store_id'");
  tx.commit();
  return m_storeId;
}

}  // namespace depthlab::store
