// See preflight.h.
#include "experiment/preflight.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "data/corpus.h"
#include "data/corpus_prepare.h"
#include "data/corpus_sources.h"
#include "data/token_dataset.h"
#include "data/token_store.h"
#include "experiment/presets.h"
#include "util/paths.h"

namespace depthlab::experiment {

namespace fs = std::filesystem;

namespace {

// The nearest folder of `path` (itself or an ancestor) that exists; "" when none.
fs::path nearestExisting(fs::path path) {
  std::error_code ec;
  path = fs::absolute(path, ec);
  while (!path.empty()) {
    if (fs::exists(path, ec)) return path;
    if (path == path.parent_path()) break;
    path = path.parent_path();
  }
  return {};
}

std::string mib(double bytes) {
  const double m = bytes / (1024.0 * 1024.0);
  char buf[48];
  if (m >= 1024) std::snprintf(buf, sizeof(buf), "%.1f GiB", m / 1024);
  else std::snprintf(buf, sizeof(buf), "%.0f MiB", m < 1 ? 1 : m);
  return buf;
}

void checkCorpus(const std::string& corpus, std::vector<ConfigIssue>& out) {
  if (corpus.empty()) return;  // the default corpus: prepared by `make run` / the first launch
  std::error_code ec;
  const fs::path p(corpus);
  if (!fs::exists(p, ec)) {
    out.push_back({"data.corpus", "Corpus: " + corpus + " does not exist."});
    return;
  }
  if (fs::is_directory(p, ec)) {
    bool any = false;
    for (fs::recursive_directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && it->file_size(ec) > 0) { any = true; break; }
    }
    if (!any) out.push_back({"data.corpus", "Corpus: the folder " + corpus + " holds no non-empty files."});
    return;
  }
  if (!fs::is_regular_file(p, ec)) {
    out.push_back({"data.corpus", "Corpus: " + corpus + " is not a file or a folder."});
  } else if (fs::file_size(p, ec) == 0) {
    out.push_back({"data.corpus", "Corpus: " + corpus + " is empty."});
  } else if (::access(p.c_str(), R_OK) != 0) {
    out.push_back({"data.corpus", "Corpus: " + corpus + " cannot be read (permissions)."});
  }
}

void checkStoreSpace(const data::DataConfig& d, std::vector<ConfigIssue>& out) {
  try {
    const double need = tokenStoreBytesNeeded(d);
    if (need <= 0) return;
    const fs::path existing = nearestExisting(data::storeDirFor(d.corpus, d.tokenizer));
    std::error_code ec;
    const auto space = fs::space(existing, ec);
    if (!existing.empty() && !ec && static_cast<double>(space.available) < need) {
      out.push_back({"data.corpus", "Corpus: tokenizing it takes about " + mib(need) + " for its token store in " +
                                        existing.string() + ", which has " +
                                        mib(static_cast<double>(space.available)) + " free."});
    }
  } catch (const std::exception&) {  // unreadable corpora are reported by checkCorpus / at launch
  }
}

void checkTokenizer(const std::string& tokenizer, std::vector<ConfigIssue>& out) {
  if (tokenizer.rfind("spm:", 0) != 0) return;
  const std::string rest = tokenizer.substr(4);
  if (rest.empty() || rest.find_first_not_of("0123456789") == std::string::npos) return;  // spm:N
  std::error_code ec;
  if (!fs::is_regular_file(rest, ec)) {
    out.push_back({"data.tokenizer", "Tokenizer: the SentencePiece model " + rest + " does not exist."});
  }
}

}  // namespace

double tokenStoreBytesNeeded(const data::DataConfig& d) {
  if (d.corpus.empty()) return 0;
  if (data::isTokenStore(d.corpus) || data::isTokenFile(d.corpus) || data::holdsOnlyTokenFiles(d.corpus)) return 0;
  if (auto index = data::readStoreIndex(data::storeDirFor(d.corpus, d.tokenizer)); index && index->complete) return 0;
  double text = 0;
  for (const auto& s : data::listCorpusSources(d.corpus)) {
    text += static_cast<double>(s.size) * (s.compression == data::Compression::None ? 1.0 : 4.0);
  }
  return text * (d.tokenizer == "byte" ? 1.0 : 0.6);
}

double checkpointBytes(const ExperimentConfig& c, const std::string& scheme) {
  // fp32 weights + Adam's first and second moments.
  return static_cast<double>(parameterCount(c.model, scheme, c.options)) * 4.0 * 3.0;
}

std::vector<ConfigIssue> preflightIssues(const ExperimentConfig& c, const std::string& checkpointRoot) {
  std::vector<ConfigIssue> out;
  checkCorpus(c.data.corpus, out);
  checkTokenizer(c.data.tokenizer, out);
  if (out.empty()) checkStoreSpace(c.data, out);
  const fs::path root = checkpointRoot.empty() ? fs::path(util::dataDir()) / "checkpoints"
                                               : fs::path(checkpointRoot);
  const fs::path existing = nearestExisting(root);
  std::error_code ec;
  if (existing.empty() || !fs::is_directory(existing, ec) || ::access(existing.c_str(), W_OK) != 0) {
    out.push_back({"run.checkpointDir", "Checkpoints: cannot create or write " + root.string() +
                                            (existing.empty() ? std::string() : " (" + existing.string() + " is not writable)") + "."});
    return out;
  }
  // Kept: `checkpointKeep` periodic ones plus the best and the final, per scheme.
  double need = 0;
  for (const auto& s : c.schemes) need += checkpointBytes(c, s) * (c.run.checkpointKeep + 2);
  const auto space = fs::space(existing, ec);
  if (!ec && static_cast<double>(space.available) < need) {
    out.push_back({"run.checkpointDir", "Checkpoints: the runs keep about " + mib(need) + " of checkpoints but " +
                                            existing.string() + " has " + mib(static_cast<double>(space.available)) +
                                            " free; free some space or keep fewer checkpoints."});
  }
  return out;
}

}  // namespace depthlab::experiment
