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

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

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
  if (r.lensSettle) j["lens_settle"] = *r.lensSettle;
  if (r.spectralAlpha) j["spectral_alpha_mean"] = *r.spectralAlpha;
  if (r.effectiveDepth) j["effective_depth_ratio"] = *r.effectiveDepth;
  if (r.jumpStrength) j["jump_strength"] = *r.jumpStrength;
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
    row.push_back(r.lensSettle ? fixed(*r.lensSettle, 1) + " / " + std::to_string(r.nLayers) : "-");
    row.push_back(r.spectralAlpha ? fixed(*r.spectralAlpha, 2) : "-");
    row.push_back(r.effectiveDepth ? fixed(*r.effectiveDepth, 2) : "-");
    row.push_back(r.jumpStrength ? fixed(*r.jumpStrength, 2) : "-");
    rows.push_back(std::move(row));
  }
  std::printf("%s", formatTextTable({"run", "name", "family", "layers", "lazy (E_l)", "low (E_l)",
                                     "effective (E_l)", "E_l thresholds", "lazy (pruning)",
                                     "lens settles", "mean alpha", "eff. depth", "jump"},
                                    rows)
                        .c_str());
  std::printf(
      "E_l = ||x_l+1 - x_l||^2 / ||x_l+1||^2: lazy below the first threshold, low below "
      "the second (each run's own). Lazy by pruning: removing the layer raises the probe "
      "loss by less than %g%% of it.\n",
      100 * t.pruneShare);
  std::printf(
      "Lens settles: the mean block from which the logit lens's top-1 is the model's own (of L; "
      "analyze --probes lens). Mean alpha: the weights' power-law exponent (analyze --probes "
      "spectra; 2-6 well trained). Eff. depth: the first block whose lens KL is below a tenth "
      "of the largest, over L (Hu et al.). Jump: the last block's angular step over the middle "
      "blocks' mean.\n");
  for (const auto& r : t.rows) {
    if (r.missing.empty()) continue;
    std::string what;
    for (const auto& m : r.missing) what += " " + m;
    std::printf("run %lld lacks:%s (run `depthlab-cli analyze --run %lld` to compute them)\n",
                static_cast<long long>(r.runId), what.c_str(), static_cast<long long>(r.runId));
  }
}

}  // namespace depthlab::cli
