// The architectures beyond Llama / Mistral / Qwen2 against transformers itself, each an imported
// random model of tests/python/hf_models.py: rope scaling (llama3, linear, dynamic, yarn,
// longrope past its original context and within it), Qwen3 (q/k RMSNorm per head), OLMo 2
// (norms after each sublayer, q/k RMSNorm over the projection) and Phi-3 (fused qkv and gate_up
// weights), fp32 and bf16 shards, tied and untied, GQA. Skips without transformers.
#include <gtest/gtest.h>

#include <filesystem>

#include "experiment/run_config.h"
#include "hf/hf_import.h"
#include "io/safetensors.h"
#include "support/error_of.h"
#include "support/hf_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;

namespace {

#define SKIP_WITHOUT_TRANSFORMERS()                                              \
  if (auto why = test::transformersMissingReason(); !why.empty()) GTEST_SKIP() << why

/// The decoder of model-set variant `name` imported into `s` (context 16), and its reference.
struct Variant {
  model::Decoder decoder{nullptr};
  torch::Tensor ids, logits;  // (2, 12), (2, 12, 97)
};

Variant importVariant(store::RunStore& s, const std::string& name) {
  const std::string dir = test::hfModelSet() + "/" + name;
  const auto run = *s.run(hf::importHfModel(s, dir, "").runId);
  Variant v;
  v.decoder = hf::loadImportedDecoder(*hf::importRecordOf(run), experiment::configOf(run).model,
                                      16, torch::kCPU);
  auto ref = io::loadSafetensors(dir + "/reference.safetensors");
  v.ids = ref.at("ids");
  v.logits = ref.at("logits");
  return v;
}

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

}  // namespace

TEST(HfArchitectures, LogitsEqualTransformersForEveryRopeTypeAndFamily) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  for (const char* name : {"llama-llama3-f32", "llama-linear-f32", "llama-dynamic-f32",
                           "qwen2-yarn-f32", "qwen3-f32", "qwen3-bf16-sharded", "olmo2-f32",
                           "olmo2-bf16-sharded", "phi3-f32", "phi3-longrope-f32", "gemma2-f32",
                           "gemma2-bf16-sharded", "gemma3-f32", "gemma3-bf16-sharded"}) {
    SCOPED_TRACE(name);
    auto v = importVariant(s, name);
    torch::NoGradGuard ng;
    auto ours = v.decoder->forward(v.ids);  // (2, 12, 97)
    ASSERT_EQ(ours.sizes(), v.logits.sizes());
    const double diff = maxDiff(ours, v.logits);
    EXPECT_LT(diff, 1e-4);
    EXPECT_GT(v.logits.abs().max().item<double>(), 0.5);  // not a vacuous comparison
    // The traced forward (the probes' path, no deferred residual adds) gives the same logits.
    model::ForwardTrace trace;
    EXPECT_LT(maxDiff(v.decoder->forward(v.ids, {}, &trace), v.logits), 1e-4);
    EXPECT_TRUE(trace.blocks[1].attnNormOut.defined());
    EXPECT_TRUE(trace.blocks[1].ffnNormOut.defined());
    std::printf("%-20s max |logit difference| %.2e (logits up to %.2f)\n", name, diff,
                v.logits.abs().max().item<double>());
  }
}

TEST(HfArchitectures, EachFamilyIsABlockPlanAndAWeightMapOverTheOneDecoder) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto qwen3 = importVariant(s, "qwen3-bf16-sharded");
  auto& qa = qwen3.decoder->block(0)->self_attn;
  EXPECT_EQ(qa->q_norm->weight.sizes(), torch::IntArrayRef({16}));  // per head: D
  EXPECT_EQ(qa->q_norm->weight.scalar_type(), torch::kBFloat16);    // mapped, not widened
  EXPECT_TRUE(qwen3.decoder->lm_head.is_empty());
  auto olmo = importVariant(s, "olmo2-f32");
  auto& ob = olmo.decoder->block(2);
  EXPECT_TRUE(ob->input_layernorm.is_empty());  // no norm before the sublayers
  EXPECT_FALSE(ob->defersResidual());
  EXPECT_EQ(ob->attn_out_norm->weight.sizes(), torch::IntArrayRef({64}));
  EXPECT_EQ(ob->self_attn->q_norm->weight.sizes(), torch::IntArrayRef({64}));  // H * D
  EXPECT_EQ(ob->self_attn->k_norm->weight.sizes(), torch::IntArrayRef({32}));  // K * D
  // OLMo 2's norm outputs for the probes are the norms after each sublayer: N(A(x)), N(F(h)).
  model::ForwardTrace trace;
  torch::NoGradGuard ng;
  olmo.decoder->forward(olmo.ids, {}, &trace);
  auto h = trace.blockInputs[2] + trace.blocks[2].attnNormOut;
  EXPECT_LT(maxDiff(h + trace.blocks[2].ffnNormOut, trace.blockInputs[3]), 1e-5);
  // Phi-3's q, k and v are row views of the one fused tensor (no copies).
  auto phi = importVariant(s, "phi3-f32");
  auto& pa = phi.decoder->block(1)->self_attn;
  EXPECT_EQ(pa->k_proj->weight.data_ptr<float>(), pa->q_proj->weight.data_ptr<float>() + 64 * 64);
  auto& pm = phi.decoder->block(1)->mlp;
  EXPECT_EQ(pm->up_proj->weight.data_ptr<float>(), pm->gate_proj->weight.data_ptr<float>() + 96 * 64);
  // Gemma 2: four norms a block (Peri-LN), each weight read as 1 + w in float32.
  auto gemma = importVariant(s, "gemma2-bf16-sharded");
  auto& gb = gemma.decoder->block(0);
  EXPECT_TRUE(gb->plan().sandwich);
  EXPECT_EQ(gb->mlp_out_norm->weight.scalar_type(), torch::kFloat32);
  auto raw = io::loadSafetensors(test::hfModelSet() + "/gemma2-f32/model.safetensors");
  auto g32 = importVariant(s, "gemma2-f32");
  EXPECT_TRUE(torch::equal(g32.decoder->block(1)->attn_out_norm->weight,
                           raw.at("model.layers.1.post_attention_layernorm.weight") + 1));
  EXPECT_TRUE(torch::equal(g32.decoder->block(1)->post_attention_layernorm->weight,
                           raw.at("model.layers.1.pre_feedforward_layernorm.weight") + 1));
  // Gemma 3: sliding layers 0 and 2 rotate with the local rope, the full layer 1 with the global.
  auto g3 = importVariant(s, "gemma3-f32");
  EXPECT_TRUE(g3.decoder->plans()[0].localRope);
  EXPECT_FALSE(g3.decoder->plans()[1].localRope);
  EXPECT_NE(&g3.decoder->rope(0), &g3.decoder->rope(1));
  EXPECT_EQ(&g3.decoder->rope(0), &g3.decoder->rope(2));
  EXPECT_EQ(g3.decoder->block(1)->self_attn->q_norm->weight.sizes(), torch::IntArrayRef({16}));
}

TEST(HfArchitectures, LongropeUsesItsShortFactorsWithinTheOriginalContext) {
  SKIP_WITHOUT_TRANSFORMERS();
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  auto v = importVariant(s, "phi3-longrope-f32");  // original context 8
  auto ids = v.ids.slice(1, 0, 6);                 // 6 positions: the short factors
  io::saveSafetensors(dir.file("ids.safetensors"), {{"ids", ids.contiguous()}});
  const std::string folder = test::hfModelSet() + "/phi3-longrope-f32";
  std::string printed;
  ASSERT_EQ(test::runHfScript("logits '" + folder + "' '" + dir.file("ids.safetensors") + "' '" +
                                  dir.file("out.safetensors") + "'", &printed), 0) << printed;
  auto theirs = io::loadSafetensors(dir.file("out.safetensors")).at("logits");
  torch::NoGradGuard ng;
  auto ours = v.decoder->forward(ids);
  const double diff = maxDiff(ours, theirs);
  EXPECT_LT(diff, 1e-4);
  // Not the first 6 positions of the 12-token pass, which rotated with the long factors.
  EXPECT_GT(maxDiff(ours, v.logits.slice(1, 0, 6)), 1e-2);
  std::printf("phi3-longrope T=6     max |logit difference| %.2e\n", diff);
}

TEST(HfArchitectures, MixtureOfExpertsFoldersAreRefusedBeforeAnyWeightIsRead) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  std::filesystem::create_directories(dir.file("moe"));
  test::writeFile(dir.file("moe/config.json"),
                  R"({"architectures": ["MixtralForCausalLM"], "num_local_experts": 8})");
  test::writeFile(dir.file("moe/model.safetensors"), "not even a safetensors file");
  const auto why = errorOf([&] { hf::importHfModel(s, dir.file("moe"), ""); });
  EXPECT_NE(why.find("mixture-of-experts is not supported"), std::string::npos) << why;
  EXPECT_NE(why.find("'num_local_experts' = 8"), std::string::npos) << why;
  EXPECT_TRUE(s.listRuns().empty());
}
