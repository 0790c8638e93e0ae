// ExperimentConfig JSON round trip and validation; see experiment_config.h.
#include "experiment/experiment_config.h"

#include "data/tokenizer.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <type_traits>
#include <algorithm>
#include <set>
#include <sstream>

namespace depthlab::experiment {

using nlohmann::json;

const std::vector<std::string> kSchemes = {"pre_ln",   "lns",      "post_ln",
                                           "mix_ln",   "deepnorm", "deepnorm_official",
                                           "sandwich", "lns_learnable"};
const std::vector<std::string> kLnsPlacements = {"after_norm",     "before_norm",
                                                 "after_sublayer", "after_residual",
                                                 "after_attn_only", "after_ffn_only"};

namespace {

// Reads the fields of one JSON section into a struct, complaining about unknown keys and types.
class SectionReader {
 public:
  SectionReader(const json& j, std::string section) : m_j(j), m_section(std::move(section)) {
    if (!m_j.is_object()) throw ConfigError("config: '" + m_section + "' must be an object");
  }
  template <typename T>
  void read(const char* key, T& out) {
    m_known.insert(key);
    auto it = m_j.find(key);
    if (it == m_j.end() || it->is_null()) return;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann converts a float or an out-of-range integer with a plain cast (undefined
      // behaviour past the type's range): whole numbers in range only.
      const bool whole = it->is_number_integer() ||
                         (it->is_number_float() && std::isfinite(it->template get<double>()) &&
                          std::floor(it->template get<double>()) == it->template get<double>());
      const double v = it->is_number() ? it->template get<double>() : 0.0;
      if (!it->is_number() || !whole ||
          v < static_cast<double>(std::numeric_limits<T>::min()) ||
          v > static_cast<double>(std::numeric_limits<T>::max())) {
        throw ConfigError("config: '" + path(key) + "' must be a whole number in range (got " +
                          it->dump().substr(0, 40) + ")");
      }
      out = it->is_number_integer() ? static_cast<T>(it->template get<int64_t>()) : static_cast<T>(v);
      return;
    }
    try {
      out = it->template get<T>();
    } catch (const json::exception&) {
      throw ConfigError("config: '" + path(key) + "' has the wrong type (" +
                        std::string(it->type_name()) + ")");
    }
  }
  void allow(const char* key) { m_known.insert(key); }
  void finish() const {
    for (auto it = m_j.begin(); it != m_j.end(); ++it) {
      if (!m_known.count(it.key())) {
        throw ConfigError("config: unknown key '" + path(it.key()) + "'");
      }
    }
  }
  std::string path(const std::string& key) const {
    return m_section.empty() ? key : m_section + "." + key;
  }

 private:
  const json& m_j;
  std::string m_section;
  std::set<std::string> m_known;
};

const json& sectionOr(const json& j, const char* key, const json& empty) {
  auto it = j.find(key);
  return it == j.end() ? empty : *it;
}

}  // namespace

json toJson(const ExperimentConfig& c) {
  const auto& m = c.model;
  const auto& o = c.options;
  const auto& d = c.data;
  const auto& p = c.optim;
  const auto& r = c.run;
  return json{
      {"preset", c.preset},
      {"name", c.name},
      {"schemes", c.schemes},
      {"model", {{"vocabSize", m.vocabSize}, {"dModel", m.dModel}, {"nLayers", m.nLayers},
                 {"nHeads", m.nHeads}, {"dFF", m.dFF}, {"seqLen", m.seqLen}, {"norm", m.norm},
                 {"normEps", m.normEps}, {"initStd", m.initStd}, {"embedStd", m.embedStd},
                 {"ropeBase", m.ropeBase}}},
      {"options", {{"mixLnAlpha", o.mixLnAlpha}, {"scaledInit", o.scaledInit},
                   {"depthScaledInit", o.depthScaledInit}, {"skipInit", o.skipInit},
                   {"layerScale", o.layerScale}, {"layerScaleInit", o.layerScaleInit},
                   {"lnsPlacement", o.lnsPlacement}, {"lnsLearnableLr", o.lnsLearnableLr}}},
      {"data", {{"corpus", d.corpus}, {"tokenizer", d.tokenizer}, {"valFraction", d.valFraction}}},
      {"optim", {{"optimizer", p.optimizer}, {"lr", p.lr}, {"minLrRatio", p.minLrRatio},
                 {"warmupSteps", p.warmupSteps}, {"steps", p.steps}, {"batchSize", p.batchSize},
                 {"gradAccum", p.gradAccum}, {"autoMicroBatch", p.autoMicroBatch},
                 {"weightDecay", p.weightDecay},
                 {"beta1", p.beta1}, {"beta2", p.beta2}, {"eps", p.eps},
                 {"gradClip", p.gradClip}}},
      {"probes", {{"probeBatch", c.probes.probeBatch}, {"forwardEvery", c.probes.forwardEvery},
                  {"angularMatrixEvery", c.probes.angularMatrixEvery},
                  {"pruningEvery", c.probes.pruningEvery},
                  {"blockPruningAtEnd", c.probes.blockPruningAtEnd},
                  {"jacobianEvery", c.probes.jacobianEvery},
                  {"jacobianSamples", c.probes.jacobianSamples},
                  {"lastTokenOnly", c.probes.lastTokenOnly},
                  {"pruneRenumber", c.probes.pruneRenumber},
                  {"lazyThreshold", c.probes.lazyThreshold},
                  {"lowThreshold", c.probes.lowThreshold}}},
      {"run", {{"seed", r.seed}, {"device", r.device}, {"threads", r.threads},
               {"evalEvery", r.evalEvery}, {"evalBatches", r.evalBatches},
               {"checkpointEvery", r.checkpointEvery},
               {"checkpointMinutes", r.checkpointMinutes}, {"checkpointKeep", r.checkpointKeep},
               {"logEvery", r.logEvery}, {"bf16", r.bf16}}},
  };
}

ExperimentConfig configFromJson(const json& j) {
  ExperimentConfig c;
  const json empty = json::object();
  SectionReader top(j, "");
  top.read("preset", c.preset);
  top.read("name", c.name);
  top.read("schemes", c.schemes);
  for (const char* s : {"model", "options", "data", "optim", "run", "probes"}) top.allow(s);
  top.finish();

  auto& m = c.model;
  SectionReader sm(sectionOr(j, "model", empty), "model");
  sm.read("vocabSize", m.vocabSize); sm.read("dModel", m.dModel); sm.read("nLayers", m.nLayers);
  sm.read("nHeads", m.nHeads); sm.read("dFF", m.dFF); sm.read("seqLen", m.seqLen);
  sm.read("norm", m.norm); sm.read("normEps", m.normEps); sm.read("initStd", m.initStd);
  sm.read("embedStd", m.embedStd); sm.read("ropeBase", m.ropeBase);
  sm.finish();

  auto& o = c.options;
  SectionReader so(sectionOr(j, "options", empty), "options");
  so.read("mixLnAlpha", o.mixLnAlpha); so.read("scaledInit", o.scaledInit);
  so.read("depthScaledInit", o.depthScaledInit); so.read("skipInit", o.skipInit);
  so.read("layerScale", o.layerScale); so.read("layerScaleInit", o.layerScaleInit);
  so.read("lnsPlacement", o.lnsPlacement); so.read("lnsLearnableLr", o.lnsLearnableLr);
  so.finish();

  auto& d = c.data;
  SectionReader sd(sectionOr(j, "data", empty), "data");
  sd.read("corpus", d.corpus); sd.read("tokenizer", d.tokenizer);
  sd.read("valFraction", d.valFraction);
  sd.finish();

  auto& p = c.optim;
  SectionReader sp(sectionOr(j, "optim", empty), "optim");
  sp.read("optimizer", p.optimizer); sp.read("lr", p.lr); sp.read("minLrRatio", p.minLrRatio);
  sp.read("warmupSteps", p.warmupSteps); sp.read("steps", p.steps);
  sp.read("batchSize", p.batchSize); sp.read("gradAccum", p.gradAccum);
  sp.read("autoMicroBatch", p.autoMicroBatch);
  sp.read("weightDecay", p.weightDecay); sp.read("beta1", p.beta1); sp.read("beta2", p.beta2);
  sp.read("eps", p.eps); sp.read("gradClip", p.gradClip);
  sp.finish();

  auto& r = c.run;
  SectionReader sr(sectionOr(j, "run", empty), "run");
  sr.read("seed", r.seed); sr.read("device", r.device); sr.read("threads", r.threads);
  sr.read("evalEvery", r.evalEvery); sr.read("evalBatches", r.evalBatches);
  sr.read("checkpointEvery", r.checkpointEvery); sr.read("logEvery", r.logEvery);
  sr.read("checkpointMinutes", r.checkpointMinutes); sr.read("checkpointKeep", r.checkpointKeep);
  sr.read("bf16", r.bf16);
  sr.finish();

  auto& q = c.probes;
  SectionReader sq(sectionOr(j, "probes", empty), "probes");
  sq.read("probeBatch", q.probeBatch); sq.read("forwardEvery", q.forwardEvery);
  sq.read("angularMatrixEvery", q.angularMatrixEvery); sq.read("pruningEvery", q.pruningEvery);
  sq.read("blockPruningAtEnd", q.blockPruningAtEnd); sq.read("jacobianEvery", q.jacobianEvery);
  sq.read("jacobianSamples", q.jacobianSamples); sq.read("lastTokenOnly", q.lastTokenOnly);
  sq.read("pruneRenumber", q.pruneRenumber); sq.read("lazyThreshold", q.lazyThreshold);
  sq.read("lowThreshold", q.lowThreshold);
  sq.finish();
  return c;
}

ExperimentConfig loadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read config file '" + path + "'");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ConfigError("config file '" + path + "' is not valid JSON");
  try {
    return configFromJson(j);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

void saveConfigFile(const ExperimentConfig& c, const std::string& path) {
  std::ofstream out(path);
  out << toJson(c).dump(2) << "\n";
  if (!out) throw ConfigError("cannot write config file '" + path + "'");
}

std::vector<ConfigIssue> validate(const ExperimentConfig& c) {
  std::vector<ConfigIssue> issues;
  auto bad = [&](const std::string& field, const std::string& msg) {
    issues.push_back({field, field + ": " + msg});
  };
  const auto& m = c.model;
  if (m.vocabSize < 2) bad("model.vocabSize", "must be at least 2");
  if (m.nLayers <= 0) bad("model.nLayers", "depth must be at least 1");
  if (m.dModel <= 0) bad("model.dModel", "width must be positive");
  if (m.nHeads <= 0) bad("model.nHeads", "must be positive");
  else if (m.dModel > 0 && m.dModel % m.nHeads != 0)
    bad("model.nHeads", std::to_string(m.nHeads) + " heads do not divide width " +
                            std::to_string(m.dModel));
  else if (m.dModel > 0 && (m.dModel / m.nHeads) % 2 != 0)
    bad("model.nHeads", "head dimension " + std::to_string(m.dModel / m.nHeads) +
                            " must be even for RoPE");
  if (m.dFF <= 0) bad("model.dFF", "FFN width must be positive");
  if (m.seqLen < 2) bad("model.seqLen", "sequence length must be at least 2");
  if (m.norm != "rmsnorm" && m.norm != "layernorm")
    bad("model.norm", "unknown norm '" + m.norm + "' (known: rmsnorm, layernorm)");
  if (!(m.normEps > 0)) bad("model.normEps", "must be > 0");
  if (!(m.initStd > 0)) bad("model.initStd", "must be > 0");
  if (!(m.embedStd > 0)) bad("model.embedStd", "must be > 0");
  if (!(m.ropeBase > 1)) bad("model.ropeBase", "must be > 1");

  if (c.schemes.empty()) bad("schemes", "choose at least one scheme");
  std::set<std::string> seen;
  for (const auto& s : c.schemes) {
    if (std::find(kSchemes.begin(), kSchemes.end(), s) == kSchemes.end()) {
      std::string known;
      for (const auto& k : kSchemes) known += (known.empty() ? "" : ", ") + k;
      bad("schemes", "unknown scheme '" + s + "' (known: " + known + ")");
    }
    if (!seen.insert(s).second) bad("schemes", "scheme '" + s + "' listed twice");
  }
  const auto& o = c.options;
  if (!(o.mixLnAlpha >= 0 && o.mixLnAlpha <= 1)) bad("options.mixLnAlpha", "must be in [0, 1]");
  if (!(o.layerScaleInit > 0)) bad("options.layerScaleInit", "must be > 0");
  if (std::find(kLnsPlacements.begin(), kLnsPlacements.end(), o.lnsPlacement) ==
      kLnsPlacements.end()) {
    std::string known;
    for (const auto& k : kLnsPlacements) known += (known.empty() ? "" : ", ") + k;
    bad("options.lnsPlacement", "unknown placement '" + o.lnsPlacement + "' (known: " + known + ")");
  }
  if (!(o.lnsLearnableLr > 0)) bad("options.lnsLearnableLr", "must be > 0");

  const auto& d = c.data;
  if (!(d.valFraction > 0 && d.valFraction < 0.5)) bad("data.valFraction", "must be in (0, 0.5)");
  if (d.tokenizer.rfind("spm:", 0) == 0 && d.tokenizer.size() > 4 &&
      d.tokenizer.find_first_not_of("0123456789", 4) == std::string::npos) {
    try {
      data::spmVocabSize(d.tokenizer);
    } catch (const std::exception& e) {
      bad("data.tokenizer", e.what());
    }
  }
  if (d.tokenizer != "byte" && d.tokenizer.rfind("spm:", 0) != 0)
    bad("data.tokenizer", "unknown tokenizer '" + d.tokenizer +
                              "' (known: byte, spm:N, spm:/path/to.model)");

  const auto& p = c.optim;
  if (p.optimizer != "adam" && p.optimizer != "adamw")
    bad("optim.optimizer", "unknown optimizer '" + p.optimizer + "' (known: adam, adamw)");
  if (!(p.lr > 0)) bad("optim.lr", "learning rate must be > 0");
  if (!(p.minLrRatio >= 0 && p.minLrRatio <= 1)) bad("optim.minLrRatio", "must be in [0, 1]");
  if (p.steps <= 0) bad("optim.steps", "must be at least 1");
  if (p.warmupSteps < 0) bad("optim.warmupSteps", "must be >= 0");
  else if (p.steps > 0 && p.warmupSteps >= p.steps)
    bad("optim.warmupSteps", "must be smaller than optim.steps");
  if (p.batchSize <= 0) bad("optim.batchSize", "must be at least 1");
  if (p.gradAccum <= 0) bad("optim.gradAccum", "must be at least 1");
  if (!(p.weightDecay >= 0)) bad("optim.weightDecay", "must be >= 0");
  if (!(p.beta1 >= 0 && p.beta1 < 1)) bad("optim.beta1", "must be in [0, 1)");
  if (!(p.beta2 >= 0 && p.beta2 < 1)) bad("optim.beta2", "must be in [0, 1)");
  if (!(p.eps > 0)) bad("optim.eps", "must be > 0");
  if (!(p.gradClip >= 0)) bad("optim.gradClip", "must be >= 0 (0 = off)");

  const auto& r = c.run;
  if (r.device != "cpu" && r.device != "cuda" && r.device.rfind("cuda:", 0) != 0)
    bad("run.device", "unknown device '" + r.device + "' (known: cpu, cuda, cuda:N)");
  if (r.threads < 0) bad("run.threads", "must be >= 0 (0 = default)");
  if (r.evalEvery < 0) bad("run.evalEvery", "must be >= 0");
  if (r.evalBatches <= 0) bad("run.evalBatches", "must be at least 1");
  if (r.checkpointEvery < 0) bad("run.checkpointEvery", "must be >= 0");
  if (!(r.checkpointMinutes >= 0)) bad("run.checkpointMinutes", "must be >= 0 (0 = off)");
  if (r.checkpointKeep < 1) bad("run.checkpointKeep", "must be at least 1");
  if (r.logEvery <= 0) bad("run.logEvery", "must be at least 1");

  const auto& q = c.probes;
  if (q.probeBatch <= 0) bad("probes.probeBatch", "must be at least 1");
  for (auto [name, v] : {std::pair{"probes.forwardEvery", q.forwardEvery},
                         std::pair{"probes.angularMatrixEvery", q.angularMatrixEvery},
                         std::pair{"probes.pruningEvery", q.pruningEvery},
                         std::pair{"probes.jacobianEvery", q.jacobianEvery}}) {
    if (v < 0) bad(name, "must be >= 0 (0 = never)");
  }
  if (q.jacobianSamples <= 0) bad("probes.jacobianSamples", "must be at least 1");
  if (!(q.lazyThreshold > 0 && q.lazyThreshold < q.lowThreshold))
    bad("probes.lazyThreshold", "must be > 0 and below probes.lowThreshold");
  if (!(q.lowThreshold < 1)) bad("probes.lowThreshold", "must be below 1");
  return issues;
}

void requireValid(const ExperimentConfig& c) {
  auto issues = validate(c);
  if (issues.empty()) return;
  std::ostringstream msg;
  msg << "invalid config:";
  for (const auto& i : issues) msg << "\n  " << i.message;
  throw ConfigError(msg.str());
}

train::TrainerConfig trainerConfig(const ExperimentConfig& c) {
  train::TrainerConfig t;
  t.model = c.model;
  t.options = c.options;
  t.optim = c.optim;
  t.seed = c.run.seed;
  t.bf16 = c.run.bf16;
  return t;
}

}  // namespace depthlab::experiment
