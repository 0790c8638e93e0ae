// RoPE frequency scaling of imported Hugging Face models, as data and one pure function: the
// rotary inverse frequencies and the factor on cos/sin that transformers' modeling_rope_utils.py
// computes for `linear`, `dynamic`, `yarn`, `longrope` and `llama3` (Llama 3.1-3.3). DepthLab's
// own runs keep type "default", whose tables Rope builds exactly as before. No torch here.
//
// Per type (d = head dim, i = 0..d/2-1, f_i = base^(-2i/d), s = factor, L0 = the original
// context, original_max_position_embeddings):
//   default   f_i
//   linear    f_i / s
//   dynamic   f_i as long as the context is at most max_position_embeddings (DepthLab never
//             runs a longer one: it refuses it), which is where transformers' NTK base equals
//             the plain one
//   llama3    f_i for wavelengths 2 pi / f_i under L0 / high_freq_factor, f_i / s over
//             L0 / low_freq_factor, blended linearly in between
//   yarn      a ramp between f_i / s (interpolated) and f_i (extrapolated) over the dims whose
//             rotations in L0 lie between beta_slow and beta_fast; cos/sin times
//             attention_factor (default 0.1 ln s + 1, or mscale's ratio)
//   longrope  f_i / short_factor[i] for sequences up to L0, f_i / long_factor[i] beyond;
//             cos/sin times attention_factor (default sqrt(1 + ln s / ln L0), 1 when s <= 1)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace depthlab::model {

inline const std::vector<std::string> kRopeScalingTypes = {"default", "linear", "dynamic",
                                                           "llama3", "yarn", "longrope"};

/// A rope type and its parameters, every default already resolved by whoever read the config.
struct RopeScaling {
  std::string type = "default";    // one of kRopeScalingTypes
  double factor = 1.0;             // s
  int64_t originalMaxPositions = 0;  // L0 (llama3, yarn, longrope)
  double lowFreqFactor = 1.0;      // llama3
  double highFreqFactor = 4.0;     // llama3
  double betaFast = 32.0;          // yarn
  double betaSlow = 1.0;           // yarn
  bool truncate = true;            // yarn: round the correction range outwards
  double attentionFactor = 1.0;    // yarn, longrope: multiplies cos and sin
  std::vector<double> shortFactor, longFactor;  // longrope: d/2 each

  bool isDefault() const { return type == "default" || type == "dynamic"; }
  /// longrope with a context longer than L0 uses the long factors.
  bool hasLongFactors() const { return type == "longrope"; }
};

/// Inverse frequencies (d/2) for head dim `headDim` and `base`; `longContext` picks longrope's
/// long factors.
std::vector<double> ropeInverseFrequencies(const RopeScaling& s, int64_t headDim, double base,
                                           bool longContext = false);

/// yarn's default attention factor: 0.1 * mscale * ln(s) + 1 (1 when s <= 1).
double yarnMscale(double factor, double mscale = 1.0);

}  // namespace depthlab::model
