// See cli_families.h.
#include "cli_families.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "experiment/family_table.h"
#include "text_table.h"

namespace depthlab::cli {

namespace {

void writeText(const std::string& path, const std::string& text, const char* what) {
  if (path.empty()) return;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.flush();
  if (!f) throw std::runtime_error("cannot write the " + std::string(what) + " to '" + path + "'");
  std::printf("wrote the %s to %s\n", what, path.c_str());
}

nlohmann::json rowJson(const experiment::FamilyRow& r) {
  nlohmann::json j = {{"run_id", r.runId},
                      {"name", r.name},
                      {"family", r.family},
                      {"architecture", r.architecture},
                      {"layers", r.nLayers},
                      {"el_lazy_below", r.thresholds.lazy},
                      {"el_low_below", r.thresholds.low},
                      {"missing", r.missing}};
  if (r.byEffectiveness) {
    j["lazy_el"] = r.byEffectiveness->lazy;
    j["low_el"] = r.byEffectiveness->low;
    j["effective_el"] = r.byEffectiveness->effective;
  }
  if (r.lazyByPruning) j["lazy_pruning"] = *r.lazyByPruning;
  if (r.probeLoss) j["probe_loss"] = *r.probeLoss;
  return j;
}

}  // namespace

void reportFamilies(store::RunStore& store, const GlobalOptions& g,
                    const std::vector<int64_t>& runIds, const FamilyOutput& out) {
  if (!(out.pruneShare > 0 && out.pruneShare < 1)) {
    throw std::runtime_error("--prune-share must be in (0, 1) (a share of the probe loss)");
  }
  const auto t = experiment::makeFamilyTable(store, runIds, out.pruneShare);
  writeText(out.csv, experiment::familyTableCsv(t), "family table (CSV)");
  writeText(out.latex, experiment::familyTableLatex(t), "family table (LaTeX)");
  writeText(out.profiles, experiment::familyProfilesCsv(t), "per-layer profiles (CSV)");
  if (g.json) {
    nlohmann::json j = {{"prune_share", t.pruneShare}, {"models", nlohmann::json::array()}};
    for (const auto& r : t.rows) j["models"].push_back(rowJson(r));
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : t.rows) {
    std::vector<std::string> row = {std::to_string(r.runId), r.name, r.family,
                                    std::to_string(r.nLayers)};
    for (auto& cell : experiment::familyCountCells(r)) row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  std::printf("%s", formatTextTable({"run", "name", "family", "layers", "lazy (E_l)", "low (E_l)",
                                     "effective (E_l)", "E_l thresholds", "lazy (pruning)"},
                                    rows)
                        .c_str());
  std::printf(
      "E_l = ||x_l+1 - x_l||^2 / ||x_l+1||^2: lazy below the first threshold, low below "
      "the second (each run's own). Lazy by pruning: removing the layer raises the probe "
      "loss by less than %g%% of it.\n",
      100 * t.pruneShare);
  for (const auto& r : t.rows) {
    if (r.missing.empty()) continue;
    std::string what;
    for (const auto& m : r.missing) what += " " + m;
    std::printf("run %lld lacks:%s (run `depthlab-cli analyze --run %lld` to compute them)\n",
                static_cast<long long>(r.runId), what.c_str(), static_cast<long long>(r.runId));
  }
}

}  // namespace depthlab::cli
