// GPT-2 and GPT-NeoX (Pythia) imported against transformers itself, each a random model of
// tests/python/hf_models.py: GPT-2 (LayerNorm with bias, learned positions, Conv1D weights read
// transposed, gelu_new, tied head), GPT-NeoX with the parallel residual and rotary_pct 0.25 (fp32
// and bf16 shards, untied), GPT-NeoX sequential with rotary_pct 1.0 (tied), and Phi-3 with a
// partial_rotary_factor of 0.5 (Phi-4-mini's kind, the same partial rope): logits and loss, the
// block plans and weight maps, and the probes on a parallel block (pruning a block removes both
// its branches; the Jacobian probe differentiates the whole block). Skips without transformers.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "experiment/run_config.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"
#include "io/safetensors.h"
#include "probes/depth_probes.h"
#include "store/metric_catalogue.h"
#include "support/hf_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

#define SKIP_WITHOUT_TRANSFORMERS() \
  if (auto why = test::transformersMissingReason(); !why.empty()) GTEST_SKIP() << why

struct Imported {
  int64_t runId = 0;
  model::Decoder decoder{nullptr};
  torch::Tensor ids, logits;  // (2, 12), (2, 12, 97)
};

Imported importVariant(store::RunStore& s, const std::string& name) {
  const std::string dir = test::hfModelSet() + "/" + name;
  Imported v;
  v.runId = hf::importHfModel(s, dir, "").runId;
  const auto run = *s.run(v.runId);
  v.decoder = hf::loadImportedDecoder(*hf::importRecordOf(run), experiment::configOf(run).model, 16,
                                      torch::kCPU);
  auto ref = io::loadSafetensors(dir + "/reference.safetensors");
  v.ids = ref.at("ids");
  v.logits = ref.at("logits");
  return v;
}

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

constexpr const char* kVariants[] = {"gpt2-f32", "gpt_neox-f32", "gpt_neox-seq-f32",
                                     "gpt_neox-bf16-sharded", "phi3-partial-f32"};

}  // namespace

TEST(HfGptFamilies, LogitsAndLossEqualTransformers) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  for (const char* name : kVariants) {
    SCOPED_TRACE(name);
    auto v = importVariant(s, name);
    torch::NoGradGuard ng;
    auto ours = v.decoder->forward(v.ids);  // (2, 12, 97)
    ASSERT_EQ(ours.sizes(), v.logits.sizes());
    const double diff = maxDiff(ours, v.logits);
    EXPECT_LT(diff, 1e-4);
    EXPECT_GT(v.logits.abs().max().item<double>(), 0.5);  // not a vacuous comparison
    model::ForwardTrace trace;  // the probes' path: no deferred residual adds
    EXPECT_LT(maxDiff(v.decoder->forward(v.ids, {}, &trace), v.logits), 1e-4);
    EXPECT_TRUE(trace.blocks[1].attnNormOut.defined());
    EXPECT_TRUE(trace.blocks[1].ffnNormOut.defined());
    // The loss: the decoder's and eval's (a tokens file of the same ids) against transformers'.
    const auto inputs = v.ids.slice(1, 0, 11), targets = v.ids.slice(1, 1, 12);
    const double theirs = torch::nn::functional::cross_entropy(
                              v.logits.slice(1, 0, 11).reshape({-1, 97}), targets.reshape({-1}))
                              .item<double>();
    const double loss = v.decoder->loss(inputs, targets).item<double>();
    EXPECT_NEAR(loss, theirs, 1e-5);
    std::string lines;
    for (int b = 0; b < 2; ++b) {
      for (int t = 0; t < 12; ++t) lines += std::to_string(v.ids[b][t].item<int64_t>()) + " ";
      lines += "\n";
    }
    test::writeFile(dir.file("ids.txt"), lines);
    hf::EvalOptions e;
    e.text.tokensFile = dir.file("ids.txt");
    EXPECT_NEAR(hf::evaluateRun(s, v.runId, e).loss, theirs, 1e-5);
    std::printf("%-22s max |logit difference| %.2e, loss %.6f vs %.6f (logits up to %.2f)\n", name,
                diff, loss, theirs, v.logits.abs().max().item<double>());
  }
}

TEST(HfGptFamilies, EachIsABlockPlanAndAWeightMapOverTheOneDecoder) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  // GPT-2: q, k, v are transposed column blocks of c_attn (views, no copies), no gate, no RoPE,
  // wpe as embed_positions, LayerNorm with a bias, the head tied.
  auto gpt2 = importVariant(s, "gpt2-f32");
  auto& a = gpt2.decoder->block(1)->self_attn;
  EXPECT_EQ(a->q_proj->weight.sizes(), torch::IntArrayRef({64, 64}));
  EXPECT_EQ(a->k_proj->weight.data_ptr<float>(), a->q_proj->weight.data_ptr<float>() + 64);
  EXPECT_TRUE(a->o_proj->bias.defined());
  EXPECT_TRUE(gpt2.decoder->block(1)->mlp->gate_proj.is_empty());
  EXPECT_EQ(gpt2.decoder->block(1)->mlp->up_proj->weight.sizes(), torch::IntArrayRef({96, 64}));
  EXPECT_TRUE(gpt2.decoder->block(1)->input_layernorm->bias.defined());
  EXPECT_EQ(gpt2.decoder->embed_positions->weight.sizes(), torch::IntArrayRef({64, 64}));
  EXPECT_TRUE(gpt2.decoder->lm_head.is_empty());
  EXPECT_EQ(gpt2.decoder->config().rotaryDims(), 0);
  EXPECT_TRUE(gpt2.decoder->block(1)->defersResidual());
  // GPT-NeoX: q is rows [48h, 48h + 16) of query_key_value for each head h.
  auto neox = importVariant(s, "gpt_neox-f32");
  auto raw = io::loadSafetensors(test::hfModelSet() + "/gpt_neox-f32/model.safetensors");
  const auto qkv = raw.at("gpt_neox.layers.2.attention.query_key_value.weight");  // (192, 64)
  auto& na = neox.decoder->block(2)->self_attn;
  EXPECT_TRUE(torch::equal(na->q_proj->weight.slice(0, 16, 32), qkv.slice(0, 48, 64)));
  EXPECT_TRUE(torch::equal(na->k_proj->weight.slice(0, 0, 16), qkv.slice(0, 16, 32)));
  EXPECT_TRUE(
      torch::equal(na->v_proj->bias.slice(0, 48, 64),
                   raw.at("gpt_neox.layers.2.attention.query_key_value.bias").slice(0, 176, 192)));
  EXPECT_EQ(neox.decoder->config().rotaryDims(), 4);  // 0.25 of 16
  EXPECT_TRUE(neox.decoder->plans()[0].parallel);
  EXPECT_FALSE(neox.decoder->block(0)->defersResidual());
  EXPECT_FALSE(neox.decoder->lm_head.is_empty());  // embed_out
  // A parallel block's norm outputs both read its input: N1(x), N2(x).
  model::ForwardTrace trace;
  torch::NoGradGuard ng;
  neox.decoder->forward(neox.ids, {}, &trace);
  auto& b1 = neox.decoder->block(1);
  EXPECT_LT(maxDiff(trace.blocks[1].ffnNormOut, b1->post_attention_layernorm(trace.blockInputs[1])),
            1e-6);
  EXPECT_LT(maxDiff(trace.blocks[1].attnNormOut, b1->input_layernorm(trace.blockInputs[1])), 1e-6);
  auto seq = importVariant(s, "gpt_neox-seq-f32");
  EXPECT_FALSE(seq.decoder->plans()[0].parallel);
  EXPECT_EQ(seq.decoder->config().rotaryDims(), 16);
  EXPECT_TRUE(seq.decoder->lm_head.is_empty());
}

TEST(HfGptFamilies, Gpt2SavedFromTheBaseModelReadsWithoutItsPrefix) {
  SKIP_WITHOUT_TRANSFORMERS();
  // The original gpt2 weights name their tensors wte.weight, h.0.attn.c_attn.weight, ...
  test::TempDir dir;
  const std::string from = test::hfModelSet() + "/gpt2-f32";
  std::filesystem::create_directories(dir.file("bare"));
  std::filesystem::copy_file(from + "/config.json", dir.file("bare/config.json"));
  std::map<std::string, torch::Tensor> bare;
  for (const auto& [name, t] : io::loadSafetensors(from + "/model.safetensors")) {
    bare[name.rfind("transformer.", 0) == 0 ? name.substr(12) : name] = t;
  }
  ASSERT_TRUE(bare.count("wte.weight"));
  io::saveSafetensors(dir.file("bare/model.safetensors"), bare);
  auto s = store::RunStore::open(dir.file("runs.db"));
  const auto run = *s.run(hf::importHfModel(s, dir.file("bare"), "").runId);
  auto d = hf::loadImportedDecoder(*hf::importRecordOf(run), experiment::configOf(run).model, 16,
                                   torch::kCPU);
  auto ref = io::loadSafetensors(from + "/reference.safetensors");
  torch::NoGradGuard ng;
  EXPECT_LT(maxDiff(d->forward(ref.at("ids")), ref.at("logits")), 1e-4);
}

TEST(HfGptFamilies, ProbesOfAParallelBlockSeeTheWholeBlock) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto v = importVariant(s, "gpt_neox-f32");
  auto& d = v.decoder;
  const auto inputs = v.ids.slice(1, 0, 11), targets = v.ids.slice(1, 1, 12);
  // Skipping block 1 removes both of its branches: blocks 0 and 2 alone, then the head.
  double byHand = 0;
  {
    torch::NoGradGuard ng;
    auto x = d->embed(inputs);
    x = d->block(0)->forward(x, d->rope(0));
    x = d->block(2)->forward(x, d->rope(2));
    auto logits = torch::linear(d->norm(x), d->lm_head->weight);
    byHand = torch::nn::functional::cross_entropy(logits.reshape({-1, 97}), targets.reshape({-1}))
                 .item<double>();
  }
  EXPECT_NEAR(probes::lossWithout(d, inputs, targets, {false, true, false}, false), byHand, 1e-5);
  const auto sweep = probes::singleLayerPruning(d, inputs, targets, false);
  const double full = d->loss(inputs, targets).item<double>();
  EXPECT_NEAR(sweep.delta[1], byHand - full, 1e-4);
  // The Jacobian probe differentiates the whole parallel block: finite, and not the identity.
  for (float j : probes::jacobianToIdentity(d, inputs, 2, 5)) {
    EXPECT_TRUE(std::isfinite(j));
    EXPECT_GT(j, 1e-3);
  }
  // The whole analysis stores every probe, none NaN.
  std::string lines;
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 12; ++t) lines += std::to_string(v.ids[b][t].item<int64_t>()) + " ";
    lines += "\n";
  }
  test::writeFile(dir.file("ids.txt"), lines);
  hf::ModelAnalysisOptions a;
  a.text.tokensFile = dir.file("ids.txt");
  a.sequences = 2;
  a.seqLen = 8;
  hf::analyzeImportedRun(s, v.runId, a);
  for (const auto& metric : {metrics::kVariance, metrics::kAngularAdjacent, metrics::kPruneDelta,
                             metrics::kEffectiveness}) {
    auto series = s.layerSeries(v.runId, metric);
    ASSERT_EQ(series.steps.size(), 1u) << metric;
    for (float x : series.values) EXPECT_TRUE(std::isfinite(x)) << metric;
  }
}
