// config.json of GPT-2 and GPT-NeoX / Pythia folders (transformers 4's rotary_pct and
// rotary_emb_base, 5's rope_parameters) into the model config with the classes' defaults, their
// weight maps' tensor names and shapes (Conv1D stored (in, out), NeoX's per-head fused qkv), the
// partial rotary factor where it is read (GPT-NeoX, Phi-3) and refused (elsewhere), and what
// GPT-2 features DepthLab refuses, naming the field.
#include <gtest/gtest.h>

#include "hf/hf_config.h"
#include "hf/hf_weight_map.h"

using namespace depthlab;

namespace {

std::string errorOf(const std::string& text) {
  try {
    hf::parseHfConfig(text, "config.json");
  } catch (const hf::HfModelError& e) {
    return e.what();
  }
  return "";
}

std::string with(const char* base, const std::string& extra) {
  std::string s = base;
  return s.substr(0, s.rfind('}')) + ", " + extra + "}";
}

const char* kGpt2 = R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_layer": 3,
  "n_head": 4, "n_positions": 128, "vocab_size": 97, "model_type": "gpt2"})";

// Pythia-70m's config.json as transformers 4 wrote it.
const char* kPythia = R"({"architectures": ["GPTNeoXForCausalLM"], "hidden_size": 512,
  "intermediate_size": 2048, "num_attention_heads": 8, "num_hidden_layers": 6,
  "max_position_embeddings": 2048, "rotary_emb_base": 10000, "rotary_pct": 0.25,
  "use_parallel_residual": true, "layer_norm_eps": 1e-05, "hidden_act": "gelu",
  "tie_word_embeddings": false, "vocab_size": 50304, "torch_dtype": "float16",
  "bos_token_id": 0, "model_type": "gpt_neox"})";

}  // namespace

TEST(HfConfigGpt, ReadsGpt2WithItsClassDefaults) {
  const auto c = hf::parseHfConfig(kGpt2, "config.json");
  const auto& m = c.model;
  EXPECT_EQ(c.architecture, "GPT2LMHeadModel");
  EXPECT_EQ(m.dModel, 64);
  EXPECT_EQ(m.nLayers, 3);
  EXPECT_EQ(m.dFF, 256);  // n_inner absent: 4 C
  EXPECT_EQ(c.maxPositions, 128);
  EXPECT_EQ(m.learnedPositions, 128);
  EXPECT_EQ(m.rotaryDims(), 0);  // no RoPE
  EXPECT_EQ(m.norm, "layernorm");
  EXPECT_DOUBLE_EQ(m.normEps, 1e-5);
  EXPECT_EQ(m.activation, "gelu_tanh");  // gelu_new
  EXPECT_FALSE(m.gatedMlp);
  EXPECT_TRUE(m.qkvBias && m.outBias && m.mlpBias);
  EXPECT_TRUE(m.tieEmbeddings);
  EXPECT_FALSE(m.parallelResidual);
  EXPECT_DOUBLE_EQ(m.attnScale, 0.0);  // 1/sqrt(D)
  EXPECT_DOUBLE_EQ(
      hf::parseHfConfig(with(kGpt2, R"("scale_attn_weights": false)"), "c").model.attnScale, 1.0);
  const auto relu =
      hf::parseHfConfig(with(kGpt2, R"("activation_function": "relu", "n_inner": 96)"), "c");
  EXPECT_EQ(relu.model.activation, "relu");
  EXPECT_EQ(relu.model.dFF, 96);
  // float32 scores are what reorder_and_upcast_attn asks for: read, not refused.
  EXPECT_EQ(errorOf(with(kGpt2, R"("reorder_and_upcast_attn": true)")), "");
  // The model_type alone names it too.
  EXPECT_EQ(hf::parseHfConfig(R"({"model_type": "gpt2", "n_embd": 8, "n_layer": 1, "n_head": 2,
    "vocab_size": 10})",
                              "c")
                .architecture,
            "GPT2LMHeadModel");
}

TEST(HfConfigGpt, RefusesGpt2FeaturesItLacksNamingTheField) {
  const auto byLayer = errorOf(with(kGpt2, R"("scale_attn_by_inverse_layer_idx": true)"));
  EXPECT_NE(byLayer.find("'scale_attn_by_inverse_layer_idx' is true"), std::string::npos)
      << byLayer;
  const auto cross = errorOf(with(kGpt2, R"("add_cross_attention": true)"));
  EXPECT_NE(cross.find("'add_cross_attention' is true"), std::string::npos) << cross;
  const auto act = errorOf(with(kGpt2, R"("activation_function": "quick_gelu")"));
  EXPECT_NE(act.find("'activation_function' = 'quick_gelu' is not supported (supported: gelu, "
                     "gelu_new, gelu_pytorch_tanh, relu, silu, swish)"),
            std::string::npos)
      << act;
  const auto heads = errorOf(with(kGpt2, R"("n_head": 5)"));
  EXPECT_NE(heads.find("5 heads must divide 'n_embd' = 64"), std::string::npos) << heads;
  EXPECT_NE(errorOf(R"({"architectures": ["GPT2LMHeadModel"], "n_layer": 3, "n_head": 4,
    "vocab_size": 97})")
                .find("'n_embd' is missing"),
            std::string::npos);
}

TEST(HfConfigGpt, ReadsPythiaOfTransformers4And5) {
  const auto c = hf::parseHfConfig(kPythia, "config.json");
  const auto& m = c.model;
  EXPECT_EQ(c.architecture, "GPTNeoXForCausalLM");
  EXPECT_EQ(m.headDimension(), 64);
  EXPECT_EQ(m.rotaryDims(), 16);  // rotary_pct 0.25
  EXPECT_DOUBLE_EQ(m.ropeBase, 10000.0);
  EXPECT_TRUE(m.parallelResidual);
  EXPECT_EQ(m.activation, "gelu");  // exact
  EXPECT_EQ(m.norm, "layernorm");
  EXPECT_FALSE(m.gatedMlp);
  EXPECT_TRUE(m.qkvBias && m.outBias && m.mlpBias);
  EXPECT_FALSE(m.tieEmbeddings);
  EXPECT_EQ(m.learnedPositions, 0);
  EXPECT_EQ(c.dtype, "float16");
  EXPECT_EQ(c.bosTokenId, 0);
  // transformers 5: rope_parameters; rotary_pct 0.25 when nothing says.
  const auto v5 = hf::parseHfConfig(R"({"model_type": "gpt_neox", "hidden_size": 64,
    "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 97,
    "use_parallel_residual": false, "attention_bias": false,
    "rope_parameters": {"rope_type": "default", "rope_theta": 5000.0, "partial_rotary_factor": 0.5}})",
                                    "c");
  EXPECT_EQ(v5.model.rotaryDims(), 8);
  EXPECT_DOUBLE_EQ(v5.model.ropeBase, 5000.0);
  EXPECT_FALSE(v5.model.parallelResidual);
  EXPECT_FALSE(v5.model.qkvBias || v5.model.outBias);
  EXPECT_EQ(v5.maxPositions, 2048);
  const auto bare = hf::parseHfConfig(R"({"model_type": "gpt_neox", "hidden_size": 64,
    "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 97})",
                                      "c");
  EXPECT_EQ(bare.model.rotaryDims(), 4);
  EXPECT_TRUE(bare.model.parallelResidual);
  const auto odd = errorOf(with(kPythia, R"("rotary_pct": 0.3)"));  // 19 of 64 dims
  EXPECT_NE(odd.find("rotates 19 of a head's 64 dims"), std::string::npos) << odd;
}

TEST(HfConfigGpt, PartialRotaryIsReadForGptNeoXAndPhi3Only) {
  const char* phi3 = R"({"architectures": ["Phi3ForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 97,
    "partial_rotary_factor": 0.75})";
  EXPECT_EQ(hf::parseHfConfig(phi3, "c").model.rotaryDims(), 12);
  const auto llama = errorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 97,
    "partial_rotary_factor": 0.75})");
  EXPECT_NE(llama.find("'partial_rotary_factor' = 0.75 is not supported for this architecture"),
            std::string::npos)
      << llama;
}

TEST(HfConfigGpt, WeightMapsNameAndShapeTheCheckpointsTensors) {
  const auto gpt2 = hf::parseHfConfig(kGpt2, "config.json");
  const auto t = hf::expectedTensors(gpt2);
  using Shape = std::vector<int64_t>;
  EXPECT_EQ(t.at("transformer.wte.weight"), Shape({97, 64}));
  EXPECT_EQ(t.at("transformer.wpe.weight"), Shape({128, 64}));
  EXPECT_EQ(t.at("transformer.h.2.attn.c_attn.weight"), Shape({64, 192}));  // (in, out)
  EXPECT_EQ(t.at("transformer.h.2.attn.c_attn.bias"), Shape({192}));
  EXPECT_EQ(t.at("transformer.h.0.mlp.c_fc.weight"), Shape({64, 256}));
  EXPECT_EQ(t.at("transformer.h.0.mlp.c_proj.weight"), Shape({256, 64}));
  EXPECT_EQ(t.at("transformer.h.0.ln_1.bias"), Shape({64}));
  EXPECT_EQ(t.at("transformer.ln_f.bias"), Shape({64}));
  EXPECT_EQ(t.count("lm_head.weight"), 0u);  // tied
  EXPECT_EQ(t.size(), 2u + 3u * 12u + 2u);
  const auto k = hf::weightSlot(gpt2, "layers.1.self_attn.k_proj.weight");
  EXPECT_EQ(k.tensor, "transformer.h.1.attn.c_attn.weight");
  EXPECT_TRUE(k.transposed);
  EXPECT_EQ(k.rowBegin, 64);
  EXPECT_EQ(k.rowEnd, 128);
  EXPECT_FALSE(hf::weightSlot(gpt2, "layers.1.input_layernorm.weight").transposed);
  EXPECT_EQ(hf::basePrefix(gpt2), "transformer.");

  const auto neox = hf::parseHfConfig(kPythia, "config.json");
  const auto n = hf::expectedTensors(neox);
  EXPECT_EQ(n.at("gpt_neox.layers.5.attention.query_key_value.weight"), Shape({1536, 512}));
  EXPECT_EQ(n.at("gpt_neox.layers.5.attention.query_key_value.bias"), Shape({1536}));
  EXPECT_EQ(n.at("gpt_neox.layers.5.attention.dense.bias"), Shape({512}));
  EXPECT_EQ(n.at("gpt_neox.layers.5.mlp.dense_h_to_4h.weight"), Shape({2048, 512}));
  EXPECT_EQ(n.at("gpt_neox.final_layer_norm.bias"), Shape({512}));
  EXPECT_EQ(n.at("embed_out.weight"), Shape({50304, 512}));
  EXPECT_EQ(n.size(), 1u + 6u * 12u + 3u);
  const auto v = hf::weightSlot(neox, "layers.0.self_attn.v_proj.bias");
  EXPECT_EQ(v.groups, 8);  // per head: rows [2D, 3D) of each head's 3D
  EXPECT_EQ(v.rowBegin, 128);
  EXPECT_EQ(v.rowEnd, 192);
}
