// See hf_export.h.
#include "hf/hf_export.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "hf/hf_config.h"
#include "hf/hf_import.h"
#include "hf/model_text.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "train/checkpoint.h"

namespace depthlab::hf {

namespace fs = std::filesystem;

namespace {

/// Why Llama cannot express block `p` of `scheme` ("" when it can).
std::string whyNotLlama(const model::BlockPlan& p, const std::string& scheme) {
  if (p.postLn) return "normalizes after the residual add; Llama normalizes before each sublayer";
  if (p.residualAlpha != 1.0) return "scales the skip path; Llama's residual adds are plain";
  if (p.sandwich) return "adds a norm on each sublayer's output that Llama does not have";
  if (p.learnableScale) return "has a learnable per-channel scale and gate that Llama does not have";
  if (p.skipInit) return "has learnable branch scalars (SkipInit) that Llama does not have";
  if (p.layerScale) return "has learnable per-channel branch scales (LayerScale) that Llama does not have";
  if (p.dyt) return "replaces its norms with DyT (tanh), which Llama's RMSNorm cannot express";
  if (p.hybrid) return "has no norm before attention and normalizes the stream before the MLP";
  if (!p.normBeforeSublayer) return "normalizes each sublayer's output instead of its input";
  if (p.qkNorm != model::QkNorm::None || p.vNorm) {
    return "normalizes queries and keys (QK-norm), which Llama does not have";
  }
  if (p.placement != model::Placement::None && p.placement != model::Placement::AfterNorm) {
    return "scales somewhere other than the norm output; only LNS after the norm folds into the "
           "norm weights";
  }
  (void)scheme;
  return "";
}

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

void writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw HfModelError("cannot write '" + path.string() + "'");
}

/// Throws unless Llama can express the run's model, judged from its config alone.
void checkLlamaExpressible(const store::RunInfo& run, int64_t runId) {
  const auto planned = experiment::configOf(run);
  if (planned.model.norm != "rmsnorm") {
    throw HfModelError("cannot export run " + std::to_string(runId) +
                       " as LlamaForCausalLM: it uses LayerNorm, Llama uses RMSNorm");
  }
  for (const auto& p : model::planBlocks(planned.model, planned.options, run.scheme)) {
    const std::string why = whyNotLlama(p, run.scheme);
    if (!why.empty()) {
      throw HfModelError("cannot export run " + std::to_string(runId) + " (" + run.scheme +
                         ") as LlamaForCausalLM: block " + std::to_string(p.index) + " " + why);
    }
  }
}

/// The decoder's weights under Llama's names (float32 copies), LNS folded into the norms.
std::map<std::string, torch::Tensor> llamaTensors(model::Decoder& decoder,
                                                  const model::ModelConfig& m) {
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [name, t] : io::namedTensors(*decoder)) {
    tensors[name.rfind("lm_head.", 0) == 0 ? name : "model." + name] = t.to(torch::kFloat32).clone();
  }
  // LNS: 1/sqrt(l) * RMSNorm(x; w) = RMSNorm(x; w/sqrt(l)), both norms of block l.
  for (int i = 0; i < decoder->nLayers(); ++i) {
    const auto& p = decoder->plans()[static_cast<size_t>(i)];
    if (p.placement != model::Placement::AfterNorm) continue;
    const std::string prefix = "model.layers." + std::to_string(i) + ".";
    for (const char* norm : {"input_layernorm.weight", "post_attention_layernorm.weight"}) {
      tensors[prefix + norm].mul_(p.depthScale);
    }
  }
  if (m.qkvBias) {  // Llama's attention_bias puts a bias on o_proj too: a zero one is exact
    for (int i = 0; i < m.nLayers; ++i) {
      tensors["model.layers." + std::to_string(i) + ".self_attn.o_proj.bias"] =
          torch::zeros({m.dModel});
    }
  }
  return tensors;
}

/// config.json's contents: LlamaForCausalLM with the model's sizes, plus where it came from.
nlohmann::ordered_json llamaConfigJson(const model::ModelConfig& m, int64_t runId,
                                       const std::string& scheme, int64_t step) {
  return {
      {"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},
      {"vocab_size", m.vocabSize}, {"hidden_size", m.dModel}, {"intermediate_size", m.dFF},
      {"num_hidden_layers", m.nLayers}, {"num_attention_heads", m.nHeads},
      {"num_key_value_heads", m.kvHeads()}, {"head_dim", m.headDimension()},
      {"hidden_act", "silu"}, {"max_position_embeddings", m.seqLen},
      {"rms_norm_eps", m.normEps}, {"rope_theta", m.ropeBase},
      {"rope_parameters", {{"rope_theta", m.ropeBase}, {"rope_type", "default"}}},
      {"tie_word_embeddings", m.tieEmbeddings}, {"attention_bias", m.qkvBias},
      {"mlp_bias", false}, {"attention_dropout", 0.0}, {"initializer_range", m.initStd},
      {"torch_dtype", "float32"}, {"dtype", "float32"}, {"use_cache", true},
      {"bos_token_id", nullptr}, {"eos_token_id", nullptr}, {"pad_token_id", nullptr},
      {"depthlab", {{"run_id", runId}, {"scheme", scheme}, {"step", step},
                    {"note", scheme == "lns" ? "LNS 1/sqrt(l) folded into block l's norm weights"
                                             : "exported as trained"}}}};
}

/// Writes the run's tokenizer into `dir` (none where its SentencePiece model is gone); notes it.
void writeTokenizer(const fs::path& dir, const experiment::ExperimentConfig& config,
                    HfExportResult& r) {
  const auto& m = config.model;
  if (config.data.tokenizer == "byte") {
    writeText(dir / "tokenizer.json", byteLevelTokenizerJson());
    writeText(dir / "tokenizer_config.json",
              nlohmann::json({{"tokenizer_class", "PreTrainedTokenizerFast"},
                              {"model_max_length", m.seqLen}}).dump(2) + "\n");
    r.files.push_back("tokenizer.json");
    r.files.push_back("tokenizer_config.json");
    r.tokenizer = "byte-level tokenizer.json";
    return;
  }
  std::string model;
  try {
    model = spmModelOfRun(config.data);
  } catch (const std::exception&) {  // the corpus is gone: export without a tokenizer, saying so
  }
  std::error_code ec;
  if (!model.empty() && fs::is_regular_file(model, ec)) {
    fs::copy_file(model, dir / "tokenizer.model", fs::copy_options::overwrite_existing, ec);
    writeText(dir / "tokenizer_config.json",
              nlohmann::json({{"tokenizer_class", "LlamaTokenizer"}, {"add_bos_token", false},
                              {"model_max_length", m.seqLen}}).dump(2) + "\n");
    r.files.push_back("tokenizer.model");
    r.files.push_back("tokenizer_config.json");
    r.tokenizer = "tokenizer.model";
  }
}

}  // namespace

std::string byteLevelTokenizerJson() {
  // GPT-2's byte-to-unicode map: printable bytes stand for themselves, the others for 256 + n.
  nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    vocab[utf8(printable ? b : next++)] = b;
  }
  nlohmann::ordered_json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false},
                                      {"trim_offsets", false}, {"use_regex", false}};
  nlohmann::ordered_json j = {
      {"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr},
      {"added_tokens", nlohmann::json::array()}, {"normalizer", nullptr},
      {"pre_tokenizer", byteLevel}, {"post_processor", nullptr}, {"decoder", byteLevel},
      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr},
                 {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr},
                 {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
                 {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
  return j.dump(1);
}

HfExportResult exportRunToHf(store::RunStore& store, int64_t runId, const std::string& outDir) {
  auto run = store.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  if (auto rec = importRecordOf(*run)) {
    throw HfModelError("run " + std::to_string(runId) + " is an imported model; its Hugging Face "
                       "folder is " + rec->source);
  }
  // what Llama can express is known from the run's config, before any checkpoint is read
  checkLlamaExpressible(*run, runId);
  const auto verified = experiment::newestVerifiedCheckpoint(store, *run);
  // A named base, not the default argument's temporary: GCC 12 falsely warns on that one here
  // (-Wmaybe-uninitialized) once the export is split into helpers.
  const experiment::ExperimentConfig base;
  const auto config = experiment::configFromJson(verified.meta.config, base);
  const auto& m = config.model;
  model::Decoder decoder(m, config.options, run->scheme);
  std::error_code ec;
  if (fs::exists(outDir, ec) && !fs::is_empty(outDir, ec)) {
    throw HfModelError("'" + outDir + "' exists and is not empty; choose a new folder");
  }
  const auto loaded = experiment::newestVerifiedCheckpoint(
      store, *run, verified.info.step,
      [&](const std::string& path) { return train::loadCheckpoint(path, decoder, nullptr, torch::kCPU); });
  const auto tensors = llamaTensors(decoder, m);
  fs::create_directories(outDir, ec);
  if (ec) throw HfModelError("cannot create '" + outDir + "': " + ec.message());
  HfExportResult r;
  r.dir = outDir;
  r.step = loaded.meta.step;
  r.gapNote = experiment::checkpointGapNote(store, *run, r.step);
  r.scheme = run->scheme;
  const fs::path dir(outDir);
  io::saveSafetensors((dir / "model.safetensors").string(), tensors,
                      {{"format", "pt"}, {"depthlab_run", std::to_string(runId)},
                       {"depthlab_scheme", run->scheme}, {"depthlab_step", std::to_string(r.step)}});
  r.files.push_back("model.safetensors");
  const auto cfg = llamaConfigJson(m, runId, run->scheme, r.step);
  writeText(dir / "config.json", cfg.dump(2) + "\n");
  r.files.push_back("config.json");
  writeTokenizer(dir, config, r);
  return r;
}

}  // namespace depthlab::hf
