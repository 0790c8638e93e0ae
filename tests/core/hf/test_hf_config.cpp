// config.json of Llama / Mistral / Qwen2 / Qwen3 / OLMo 2 / Phi-3 folders (transformers 4 and 5
// spellings) into the model config, rope scaling with transformers' defaults, and every refusal:
// other architectures, mixture-of-experts, unknown rope types, biases the decoder lacks, bad sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "hf/hf_config.h"

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

const char* kLlama4 = R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64,
  "intermediate_size": 96, "num_hidden_layers": 3, "num_attention_heads": 4,
  "num_key_value_heads": 2, "vocab_size": 97, "max_position_embeddings": 64,
  "rms_norm_eps": 1e-5, "rope_theta": 5000.0, "rope_scaling": null, "torch_dtype": "bfloat16",
  "tie_word_embeddings": false, "hidden_act": "silu", "bos_token_id": 1})";

}  // namespace

TEST(HfConfig, ReadsLlamaOfTransformers4) {
  const auto c = hf::parseHfConfig(kLlama4, "config.json");
  EXPECT_EQ(c.architecture, "LlamaForCausalLM");
  EXPECT_EQ(c.model.dModel, 64);
  EXPECT_EQ(c.model.nLayers, 3);
  EXPECT_EQ(c.model.nHeads, 4);
  EXPECT_EQ(c.model.kvHeads(), 2);
  EXPECT_EQ(c.model.headDimension(), 16);
  EXPECT_EQ(c.model.dFF, 96);
  EXPECT_EQ(c.model.vocabSize, 97);
  EXPECT_DOUBLE_EQ(c.model.normEps, 1e-5);
  EXPECT_DOUBLE_EQ(c.model.ropeBase, 5000.0);
  EXPECT_FALSE(c.model.qkvBias);
  EXPECT_FALSE(c.model.tieEmbeddings);
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_EQ(c.maxPositions, 64);
  EXPECT_EQ(c.bosTokenId, 1);
  EXPECT_FALSE(c.slidingWindow);
}

TEST(HfConfig, ReadsQwen2AndMistralOfTransformers5) {
  const auto q = hf::parseHfConfig(R"({"model_type": "qwen2", "hidden_size": 896,
    "intermediate_size": 4864, "num_hidden_layers": 24, "num_attention_heads": 14,
    "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": true,
    "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"}, "dtype": "bfloat16",
    "use_sliding_window": false, "sliding_window": 32768})",
                                   "config.json");
  EXPECT_EQ(q.architecture, "Qwen2ForCausalLM");
  EXPECT_TRUE(q.model.qkvBias);
  EXPECT_TRUE(q.model.tieEmbeddings);
  EXPECT_EQ(q.model.headDimension(), 64);
  EXPECT_DOUBLE_EQ(q.model.ropeBase, 1e6);
  EXPECT_FALSE(q.slidingWindow);  // not in use
  const auto m = hf::parseHfConfig(R"({"architectures": ["MistralForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "head_dim": 32,
    "num_key_value_heads": 1, "vocab_size": 100, "sliding_window": 4096})",
                                   "config.json");
  EXPECT_EQ(m.model.headDimension(), 32);  // head_dim given, not width / heads
  EXPECT_EQ(m.model.kvHeads(), 1);
  EXPECT_EQ(m.slidingWindow, 4096);
}

TEST(HfConfig, RefusesWhatDepthLabCannotReproduce) {
  auto with = [](const std::string& extra) {
    std::string s = kLlama4;
    return s.substr(0, s.size() - 1) + ", " + extra + "}";
  };
  const auto bloom = errorOf(R"({"architectures": ["BloomForCausalLM"]})");
  EXPECT_NE(bloom.find("'BloomForCausalLM', which is not supported (supported: LlamaForCausalLM,"),
            std::string::npos)
      << bloom;
  EXPECT_NE(bloom.find("Phi3ForCausalLM"), std::string::npos) << bloom;
  EXPECT_NE(bloom.find("GPTNeoXForCausalLM"), std::string::npos) << bloom;
  EXPECT_NE(errorOf(R"({"model_type": "gemma"})").find("'gemma' is not supported"),
            std::string::npos);
  const auto su = errorOf(with(R"("rope_parameters": {"rope_type": "su", "factor": 4.0})"));
  EXPECT_NE(su.find("rope scaling type 'su' is not supported (supported: default, linear, "
                    "dynamic, llama3, yarn, longrope)"),
            std::string::npos)
      << su;
  const auto llama3 = errorOf(with(R"("rope_scaling": {"rope_type": "llama3", "factor": 8.0})"));
  EXPECT_NE(llama3.find("lack 'low_freq_factor'"), std::string::npos) << llama3;
  const auto partial = errorOf(with(R"("partial_rotary_factor": 0.75)"));
  EXPECT_NE(partial.find("'partial_rotary_factor' = 0.75 is not supported"), std::string::npos)
      << partial;
  const auto longrope = errorOf(with(
      R"("rope_parameters": {"rope_type": "longrope", "short_factor": [1, 2], "long_factor": [1, 2]})"));
  EXPECT_NE(longrope.find("'short_factor' must be a list of 8 numbers"), std::string::npos)
      << longrope;
  EXPECT_NE(errorOf(with(R"("attention_bias": true)")).find("attention_bias"), std::string::npos);
  EXPECT_NE(errorOf(with(R"("mlp_bias": true)")).find("mlp_bias"), std::string::npos);
  EXPECT_NE(errorOf(with(R"("hidden_act": "gelu")")).find("activation 'gelu'"), std::string::npos);
  EXPECT_NE(errorOf("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(errorOf("{broken").find("not a JSON object"), std::string::npos);
}

TEST(HfConfig, RefusesZeroNegativeAndHugeSizes) {
  auto sized = [](const char* key, const char* value) {
    std::string s = kLlama4;
    const std::string k = std::string("\"") + key + "\": ";
    const auto at = s.find(k);
    const auto end = s.find_first_of(",}", at);
    return s.substr(0, at) + k + value + s.substr(end);
  };
  const auto zero = errorOf(sized("hidden_size", "0"));
  EXPECT_NE(zero.find("'hidden_size' = 0 is outside"), std::string::npos) << zero;
  EXPECT_NE(errorOf(sized("num_hidden_layers", "-3")).find("num_hidden_layers"), std::string::npos);
  EXPECT_NE(errorOf(sized("vocab_size", "99999999999")).find("vocab_size"), std::string::npos);
  EXPECT_NE(errorOf(sized("intermediate_size", "1.5")).find("whole number"), std::string::npos);
  EXPECT_NE(errorOf(sized("num_key_value_heads", "3")).find("do not divide"), std::string::npos);
  EXPECT_NE(errorOf(sized("rms_norm_eps", "-1")).find("positive"), std::string::npos);
  EXPECT_NE(errorOf(sized("hidden_size", "\"64\"")).find("whole number"), std::string::npos);
  const auto missing = errorOf(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64})");
  EXPECT_NE(missing.find("is missing"), std::string::npos) << missing;
}

TEST(HfConfig, ReadsRopeScalingWithTransformersDefaults) {
  auto with = [](const std::string& extra) {
    std::string s = kLlama4;
    return hf::parseHfConfig(s.substr(0, s.size() - 1) + ", " + extra + "}", "config.json");
  };
  // Llama 3.1's own settings (transformers 4 spelling).
  const auto l3 = with(R"("rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
    "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"})");
  EXPECT_EQ(l3.model.ropeScaling.type, "llama3");
  EXPECT_DOUBLE_EQ(l3.model.ropeScaling.factor, 8.0);
  EXPECT_EQ(l3.model.ropeScaling.originalMaxPositions, 8192);
  EXPECT_DOUBLE_EQ(l3.model.ropeBase, 5000.0);  // rope_theta beside rope_scaling
  // yarn: the factor from the two contexts, attention factor 0.1 ln(s) + 1.
  const auto yarn = with(R"("rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6,
    "original_max_position_embeddings": 16})");
  EXPECT_DOUBLE_EQ(yarn.model.ropeScaling.factor, 4.0);  // 64 / 16
  EXPECT_NEAR(yarn.model.ropeScaling.attentionFactor, 0.1 * std::log(4.0) + 1, 1e-12);
  EXPECT_DOUBLE_EQ(yarn.model.ropeBase, 1e6);
  const auto linear =
      with(R"("rope_scaling": {"type": "linear", "factor": 4.0})");  // deepseek-coder
  EXPECT_EQ(linear.model.ropeScaling.type, "linear");
  // Phi-3 keeps its original context at the top level, which wins.
  const auto lr = with(R"("original_max_position_embeddings": 32, "rope_parameters": {"rope_type":
    "longrope", "short_factor": [1,1,1,1,1,1,1,1], "long_factor": [2,2,2,2,2,2,2,2],
    "original_max_position_embeddings": 4})");
  EXPECT_EQ(lr.model.ropeScaling.originalMaxPositions, 32);
  EXPECT_NEAR(lr.model.ropeScaling.attentionFactor, std::sqrt(1 + std::log(2.0) / std::log(32.0)),
              1e-12);
  EXPECT_EQ(lr.model.ropeScaling.longFactor.size(), 8u);
}

TEST(HfConfig, ReadsQwen3Olmo2Phi3AndDeepSeekLlm) {
  const auto q3 = hf::parseHfConfig(R"({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024,
    "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "head_dim": 128,
    "num_key_value_heads": 8, "vocab_size": 151936, "tie_word_embeddings": true,
    "attention_bias": false, "use_sliding_window": false, "sliding_window": null,
    "rope_theta": 1000000, "rope_scaling": null, "hidden_act": "silu"})",
                                    "config.json");
  EXPECT_EQ(q3.model.qkNorm, model::QkNorm::PerHead);
  EXPECT_FALSE(q3.model.qkvBias);
  EXPECT_EQ(q3.model.headDimension(), 128);
  EXPECT_FALSE(q3.slidingWindow);
  const auto olmo = hf::parseHfConfig(R"({"model_type": "olmo2", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
    "vocab_size": 100})",
                                      "config.json");
  EXPECT_EQ(olmo.architecture, "Olmo2ForCausalLM");
  EXPECT_EQ(olmo.model.qkNorm, model::QkNorm::Whole);
  EXPECT_FALSE(olmo.model.normBeforeSublayer);
  EXPECT_TRUE(olmo.model.normAfterSublayer);
  const auto phi = hf::parseHfConfig(R"({"architectures": ["Phi3ForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
    "vocab_size": 100, "sliding_window": 2047})",
                                     "config.json");
  EXPECT_EQ(phi.slidingWindow, 2047);
  // deepseek-ai/deepseek-llm-7b-base: a LlamaForCausalLM with fields of its own.
  const auto ds = hf::parseHfConfig(R"({"architectures": ["LlamaForCausalLM"],
    "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 100000,
    "eos_token_id": 100001, "hidden_act": "silu", "hidden_size": 4096,
    "initializer_range": 0.02, "intermediate_size": 11008, "max_position_embeddings": 4096,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 30,
    "num_key_value_heads": 32, "pretraining_tp": 1, "rms_norm_eps": 1e-06, "rope_scaling": null,
    "rope_theta": 10000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
    "transformers_version": "4.33.1", "use_cache": true, "vocab_size": 102400})",
                                    "config.json");
  EXPECT_EQ(ds.model.nLayers, 30);
  EXPECT_EQ(ds.model.ropeScaling.type, "default");
}

TEST(HfConfig, ReadsGemma2WithItsClassDefaults) {
  // google/gemma-2-2b's fields that matter; no tie_word_embeddings: tied, as the class says.
  const auto g = hf::parseHfConfig(R"({"architectures": ["Gemma2ForCausalLM"],
    "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "head_dim": 256,
    "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 2304, "intermediate_size": 9216, "max_position_embeddings": 8192,
    "model_type": "gemma2", "num_attention_heads": 8, "num_hidden_layers": 26,
    "num_key_value_heads": 4, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06,
    "rope_theta": 10000.0, "sliding_window": 4096, "vocab_size": 256000})",
                                   "config.json");
  EXPECT_TRUE(g.model.tieEmbeddings);
  EXPECT_TRUE(g.model.normBeforeSublayer);
  EXPECT_TRUE(g.model.normAfterSublayer);
  EXPECT_EQ(g.model.activation, "gelu_tanh");
  EXPECT_DOUBLE_EQ(g.model.embedScale, std::sqrt(2304.0));
  EXPECT_DOUBLE_EQ(g.model.attnScale, 1.0 / 16);
  EXPECT_DOUBLE_EQ(g.model.attnSoftcap, 50.0);
  EXPECT_DOUBLE_EQ(g.model.finalSoftcap, 30.0);
  EXPECT_EQ(g.slidingWindow, 4096);
  const auto uncapped = hf::parseHfConfig(R"({"model_type": "gemma2", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "final_logit_softcapping": null})",
                                          "config.json");
  EXPECT_DOUBLE_EQ(uncapped.model.finalSoftcap, 0.0);  // null: none
  EXPECT_DOUBLE_EQ(uncapped.model.attnSoftcap, 50.0);  // absent: the class default
  const auto silu = errorOf(R"({"model_type": "gemma2", "hidden_activation": "silu"})");
  EXPECT_NE(silu.find("activation 'silu' is not supported (Gemma2ForCausalLM is read with "
                      "gelu_pytorch_tanh)"),
            std::string::npos)
      << silu;
}

TEST(HfConfig, ReadsGemma3LocalAndGlobalRopes) {
  // google/gemma-3-1b-pt in transformers 4's spelling: rope_theta, rope_local_base_freq,
  // sliding_window_pattern; no soft caps.
  const auto g = hf::parseHfConfig(R"({"architectures": ["Gemma3ForCausalLM"],
    "attn_logit_softcapping": null, "final_logit_softcapping": null, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 6912,
    "max_position_embeddings": 32768, "model_type": "gemma3_text", "num_attention_heads": 4,
    "num_hidden_layers": 26, "num_key_value_heads": 1, "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000, "rope_scaling": null,
    "rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6,
    "vocab_size": 262144})",
                                   "config.json");
  EXPECT_EQ(g.model.qkNorm, model::QkNorm::PerHead);
  EXPECT_DOUBLE_EQ(g.model.attnSoftcap, 0.0);
  // A Gemma 3 config that sets the attention soft-cap: transformers does not apply it, nor the lab.
  const auto capped = hf::parseHfConfig(R"({"model_type": "gemma3_text", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0})",
                                        "config.json");
  EXPECT_DOUBLE_EQ(capped.model.attnSoftcap, 0.0);
  EXPECT_DOUBLE_EQ(capped.model.finalSoftcap, 30.0);  // the final one it does apply
  EXPECT_DOUBLE_EQ(g.model.finalSoftcap, 0.0);
  EXPECT_DOUBLE_EQ(g.model.ropeBase, 1e6);
  EXPECT_DOUBLE_EQ(g.model.localRopeBase, 1e4);
  ASSERT_EQ(g.model.localRopeLayers.size(), 26u);
  EXPECT_TRUE(g.model.localRopeLayers[0]);
  EXPECT_FALSE(g.model.localRopeLayers[5]);  // every sixth layer is global
  EXPECT_EQ(g.slidingWindow, 512);
  // The 4B's linear scaling of the global rope, transformers 5's nested spelling.
  const auto scaled = hf::parseHfConfig(R"({"model_type": "gemma3_text", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0,
    "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
    "layer_types": ["sliding_attention", "full_attention"]})",
                                        "config.json");
  EXPECT_EQ(scaled.model.ropeScaling.type, "linear");
  EXPECT_DOUBLE_EQ(scaled.model.ropeScaling.factor, 8.0);
  EXPECT_EQ(scaled.model.localRopeLayers, (std::vector<bool>{true, false}));
  const auto multimodal = errorOf(R"({"architectures": ["Gemma3ForConditionalGeneration"]})");
  EXPECT_NE(multimodal.find("not supported"), std::string::npos) << multimodal;
}

TEST(HfConfig, RefusesMixtureOfExpertsNamingTheField) {
  auto refused = [](const std::string& text) { return errorOf(text); };
  const auto mixtral = refused(R"({"architectures": ["MixtralForCausalLM"], "num_local_experts": 8,
    "hidden_size": 64})");
  EXPECT_NE(
      mixtral.find("'MixtralForCausalLM' is a mixture-of-experts model ('num_local_experts' = 8)"),
      std::string::npos)
      << mixtral;
  EXPECT_NE(mixtral.find("mixture-of-experts is not supported"), std::string::npos) << mixtral;
  EXPECT_NE(mixtral.find("LlamaForCausalLM"), std::string::npos) << mixtral;
  const auto qwen = refused(R"({"model_type": "qwen2_moe", "num_experts": 60})");
  EXPECT_NE(qwen.find("('num_experts' = 60)"), std::string::npos) << qwen;
  const auto q3 = refused(R"({"architectures": ["Qwen3MoeForCausalLM"]})");
  EXPECT_NE(q3.find("mixture-of-experts"), std::string::npos) << q3;
  const auto v3 =
      refused(R"({"architectures": ["DeepseekV3ForCausalLM"], "n_routed_experts": 256})");
  EXPECT_NE(v3.find("('n_routed_experts' = 256)"), std::string::npos) << v3;
  // Even a name DepthLab reads is refused when the config has experts.
  const auto llamaMoe = refused(R"({"architectures": ["LlamaForCausalLM"], "num_experts": 4})");
  EXPECT_NE(llamaMoe.find("mixture-of-experts"), std::string::npos) << llamaMoe;
}
