// See resource_estimate.h.
#include "experiment/resource_estimate.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "experiment/presets.h"

namespace depthlab::experiment {

RunEstimate estimateRun(const ExperimentConfig& c, const std::string& scheme) {
  RunEstimate e;
  auto m = c.model;
  if (c.data.tokenizer == "byte") m.vocabSize = 256;
  e.params = parameterCount(m, scheme, c.options);
  const double B = c.optim.batchSize, T = m.seqLen, C = m.dModel, L = m.nLayers, F = m.dFF;
  // Weights + grads + Adam moments (fp32), plus activations kept for backward (~per block:
  // 12 C-wide tensors, 3 F-wide, attention scores) and the logits.
  const double activations = B * T * (L * (12 * C + 3 * F) + 2 * m.vocabSize) +
                             B * L * m.nHeads * T * T * 2;
  e.memoryMB = (16.0 * static_cast<double>(e.params) + 4.0 * activations) / 1e6;
  // ~6 flops per parameter per token plus attention; on this 2-core machine one LibTorch
  // thread sustains about 45 GFLOP/s for these shapes (cpu-demo: 600 steps in ~95 s).
  const double tokens = B * T * c.optim.gradAccum * c.optim.steps;
  const double flops = tokens * (6.0 * static_cast<double>(e.params) + 12.0 * L * T * C);
  e.seconds = flops / (c.run.device == "cpu" ? 45e9 : 5e12);
  return e;
}

double availableMemoryMB() {
  std::ifstream f("/proc/meminfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(line.substr(13));
      double kb = 0;
      in >> kb;
      return kb / 1024.0;
    }
  }
  return 0;
}

void requireFits(const ExperimentConfig& c, double availableMB, const std::string& where) {
  if (availableMB <= 0) return;
  double total = 0;
  // The group's models live side by side; activations are those of one model at a time, but
  // the estimate keeps them all (a margin for the allocator and the probes).
  for (const auto& s : c.schemes) total += estimateRun(c, s).memoryMB;
  if (total > availableMB) {
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "this group needs about %.0f MB (%zu model(s) of %.1fM parameters: weights, "
                  "gradients, Adam moments and activations) but %s has %.0f MB available; "
                  "use a smaller width, depth, sequence or micro-batch",
                  total, c.schemes.size(),
                  static_cast<double>(estimateRun(c, c.schemes.front()).params) / 1e6,
                  where.c_str(), availableMB);
    throw ConfigError(buf);
  }
}

}  // namespace depthlab::experiment
