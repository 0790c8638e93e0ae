// Shared depthlab-cli helpers; see cli_common.h.
#include "cli_common.h"

#include <ctime>
#include <sstream>

#include "util/paths.h"

namespace depthlab::cli {

store::RunStore openStore(const GlobalOptions& g, store::RunStore::Mode mode) {
  std::string path = util::defaultDatabasePath(g.db);
  if (mode == store::RunStore::Mode::ReadWrite) util::ensureDir(util::parentDir(path));
  return store::RunStore::open(path, mode);
}

store::RunStore openStoreToRead(const GlobalOptions& g) {
  const std::string path = util::defaultDatabasePath(g.db);
  try {
    auto s = store::RunStore::open(path);
    try {
      s.reapCrashedRuns();
    } catch (const store::StoreError&) {
      // a full disk or a lock: the list is still worth showing
    }
    return s;
  } catch (const store::StoreError& e) {
    const std::string what = e.what();
    if (what.find("cannot be written") == std::string::npos &&
        what.find("readonly") == std::string::npos && what.find("disk") == std::string::npos) {
      throw;
    }
    return store::RunStore::open(path, store::RunStore::Mode::ReadOnly);
  }
}

std::string formatTime(double unixSeconds) {
  if (unixSeconds <= 0) return "-";
  std::time_t t = static_cast<std::time_t>(unixSeconds);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

nlohmann::json runToJson(const store::RunInfo& r) {
  nlohmann::json j;
  j["id"] = r.id;
  j["name"] = r.name;
  j["group"] = r.groupName;
  j["scheme"] = r.scheme;
  j["status"] = store::toString(r.status);
  j["device"] = r.device;
  j["seed"] = r.seed;
  j["created_at"] = r.createdAt;
  j["started_at"] = r.startedAt ? nlohmann::json(*r.startedAt) : nlohmann::json();
  j["finished_at"] = r.finishedAt ? nlohmann::json(*r.finishedAt) : nlohmann::json();
  const auto trained = store::trainingSeconds(r);
  j["training_seconds"] = trained ? nlohmann::json(*trained) : nlohmann::json();
  j["tags"] = r.tags;
  j["notes"] = r.notes;
  j["host"] = r.host;
  j["pid"] = r.pid;
  j["config"] = nlohmann::json::parse(r.configJson, nullptr, /*allow_exceptions=*/false);
  return j;
}

std::set<std::string> givenOptions(const CLI::App* command) {
  std::set<std::string> given;
  for (const CLI::Option* o : command->get_options()) {
    if (o->count() == 0) continue;
    for (const auto& name : o->get_lnames()) given.insert("--" + name);
    for (const auto& name : o->get_snames()) given.insert("-" + name);
    if (o->get_lnames().empty() && o->get_snames().empty()) given.insert(o->get_name());
  }
  return given;
}

}  // namespace depthlab::cli
