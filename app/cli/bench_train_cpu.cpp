// See bench_train_cpu.h.
#include "bench_train_cpu.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "bench/train_bench.h"
#include "bench/update_gemms.h"
#include "bench_baselines.h"
#include "util/openblas_kernels.h"

namespace depthlab::cli {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One reference over the rounds: each round's tokens/s and ratio, and their medians.
struct ReferenceSummary {
  std::string version, message;  // message: why it is missing (from the first round lacking it)
  std::vector<double> tokensPerSecond, ratios;
  std::vector<double> stepMs;  // every round's timed updates (empty: the script gave none)
  std::vector<double> gemmMs;  // every round's GEMMs of one update alone (bench/update_gemms.h)
  std::string blas;
  bool complete = true;  // every round has it
  double medianTokens() const { return median(tokensPerSecond); }
  double medianRatio() const { return median(ratios); }
};

// The spread of one side's timed updates, every round's together (none: all 0).
struct UpdateSpread {
  double min = 0, median = 0, max = 0;
  explicit UpdateSpread(const std::vector<double>& ms) {
    if (ms.empty()) return;
    const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
    min = *lo;
    max = *hi;
    median = cli::median(ms);
  }
};

ReferenceSummary summarise(const std::vector<bench::TrainBenchResult>& rounds, bool newest) {
  ReferenceSummary s;
  for (const auto& r : rounds) {
    const auto& tps = newest ? r.newestTorchTokensPerSecond : r.torchTokensPerSecond;
    if (!tps) {
      s.complete = false;
      if (s.message.empty()) s.message = newest ? r.newestTorchMessage : r.torchMessage;
      continue;
    }
    s.version = newest ? r.newestTorchVersion : r.torchVersion;
    s.tokensPerSecond.push_back(*tps);
    s.ratios.push_back(r.cppTokensPerSecond / *tps);
    const auto& each = newest ? r.newestTorchStepMs : r.torchStepMs;
    s.stepMs.insert(s.stepMs.end(), each.begin(), each.end());
    if (const auto& g = newest ? r.newestTorchGemmMs : r.torchGemmMs; g) {
      s.gemmMs.push_back(*g);
      s.blas = newest ? r.newestTorchBlas : r.torchBlas;
    }
  }
  return s;
}

}  // namespace

void runCpuTrainBench(const CpuTrainBenchArgs& a, const experiment::ExperimentConfig& config,
                      const std::string& referenceScript, bool json) {
  std::vector<bench::TrainBenchResult> rounds;
  const auto benchConfig = bench::trainBenchConfig(config);
  const auto gemms = bench::updateGemmShapes(benchConfig);
  const std::string gemmsJson = bench::gemmShapesJson(gemms), cppBlas = bench::thisBuildBlas();
  for (int i = 0; i < std::max(1, a.rounds); ++i) {
    auto r = bench::runTrainBench(config, a.scheme, a.steps, a.threads, a.fusedKernels, a.rowSplit);
    r.cppGemmMs = bench::timeUpdateGemmsMs(
        gemms, a.threads, 9,
        a.rowSplit ? bench::GemmThreading::RowSplit : bench::GemmThreading::PerOp);
    r.cppBlas = cppBlas;
    if (!a.cppOnly) {
      runTorchReference(r, benchConfig, a.scheme, a.steps, a.threads, referenceScript, gemmsJson);
    } else {
      r.torchMessage = r.newestTorchMessage = "not run (--cpp-only)";
    }
    rounds.push_back(std::move(r));
  }
  std::vector<double> cppTokens, stepMs, cppGemmMs;
  double faults = 0;
  for (const auto& r : rounds) {
    cppTokens.push_back(r.cppTokensPerSecond);
    cppGemmMs.push_back(r.cppGemmMs);
    stepMs.insert(stepMs.end(), r.stepMs.begin(), r.stepMs.end());
    faults += r.cppPageFaultsPerStep / static_cast<double>(rounds.size());
  }
  const UpdateSpread cppUpdates(stepMs);
  // Both sides update on the same tokens, so their speed ratio is the inverse ratio of update
  // times. A shared machine's noise only ever adds time: the fastest updates compare the two at
  // their quietest, a check on a median-of-rounds ratio that noise moved.
  auto fastestUpdateRatio = [&](const UpdateSpread& reference) {
    return reference.min / cppUpdates.min;
  };
  const double cppMedian = median(cppTokens);
  const auto debian = summarise(rounds, false), newest = summarise(rounds, true);
  const auto& first = rounds.front();
  const auto& m = config.model;
  const bool several = rounds.size() > 1;
  if (json) {
    nlohmann::json j = {{"preset", a.preset},
                        {"layers", m.nLayers},
                        {"width", m.dModel},
                        {"batch", config.optim.batchSize},
                        {"seq", m.seqLen},
                        {"threads", first.threads},
                        {"fused_kernels", first.fusedKernels},
                        {"row_split", first.rowSplit},
                        {"rounds", rounds.size()},
                        {"openblas_kernels", util::openBlasCore()},
                        {"reference_openblas_coretype", first.torchOpenBlasCore},
                        {"cpp_tokens_per_s", cppMedian},
                        {"cpp_page_faults_per_step", faults},
                        {"cpp_resident_mb", rounds.back().cppResidentMb},
                        {"cpp_step_ms",
                         {{"min", cppUpdates.min},
                          {"median", cppUpdates.median},
                          {"max", cppUpdates.max},
                          {"each", stepMs}}}};
    if (several) {
      nlohmann::json each = nlohmann::json::array();
      for (const auto& r : rounds) {
        nlohmann::json e = {{"cpp_tokens_per_s", r.cppTokensPerSecond}};
        if (r.torchTokensPerSecond) e["torch_tokens_per_s"] = *r.torchTokensPerSecond;
        if (r.newestTorchTokensPerSecond) {
          e["newest_torch_tokens_per_s"] = *r.newestTorchTokensPerSecond;
        }
        each.push_back(e);
      }
      j["each_round"] = each;
    }
    if (!debian.ratios.empty()) {
      j["torch_tokens_per_s"] = debian.medianTokens();
      j["torch_version"] = debian.version;
      j["ratio"] = debian.medianRatio();
    }
    auto updates = [&](const ReferenceSummary& s, const char* times, const char* ratio) {
      if (s.stepMs.empty() || stepMs.empty()) return;
      const UpdateSpread u(s.stepMs);
      j[times] = {{"min", u.min}, {"median", u.median}, {"max", u.max}};
      j[ratio] = fastestUpdateRatio(u);
    };
    updates(debian, "torch_step_ms", "fastest_update_ratio");
    updates(newest, "newest_torch_step_ms", "newest_fastest_update_ratio");
    if (!debian.complete) j["torch_error"] = debian.message;
    if (!newest.ratios.empty()) {
      j["newest_torch_version"] = newest.version;
      j["newest_torch_tokens_per_s"] = newest.medianTokens();
      j["newest_ratio"] = newest.medianRatio();
    }
    if (!newest.complete) j["newest_torch_error"] = newest.message;
    j["cpp_blas"] = first.cppBlas;
    j["cpp_gemm_ms"] = median(cppGemmMs);
    if (!debian.gemmMs.empty()) {
      j["torch_blas"] = debian.blas;
      j["torch_gemm_ms"] = median(debian.gemmMs);
    }
    if (!newest.gemmMs.empty()) {
      j["newest_torch_blas"] = newest.blas;
      j["newest_torch_gemm_ms"] = median(newest.gemmMs);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf(
      "bench train: %s, %d layers x d=%d, batch %d x seq %d, %s, %d thread(s), %d steps%s%s\n",
      a.preset.c_str(), m.nLayers, m.dModel, config.optim.batchSize, m.seqLen, a.scheme.c_str(),
      first.threads, first.steps,
      several ? (", " + std::to_string(rounds.size()) + " rounds").c_str() : "",
      (std::string(first.fusedKernels ? "" : ", C++ unfused") +
       (first.rowSplit || first.threads == 1 ? "" : ", C++ every op over the threads"))
          .c_str());
  if (const auto core = util::openBlasCore(); !core.empty()) {
    const char* forced = std::getenv("OPENBLAS_CORETYPE");
    std::printf("  OpenBLAS kernels: %s%s (C++ and PyTorch 1.13 alike)\n", core.c_str(),
                forced && *forced ? " (OPENBLAS_CORETYPE)" : "");
  } else if (!first.torchOpenBlasCore.empty()) {
    std::printf(
        "  OpenBLAS kernels of PyTorch 1.13: %s (OPENBLAS_CORETYPE set for it; this "
        "build's GEMMs are not OpenBLAS's)\n",
        first.torchOpenBlasCore.c_str());
  }
  if (several) {
    for (size_t i = 0; i < rounds.size(); ++i) {
      const auto& r = rounds[i];
      std::printf("  round %zu: C++ %.0f", i + 1, r.cppTokensPerSecond);
      if (r.torchTokensPerSecond) {
        std::printf(", %s %.0f (%.3fx)", r.torchVersion.c_str(), *r.torchTokensPerSecond,
                    r.cppTokensPerSecond / *r.torchTokensPerSecond);
      }
      if (r.newestTorchTokensPerSecond) {
        std::printf(", %s %.0f (%.3fx)", r.newestTorchVersion.c_str(),
                    *r.newestTorchTokensPerSecond,
                    r.cppTokensPerSecond / *r.newestTorchTokensPerSecond);
      }
      std::printf(" tokens/s\n");
    }
  }
  const char* of = several ? " (median of the rounds)" : "";
  std::printf(
      "  C++ trainer             %10.0f tokens/s%s  (%.0f page faults/step, %.0f MB resident; "
      "an update %.1f / %.1f / %.1f ms min / median / max)\n",
      cppMedian, of, faults, rounds.back().cppResidentMb, cppUpdates.min, cppUpdates.median,
      cppUpdates.max);
  // The targets of the shapes the speed work is judged on, against both references:
  // cpu-demo (24 x 64) >= 1.3, 12 x 256 >= 1.15; other shapes have none.
  const double target = m.nLayers == 24 && m.dModel == 64    ? 1.3
                        : m.nLayers == 12 && m.dModel == 256 ? 1.15
                                                             : 0;
  char targetText[32] = "";
  if (target > 0) std::snprintf(targetText, sizeof(targetText), " (target >= %.2f)", target);
  auto report = [&](const ReferenceSummary& s, const char* which, const char* missing) {
    if (s.ratios.empty()) {
      std::printf("  %s unavailable: %s\n", missing, s.message.c_str());
      return;
    }
    std::printf("  PyTorch %-16s%10.0f tokens/s%s  (%s)\n", s.version.c_str(), s.medianTokens(), of,
                which);
    const double ratio = s.medianRatio();
    std::printf("  ratio C++/PyTorch %s  %.3fx%s%s%s\n", s.version.c_str(), ratio,
                several ? " (median of the rounds' ratios)" : "", targetText,
                target > 0 ? (ratio >= target ? " ok" : " MISSED") : "");
    if (!s.stepMs.empty() && !stepMs.empty()) {
      const UpdateSpread u(s.stepMs);
      std::printf(
          "    an update %.1f / %.1f / %.1f ms min / median / max; fastest updates: "
          "C++ %.3fx (noise only adds time)\n",
          u.min, u.median, u.max, fastestUpdateRatio(u));
    }
    if (!s.complete) std::printf("    (missing in some rounds: %s)\n", s.message.c_str());
  };
  report(debian, "Debian's", "PyTorch      ");
  report(newest, "the newest, from the torch2 environment", "newest PyTorch");
  // Where a ratio comes from: the same dense products timed alone under each side's BLAS, and
  // the rest of an update (its median less them: norms, attention, SwiGLU, optimizer, ...).
  const double cppGemm = median(cppGemmMs);
  int64_t products = 0;
  for (const auto& g : gemms) products += g.count;
  std::printf(
      "  GEMMs of one update timed alone (%lld linear layers, forward and both backward, "
      "operands warm; %d thread(s) each%s%s):\n",
      static_cast<long long>(products), first.threads,
      first.threads > 1 && a.rowSplit ? ", C++ as its trainer splits the rows" : "",
      several ? "; median of the rounds" : "");
  // The products timed alone can outlast an update on a noisy machine (or per-op threads the
  // update does not use): then there is no "rest" to compare, and the line says so.
  const double cppRest = cppUpdates.median - cppGemm;
  auto gemmLine = [&](const std::string& who, const std::string& blas, double gemm, double update) {
    std::printf("    %-22s %6.1f ms on %-20s", who.c_str(), gemm, (blas + ",").c_str());
    const double rest = update - gemm;
    if (rest > 0) {
      std::printf(" the rest of a median update %6.1f ms", rest);
    } else {
      std::printf(" longer than a median update (%.1f ms): no rest to split off", update);
    }
    if (who != "C++") {
      std::printf("  (C++ %.2fx on the GEMMs", gemm / cppGemm);
      if (rest > 0 && cppRest > 0) std::printf(", %.2fx on the rest", rest / cppRest);
      std::printf(")");
    }
    std::printf("\n");
  };
  gemmLine("C++", first.cppBlas, cppGemm, cppUpdates.median);
  for (const auto* s : {&debian, &newest}) {
    if (!s->gemmMs.empty() && !s->stepMs.empty()) {
      gemmLine("PyTorch " + s->version, s->blas, median(s->gemmMs), UpdateSpread(s->stepMs).median);
    }
  }
}

}  // namespace depthlab::cli
