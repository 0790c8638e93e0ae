// Hugging Face models in and out, against transformers itself: imported Llama (GQA), Mistral and
// Qwen2 (biases, tied embeddings), fp32 and bf16, sharded and not, give transformers' logits;
// trained Pre-LN and LNS runs exported as LlamaForCausalLM load back in transformers with
// DepthLab's logits; broken folders are refused with the reason. Skips without transformers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "experiment/run_config.h"
#include "experiment/run_group.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"
#include "support/hf_fixtures.h"
#include "io/safetensors.h"
#include "store/metric_catalogue.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/error_of.h"
#include "support/temp_dir.h"
#include "train/checkpoint.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

#define SKIP_WITHOUT_TRANSFORMERS()                                              \
  if (auto why = test::transformersMissingReason(); !why.empty()) GTEST_SKIP() << why


/// Imported run `name` of the model set, its decoder (context 16) and transformers' reference.
struct Imported {
  int64_t runId = 0;
  model::Decoder decoder{nullptr};
  torch::Tensor ids, logits;
};

Imported importVariant(store::RunStore& s, const std::string& name) {
  const std::string dir = test::hfModelSet() + "/" + name;
  Imported out;
  out.runId = hf::importHfModel(s, dir, "").runId;
  const auto run = *s.run(out.runId);
  out.decoder = hf::loadImportedDecoder(*hf::importRecordOf(run), experiment::configOf(run).model,
                                        16, torch::kCPU);
  auto ref = io::loadSafetensors(dir + "/reference.safetensors");
  out.ids = ref.at("ids");
  out.logits = ref.at("logits");
  return out;
}

void copyFolder(const std::string& from, const fs::path& to) {  // the model folders are flat
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) fs::copy_file(e.path(), to / e.path().filename());
}

std::string withField(const std::string& json, const std::string& key, const std::string& value) {
  const auto at = json.find("\"" + key + "\": ");
  const auto start = at + key.size() + 4;
  const auto end = json.find_first_of(",\n}", start);
  return json.substr(0, start) + value + json.substr(end);
}

}  // namespace

TEST(HfImport, LogitsEqualTransformersForEveryArchitectureAndDtype) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  for (const char* name : {"llama-f32", "llama-bf16-sharded", "mistral-f32", "qwen2-f32",
                           "qwen2-bf16-sharded"}) {
    SCOPED_TRACE(name);
    auto m = importVariant(s, name);
    torch::NoGradGuard ng;
    auto ours = m.decoder->forward(m.ids);  // (2, 12, 97)
    ASSERT_EQ(ours.sizes(), m.logits.sizes());
    const double diff = (ours - m.logits).abs().max().item<double>();
    EXPECT_LT(diff, 1e-4);
    EXPECT_GT(m.logits.abs().max().item<double>(), 0.5);  // not a vacuous comparison
    std::printf("%-20s max |logit difference| %.2e (logits up to %.2f)\n", name, diff,
                m.logits.abs().max().item<double>());
  }
  // The bf16 model kept its weights in bf16 (no float32 copy), mapped from the file.
  auto bf = importVariant(s, "qwen2-bf16-sharded");
  EXPECT_EQ(bf.decoder->block(0)->mlp->up_proj->weight.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(bf.decoder->lm_head.is_empty());  // tied: the embedding is the head
  const auto run = *s.run(bf.runId);
  const auto rec = *hf::importRecordOf(run);
  EXPECT_EQ(rec.architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(rec.dtype, "bfloat16");
  EXPECT_GE(rec.files.size(), 7u);  // config, index, six shards
  for (const auto& f : rec.files) EXPECT_EQ(f.checksum.size(), 16u) << f.name;
  EXPECT_EQ(run.status, store::RunStatus::Finished);
  EXPECT_EQ(run.tags, std::vector<std::string>{"imported"});
}

TEST(HfImport, BrokenFoldersAreRefusedWithTheReasonAndWriteNothing) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const std::string set = test::hfModelSet();
  copyFolder(set + "/llama-f32", dir.file("shape"));
  const auto config = test::readFile(dir.file("shape/config.json"));
  test::writeFile(dir.file("shape/config.json"), withField(config, "intermediate_size", "95"));
  auto why = errorOf([&] { hf::importHfModel(s, dir.file("shape"), ""); });
  EXPECT_NE(why.find("has shape [64, 96], config.json implies [64, 95]"), std::string::npos) << why;
  test::writeFile(dir.file("shape/config.json"), withField(config, "hidden_size", "0"));
  why = errorOf([&] { hf::importHfModel(s, dir.file("shape"), ""); });
  EXPECT_NE(why.find("'hidden_size' = 0"), std::string::npos) << why;

  // A weight stored as integers (say, a quantized checkpoint) is refused by dtype.
  copyFolder(set + "/llama-f32", dir.file("int8"));
  auto tensors = io::loadSafetensors(dir.file("int8/model.safetensors"));
  tensors["model.layers.1.mlp.up_proj.weight"] = tensors["model.layers.1.mlp.up_proj.weight"].to(torch::kInt8);
  io::saveSafetensors(dir.file("int8/model.safetensors"), tensors);
  why = errorOf([&] { hf::importHfModel(s, dir.file("int8"), ""); });
  EXPECT_NE(why.find("'model.layers.1.mlp.up_proj.weight' is I8"), std::string::npos) << why;
  EXPECT_NE(why.find("float32, bfloat16 and float16"), std::string::npos) << why;

  copyFolder(set + "/llama-bf16-sharded", dir.file("shards"));
  fs::remove(dir.file("shards/model-00002-of-00006.safetensors"));
  why = errorOf([&] { hf::importHfModel(s, dir.file("shards"), ""); });
  EXPECT_NE(why.find("missing shard 'model-00002-of-00006.safetensors'"), std::string::npos) << why;

  why = errorOf([&] { hf::importHfModel(s, dir.file("nowhere"), ""); });
  EXPECT_NE(why.find("is not a folder"), std::string::npos) << why;
  EXPECT_TRUE(s.listRuns().empty());

  // A file changed after the import is noticed before its weights are used.
  copyFolder(set + "/llama-f32", dir.file("later"));
  const auto id = hf::importHfModel(s, dir.file("later"), "later").runId;
  std::ofstream(dir.file("later/model.safetensors"), std::ios::app) << "x";
  const auto run = *s.run(id);
  why = errorOf([&] {
    hf::loadImportedDecoder(*hf::importRecordOf(run), experiment::configOf(run).model, 16, torch::kCPU);
  });
  EXPECT_NE(why.find("changed since the import"), std::string::npos) << why;
  // Mistral's window is honoured: a longer context than the window is refused.
  const auto mid = hf::importHfModel(s, set + "/mistral-f32", "").runId;
  const auto mrun = *s.run(mid);
  why = errorOf([&] {
    hf::loadImportedDecoder(*hf::importRecordOf(mrun), experiment::configOf(mrun).model, 48, torch::kCPU);
  });
  EXPECT_NE(why.find("window of 32 tokens"), std::string::npos) << why;
}

TEST(HfImport, EvalMatchesTransformersLossAndAnalyzeStoresEveryProbe) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto m = importVariant(s, "qwen2-f32");
  // The same ids as a tokens file: one sequence per line.
  std::string lines;
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 12; ++t) lines += std::to_string(m.ids[b][t].item<int64_t>()) + " ";
    lines += "\n";
  }
  test::writeFile(dir.file("ids.txt"), lines);
  hf::EvalOptions e;
  e.text.tokensFile = dir.file("ids.txt");
  auto r = hf::evaluateRun(s, m.runId, e);
  auto expected = torch::nn::functional::cross_entropy(
      m.logits.slice(1, 0, 11).reshape({-1, 97}), m.ids.slice(1, 1, 12).reshape({-1}));
  EXPECT_NEAR(r.loss, expected.item<double>(), 1e-4);
  EXPECT_EQ(r.predictedTokens, 22);
  EXPECT_EQ(r.sequences, 2);
  EXPECT_NEAR(r.perplexity, std::exp(r.loss), 1e-9);
  // A shorter window splits each sequence without losing or repeating a prediction (the loss
  // changes: later windows see less context).
  e.seqLen = 5;
  const auto shorter = hf::evaluateRun(s, m.runId, e);
  EXPECT_EQ(shorter.predictedTokens, 22);
  EXPECT_GT(std::abs(shorter.loss - r.loss), 1e-3);
  test::writeFile(dir.file("bad.txt"), "1 2 300\n");
  auto why = errorOf([&] { e.text.tokensFile = dir.file("bad.txt"); hf::evaluateRun(s, m.runId, e); });
  EXPECT_NE(why.find("token id 300, outside the model's 97-token vocabulary"), std::string::npos) << why;
  hf::EvalOptions split;  // no text: an imported model has no validation split of ours
  split.text.validationSplit = true;
  why = errorOf([&] { hf::evaluateRun(s, m.runId, split); });
  EXPECT_NE(why.find("no validation split"), std::string::npos) << why;

  hf::ModelAnalysisOptions a;
  a.text.tokensFile = dir.file("ids.txt");
  a.sequences = 2;
  a.seqLen = 8;
  std::vector<std::string> progress;
  a.progress = [&](const std::string& line) { progress.push_back(line); };
  auto res = hf::analyzeImportedRun(s, m.runId, a);
  EXPECT_EQ(res.tokens, 16);
  EXPECT_GT(res.valuesWritten, 0u);
  for (const auto& metric : {metrics::kVariance, metrics::kAngularAdjacent,
                             metrics::kPruneDelta, metrics::kEffectiveness}) {
    auto series = s.layerSeries(m.runId, metric);
    ASSERT_EQ(series.steps.size(), 1u) << metric;
    EXPECT_EQ(series.nLayers, 3) << metric;
  }
  ASSERT_TRUE(s.matrix(m.runId, metrics::kBlockPrune, 0));
  EXPECT_EQ(s.matrix(m.runId, metrics::kAngular, 0)->rows, 3);
  bool sawEta = false;
  for (const auto& line : progress) sawEta = sawEta || line.find("ETA") != std::string::npos;
  EXPECT_TRUE(sawEta);
  a.text.tokensFile.clear();
  a.text.corpus = dir.file("ids.txt");  // the test models have no tokenizer
  why = errorOf([&] { hf::analyzeImportedRun(s, m.runId, a); });
  EXPECT_NE(why.find("neither tokenizer.model nor tokenizer.json"), std::string::npos) << why;
  EXPECT_NE(why.find("--tokens"), std::string::npos) << why;
}

TEST(HfExport, PreLnAndLnsRunsLoadInTransformersWithEqualLogits) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto c = test::smallConfig(3);
  c.data.corpus = test::writeWordCorpus(dir);
  c.optim.steps = 6;
  c.run.evalEvery = 0;
  c.schemes = {"pre_ln", "lns"};
  c.name = "export";
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  auto result = experiment::runGroup(c, s, o);
  auto ids = torch::randint(0, 256, {2, 10}, torch::TensorOptions().dtype(torch::kInt64));
  io::saveSafetensors(dir.file("ids.safetensors"), {{"ids", ids}});
  for (const auto& member : result.members) {
    const auto run = *s.run(member.runId);
    SCOPED_TRACE(run.scheme);
    const std::string out = dir.file("hf-" + run.scheme);
    auto r = hf::exportRunToHf(s, member.runId, out);
    EXPECT_EQ(r.tokenizer, "byte-level tokenizer.json");
    std::string printed;
    ASSERT_EQ(test::runHfScript("logits '" + out + "' '" + dir.file("ids.safetensors") + "' '" +
                                    dir.file("out.safetensors") + "'", &printed), 0) << printed;
    EXPECT_NE(printed.find("LlamaForCausalLM"), std::string::npos) << printed;
    auto theirs = io::loadSafetensors(dir.file("out.safetensors")).at("logits");
    const auto ck = s.checkpoints(member.runId).back();
    auto meta = train::readCheckpointMeta(ck.path);
    auto cfg = experiment::configFromJson(meta.config);
    model::Decoder d(cfg.model, cfg.options, run.scheme);
    train::loadCheckpoint(ck.path, d, nullptr, torch::kCPU);
    d->eval();
    torch::NoGradGuard ng;
    auto ours = d->forward(ids);
    const double diff = (ours - theirs).abs().max().item<double>();
    EXPECT_LT(diff, 1e-4);
    std::printf("export %-8s max |logit difference| %.2e\n", run.scheme.c_str(), diff);
    // The byte-level tokenizer gives the byte values.
    ASSERT_EQ(test::runHfScript("encode '" + out + "' 'Hi é'", &printed), 0) << printed;
    EXPECT_NE(printed.find("72 105 32 195 169"), std::string::npos) << printed;
  }
  // LNS folded its factors: block 3's norm weights carry 1/sqrt(3) (trained weights near 1).
  auto lns = io::loadSafetensors(dir.file("hf-lns/model.safetensors"));
  EXPECT_NEAR(lns.at("model.layers.2.input_layernorm.weight").mean().item<double>(),
              1.0 / std::sqrt(3.0), 0.05);
  EXPECT_NEAR(lns.at("model.norm.weight").mean().item<double>(), 1.0, 0.05);
  // An existing non-empty folder is never overwritten.
  auto why = errorOf([&] { hf::exportRunToHf(s, result.members[0].runId, dir.file("hf-lns")); });
  EXPECT_NE(why.find("not empty"), std::string::npos) << why;
}

TEST(HfExport, SchemesLlamaCannotExpressAreRefusedWithWhy) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto refuse = [&](const std::string& scheme, const std::function<void(experiment::ExperimentConfig&)>& edit) {
    auto c = test::smallConfig(3);
    edit(c);
    store::NewRun run;
    run.name = scheme;
    run.scheme = scheme;
    run.configJson = experiment::toJson(c).dump();
    const auto id = s.createRun(run);
    return errorOf([&] { hf::exportRunToHf(s, id, dir.file("out-" + scheme)); });
  };
  auto none = [](experiment::ExperimentConfig&) {};
  EXPECT_NE(refuse("post_ln", none).find("normalizes after the residual add"), std::string::npos);
  EXPECT_NE(refuse("mix_ln", none).find("normalizes after the residual add"), std::string::npos);
  EXPECT_NE(refuse("deepnorm", none).find("normalizes after"), std::string::npos);
  EXPECT_NE(refuse("sandwich", none).find("norm on each sublayer's output"), std::string::npos);
  EXPECT_NE(refuse("lns_learnable", none).find("learnable per-channel scale"), std::string::npos);
  auto layerScale = [](experiment::ExperimentConfig& c) { c.options.layerScale = true; };
  EXPECT_NE(refuse("pre_ln", layerScale).find("LayerScale"), std::string::npos);
  auto skip = [](experiment::ExperimentConfig& c) { c.options.skipInit = true; };
  EXPECT_NE(refuse("lns", skip).find("SkipInit"), std::string::npos);
  auto ln = [](experiment::ExperimentConfig& c) { c.model.norm = "layernorm"; };
  EXPECT_NE(refuse("pre_ln", ln).find("LayerNorm"), std::string::npos);
  EXPECT_NE(refuse("dyt", none).find("DyT"), std::string::npos);
  EXPECT_NE(refuse("dyt_lns", none).find("DyT"), std::string::npos);
  EXPECT_NE(refuse("hybridnorm", none).find("no norm before attention"), std::string::npos);
  EXPECT_NE(refuse("olmo2", none).find("sublayer's output"), std::string::npos);
  auto qk = [](experiment::ExperimentConfig& c) { c.options.qkNorm = true; };
  EXPECT_NE(refuse("pre_ln", qk).find("QK-norm"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("out-post_ln")));
}
