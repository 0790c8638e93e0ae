// See run_comparison.h.
#include "analysis/run_comparison.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/statistics.h"
#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "experiment/run_config.h"
#include "model/scheme_catalogue.h"
#include "store/metric_catalogue.h"
#include "util/table_text.h"

namespace depthlab::analysis {

std::string schemeName(const std::map<std::string, std::string>& names, const std::string& scheme) {
  const auto it = names.find("scheme:" + scheme);
  return it == names.end() || it->second.empty() ? model::schemeDisplayName(scheme) : it->second;
}

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    }
  } else {
    out[prefix] = j.dump();
  }
}

}  // namespace

std::map<std::string, std::vector<std::string>> configDiff(
    const std::vector<store::RunInfo>& runs) {
  std::vector<std::map<std::string, std::string>> flat(runs.size());
  std::set<std::string> keys;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto j = nlohmann::json::parse(runs[i].configJson, nullptr, false);
    if (j.is_object()) {  // file lists and checksums differ for every import: not a setting
      if (j.contains("import") && j["import"].is_object()) j["import"].erase("files");
      if (j.contains("series") && j["series"].is_object()) j["series"].erase("checkpoints");
    }
    if (!j.is_discarded()) flatten(j, "", flat[i]);
    flat[i]["scheme"] = "\"" + runs[i].scheme + "\"";
    for (const auto& [k, v] : flat[i]) keys.insert(k);
  }
  std::map<std::string, std::vector<std::string>> diff;
  for (const auto& k : keys) {
    std::vector<std::string> values;
    for (const auto& f : flat) {
      auto it = f.find(k);
      values.push_back(it == f.end() ? "(missing)" : it->second);
    }
    if (std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) != values.end()) {
      diff[k] = values;
    }
  }
  return diff;
}

std::vector<SeedGroup> seedGroups(store::RunStore& store, const std::vector<store::RunInfo>& runs,
                                  std::optional<int64_t> atStep) {
  std::map<std::string, SeedGroup> groups;
  const auto names = store.displayNames();
  for (const auto& r : runs) {
    auto j = nlohmann::json::parse(r.configJson, nullptr, false);
    std::string identity;
    int depth = 0, width = 0;
    int64_t params = 0;
    if (!j.is_discarded() && j.is_object()) {
      for (const char* drop : {"name", "preset", "schemes"}) j.erase(drop);
      if (j.contains("run")) j["run"].erase("seed");
      if (experiment::isSeriesRun(r)) {  // provenance (folders, checksums) is no configuration
        const auto arch = j["import"].value("architecture", std::string());
        j.erase("series");
        j["import"] = arch;
      }
      identity = j.dump();
      if (auto c = experiment::tryConfigOf(r)) {
        depth = c->model.nLayers;
        width = c->model.dModel;
        params = experiment::parameterCount(c->model, r.scheme, c->options);
      }
    }
    const std::string key = r.scheme + " | L=" + std::to_string(depth) +
                            " d=" + std::to_string(width) + " | " +
                            std::to_string(std::hash<std::string>{}(identity) % 100000);
    auto& g = groups[key];
    g.key = key;
    g.scheme = r.scheme;
    g.schemeName = schemeName(names, r.scheme);
    g.depth = depth;
    g.width = width;
    g.params = params;
    g.runIds.push_back(r.id);
    std::optional<double> val;
    if (atStep && !experiment::isImportedRun(r)) {
      const auto upTo = store.scalarSeries(r.id, metrics::kLossVal, INT64_MIN, *atStep);
      if (!upTo.empty()) val = upTo.back().value;
    } else {
      auto latest = store.latestScalars(r.id);
      if (auto it = latest.find(metrics::kLossVal); it != latest.end()) val = it->second.value;
    }
    if (!val && experiment::isSeriesRun(r)) {
      auto latest = store.latestScalars(r.id);
      if (auto it = latest.find(metrics::kLossProbe); it != latest.end()) {
        val = it->second.value;
        g.probeLoss = true;
      }
    }
    if (val && std::isfinite(*val)) g.finalValLoss.push_back(*val);
  }
  std::vector<SeedGroup> out;
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  // The catalogue's order (Pre-LN, then LNS, ...), as the results table, export and the
  // dashboard list schemes; then shallower, narrower first. Schemes the catalogue does not know
  // (imports' architectures) after it, by name.
  const auto ids = model::schemeIds();
  auto rank = [&](const std::string& scheme) {
    return static_cast<size_t>(std::find(ids.begin(), ids.end(), scheme) - ids.begin());
  };
  std::stable_sort(out.begin(), out.end(), [&](const SeedGroup& a, const SeedGroup& b) {
    return std::make_tuple(rank(a.scheme), a.depth, a.width) <
           std::make_tuple(rank(b.scheme), b.depth, b.width);
  });
  return out;
}

ResultsTable resultsTable(const std::vector<SeedGroup>& groups) {
  ResultsTable t;
  std::vector<std::pair<int64_t, std::pair<int, int>>> sizes;  // params, (depth, width)
  std::set<std::string> schemes;
  for (const auto& g : groups) {
    auto size = std::make_pair(g.params, std::make_pair(g.depth, g.width));
    if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) sizes.push_back(size);
    schemes.insert(g.scheme);
  }
  std::sort(sizes.begin(), sizes.end());
  // Rows in the paper's order where known.
  for (const auto& s : experiment::kSchemes)
    if (schemes.count(s)) t.rows.push_back(s);
  for (const auto& s : schemes)
    if (std::find(t.rows.begin(), t.rows.end(), s) == t.rows.end()) t.rows.push_back(s);
  for (const auto& row : t.rows) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const SeedGroup& x) { return x.scheme == row; });
    t.rowNames.push_back(g->schemeName.empty() ? model::schemeDisplayName(row) : g->schemeName);
  }
  for (const auto& [params, dw] : sizes) {
    std::ostringstream c;
    c.precision(3);
    c << static_cast<double>(params) / 1e6 << "M (L=" << dw.first << ", d=" << dw.second << ")";
    t.columns.push_back(c.str());
  }
  t.ppl.assign(t.rows.size(), std::vector<std::optional<double>>(sizes.size()));
  t.n.assign(t.rows.size(), std::vector<int>(sizes.size(), 0));
  // Groups of one scheme and size that differ otherwise (sequence length, steps: Compare warns)
  // share the cell, every run counted: the last had replaced the others, n=1 of two.
  std::vector<std::vector<std::vector<double>>> cells(
      t.rows.size(), std::vector<std::vector<double>>(sizes.size()));
  for (const auto& g : groups) {
    const size_t r =
        static_cast<size_t>(std::find(t.rows.begin(), t.rows.end(), g.scheme) - t.rows.begin());
    const size_t c =
        static_cast<size_t>(std::find(sizes.begin(), sizes.end(),
                                      std::make_pair(g.params, std::make_pair(g.depth, g.width))) -
                            sizes.begin());
    for (double l : g.finalValLoss) cells[r][c].push_back(std::exp(std::min(l, 700.0)));
  }
  for (size_t r = 0; r < cells.size(); ++r) {
    for (size_t c = 0; c < cells[r].size(); ++c) {
      if (cells[r][c].empty()) continue;
      t.ppl[r][c] = summarize(cells[r][c]).mean;
      t.n[r][c] = static_cast<int>(cells[r][c].size());
    }
  }
  return t;
}

std::string ResultsTable::toCsv() const {
  std::ostringstream o;
  o << "scheme";
  for (const auto& c : columns) o << "," << util::csvCell(c);
  o << "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    o << util::csvCell(rows[r]);
    for (size_t c = 0; c < columns.size(); ++c) {
      o << ",";
      if (ppl[r][c]) o << *ppl[r][c];
    }
    o << "\n";
  }
  return o.str();
}

std::string ResultsTable::toLatex() const {
  std::ostringstream o;
  o << "\\begin{tabular}{l" << std::string(columns.size(), 'c') << "}\n\\hline\nMethod";
  for (const auto& c : columns) o << " & " << util::latexText(c);
  o << " \\\\\n\\hline\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    o << util::latexText(r < rowNames.size() ? rowNames[r] : model::schemeDisplayName(rows[r]));
    for (size_t c = 0; c < columns.size(); ++c) {
      o << " & ";
      if (!ppl[r][c]) {
        o << "--";
        continue;
      }
      double best = *ppl[r][c];
      for (size_t k = 0; k < rows.size(); ++k)
        if (ppl[k][c]) best = std::min(best, *ppl[k][c]);
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.2f", *ppl[r][c]);
      if (*ppl[r][c] == best)
        o << "\\textbf{" << buf << "}";
      else
        o << buf;
    }
    o << " \\\\\n";
  }
  o << "\\hline\n\\end{tabular}\n";
  return o.str();
}

std::map<std::string, std::vector<DepthPoint>> depthScaling(const std::vector<SeedGroup>& groups) {
  std::map<std::string, std::map<int, std::vector<double>>> acc;
  for (const auto& g : groups) {
    for (double v : g.finalValLoss) acc[g.scheme][g.depth].push_back(v);
  }
  std::map<std::string, std::vector<DepthPoint>> out;
  for (const auto& [scheme, byDepth] : acc) {
    for (const auto& [depth, values] : byDepth) {
      out[scheme].push_back({depth, summarize(values).mean, static_cast<int>(values.size())});
    }
  }
  return out;
}

std::map<int, double> lnsGainPercent(const std::map<std::string, std::vector<DepthPoint>>& s) {
  std::map<int, double> gain;
  auto pre = s.find("pre_ln"), lns = s.find("lns");
  if (pre == s.end() || lns == s.end()) return gain;
  for (const auto& p : pre->second) {
    for (const auto& q : lns->second) {
      if (p.depth == q.depth) {
        const double pplPre = std::exp(p.lossVal), pplLns = std::exp(q.lossVal);
        gain[p.depth] = 100.0 * (pplPre - pplLns) / pplPre;
      }
    }
  }
  return gain;
}

}  // namespace depthlab::analysis
