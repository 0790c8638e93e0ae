// config.json of Llama / Mistral / Qwen2 folders (transformers 4 and 5 spellings) into the model
// config, and every refusal: other architectures, rope scaling, biases Llama lacks, bad sizes.
#include <gtest/gtest.h>

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
    "use_sliding_window": false, "sliding_window": 32768})", "config.json");
  EXPECT_EQ(q.architecture, "Qwen2ForCausalLM");
  EXPECT_TRUE(q.model.qkvBias);
  EXPECT_TRUE(q.model.tieEmbeddings);
  EXPECT_EQ(q.model.headDimension(), 64);
  EXPECT_DOUBLE_EQ(q.model.ropeBase, 1e6);
  EXPECT_FALSE(q.slidingWindow);  // not in use
  const auto m = hf::parseHfConfig(R"({"architectures": ["MistralForCausalLM"], "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4, "head_dim": 32,
    "num_key_value_heads": 1, "vocab_size": 100, "sliding_window": 4096})", "config.json");
  EXPECT_EQ(m.model.headDimension(), 32);  // head_dim given, not width / heads
  EXPECT_EQ(m.model.kvHeads(), 1);
  EXPECT_EQ(m.slidingWindow, 4096);
}

TEST(HfConfig, RefusesWhatDepthLabCannotReproduce) {
  auto with = [](const std::string& extra) {
    std::string s = kLlama4;
    return s.substr(0, s.size() - 1) + ", " + extra + "}";
  };
  EXPECT_NE(errorOf(R"({"architectures": ["GPT2LMHeadModel"]})").find("'GPT2LMHeadModel' is not supported"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"model_type": "gemma"})").find("'gemma' is not supported"), std::string::npos);
  const auto yarn = errorOf(with(R"("rope_parameters": {"rope_type": "yarn", "factor": 4.0})"));
  EXPECT_NE(yarn.find("rope scaling type 'yarn'"), std::string::npos) << yarn;
  const auto llama3 = errorOf(with(R"("rope_scaling": {"rope_type": "llama3", "factor": 8.0})"));
  EXPECT_NE(llama3.find("'llama3'"), std::string::npos) << llama3;
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
