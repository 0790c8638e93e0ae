// See bench_baselines.h.
#include "bench_baselines.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/openblas_kernels.h"
#include "util/python_env.h"
#include "util/run_command.h"

namespace depthlab::cli {

namespace {

struct ReferenceRun {
  std::optional<double> tokensPerSecond;
  std::vector<double> stepMs;  // every timed update; empty from a script that does not say
  std::string version, message;
  std::optional<double> gemmMs;  // the script's `gemm` mode on the shapes asked for
  std::string blas;
};

// The reference script's `gemm` mode: the products of `shapesJson` under `python`'s BLAS.
void timeReferenceGemms(ReferenceRun& out, const std::string& python, const std::string& script,
                        const std::string& config, const std::string& shapesJson, int threads,
                        const std::string& coreType) {
  std::vector<std::string> argv = {python, script,     "gemm",    "--config",
                                   config, "--shapes", shapesJson};
  argv.insert(argv.end(),
              {"--scheme", "pre_ln", "--steps", "9", "--threads", std::to_string(threads)});
  if (!coreType.empty()) {
    argv.insert(argv.begin(), {"/usr/bin/env", "OPENBLAS_CORETYPE=" + coreType});
  }
  const auto run = util::runProgram(argv, {"", util::Stderr::Merge});
  const auto brace = run.output.rfind('{');
  if (run.status != 0 || brace == std::string::npos) return;
  const auto j = nlohmann::json::parse(run.output.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.contains("gemm_ms")) return;
  out.gemmMs = j["gemm_ms"].get<double>();
  out.blas = j.value("blas", std::string());
}

// bench/reference_model.py's `bench` under `python`, on the config written to a temporary file.
// `coreType` non-empty: the reference runs with OPENBLAS_CORETYPE set to it.
ReferenceRun timeReference(const std::string& python, const experiment::ExperimentConfig& c,
                           const std::string& scheme, int steps, int threads,
                           const std::string& script, const std::string& shapesJson,
                           const std::string& coreType = "") {
  ReferenceRun out;
  const std::string cfg = (std::filesystem::temp_directory_path() /
                           ("depthlab-bench-" + std::to_string(getpid()) + ".json"))
                              .string();
  {
    FILE* f = std::fopen(cfg.c_str(), "w");
    if (!f) {
      out.message = "cannot write " + cfg;
      return out;
    }
    std::fputs(experiment::toJson(c).dump().c_str(), f);
    std::fclose(f);
  }
  std::vector<std::string> argv = {python,
                                   script,
                                   "bench",
                                   "--config",
                                   cfg,
                                   "--scheme",
                                   scheme,
                                   "--steps",
                                   std::to_string(steps),
                                   "--threads",
                                   std::to_string(threads)};
  if (!coreType.empty()) {
    argv.insert(argv.begin(), {"/usr/bin/env", "OPENBLAS_CORETYPE=" + coreType});
  }
  auto run = util::runProgram(argv, {"", util::Stderr::Merge});
  if (!shapesJson.empty()) {
    timeReferenceGemms(out, python, script, cfg, shapesJson, threads, coreType);
  }
  std::error_code ec;
  std::filesystem::remove(cfg, ec);
  const std::string& text = run.output;
  auto j = nlohmann::json::parse(
      text.substr(text.find('{') == std::string::npos ? 0 : text.rfind('{')), nullptr, false);
  if (run.status != 0 || j.is_discarded() || !j.contains("tokens_per_s")) {
    out.message = text.substr(0, 300);
    return out;
  }
  out.tokensPerSecond = j["tokens_per_s"].get<double>();
  if (const auto each = j.find("step_ms"); each != j.end() && each->is_array()) {
    for (const auto& ms : *each) {
      if (ms.is_number()) out.stepMs.push_back(ms.get<double>());
    }
  }
  const auto v = util::runProgram({python, "-c", "import torch; print(torch.__version__)"});
  if (v.status == 0) {
    out.version = v.output.substr(0, v.output.find_last_not_of(" \n") + 1);
    if (auto nl = out.version.rfind('\n'); nl != std::string::npos)
      out.version = out.version.substr(nl + 1);
  }
  return out;
}

// A build without OpenBLAS of its own (the torch2 configuration: pip's torch uses MKL) never
// sets OPENBLAS_CORETYPE (util/openblas_kernels.h), so Debian's PyTorch 1.13 would run on the
// kernels its OpenBLAS falls back to on a CPU newer than it (Prescott on Emerald Rapids, ~4x
// slower). Asks that Python which kernels the BLAS it loads picks, and returns the core the
// Debian build would choose for itself, or "" (already good, chosen by the user, or no OpenBLAS).
// The answer depends only on the machine and the environment: asked once per process.
std::string askDebianReferenceCoreType() {
  const char* chosen = std::getenv("OPENBLAS_CORETYPE");
  if ((chosen && *chosen) || !util::openBlasCore().empty()) return "";
  const auto picked = util::runProgram({"/usr/bin/python3", "-c",
                                        "import ctypes\n"
                                        "f = ctypes.CDLL('libblas.so.3').openblas_get_corename\n"
                                        "f.restype = ctypes.c_char_p\n"
                                        "print(f().decode())"});
  if (picked.status != 0) return "";
  std::string name = picked.output;
  name.erase(name.find_last_not_of(" \n") + 1);
  return util::betterOpenBlasCore(name, util::cpuVectorFeatures());
}

const std::string& debianReferenceCoreType() {
  static const std::string core = askDebianReferenceCoreType();
  return core;
}

}  // namespace

void runTorchReference(bench::TrainBenchResult& r, const experiment::ExperimentConfig& c,
                       const std::string& scheme, int steps, int threads, const std::string& script,
                       const std::string& gemmShapesJson) {
  if (!std::filesystem::exists(script)) {
    r.torchMessage = r.newestTorchMessage = "reference script not found at " + script;
    return;
  }
  r.torchOpenBlasCore = debianReferenceCoreType();
  auto debian = timeReference("/usr/bin/python3", c, scheme, steps, threads, script, gemmShapesJson,
                              r.torchOpenBlasCore);
  r.torchTokensPerSecond = debian.tokensPerSecond;
  r.torchGemmMs = debian.gemmMs;
  r.torchBlas = debian.blas;
  r.torchStepMs = debian.stepMs;
  r.torchVersion = debian.version;
  if (!debian.tokensPerSecond) {
    r.torchMessage = "PyTorch reference unavailable (needs /usr/bin/python3 with python3-torch): " +
                     debian.message;
  }
  const std::string python = util::newestTorchPython();
  if (python.empty()) {
    r.newestTorchMessage = "no torch2 environment (make build-torch2 installs the newest torch)";
    return;
  }
  auto newest = timeReference(python, c, scheme, steps, threads, script, gemmShapesJson);
  r.newestTorchTokensPerSecond = newest.tokensPerSecond;
  r.newestTorchGemmMs = newest.gemmMs;
  r.newestTorchBlas = newest.blas;
  r.newestTorchStepMs = newest.stepMs;
  r.newestTorchVersion = newest.version;
  if (!newest.tokensPerSecond) r.newestTorchMessage = python + " failed: " + newest.message;
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
  auto n = [](auto v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  const auto run = util::runProgram({python,     script,
                                     "--layers", n(m.nLayers),
                                     "--width",  n(m.dModel),
                                     "--heads",  n(m.nHeads),
                                     "--ffn",    n(m.dFF),
                                     "--seq",    n(m.seqLen),
                                     "--batch",  n(c.optim.batchSize),
                                     "--accum",  n(c.optim.gradAccum),
                                     "--vocab",  n(m.vocabSize),
                                     "--eps",    n(m.normEps),
                                     "--steps",  n(std::max(5, r.steps))});
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
