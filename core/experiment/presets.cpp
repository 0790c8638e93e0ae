// Preset table; numbers from ../shared/reference/curse-of-depth-facts.md sections 3.2 and 3.4.
#include "experiment/presets.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "model/block_plan.h"

namespace depthlab::experiment {

namespace {

ExperimentConfig paper(int d, int layers, int heads, int ff, double lr, int steps, int warmup,
                       int globalBatch, int microBatch) {
  ExperimentConfig c;
  c.model.vocabSize = 32000;
  c.model.dModel = d;
  c.model.nLayers = layers;
  c.model.nHeads = heads;
  c.model.dFF = ff;
  c.model.seqLen = 256;
  c.data.tokenizer = "spm:32000";
  c.optim.lr = lr;
  c.optim.steps = steps;
  c.optim.warmupSteps = warmup;
  c.optim.batchSize = microBatch;
  c.optim.gradAccum = globalBatch / microBatch;
  c.optim.autoMicroBatch = true;  // on a GPU: as large as free memory allows (global batch kept)
  c.run.evalEvery = 1000;
  c.run.evalBatches = 32;
  c.run.checkpointEvery = 5000;
  c.run.logEvery = 10;
  c.run.bf16 = true;
  return c;
}

ExperimentConfig cpu(int d, int layers, int heads, int ff, int seq, int batch, double lr,
                     int steps, int warmup, int evalEvery) {
  ExperimentConfig c;
  c.model.dModel = d;
  c.model.nLayers = layers;
  c.model.nHeads = heads;
  c.model.dFF = ff;
  c.model.seqLen = seq;
  c.optim.lr = lr;
  c.optim.steps = steps;
  c.optim.warmupSteps = warmup;
  c.optim.batchSize = batch;
  c.run.evalEvery = evalEvery;
  c.run.evalBatches = 8;
  return c;
}

std::vector<Preset> buildPresets() {
  std::vector<Preset> p;
  auto add = [&](std::string name, std::string desc, ExperimentConfig c) {
    c.preset = name;
    p.push_back({std::move(name), std::move(desc), std::move(c)});
  };
  add("tiny", "4 layers, d=32: a smoke test that runs in seconds",
      cpu(32, 4, 2, 88, 32, 8, 3e-3, 60, 6, 20));
  add("cpu-demo", "24 layers, d=64, 600 steps: Pre-LN vs LNS on a laptop in minutes",
      cpu(64, 24, 4, 172, 64, 16, 6e-3, 600, 60, 100));
  add("cpu-long", "cpu-demo trained 10,000 steps (1-2 hours): does the deep-layer pattern flip?",
      cpu(64, 24, 4, 172, 64, 16, 6e-3, 10000, 1000, 500));
  // Paper configs: global batch 512 sequences of 256 tokens; micro-batches as in the scripts.
  add("llama-71m", "LLaMA-71M (Mix-LN scripts): 12 layers, d=512",
      paper(512, 12, 8, 1368, 1e-3, 10000, 1000, 256, 64));
  add("llama-130m", "LLaMA-130M (paper Table 1): 12 layers, d=768",
      paper(768, 12, 12, 2048, 1e-3, 20000, 2000, 512, 64));
  add("llama-250m", "LLaMA-250M (paper Table 1): 24 layers, d=768",
      paper(768, 24, 16, 2560, 1e-3, 40000, 4000, 512, 128));
  add("llama-350m", "LLaMA-350M (paper Table 1; script lr 5e-4): 24 layers, d=1024",
      paper(1024, 24, 16, 2736, 5e-4, 60000, 6000, 512, 128));
  add("llama-1b", "LLaMA-1B (paper Table 1): 24 layers, d=2048",
      paper(2048, 24, 32, 5461, 5e-4, 100000, 1000, 512, 32));
  return p;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = buildPresets();
  return all;
}

std::optional<ExperimentConfig> presetConfig(const std::string& name) {
  for (const auto& p : presets()) {
    if (p.name == name) return p.config;
  }
  return std::nullopt;
}

std::vector<std::string> presetNames() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

ExperimentConfig requirePreset(const std::string& name) {
  if (auto p = presetConfig(name)) return *p;
  std::string known;
  for (const auto& n : presetNames()) known += " " + n;
  throw ConfigError("unknown preset '" + name + "' (known:" + known + ")");
}

ExperimentConfig loadConfigOverPreset(const std::string& path, const std::string& preset) {
  const auto j = readConfigJson(path);
  std::optional<ExperimentConfig> named;  // the file's own "preset", which must exist
  if (auto it = j.find("preset"); j.is_object() && it != j.end() && it->is_string() &&
                                  !it->get<std::string>().empty()) {
    try {  // an unknown name is refused, as --preset nope is (it trained on built-in defaults)
      named = requirePreset(it->get<std::string>());
    } catch (const std::exception& e) {
      throw ConfigError(path + ": \"preset\": " + e.what());
    }
  }
  std::optional<ExperimentConfig> base = preset.empty() ? named : requirePreset(preset);
  try {
    return configFromJson(j, base.value_or(ExperimentConfig{}));
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

int64_t parameterCount(const ModelConfig& m, const std::string& scheme, const SchemeOptions& o) {
  // Counted from the block plans the model is built from, so a scheme's extra parameters are
  // stated once (model/block_plan.cpp). An unknown scheme counts as Pre-LN. Every product and
  // sum is checked: a width of 10^9 must not wrap round to a count that looks affordable.
  ExperimentConfig c;
  c.model = m;
  c.options = o;
  const bool known = std::find(kSchemes.begin(), kSchemes.end(), scheme) != kSchemes.end();
  const auto plans = model::planBlocks(c.model, c.options, known ? scheme : "pre_ln");
  bool over = false;
  auto mul = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    over = over || __builtin_mul_overflow(a, b, &r);
    return r;
  };
  auto add = [&](int64_t a, int64_t b) {
    int64_t r = 0;
    over = over || __builtin_add_overflow(a, b, &r);
    return r;
  };
  const int64_t V = m.vocabSize, d = m.dModel, f = m.dFF;
  const int64_t normParams = m.norm == "layernorm" ? mul(2, d) : d;  // LayerNorm has a bias
  const bool dyt = !plans.empty() && plans.front().dyt;  // + alpha per norm, embedding scalar
  const int64_t dytNorm = dyt ? normParams + 1 : normParams;
  // embedding, head (none when tied), final norm, learned positions (GPT-2's wpe)
  int64_t total = add(mul(m.tieEmbeddings ? 1 : 2, mul(V, d)), dytNorm);
  total = add(total, mul(m.learnedPositions, d));
  if (dyt) total = add(total, 1);
  const int64_t D = m.headDimension(), H = m.nHeads, K = m.kvHeads();
  const int64_t qWidth = mul(H, D), kvWidth = mul(K, D);
  // attention: q and o of H heads, k and v of K (grouped-query) heads of D each; the MLP: up and
  // down, and a gate when gated (SwiGLU); then the biases the family has
  int64_t block = add(mul(d, mul(2, qWidth)), mul(d, mul(2, kvWidth)));
  block = add(block, mul(mul(m.gatedMlp ? 3 : 2, d), f));
  if (m.qkvBias) block = add(block, add(qWidth, mul(2, kvWidth)));
  if (m.outBias) block = add(block, d);
  if (m.mlpBias) block = add(block, add(mul(m.gatedMlp ? 2 : 1, f), d));
  for (const auto& p : plans) {
    total = add(total, block);
    if (p.normBeforeSublayer) total = add(total, mul(p.hybrid ? 1 : 2, dytNorm));
    if (p.qkNorm == model::QkNorm::PerHead) total = add(total, mul(2, D));
    if (p.qkNorm == model::QkNorm::Whole) total = add(total, mul(add(H, K), D));
    if (p.vNorm) total = add(total, D);
    if (p.sandwich) total = add(total, mul(2, normParams));  // the output norms
    if (p.learnableScale) total = add(total, add(mul(2, d), 1));  // scale, gate readout w, b
    if (p.skipInit) total = add(total, 2);                   // one scalar per branch
    if (p.layerScale) total = add(total, mul(2, d));         // one vector per branch
    if (over) break;
  }
  return over ? kParameterCountOverflow : total;
}

}  // namespace depthlab::experiment
