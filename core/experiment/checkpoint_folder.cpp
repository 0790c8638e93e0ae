// See checkpoint_folder.h.
#include "experiment/checkpoint_folder.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "util/paths.h"

namespace depthlab::experiment {

namespace fs = std::filesystem;

namespace {

constexpr char kClaimFile[] = "database";

std::string canonicalPath(const std::string& p) {
  if (p == ":memory:" || p.empty()) return p;
  std::error_code ec;
  const fs::path absolute = fs::absolute(p, ec);
  const fs::path c = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.string() : c.string();
}

std::optional<std::string> readClaim(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// Creates `folder` and writes the claim (which also proves the folder takes files); throws when
// either fails.
void writeClaim(const fs::path& folder, const std::string& database) {
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("cannot write checkpoints to '" + folder.string() + "' (" + why +
                             "); a run without checkpoints could not be resumed, so none is "
                             "started (choose another --checkpoint-dir)");
  };
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) fail(ec.message());
  const fs::path tmp = folder / (std::string(kClaimFile) + ".part-" + std::to_string(getpid()));
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << database << "\n";
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      fail("a test file could not be written");
    }
  }
  fs::rename(tmp, folder / kClaimFile, ec);
  if (ec) {
    fs::remove(tmp, ec);
    fail(ec.message());
  }
}

// Whether `other` (a claim) is another database file with id `id`: then `self` is its copy (or
// it is ours) and the two must not share a folder. A claimant that is gone was moved: not one.
bool anotherWithTheSameId(const std::string& other, const std::string& self, const std::string& id) {
  std::error_code ec;
  if (other == self || !fs::exists(other, ec)) return false;
  if (fs::equivalent(other, self, ec)) return false;  // the same file by another path
  try {
    auto s = store::RunStore::open(other, store::RunStore::Mode::ReadOnly);
    return s.storeId() == id;
  } catch (const std::exception&) {
    return true;  // cannot tell: do not share
  }
}

}  // namespace

std::string claimCheckpointFolder(store::RunStore& store, const std::string& base) {
  const fs::path root = base.empty() ? fs::path(util::dataDir()) / "checkpoints" : fs::path(base);
  const std::string id = store.storeId();
  const std::string self = canonicalPath(store.path());
  const auto claim = readClaim(root / id / kClaimFile);
  if (!claim || !anotherWithTheSameId(*claim, self, id)) {
    writeClaim(root / id, self);
    return "";
  }
  const std::string renewed = store.renewStoreId(id);
  writeClaim(root / renewed, self);
  return "this database is a copy of " + *claim + " (both had id " + id + "): it now has its own id " +
         renewed + " and writes its checkpoints under " + (root / renewed).string() +
         ", leaving the original's files alone";
}

}  // namespace depthlab::experiment
