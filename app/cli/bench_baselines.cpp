// See bench_baselines.h.
#include "bench_baselines.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/run_command.h"

namespace depthlab::cli {

void runTorchReference(bench::TrainBenchResult& r, const experiment::ExperimentConfig& c,
                       const std::string& scheme, int steps, int threads,
                       const std::string& script) {
  if (!std::filesystem::exists(script)) {
    r.torchMessage = "reference script not found at " + script;
    return;
  }
  const std::string cfg = (std::filesystem::temp_directory_path() /
                           ("depthlab-bench-" + std::to_string(getpid()) + ".json")).string();
  {
    FILE* f = std::fopen(cfg.c_str(), "w");
    if (!f) {
      r.torchMessage = "cannot write " + cfg;
      return;
    }
    std::fputs(experiment::toJson(c).dump().c_str(), f);
    std::fclose(f);
  }
  auto run = util::runProgram({"/usr/bin/python3", script, "bench", "--config", cfg, "--scheme",
                               scheme, "--steps", std::to_string(steps), "--threads",
                               std::to_string(threads)},
                              {"", util::Stderr::Merge});
  const int rc = run.status;
  const std::string& out = run.output;
  std::error_code ec;
  std::filesystem::remove(cfg, ec);
  auto j = nlohmann::json::parse(out.substr(out.find('{') == std::string::npos ? 0 : out.rfind('{')),
                                 nullptr, false);
  if (rc != 0 || j.is_discarded() || !j.contains("tokens_per_s")) {
    r.torchMessage = "PyTorch reference unavailable (needs /usr/bin/python3 with python3-torch): " +
                     out.substr(0, 300);
    return;
  }
  r.torchTokensPerSecond = j["tokens_per_s"].get<double>();
}

void runHfBaseline(bench::GpuTrainBenchResult& r, const experiment::ExperimentConfig& c,
                   const std::string& script, std::string python) {
  if (script.empty()) {
    r.hfMessage = "baseline not asked for";
    return;
  }
  if (python.empty()) {
    const char* env = std::getenv("DEPTHLAB_PYTHON");
    python = env && *env ? env : "python3";
  }
  const auto probe = util::runProgram(
      {python, "-c", "import torch, transformers; assert torch.cuda.is_available()"});
  if (probe.status != 0) {
    r.hfMessage = python + " cannot import torch (with CUDA) and transformers";
    return;
  }
  const auto& m = c.model;
  auto n = [](auto v) { std::ostringstream s; s << v; return s.str(); };
  const auto run = util::runProgram(
      {python, script, "--layers", n(m.nLayers), "--width", n(m.dModel), "--heads", n(m.nHeads),
       "--ffn", n(m.dFF), "--seq", n(m.seqLen), "--batch", n(c.optim.batchSize), "--accum",
       n(c.optim.gradAccum), "--vocab", n(m.vocabSize), "--eps", n(m.normEps), "--steps",
       n(std::max(5, r.steps))});
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.contains("error")) r.hfMessage = j["error"].get<std::string>();
    if (!j.contains("tokens_per_s")) continue;
    (j.value("mode", "") == "eager" ? r.hfEager : r.hfCompile) = j["tokens_per_s"].get<double>();
    r.hfMessage = "torch " + j.value("torch", std::string("?"));
  }
  if (!r.hfEager && !r.hfCompile && r.hfMessage.empty()) {
    r.hfMessage = "the baseline printed no result (exit " + std::to_string(run.status) + ")";
  }
}

}  // namespace depthlab::cli
