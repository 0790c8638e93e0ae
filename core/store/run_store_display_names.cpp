// RunStore: the display names of schemes and runs set in the figure window, kept in the
// database so that `depthlab-cli export` and Compare's LaTeX table print what the window
// shows. Stored in store_info (key/value) as "display_name:<key>", so no schema change. Does
// not know the default spellings ("pre_ln" -> "Pre-LN": util/table_text.h).
#include "store/run_store.h"

namespace depthlab::store {

namespace {
constexpr char kPrefix[] = "display_name:";
constexpr size_t kPrefixLength = sizeof(kPrefix) - 1;
}  // namespace

std::map<std::string, std::string> RunStore::displayNames() {
  std::map<std::string, std::string> out;
  SqliteStatement st(m_db, "SELECT key, value FROM store_info WHERE key >= ?1 AND key < ?2");
  st.bind(1, std::string_view(kPrefix)).bind(2, std::string(kPrefix, kPrefixLength - 1) + ";");
  while (st.step()) out[st.columnText(0).substr(kPrefixLength)] = st.columnText(1);
  return out;
}

void RunStore::setDisplayName(const std::string& key, const std::string& name) {
  requireWritable();
  SqliteTransaction tx(m_db);
  if (name.empty()) {
    SqliteStatement(m_db, "DELETE FROM store_info WHERE key = ?1").bind(1, kPrefix + key).run();
  } else {
    SqliteStatement(m_db, "INSERT OR REPLACE INTO store_info(key, value) VALUES (?1, ?2)")
        .bind(1, kPrefix + key)
        .bind(2, name)
        .run();
  }
  bumpCounter();
  tx.commit();
}

}  // namespace depthlab::store
