// See tuned_lens_run.h.
#include "experiment/tuned_lens_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "probes/eval_scope.h"
#include "probes/traced_forward.h"
#include "probes/tuned_lens.h"
#include "store/metric_catalogue.h"

namespace depthlab::experiment {

namespace {

// The kept lens when it is there and verifies; otherwise nullopt and `why` says what was wrong
// ("" when there is no file).
std::optional<probes::TunedLens> keptLens(const std::string& path, model::Decoder& model,
                                          std::string& why) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    return probes::loadTunedLens(path, model);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace

std::string runTunedLens(model::Decoder& model, const torch::Tensor& inputs,
                         const torch::Tensor& targets, int64_t step, const TunedLensJob& job,
                         store::WriteBatch& out) {
  if (!job.text.defined() || job.text.size(0) < 1) {
    throw std::runtime_error("the tuned lens needs held-out text to train on");
  }
  std::filesystem::create_directories(job.folder);
  const std::string path =
      (std::filesystem::path(job.folder) /
       ("tuned-lens-step-" + std::to_string(step) + "-" + std::to_string(job.steps) + "x" +
        std::to_string(job.rowsPerStep) + ".pt"))
          .string();
  auto say = [&](const std::string& line) {
    if (job.say) job.say(line);
  };
  std::string refused;
  auto lens = keptLens(path, model, refused);
  std::string how = "reused";
  if (!lens) {
    if (!refused.empty()) say("training the tuned lens again: " + refused);
    probes::TunedLensTraining o;
    o.steps = job.steps;
    o.rowsPerStep = job.rowsPerStep;
    auto lastSaid = std::chrono::steady_clock::now() - std::chrono::seconds(10);
    lens = probes::trainTunedLens(model, job.text, o, [&](int done, int total, double kl) {
      const auto now = std::chrono::steady_clock::now();
      if (done != total && now - lastSaid < std::chrono::seconds(2)) return;
      lastSaid = now;
      char buf[128];
      std::snprintf(buf, sizeof buf, "tuned lens     %4d/%-4d  KL summed over blocks %.4f", done,
                    total, kl);
      say(buf);
    });
    how = "trained " + std::to_string(job.steps) + " steps of " + std::to_string(job.rowsPerStep) +
          " rows";
  }
  const std::string hash = lens && how != "reused" ? probes::saveTunedLens(*lens, path) : "";
  model::ForwardTrace trace;
  probes::LogitLens r;
  {
    torch::NoGradGuard ng;
    probes::EvalScope scope(model);
    probes::tracedForward(model, inputs, trace);
    r = probes::tunedLensOfTrace(model, *lens, trace, targets);
  }
  out.layer(step, metrics::kTunedKl, r.kl);
  out.layer(step, metrics::kTunedTop1, r.top1);
  out.layer(step, metrics::kTunedEntropy, r.entropy);
  out.layer(step, metrics::kTunedCrossEntropy, r.crossEntropy);
  out.scalar(step, metrics::kTunedSettle, r.settleDepth);
  out.event(step, store::EventLevel::Info,
            "tuned lens " + how + ": " + path + (hash.empty() ? "" : " (FNV-1a " + hash + ")") +
                (refused.empty() ? "" : "; the kept one was refused: " + refused));
  return path;
}

}  // namespace depthlab::experiment
