// ExperimentConfig JSON round trip and validation; see experiment_config.h.
#include "experiment/experiment_config.h"

#include "distributed/batch_shard.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "data/data_config.h"
#include "data/tokenizer.h"
#include "experiment/config_fields.h"
#include "experiment/presets.h"
#include "model/scheme_catalogue.h"
#include "model/scheme_sets.h"

namespace depthlab::experiment {

using nlohmann::json;

const std::vector<std::string> kSchemes = model::schemeIds();
const std::vector<std::string> kLnsPlacements = model::lnsPlacements();

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
    if (it == m_j.end()) return;
    if (it->is_null()) {  // once meant "the default" without a word
      throw ConfigError("config: '" + path(key) +
                        "' is null: give a value, or leave the key out "
                        "to keep the preset's");
    }
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann converts a float or an out-of-range integer with a plain cast (undefined
      // behaviour past the type's range): whole numbers in range only.
      const bool whole = it->is_number_integer() ||
                         (it->is_number_float() && std::isfinite(it->template get<double>()) &&
                          std::floor(it->template get<double>()) == it->template get<double>());
      const double v = it->is_number() ? it->template get<double>() : 0.0;
      if (!it->is_number() || !whole || v < static_cast<double>(std::numeric_limits<T>::min()) ||
          v > static_cast<double>(std::numeric_limits<T>::max())) {
        throw ConfigError("config: '" + path(key) + "' must be a whole number in range (got " +
                          it->dump().substr(0, 40) + ")");
      }
      out =
          it->is_number_integer() ? static_cast<T>(it->template get<int64_t>()) : static_cast<T>(v);
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
  json j = {{"preset", c.preset}, {"name", c.name}, {"schemes", c.schemes}};
  for (const auto& s : configSections()) j[s] = json::object();
  auto& mutableConfig = const_cast<ExperimentConfig&>(c);  // the table's accessors only read here
  for (const auto& f : configFields()) {
    std::visit([&](auto* member) { j[f.section][f.key] = *member; }, f.ref(mutableConfig));
  }
  return j;
}

ExperimentConfig configFromJson(const json& j, const ExperimentConfig& base) {
  ExperimentConfig c = base;
  const json empty = json::object();
  SectionReader top(j, "");
  top.read("preset", c.preset);
  top.read("name", c.name);
  top.read("schemes", c.schemes);
  // A set name ("all-depth-fixes") stands for its schemes; a list of plain ids stays as written
  // (validate() names a scheme listed twice).
  if (std::any_of(c.schemes.begin(), c.schemes.end(),
                  [](const std::string& s) { return model::findSchemeSet(s) != nullptr; })) {
    c.schemes = model::expandSchemeSets(c.schemes);
  }
  for (const auto& s : configSections()) top.allow(s.c_str());
  top.allow("import");       // an imported Hugging Face model's source (hf/hf_import.h)
  top.allow("watch");        // a watched training loop's record (watch/watched_run.h)
  top.allow("tensorboard");  // an imported TensorBoard log (experiment/tensorboard_runs.h)
  top.allow("series");  // a checkpoint series' checkpoints and probe setup (hf/series_import.h)
  top.finish();
  for (const auto& section : configSections()) {
    SectionReader reader(sectionOr(j, section.c_str(), empty), section);
    for (const auto& f : configFields()) {
      if (section != f.section) continue;
      std::visit([&](auto* member) { reader.read(f.key, *member); }, f.ref(c));
    }
    reader.finish();
  }
  return c;
}

json readConfigJson(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("config file '" + path + "' is a folder; give a .json file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read config file '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw ConfigError("config file '" + path + "' holds a NUL byte (byte " +
                      std::to_string(nul + 1) + "): not a JSON text file");
  }
  try {
    return json::parse(text);
  } catch (const json::out_of_range& e) {  // a number past a double's range, e.g. 1e400
    std::string why = e.what();
    if (const auto close = why.find("] "); close != std::string::npos) why = why.substr(close + 2);
    throw ConfigError("config file '" + path + "' is not usable JSON: " + why);
  } catch (const json::parse_error& e) {
    // e.byte: 1-based position of the byte where parsing failed; say its line and column.
    const size_t at =
        std::min(text.size(), e.byte > 0 ? static_cast<size_t>(e.byte - 1) : size_t{0});
    const size_t line = 1 + static_cast<size_t>(std::count(
                                text.begin(), text.begin() + static_cast<long>(at), '\n'));
    const size_t lineStart = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
    const size_t column = lineStart == std::string::npos ? at + 1 : at - lineStart;
    std::string why =
        e.what();  // "[json.exception...] parse error at line 1, column 5: syntax error ..."
    if (const size_t col = why.find("column "); col != std::string::npos) {
      if (const size_t colon = why.find(": ", col); colon != std::string::npos)
        why = why.substr(colon + 2);
    }
    throw ConfigError("config file '" + path + "' is not valid JSON: line " + std::to_string(line) +
                      ", column " + std::to_string(column) + ": " + why);
  }
}

ExperimentConfig loadConfigFile(const std::string& path, const ExperimentConfig& base) {
  const json j = readConfigJson(path);
  try {
    return configFromJson(j, base);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

void saveConfigFile(const ExperimentConfig& c, const std::string& path) {
  std::ofstream out(path);
  out << toJson(c).dump(2) << "\n";
  if (!out) throw ConfigError("cannot write config file '" + path + "'");
}

namespace {

// Collects issues; each section's checks below add to it.
struct Issues {
  std::vector<ConfigIssue> list;
  void bad(const std::string& field, const std::string& msg) {
    list.push_back({field, field + ": " + msg});
  }
  // The ranges and closed sets (choices) the field table states for `section`.
  void ranges(const ExperimentConfig& c, const char* section) {
    for (auto& i : choiceIssues(c, section)) list.push_back(std::move(i));
    auto& mutableConfig = const_cast<ExperimentConfig&>(c);  // read only
    for (const auto& f : configFields()) {
      if (std::string(section) != f.section || !f.range) continue;
      std::visit(
          [&](auto* member) {
            using T = std::remove_pointer_t<decltype(member)>;
            if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
              if (!f.range->contains(static_cast<double>(*member))) bad(f.path(), f.range->rule);
            }
          },
          f.ref(mutableConfig));
    }
  }
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& k : names) out += (out.empty() ? "" : ", ") + k;
  return out;
}

void checkModelAndSchemes(const ExperimentConfig& c, Issues& is) {
  const auto& m = c.model;
  is.ranges(c, "model");
  if (m.nHeads <= 0)
    is.bad("model.nHeads", "must be positive");
  else if (m.headDim == 0 && m.dModel > 0 && m.dModel % m.nHeads != 0)
    is.bad("model.nHeads",
           std::to_string(m.nHeads) + " heads do not divide width " + std::to_string(m.dModel));
  else if (m.dModel > 0 && m.headDimension() % 2 != 0)  // the field that set the head dimension
    is.bad(m.headDim > 0 ? "model.headDim" : "model.nHeads",
           "head dimension " + std::to_string(m.headDimension()) + " must be even for RoPE" +
               (m.headDim > 0 ? std::string(" (model.headDim)")
                              : " (width " + std::to_string(m.dModel) + " / " +
                                    std::to_string(m.nHeads) + " heads)"));
  else if (m.nKvHeads > 0 && m.nHeads % m.nKvHeads != 0)
    is.bad("model.nKvHeads", std::to_string(m.nKvHeads) + " key/value heads do not divide " +
                                 std::to_string(m.nHeads) + " heads");
  if (c.schemes.empty()) is.bad("schemes", "choose at least one scheme");
  std::set<std::string> seen;
  for (const auto& s : c.schemes) {
    if (const auto* set = model::findSchemeSet(s)) {
      is.bad("schemes", "'" + s + "' is a set of schemes (" + joined(set->schemes) +
                            "): expand it first (model::expandSchemeSets; train --scheme and "
                            "config files do)");
    } else if (std::find(kSchemes.begin(), kSchemes.end(), s) == kSchemes.end()) {
      std::vector<std::string> sets;
      for (const auto& k : model::schemeSets()) sets.push_back(k.id);
      is.bad("schemes", "unknown scheme '" + s + "' (schemes: " + joined(kSchemes) +
                            "; sets: " + joined(sets) + ")");
    }
    if (!seen.insert(s).second) is.bad("schemes", "scheme '" + s + "' listed twice");
  }
  is.ranges(c, "options");
}

// A group's LNS placement that no scheme of the group reads (a group check: one run's stored
// config names its own scheme alone).
void checkPlacementIsRead(const ExperimentConfig& c, Issues& is) {
  const auto& o = c.options;
  if (o.lnsPlacement == kLnsPlacements.front() ||
      std::find(kLnsPlacements.begin(), kLnsPlacements.end(), o.lnsPlacement) ==
          kLnsPlacements.end()) {
    return;
  }
  std::vector<std::string> takers;
  bool read = false;
  for (const auto& e : model::schemeCatalogue()) {
    const bool takes =
        std::find(e.placements.begin(), e.placements.end(), o.lnsPlacement) != e.placements.end();
    if (takes) takers.push_back(e.id);
    read =
        read || (takes && std::find(c.schemes.begin(), c.schemes.end(), e.id) != c.schemes.end());
  }
  if (!read && !c.schemes.empty()) {
    is.bad("options.lnsPlacement", "'" + o.lnsPlacement + "' is read by no scheme of the group (" +
                                       joined(c.schemes) +
                                       "); schemes that take it: " + joined(takers));
  }
}

// An option only some schemes read (the catalogue's SchemeEntry::options, e.g. the DyT alphas)
// set away from its default in a group with none of them; and QK-norm asked of schemes that
// normalise q and k already. A group check, as the placement's.
void checkSchemeOptionsAreRead(const ExperimentConfig& c, Issues& is) {
  if (c.schemes.empty()) return;
  auto inGroup = [&](const std::string& id) {
    return std::find(c.schemes.begin(), c.schemes.end(), id) != c.schemes.end();
  };
  ExperimentConfig defaults;
  ExperimentConfig copy = c;
  std::map<std::string, std::vector<std::string>> readers;  // field -> schemes that read it
  for (const auto& e : model::schemeCatalogue()) {
    for (const auto& f : e.options) readers[f].push_back(e.id);
  }
  for (const auto& [path, takers] : readers) {
    const ConfigField* field = configField(path);
    const bool flagged = std::any_of(is.list.begin(), is.list.end(),
                                     [&](const ConfigIssue& i) { return i.field == path; });
    if (!field || flagged) continue;  // an out-of-range value is said once, by its range
    const bool changed = std::visit(
        [&](auto* value) {
          using T = std::remove_pointer_t<decltype(value)>;
          return !(*value == *std::get<T*>(field->ref(defaults)));
        },
        field->ref(copy));
    if (!changed || std::any_of(takers.begin(), takers.end(), inGroup)) continue;
    is.bad(path, "set, but read by no scheme of the group (" + joined(c.schemes) +
                     "); schemes that read it: " + joined(takers));
  }
  if (c.options.qkNorm) {
    const bool anyTakes =
        std::any_of(c.schemes.begin(), c.schemes.end(), [&](const std::string& s) {
          const auto* e = model::findScheme(s);
          if (!e) return true;
          model::BlockPlan deep;  // a block past the first (HybridNorm*'s first is Pre-Norm)
          e->plan(deep, 2, 4, c.options);
          return deep.qkNorm == model::QkNorm::None;
        });
    if (!anyTakes) {
      is.bad("options.qkNorm", "every scheme of the group (" + joined(c.schemes) +
                                   ") normalises q and k already; QK-norm adds to the others");
    }
  }
}

// A group's name is stored with every run (and shown in every list): a line's worth.
constexpr size_t kMaxGroupName = 200;

void checkDataAndTraining(const ExperimentConfig& c, Issues& is) {
  if (c.name.size() > kMaxGroupName) {
    is.bad("name", "the group name is " + std::to_string(c.name.size()) + " characters; at most " +
                       std::to_string(kMaxGroupName));
  }
  const auto& d = c.data;
  is.ranges(c, "data");
  if (d.tokenizer.rfind("spm:", 0) == 0 && d.tokenizer.size() > 4 &&
      d.tokenizer.find_first_not_of("0123456789", 4) == std::string::npos) {
    try {
      data::spmVocabSize(d.tokenizer);
    } catch (const std::exception& e) {
      is.bad("data.tokenizer", e.what());
    }
  }
  if (d.tokenizer != "byte" && d.tokenizer.rfind("spm:", 0) != 0)
    is.bad("data.tokenizer",
           "unknown tokenizer '" + d.tokenizer + "' (known: byte, spm:N, spm:/path/to.model)");
  const auto& p = c.optim;
  is.ranges(c, "optim");
  // The warm-up belongs to the schedule: a run trained to fewer steps than its schedule spans
  // (resume --steps) may end inside it.
  if (p.warmupSteps >= 0 && p.steps > 0 && p.scheduleSteps <= 0 && p.warmupSteps >= p.steps)
    is.bad("optim.warmupSteps", "must be smaller than optim.steps");
  if (p.scheduleSteps > 0 && p.warmupSteps >= p.scheduleSteps)
    is.bad("optim.scheduleSteps", "must exceed optim.warmupSteps (or be 0)");
}

void checkRunAndProbes(const ExperimentConfig& c, Issues& is) {
  const auto& r = c.run;
  if (r.device != "cpu" && r.device != "cuda" && r.device.rfind("cuda:", 0) != 0)
    is.bad("run.device", "unknown device '" + r.device + "' (known: cpu, cuda, cuda:N)");
  is.ranges(c, "run");
  if (c.run.processes > 1) {
    const auto why =
        distributed::shardProblem(c.optim.batchSize, c.optim.gradAccum, c.run.processes);
    if (!why.empty()) is.bad("run.processes", why);
  }
  const auto& q = c.probes;
  is.ranges(c, "probes");
  if (!(q.lazyThreshold > 0 && q.lazyThreshold < q.lowThreshold))
    is.bad("probes.lazyThreshold", "must be > 0 and below probes.lowThreshold");
}

// Every size a run allocates, in checked 64-bit arithmetic, before anything is allocated: the
// parameters (16 bytes each: weights, gradients, Adam moments), the attention projections and a
// micro-batch's largest activations (logits, attention scores, the FFN's hidden state), each in
// float32 bytes. Whether they fit the device is requireFits' question; this is whether they
// can be counted at all (a width of 10^9 once wrapped round to an affordable-looking model).
void checkSizes(const ExperimentConfig& c, Issues& is) {
  if (!is.list.empty()) return;  // sizes are counted for an otherwise valid config only
  auto m = c.model;
  if (c.data.tokenizer == "byte") m.vocabSize = data::kByteVocab;
  auto fits = [](std::initializer_list<int64_t> dims) {
    int64_t bytes = 4;
    for (int64_t d : dims) {
      if (__builtin_mul_overflow(bytes, d, &bytes)) return false;
    }
    return true;
  };
  for (const auto& s : c.schemes) {
    const int64_t params = parameterCount(m, s, c.options);
    if (params == kParameterCountOverflow || !fits({params, 4})) {
      is.bad("model", "a model of width " + std::to_string(m.dModel) + ", depth " +
                          std::to_string(m.nLayers) + " and FFN width " + std::to_string(m.dFF) +
                          " has more parameters than can be counted (its weights, gradients and "
                          "Adam moments pass 2^63 bytes)");
      return;
    }
  }
  const int64_t B = c.optim.batchSize, T = m.seqLen, H = m.nHeads;
  if (!fits({m.dModel, H, m.headDimension()}))
    is.bad("model.headDim",
           "the attention projections (width x heads x head dimension floats) "
           "pass 2^63 bytes");
  if (!fits({B, T, m.vocabSize}) || !fits({B, T, m.dFF}) || !fits({B, T, m.dModel}))
    is.bad("optim.batchSize",
           "a micro-batch's activations (batch x sequence x vocabulary or "
           "FFN width floats) pass 2^63 bytes");
  if (!fits({B, H, T, T}))
    is.bad("model.seqLen",
           "a micro-batch's attention scores (batch x heads x sequence^2 floats) "
           "pass 2^63 bytes");
}

}  // namespace

std::vector<ConfigIssue> validate(const ExperimentConfig& c, ConfigScope scope) {
  // The ranges of the field table, section by section, and each section's own checks.
  Issues is;
  checkModelAndSchemes(c, is);
  if (scope == ConfigScope::Group) {
    checkPlacementIsRead(c, is);
    checkSchemeOptionsAreRead(c, is);
  }
  checkDataAndTraining(c, is);
  checkRunAndProbes(c, is);
  checkSizes(c, is);
  return is.list;
}

void requireValid(const ExperimentConfig& c) {
  auto issues = validate(c);
  if (issues.empty()) return;
  std::ostringstream msg;
  msg << "invalid config:";
  for (const auto& i : issues) msg << "\n  " << i.message;
  throw ConfigError(msg.str());
}

void applyMicroBatch(ExperimentConfig& c, int micro) {
  const int global = c.optim.batchSize * c.optim.gradAccum;
  if (micro < 1 || global % micro != 0) {
    throw std::invalid_argument("micro-batch " + std::to_string(micro) +
                                " does not divide the global batch of " + std::to_string(global) +
                                " sequences");
  }
  const int64_t validation = static_cast<int64_t>(c.run.evalBatches) * c.optim.batchSize;
  c.optim.batchSize = micro;
  c.optim.gradAccum = global / micro;
  if (c.run.evalBatches > 0) {
    c.run.evalBatches = static_cast<int>(std::max<int64_t>(1, (validation + micro - 1) / micro));
  }
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
