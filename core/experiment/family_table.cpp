// See family_table.h.
#include "experiment/family_table.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "store/metric_catalogue.h"
#include "util/table_text.h"

namespace depthlab::experiment {

namespace {

// The newest row of a per-layer metric (its step in `step`), or empty.
std::vector<float> newestRow(store::RunStore& s, int64_t run, const std::string& metric,
                             std::optional<int64_t>* step = nullptr) {
  auto row = lastLayerRow(s, run, metric);
  if (!row) return {};
  if (step) *step = row->first;
  return std::move(row->second);
}

std::string architectureOf(const store::RunInfo& run) {
  const auto j = nlohmann::json::parse(run.configJson, nullptr, false);
  if (!j.is_object() || !j.contains("import") || !j["import"].is_object()) return "";
  const auto& a = j["import"].value("architecture", nlohmann::json());
  return a.is_string() ? a.get<std::string>() : "";
}

std::string share(int count, int of) {
  if (of <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * count / of);
  return buf;
}

std::string countWithShare(std::optional<int> n, int of) {
  return n ? std::to_string(*n) + " (" + share(*n, of) + ")" : "-";
}

std::string number(double v, const char* format = "%.6g") {
  if (!std::isfinite(v)) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

FamilyRow familyRow(store::RunStore& s, int64_t runId, double pruneShare) {
  const auto run = s.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  FamilyRow r;
  r.runId = runId;
  r.name = run->name;
  r.architecture = architectureOf(*run);
  r.family =
      r.architecture.empty() ? "trained: " + run->scheme : familyOfArchitecture(r.architecture);
  if (const auto c = tryConfigOf(*run)) {
    r.nLayers = c->model.nLayers;
    r.thresholds = probes::layerThresholds(c->probes);
  }
  r.effectiveness = newestRow(s, runId, metrics::kEffectiveness, &r.probeStep);
  if (!r.effectiveness.empty()) {
    r.byEffectiveness = probes::classifyLayers(r.effectiveness, r.thresholds);
  } else {
    r.missing.push_back(metrics::kEffectiveness);
  }
  r.pruneDelta = newestRow(s, runId, metrics::kPruneDelta);
  r.pruneDeltaError = newestRow(s, runId, metrics::kPruneDeltaError);
  r.angularNext = newestRow(s, runId, metrics::kAngularAdjacent);
  if (r.angularNext.empty()) r.missing.push_back(metrics::kAngularAdjacent);
  const auto latest = s.latestScalars(runId);
  if (auto it = latest.find(metrics::kLossProbe); it != latest.end())
    r.probeLoss = it->second.value;
  if (auto it = latest.find(metrics::kLensSettle); it != latest.end())
    r.lensSettle = it->second.value;
  if (auto it = latest.find(metrics::kSpectralAlphaMean); it != latest.end())
    r.spectralAlpha = it->second.value;
  if (auto it = latest.find(metrics::kEffectiveDepth); it != latest.end())
    r.effectiveDepth = it->second.value;
  if (auto it = latest.find(metrics::kJumpStrength); it != latest.end())
    r.jumpStrength = it->second.value;
  if (!r.pruneDelta.empty() && r.probeLoss) {
    int lazy = 0;
    for (float d : r.pruneDelta) lazy += std::isfinite(d) && d < pruneShare * *r.probeLoss;
    r.lazyByPruning = lazy;
  } else {
    r.missing.push_back(r.pruneDelta.empty() ? metrics::kPruneDelta : metrics::kLossProbe);
  }
  return r;
}

}  // namespace

std::string familyOfArchitecture(const std::string& architecture) {
  static const std::map<std::string, std::string> known = {
      {"LlamaForCausalLM", "Llama"},
      {"MistralForCausalLM", "Mistral"},
      {"Qwen2ForCausalLM", "Qwen2"},
      {"Qwen3ForCausalLM", "Qwen3"},
      {"Gemma2ForCausalLM", "Gemma 2"},
      {"Gemma3ForCausalLM", "Gemma 3"},
      {"Gemma3ForConditionalGeneration", "Gemma 3"},
      {"Olmo2ForCausalLM", "OLMo 2"},
      {"Phi3ForCausalLM", "Phi-3"},
      {"GPT2LMHeadModel", "GPT-2"},
      {"GPTNeoXForCausalLM", "GPT-NeoX / Pythia"}};
  if (auto it = known.find(architecture); it != known.end()) return it->second;
  for (const char* suffix : {"ForCausalLM", "LMHeadModel", "ForConditionalGeneration"}) {
    const std::string s = suffix;
    if (architecture.size() > s.size() &&
        architecture.compare(architecture.size() - s.size(), s.size(), s) == 0) {
      return architecture.substr(0, architecture.size() - s.size());
    }
  }
  return architecture;
}

FamilyTable makeFamilyTable(store::RunStore& s, const std::vector<int64_t>& runIds,
                            double pruneShare) {
  FamilyTable t;
  t.pruneShare = pruneShare;
  for (int64_t id : runIds) t.rows.push_back(familyRow(s, id, pruneShare));
  return t;
}

std::string familyTableCsv(const FamilyTable& t) {
  using util::csvCell;
  std::ostringstream out;
  out << "run,name,family,architecture,layers,probe_step,lazy_el,low_el,effective_el,"
         "lazy_el_share,effective_el_share,el_lazy_below,el_low_below,lazy_pruning,"
         "lazy_pruning_share,pruning_below_share_of_loss,probe_loss,lens_settle_block,"
         "spectral_alpha_mean,effective_depth_ratio,jump_strength\n";
  for (const auto& r : t.rows) {
    const int L = r.nLayers;
    out << r.runId << ',' << csvCell(r.name) << ',' << csvCell(r.family) << ','
        << csvCell(r.architecture) << ',' << L << ','
        << (r.probeStep ? std::to_string(*r.probeStep) : "") << ',';
    if (r.byEffectiveness) {
      const auto& c = *r.byEffectiveness;
      out << c.lazy << ',' << c.low << ',' << c.effective << ','
          << number(L ? double(c.lazy) / L : NAN, "%.4f") << ','
          << number(L ? double(c.effective) / L : NAN, "%.4f") << ',';
    } else {
      out << ",,,,,";
    }
    out << number(r.thresholds.lazy) << ',' << number(r.thresholds.low) << ',';
    if (r.lazyByPruning) {
      out << *r.lazyByPruning << ',' << number(L ? double(*r.lazyByPruning) / L : NAN, "%.4f");
    } else {
      out << ',';
    }
    out << ',' << number(t.pruneShare) << ',' << (r.probeLoss ? number(*r.probeLoss) : "") << ','
        << (r.lensSettle ? number(*r.lensSettle) : "") << ','
        << (r.spectralAlpha ? number(*r.spectralAlpha) : "") << ','
        << (r.effectiveDepth ? number(*r.effectiveDepth) : "") << ','
        << (r.jumpStrength ? number(*r.jumpStrength) : "") << '\n';
  }
  return out.str();
}

std::string familyTableLatex(const FamilyTable& t) {
  using util::latexText;
  std::ostringstream out;
  out << "% lazy by E_l: each run's own thresholds; lazy by pruning: removing the layer raises the "
         "probe loss by less than "
      << number(100 * t.pruneShare, "%.3g") << "\\% of it\n"
      << "\\begin{tabular}{llrrrrr}\n\\toprule\n"
      << "Model & Family & Layers & Lazy ($E_l$) & Low ($E_l$) & Effective ($E_l$) & "
         "Lazy (pruning) \\\\\n\\midrule\n";
  for (const auto& r : t.rows) {
    out << latexText(r.name) << " & " << latexText(r.family) << " & " << r.nLayers;
    const auto cells = familyCountCells(r);
    for (size_t i : {0, 1, 2, 4}) out << " & " << (cells[i] == "-" ? "--" : latexText(cells[i]));
    out << " \\\\\n";
  }
  out << "\\bottomrule\n\\end{tabular}\n";
  return out.str();
}

std::vector<std::string> familyCountCells(const FamilyRow& r) {
  const auto& c = r.byEffectiveness;
  auto el = [&](int probes::LazyCounts::*field) {
    return c ? std::optional<int>((*c).*field) : std::nullopt;
  };
  char thresholds[64];
  std::snprintf(thresholds, sizeof thresholds, "%g / %g", r.thresholds.lazy, r.thresholds.low);
  return {countWithShare(el(&probes::LazyCounts::lazy), r.nLayers),
          countWithShare(el(&probes::LazyCounts::low), r.nLayers),
          countWithShare(el(&probes::LazyCounts::effective), r.nLayers), thresholds,
          countWithShare(r.lazyByPruning, r.nLayers)};
}

std::string familyProfilesCsv(const FamilyTable& t) {
  using util::csvCell;
  std::ostringstream out;
  out << "run,name,family,layer,relative_depth,prune_delta,prune_delta_se,angular_to_next,"
         "effectiveness\n";
  auto at = [](const std::vector<float>& v, size_t i) {
    return i < v.size() ? number(v[i]) : std::string();
  };
  for (const auto& r : t.rows) {
    const size_t L = static_cast<size_t>(r.nLayers);
    for (size_t l = 0; l < L; ++l) {
      out << r.runId << ',' << csvCell(r.name) << ',' << csvCell(r.family) << ',' << l + 1 << ','
          << number(double(l + 1) / double(L), "%.4f") << ',' << at(r.pruneDelta, l) << ','
          << at(r.pruneDeltaError, l) << ',' << at(r.angularNext, l) << ','
          << at(r.effectiveness, l) << '\n';
    }
  }
  return out.str();
}

}  // namespace depthlab::experiment
