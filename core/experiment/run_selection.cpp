// See run_selection.h.
#include "experiment/run_selection.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

namespace depthlab::experiment {

namespace {

constexpr const char* kExpected = "expected ids like 3,4,7, a range 5-8, all, or group:NAME";

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// A positive id, or 0 when `s` is not one.
int64_t idOf(const std::string& s) {
  if (s.empty() || s.size() > 18 ||
      !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  return std::stoll(s);
}

}  // namespace

std::vector<int64_t> resolveRunSelection(const std::string& text, store::RunStore& store) {
  std::vector<int64_t> ids;
  std::set<int64_t> seen;
  auto add = [&](int64_t id) {
    if (seen.insert(id).second) ids.push_back(id);
  };
  std::vector<store::RunInfo> runs;  // listed once, when a group or all asks for them
  bool listed = false;
  auto allRuns = [&]() -> const std::vector<store::RunInfo>& {
    if (!listed) runs = store.listRuns();
    listed = true;
    return runs;
  };
  std::vector<std::string> pieces;  // the text split at commas
  std::stringstream ss(text);
  for (std::string raw; std::getline(ss, raw, ',');) pieces.push_back(raw);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string item = trimmed(pieces[i]);
    if (item.empty()) continue;
    if (item == "all") {
      if (allRuns().empty())
        throw std::invalid_argument("--runs all: the database '" + store.path() + "' has no runs");
      for (const auto& r : allRuns()) add(r.id);
      continue;
    }
    if (item.rfind("group:", 0) == 0) {
      std::set<std::string> groups;
      for (const auto& r : allRuns()) {
        if (!r.groupName.empty()) groups.insert(r.groupName);
      }
      // A group whose name holds commas: the longest run of pieces from here that names one.
      std::string group = trimmed(item.substr(6));
      std::string joined = pieces[i].substr(pieces[i].find("group:") + 6);
      for (size_t j = i + 1; j < pieces.size(); ++j) {
        joined += "," + pieces[j];
        if (groups.count(trimmed(joined))) {
          group = trimmed(joined);
          i = j;
        }
      }
      size_t found = 0;
      for (const auto& r : allRuns()) {
        if (r.groupName == group) {
          ++found;
          add(r.id);
        }
      }
      if (found == 0) {
        std::string known;
        for (const auto& g : groups) known += (known.empty() ? "" : ", ") + ("'" + g + "'");
        throw std::invalid_argument(
            "--runs: no runs in group '" + group + "' (" +
            (known.empty() ? std::string("the database has no groups") : "groups: " + known) + ")");
      }
      continue;
    }
    const auto dash = item.find('-');
    if (dash != std::string::npos && dash > 0) {
      const int64_t from = idOf(trimmed(item.substr(0, dash))),
                    to = idOf(trimmed(item.substr(dash + 1)));
      if (from > 0 && to >= from) {
        if (to - from >= 100000)
          throw std::invalid_argument("--runs: the range '" + item + "' is too long");
        for (int64_t id = from; id <= to; ++id) add(id);
        continue;
      }
      throw std::invalid_argument("--runs: '" + item + "' is not a range of run ids (" + kExpected +
                                  ")");
    }
    const int64_t id = idOf(item);
    if (id <= 0)
      throw std::invalid_argument("--runs: '" + item + "' is not a run id (" + kExpected + ")");
    add(id);
  }
  if (ids.empty())
    throw std::invalid_argument(std::string("--runs: no runs given (") + kExpected + ")");
  return ids;
}

}  // namespace depthlab::experiment
