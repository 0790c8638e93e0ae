// See hf_import.h.
#include "hf/hf_import.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "experiment/experiment_config.h"
#include "experiment/group_names.h"
#include "io/safetensors_archive.h"
#include "util/content_hash.h"
#include "util/stream_hash.h"

namespace depthlab::hf {

namespace fs = std::filesystem;

namespace {

std::string dtypeWord(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat32: return "float32";
    case torch::kBFloat16: return "bfloat16";
    case torch::kFloat16: return "float16";
    default: return io::safetensorsDtypeName(t);  // I8, U8, I64, ...: as the file names it
  }
}

int64_t modifiedNs(const std::string& path) {
  std::error_code ec;
  const auto t = fs::last_write_time(path, ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

ImportedFile describeFile(const fs::path& dir, const std::string& name) {
  const std::string path = (dir / name).string();
  ImportedFile out;
  out.name = name;
  out.bytes = fs::file_size(path);
  out.checksum = util::hex64(util::hashFile(path));  // the corpus stores' content hash
  out.mtimeNs = modifiedNs(path);
  return out;
}

// Every file of the import as it was then: the size first, then (when the modification time
// moved, or was not recorded) the content hash. A file overwritten in place with one of the same
// size is refused, never read silently.
void requireUnchanged(const ImportRecord& record) {
  const fs::path dir(record.source);
  std::error_code ec;
  for (const auto& f : record.files) {
    const std::string path = (dir / f.name).string();
    const auto size = fs::file_size(path, ec);
    if (ec) throw HfModelError("'" + path + "' is gone since the import");
    if (size != f.bytes) {
      throw HfModelError("'" + path + "' changed since the import (" + std::to_string(size) +
                         " bytes, was " + std::to_string(f.bytes) + "); import the folder again");
    }
    if (f.mtimeNs != 0 && modifiedNs(path) == f.mtimeNs) continue;
    const std::string now = util::hex64(util::hashFile(path));
    if (now != f.checksum) {
      throw HfModelError("'" + path +
                         "' changed since the import (same size, but its content "
                         "hash is " +
                         now + ", was " + f.checksum + "); import the folder again");
    }
  }
}

/// `name` as `entries` holds it: as it is, or without the family's base prefix when the
/// checkpoint was saved from the base model alone (the original gpt2 weights: wte.weight).
std::string storedName(const std::map<std::string, io::TensorEntry>& entries,
                       const HfModelConfig& config, const std::string& name) {
  const std::string prefix = basePrefix(config);
  if (entries.count(name) || name.rfind(prefix, 0) != 0) return name;
  const std::string bare = name.substr(prefix.size());
  return entries.count(bare) ? bare : name;
}

/// The parameter's tensor from the mapped checkpoint tensor `t` as `slot` says: transposed
/// (a view), its rows (a view; rows of each group: a copy), plus one (Gemma).
torch::Tensor slotTensor(torch::Tensor t, const WeightSlot& slot) {
  if (slot.transposed && t.dim() == 2) t = t.t();  // (in, out) -> (out, in)
  if (slot.rowEnd >= 0 && t.dim() >= 1 && t.size(0) % slot.groups == 0 &&
      t.size(0) / slot.groups >= slot.rowEnd) {
    if (slot.groups == 1) {
      t = t.slice(0, slot.rowBegin, slot.rowEnd);  // rows of a fused tensor: a view, no copy
    } else {  // GPT-NeoX: (groups, rows per group, ...) -> these rows of each, joined
      std::vector<int64_t> grouped = {slot.groups, t.size(0) / slot.groups};
      for (int64_t d = 1; d < t.dim(); ++d) grouped.push_back(t.size(d));
      std::vector<int64_t> joined = {-1};
      for (int64_t d = 1; d < t.dim(); ++d) joined.push_back(t.size(d));
      t = t.view(grouped).slice(1, slot.rowBegin, slot.rowEnd).reshape(joined);
    }
  }
  if (slot.plusOne) t = t.to(torch::kFloat32) + 1.0;  // Gemma's (1 + w) norms: (C) copies
  return t;
}

}  // namespace

nlohmann::json toJson(const ImportRecord& r) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : r.files) {
    files.push_back(
        {{"name", f.name}, {"bytes", f.bytes}, {"checksum", f.checksum}, {"mtime_ns", f.mtimeNs}});
  }
  nlohmann::json j = {
      {"source", r.source},         {"architecture", r.architecture},  {"dtype", r.dtype},
      {"parameters", r.parameters}, {"max_positions", r.maxPositions}, {"files", files}};
  j["sliding_window"] = r.slidingWindow ? nlohmann::json(*r.slidingWindow) : nlohmann::json();
  return j;
}

std::optional<ImportRecord> importRecordOf(const store::RunInfo& run) {
  const auto j = nlohmann::json::parse(run.configJson, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("import")) return std::nullopt;
  try {
    const auto& i = j.at("import");
    ImportRecord r;
    r.source = i.at("source").get<std::string>();
    r.architecture = i.at("architecture").get<std::string>();
    r.dtype = i.at("dtype").get<std::string>();
    r.parameters = i.at("parameters").get<int64_t>();
    r.maxPositions = i.at("max_positions").get<int64_t>();
    if (i.contains("sliding_window") && !i["sliding_window"].is_null()) {
      r.slidingWindow = i["sliding_window"].get<int64_t>();
    }
    for (const auto& f : i.at("files")) {
      r.files.push_back({f.at("name").get<std::string>(), f.at("bytes").get<uint64_t>(),
                         f.at("checksum").get<std::string>(), f.value("mtime_ns", int64_t{0})});
    }
    return r;
  } catch (const nlohmann::json::exception&) {
    throw HfModelError("run " + std::to_string(run.id) + " has a broken import record");
  }
}

ImportRecord describeHfFolder(const std::string& dirArg, HfModelConfig& config) {
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(dirArg), ec);
  if (!fs::is_directory(dir, ec)) throw HfModelError("'" + dirArg + "' is not a folder");
  config = readHfConfig(dir.string());
  const auto archive = io::SafetensorsArchive::openFolder(dir.string());
  ImportRecord record;
  std::map<std::string, int64_t> dtypeCount;
  for (const auto& [tensor, shape] : expectedTensors(config)) {
    auto it = archive.entries().find(storedName(archive.entries(), config, tensor));
    if (it == archive.entries().end()) {
      throw HfModelError("'" + dir.string() + "' lacks tensor '" + tensor + "' that a " +
                         config.architecture + " of this config needs");
    }
    const auto& e = it->second;
    if (e.shape != shape) {
      throw HfModelError("tensor '" + tensor + "' has shape " +
                         c10::str(c10::IntArrayRef(e.shape)) + ", config.json implies " +
                         c10::str(c10::IntArrayRef(shape)));
    }
    if (e.dtype != torch::kFloat32 && e.dtype != torch::kBFloat16 && e.dtype != torch::kFloat16) {
      throw HfModelError("tensor '" + tensor + "' is " + dtypeWord(e.dtype) +
                         "; DepthLab reads float32, bfloat16 and float16 weights");
    }
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    record.parameters += numel;
    dtypeCount[dtypeWord(e.dtype)] += numel;
  }
  for (const auto& [word, count] : dtypeCount) {
    if (record.dtype.empty() || count > dtypeCount[record.dtype]) record.dtype = word;
  }
  record.source = dir.string();
  record.architecture = config.architecture;
  record.maxPositions = config.maxPositions;
  record.slidingWindow = config.slidingWindow;
  std::vector<std::string> names = {"config.json"};
  if (fs::exists(dir / "model.safetensors.index.json") && !fs::exists(dir / "model.safetensors")) {
    names.push_back("model.safetensors.index.json");
  }
  for (const auto& f : archive.files()) names.push_back(fs::path(f).filename().string());
  for (const char* tok : {"tokenizer.json", "tokenizer.model"}) {
    if (fs::is_regular_file(dir / tok, ec)) names.push_back(tok);
  }
  for (const auto& n : names) record.files.push_back(describeFile(dir, n));
  return record;
}

ImportResult importHfModel(store::RunStore& store, const std::string& dirArg,
                           const std::string& name) {
  const auto t0 = std::chrono::steady_clock::now();
  ImportResult r;
  r.record = describeHfFolder(dirArg, r.config);
  const fs::path dir(r.record.source);
  const size_t weightFiles =
      std::count_if(r.record.files.begin(), r.record.files.end(), [](const ImportedFile& f) {
        return f.name.size() > 12 && f.name.substr(f.name.size() - 12) == ".safetensors";
      });
  experiment::ExperimentConfig c;
  c.name = name.empty() ? dir.filename().string() : name;
  c.schemes = {"pre_ln"};
  c.model = r.config.model;
  c.model.seqLen = static_cast<int>(std::min<int64_t>(r.config.maxPositions, 4096));
  auto j = experiment::toJson(c);
  j["import"] = toJson(r.record);
  store::NewRun run;
  run.name = c.name;
  run.scheme = "pre_ln";
  run.configJson = j.dump();
  run.device = "imported " + r.record.dtype;
  // Its own group (named after the model), so the window opens a dashboard for it.
  r.runId = store
                .createGroup(
                    {run},
                    [&](const std::set<std::string>& taken) {
                      return experiment::uniqueGroupName("hf-" + c.name, taken);
                    },
                    [](const std::string&, store::NewRun&) {})
                .second.front();
  store.finishRun(r.runId, store::RunStatus::Finished);
  store.addTag(r.runId, "imported");
  store::WriteBatch b;
  const auto& m = r.config.model;
  b.event(0, store::EventLevel::Info,
          "imported " + r.config.architecture + " from " + dir.string() + ": " +
              std::to_string(m.nLayers) + " layers, width " + std::to_string(m.dModel) + ", " +
              std::to_string(m.nHeads) + " heads (" + std::to_string(m.kvHeads()) +
              " key/value), " + std::to_string(r.record.parameters) + " parameters in " +
              r.record.dtype + ", " + std::to_string(weightFiles) + " weight file(s)");
  store.write(r.runId, b);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

model::Decoder loadImportedDecoder(const ImportRecord& record, const model::ModelConfig& model,
                                   int seqLen, torch::Device device) {
  if (record.slidingWindow && seqLen > *record.slidingWindow) {
    throw HfModelError("the model attends within a window of " +
                       std::to_string(*record.slidingWindow) +
                       " tokens and DepthLab's attention is fully causal: use a sequence length "
                       "of at most " +
                       std::to_string(*record.slidingWindow));
  }
  if (seqLen > record.maxPositions) {
    throw HfModelError("sequence length " + std::to_string(seqLen) + " exceeds the model's " +
                       std::to_string(record.maxPositions) + " positions");
  }
  requireUnchanged(record);
  const fs::path dir(record.source);
  const auto archive = io::SafetensorsArchive::openFolder(dir.string());
  HfModelConfig hf = readHfConfig(dir.string());
  model::ModelConfig m = model;
  m.seqLen = seqLen;
  m.ropeScaling = hf.model.ropeScaling;
  m.qkNorm = hf.model.qkNorm;
  m.normBeforeSublayer = hf.model.normBeforeSublayer;
  m.normAfterSublayer = hf.model.normAfterSublayer;
  m.activation = hf.model.activation;
  m.embedScale = hf.model.embedScale;
  m.attnScale = hf.model.attnScale;
  m.attnSoftcap = hf.model.attnSoftcap;
  m.finalSoftcap = hf.model.finalSoftcap;
  m.localRopeBase = hf.model.localRopeBase;
  m.localRopeLayers = hf.model.localRopeLayers;
  m.outBias = hf.model.outBias;
  m.mlpBias = hf.model.mlpBias;
  m.gatedMlp = hf.model.gatedMlp;
  m.rotaryFraction = hf.model.rotaryFraction;
  m.learnedPositions = hf.model.learnedPositions;
  m.parallelResidual = hf.model.parallelResidual;
  hf.model = m;
  model::ParameterSource source = [&](const std::string& name, const torch::Tensor& like) {
    const WeightSlot slot = weightSlot(hf, name);
    auto t = slotTensor(archive.tensor(storedName(archive.entries(), hf, slot.tensor)), slot);
    if (t.sizes() != like.sizes()) {
      throw HfModelError("tensor '" + slot.tensor + "' has shape " + c10::str(t.sizes()) +
                         ", the model expects " + c10::str(like.sizes()) + " for " + name);
    }
    return device.is_cpu() ? t : t.to(device);
  };
  model::Decoder d(m, model::SchemeOptions{}, "pre_ln", source);
  d->to(device);
  d->eval();
  return d;
}

}  // namespace depthlab::hf
