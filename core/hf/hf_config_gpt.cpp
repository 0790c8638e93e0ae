// GPT2LMHeadModel and GPTNeoXForCausalLM (Pythia) configs into DepthLab's model config; see
// hf_config.h. Their fields are named apart from Llama's (GPT-2: n_embd, n_layer, n_head,
// n_positions, n_inner, layer_norm_epsilon, activation_function; GPT-NeoX: rotary_pct,
// rotary_emb_base, use_parallel_residual, attention_bias), read with transformers' defaults.
// Refused, naming the field: GPT-2's scale_attn_by_inverse_layer_idx and add_cross_attention,
// an activation DepthLab lacks, a width the heads do not divide. GPT-2's reorder_and_upcast_attn
// is read: it computes the scores in float32, and DepthLab's activations are float32 throughout.
// No torch, no weights.
#include <algorithm>
#include <map>

#include "hf/config_reader.h"

namespace depthlab::hf::detail {

namespace {

/// The field that holds `first` or, failing that, `second` (GPT-2's n_embd or hidden_size).
const char* either(const ConfigReader& r, const char* first, const char* second) {
  return r.has(first) || !r.has(second) ? first : second;
}

/// transformers' ACT2FN name in `key` as the lab's MLP activation; refused when not one of them.
std::string activationOf(const ConfigReader& r, const char* key, const std::string& fallback) {
  static const std::map<std::string, std::string> known = {
      {"gelu", "gelu"}, {"gelu_new", "gelu_tanh"}, {"gelu_pytorch_tanh", "gelu_tanh"},
      {"relu", "relu"}, {"silu", "silu"},          {"swish", "silu"}};
  const std::string act = r.text(key, fallback);
  if (auto it = known.find(act); it != known.end()) return it->second;
  std::string list;
  for (const auto& [name, ours] : known) list += (list.empty() ? "" : ", ") + name;
  throw HfModelError(r.where() + ": '" + key + "' = '" + act +
                     "' is not supported (supported: " + list + ")");
}

/// Width, depth, heads, vocabulary and context under the family's field names; heads must
/// divide the width (head dimension = width / heads, even).
void readShape(const ConfigReader& r, HfModelConfig& c, const char* width, const char* layers,
               const char* heads, const char* positions, int64_t positionsFallback) {
  auto& m = c.model;
  m.dModel = static_cast<int>(r.integer(width, 1, 1 << 16));
  m.nLayers = static_cast<int>(r.integer(layers, 1, 1024));
  m.nHeads = static_cast<int>(r.integer(heads, 1, 1024));
  if (m.dModel % m.nHeads != 0 || (m.dModel / m.nHeads) % 2 != 0) {
    throw HfModelError(r.where() + ": " + std::to_string(m.nHeads) + " heads must divide '" +
                       width + "' = " + std::to_string(m.dModel) + " into heads of an even size");
  }
  m.vocabSize = static_cast<int>(r.integer("vocab_size", 2, 1 << 24));
  c.maxPositions = r.integer(positions, 1, int64_t{1} << 24, positionsFallback);
  m.seqLen = static_cast<int>(std::min<int64_t>(c.maxPositions, 1 << 20));
  m.norm = "layernorm";
}

}  // namespace

void readGpt2(const ConfigReader& r, HfModelConfig& c) {
  for (const char* key : {"scale_attn_by_inverse_layer_idx", "add_cross_attention"}) {
    if (r.flag(key, false)) {
      throw HfModelError(r.where() + ": '" + key +
                         "' is true; DepthLab reads GPT-2 without it "
                         "(false only)");
    }
  }
  auto& m = c.model;
  readShape(r, c, either(r, "n_embd", "hidden_size"), either(r, "n_layer", "num_hidden_layers"),
            either(r, "n_head", "num_attention_heads"),
            either(r, "n_positions", "max_position_embeddings"), 1024);
  const int64_t inner = r.has("n_inner") ? r.integer("n_inner", 1, 1 << 20) : 4 * int64_t{m.dModel};
  m.dFF = static_cast<int>(std::min<int64_t>(inner, 1 << 20));
  m.normEps = r.number("layer_norm_epsilon", 1e-5);
  m.activation = activationOf(r, "activation_function", "gelu_new");
  m.gatedMlp = false;
  m.qkvBias = m.outBias = m.mlpBias = true;  // Conv1D layers all have biases
  m.rotaryFraction = 0.0;                    // no RoPE: wpe's learned positions instead
  m.learnedPositions = static_cast<int>(c.maxPositions);
  if (!r.flag("scale_attn_weights", true)) m.attnScale = 1.0;  // q.k unscaled
  m.tieEmbeddings = r.flag("tie_word_embeddings", true);
}

void readGptNeox(const ConfigReader& r, HfModelConfig& c) {
  auto& m = c.model;
  readShape(r, c, "hidden_size", "num_hidden_layers", "num_attention_heads",
            "max_position_embeddings", 2048);
  m.dFF = static_cast<int>(r.integer("intermediate_size", 1, 1 << 20));
  m.normEps = r.number("layer_norm_eps", 1e-5);
  m.activation = activationOf(r, "hidden_act", "gelu");
  m.gatedMlp = false;
  m.mlpBias = true;
  m.qkvBias = m.outBias = r.flag("attention_bias", true);
  m.parallelResidual = r.flag("use_parallel_residual", true);
  // transformers 4's rotary_pct / rotary_emb_base, 5's rope_parameters (partial_rotary_factor,
  // rope_theta); rotary_pct 0.25 when neither says.
  readRope(r, m, c.maxPositions, r.raw("rope_parameters"), r.raw("rope_scaling"),
           r.number("rotary_emb_base", r.number("rope_theta", 10000.0)),
           {true, r.number("rotary_pct", 0.25)});
  m.tieEmbeddings = r.flag("tie_word_embeddings", false);
}

}  // namespace depthlab::hf::detail
