// See run_mismatch.h.
#include "analysis/run_mismatch.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "experiment/run_config.h"

namespace depthlab::analysis {

namespace {

// "3 and 5", "1, 2 and 4".
std::string listIds(const std::vector<int64_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += i + 1 == ids.size() ? " and " : ", ";
    out += std::to_string(ids[i]);
  }
  return out;
}

struct Setting {
  const char* key;
  const char* label;
  std::function<std::string(const experiment::ExperimentConfig&)> value;
};

const std::vector<Setting>& settings() {
  static const std::vector<Setting> s = {
      {"data.corpus", "corpus",
       [](const experiment::ExperimentConfig& c) {
         return c.data.corpus.empty() ? std::string("default") : c.data.corpus;
       }},
      {"data.tokenizer", "tokenizer",
       [](const experiment::ExperimentConfig& c) { return c.data.tokenizer; }},
      {"model.seqLen", "sequence length",
       [](const experiment::ExperimentConfig& c) { return std::to_string(c.model.seqLen); }},
      {"optim.steps", "steps",
       [](const experiment::ExperimentConfig& c) { return std::to_string(c.optim.steps); }},
  };
  return s;
}

}  // namespace

std::string RunMismatch::message() const {
  // Distinct values in order of first appearance, each with its runs.
  std::vector<std::pair<std::string, std::vector<int64_t>>> groups;
  for (size_t i = 0; i < values.size() && i < runIds.size(); ++i) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == values[i]; });
    if (it == groups.end()) {
      groups.push_back({values[i], {runIds[i]}});
    } else {
      it->second.push_back(runIds[i]);
    }
  }
  const bool oneEach = groups.size() == runIds.size();
  std::string out = "runs " + listIds(runIds) + " differ in " + label + ": ";
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) out += " vs ";
    out += groups[g].first;
    if (!oneEach) {
      const auto& ids = groups[g].second;
      out += std::string(ids.size() == 1 ? " (run " : " (runs ");
      for (size_t k = 0; k < ids.size(); ++k) out += (k ? ", " : "") + std::to_string(ids[k]);
      out += ")";
    }
  }
  return out;
}

std::vector<RunMismatch> runMismatches(const std::vector<store::RunInfo>& runs) {
  std::vector<int64_t> ids;
  std::vector<experiment::ExperimentConfig> configs;
  for (const auto& r : runs) {
    if (experiment::isImportedRun(r)) continue;
    if (auto c = experiment::tryConfigOf(r)) {
      ids.push_back(r.id);
      configs.push_back(std::move(*c));
    }
  }
  std::vector<RunMismatch> out;
  if (ids.size() < 2) return out;
  for (const auto& s : settings()) {
    RunMismatch m{s.key, s.label, ids, {}};
    for (const auto& c : configs) m.values.push_back(s.value(c));
    if (std::adjacent_find(m.values.begin(), m.values.end(), std::not_equal_to<>()) !=
        m.values.end()) {
      out.push_back(std::move(m));
    }
  }
  return out;
}

std::string mismatchWarning(const std::vector<store::RunInfo>& runs) {
  std::string out;
  for (const auto& m : runMismatches(runs)) out += (out.empty() ? "" : "; ") + m.message();
  return out;
}

}  // namespace depthlab::analysis
