// See metric_catalogue.h.
#include "store/metric_catalogue.h"

#include <stdexcept>

namespace depthlab::metrics {

namespace {

constexpr unsigned kAllViews = kDashboard | kCompare | kExport | kReport;

}  // namespace

const std::vector<Metric>& catalogue() {
  using K = Kind;
  using S = Scale;
  using C = ColourMap;
  static const std::vector<Metric> rows = {
      // Scalars
      {kLossTrain, K::Scalar, "training loss", "nats", S::Linear, C::None, kAllViews,
       "mean next-token cross-entropy of the update's batch"},
      {kLossVal, K::Scalar, "validation loss", "nats", S::Linear, C::None, kAllViews,
       "mean next-token cross-entropy on the held-out split"},
      {kLr, K::Scalar, "learning rate", "", S::Linear, C::None, kDashboard,
       "the schedule's learning rate at the step"},
      {kTokensPerSecond, K::Scalar, "throughput", "tokens/s", S::Linear, C::None, kDashboard,
       "training tokens per second of wall time"},
      {kTokensSeen, K::Scalar, "tokens seen", "tokens", S::Linear, C::None, kNoPanel,
       "training tokens read up to the step: the targets that count (pads do not)"},
      {kLazyLayers, K::Scalar, "lazy layers", "layers", S::Linear, C::None, kReport,
       "layers whose effectiveness is below the lazy threshold"},
      {kPplVal, K::Scalar, "validation perplexity", "", S::Log, C::None, kReport,
       "exp(validation loss)"},
      {kGradNorm, K::Scalar, "gradient norm", "", S::Log, C::None, kNoPanel,
       "global L2 norm of the gradient before clipping"},
      {kLossProbe, K::Scalar, "probe-batch loss", "nats", S::Linear, C::None, kNoPanel,
       "loss on the fixed probe batch"},
      {kLowLayers, K::Scalar, "low-effectiveness layers", "layers", S::Linear, C::None, kNoPanel,
       "layers whose effectiveness is below the low threshold"},
      {kLazyRatio, K::Scalar, "lazy-layer share", "", S::Linear, C::None, kNoPanel,
       "lazy layers / all layers"},
      {kProbeSeconds, K::Scalar, "probe time", "s", S::Linear, C::None, kNoPanel,
       "wall time of the probes run at the step"},
      {kDytSaturationFinal, K::Scalar, "final DyT saturation", "", S::Linear, C::None,
       kCompare | kReport,
       "share of the final DyT norm's input with |alpha x| > 2 (DyT schemes): near 1, the "
       "logits stop depending on the blocks"},
      {kLensSettle, K::Scalar, "logit-lens settle depth", "block", S::Linear, C::None,
       kCompare | kReport,
       "mean over tokens of the first block from which the logit lens's top-1 token is the "
       "model's own through the last block"},
      {kSpectralAlphaMean, K::Scalar, "mean weight-spectrum alpha", "", S::Linear, C::None,
       kCompare | kReport,
       "power-law exponent of the weights' eigenvalue tails (WeightWatcher's fit), mean over "
       "every matrix of every block: 2-6 is the well-trained range Martin & Mahoney report"},
      {kEffectiveDepth, K::Scalar, "effective-depth ratio", "", S::Linear, C::None,
       kCompare | kReport,
       "the first block whose logit-lens KL to the output is below a tenth of the largest "
       "block's, over L (Hu et al. 2025): near 1, the prediction forms only at the end"},
      {kJumpStrength, K::Scalar, "final-block jump strength", "", S::Linear, C::None,
       kCompare | kReport,
       "the last block's adjacent angular distance over the mean of the middle blocks' "
       "(after Shibata et al. 2026): above 1, the last block turns the stream most"},
      {kTunedSettle, K::Scalar, "tuned-lens settle depth", "block", S::Linear, C::None, kCompare,
       "the settle depth through the tuned lens (analyze --probes tuned_lens)"},
      {kTaskChance, K::Scalar, "task chance level", "", S::Linear, C::None, kNoPanel,
       "mean of 1 / choices over the documents of the task `eval --task --prune` scored"},
      // Per layer
      {kVariance, K::PerLayer, "output variance", "", S::Log, C::Sequential, kAllViews,
       "variance of the residual stream after each block"},
      {kAngularAdjacent, K::PerLayer, "adjacent angular distance", "", S::Linear, C::SmallBright,
       kDashboard | kCompare | kReport,
       "d(x_l, x_l+1): angular distance between a block's input and output"},
      {kPruneDelta, K::PerLayer, "pruning delta", "nats", S::Linear, C::Diverging, kAllViews,
       "loss increase when the block alone is removed"},
      {kPruneDeltaError, K::PerLayer, "pruning delta standard error", "nats", S::Linear, C::None,
       kNoPanel, "standard error of the pruning delta over the probe sequences it was measured on"},
      {kEffectiveness, K::PerLayer, "effectiveness", "", S::Linear, C::Sequential, kDashboard,
       "E_l = ||h_l - h_l-1||^2 / ||h_l||^2: how much the block changes the stream"},
      {kLayerGradNorm, K::PerLayer, "gradient norm per layer", "", S::Log, C::Sequential,
       kDashboard, "L2 norm of each block's gradient"},
      {kDytSaturation, K::PerLayer, "DyT saturation", "", S::Linear, C::Sequential,
       kDashboard | kCompare | kReport,
       "share of the inputs of a block's DyT norms with |alpha x| > 2 (tanh flat; DyT schemes)"},
      {kNormVarAttn, K::PerLayer, "attention-norm output variance", "", S::Log, C::Sequential,
       kNoPanel, "variance of the (scaled) norm output entering attention"},
      {kNormVarFfn, K::PerLayer, "FFN-norm output variance", "", S::Log, C::Sequential, kNoPanel,
       "variance of the (scaled) norm output entering the MLP"},
      {kBlockInfluence, K::PerLayer, "Block Influence", "", S::Linear, C::Sequential, kDashboard,
       "1 - mean cos(input, output) of the block"},
      {kLensKl, K::PerLayer, "logit-lens KL to the output", "nats", S::Linear, C::Sequential,
       kDashboard | kCompare | kExport,
       "KL(p || q_l): the model's output p against the final norm and head applied to the "
       "stream after block l (0 at the last block)"},
      {kLensTop1, K::PerLayer, "logit-lens top-1 agreement", "", S::Linear, C::Sequential, kCompare,
       "share of tokens whose logit-lens top-1 at block l is the model's"},
      {kLensEntropy, K::PerLayer, "logit-lens entropy", "nats", S::Linear, C::Sequential, kNoPanel,
       "mean entropy of the logit lens's distribution at block l"},
      {kLensCrossEntropy, K::PerLayer, "logit-lens cross-entropy", "nats", S::Linear, C::Sequential,
       kCompare, "mean -log q_l(next token) of the logit lens at block l"},
      {kTunedKl, K::PerLayer, "tuned-lens KL to the output", "nats", S::Linear, C::Sequential,
       kCompare,
       "KL(p || q_l) through block l's trained affine translator (Belrose et al. 2023; "
       "analyze --probes tuned_lens)"},
      {kTunedTop1, K::PerLayer, "tuned-lens top-1 agreement", "", S::Linear, C::Sequential,
       kCompare, "share of tokens whose tuned-lens top-1 at block l is the model's"},
      {kTunedEntropy, K::PerLayer, "tuned-lens entropy", "nats", S::Linear, C::Sequential, kNoPanel,
       "mean entropy of the tuned lens's distribution at block l"},
      {kTunedCrossEntropy, K::PerLayer, "tuned-lens cross-entropy", "nats", S::Linear,
       C::Sequential, kCompare, "mean -log q_l(next token) of the tuned lens at block l"},
      {kSpectralAlpha, K::PerLayer, "weight alpha (block mean)", "", S::Linear, C::Sequential,
       kCompare,
       "power-law exponent of the tail of the eigenvalues of W^T W (WeightWatcher's fit: x_min "
       "by the least KS distance), mean over the block's matrices"},
      {kStableRank, K::PerLayer, "stable rank", "", S::Linear, C::Sequential, kCompare,
       "||W||_F^2 / ||W||_2^2, mean over the block's matrices"},
      {kActMax, K::PerLayer, "largest activation", "", S::Log, C::Sequential, kNoPanel,
       "max |x| of the stream after block l over the probe tokens (massive activations)"},
      {kActMaxRatio, K::PerLayer, "largest activation / median", "", S::Log, C::Sequential,
       kDashboard | kCompare,
       "max |x| over the median |x| of the stream after block l: massive activations stand "
       "thousands of times above the median (Sun et al. 2024)"},
      {kFirstTokenRatio, K::PerLayer, "first-token norm ratio", "", S::Log, C::Sequential, kCompare,
       "||x|| at the first position over the mean ||x|| at the others, after block l (the "
       "attention-sink token's stream)"},
      {kRankMe, K::PerLayer, "effective rank (RankMe)", "", S::Linear, C::Sequential, kCompare,
       "exp of the entropy of the normalised singular values of the tokens' stream after block "
       "l (Garrido et al. 2023): how many directions the representations use"},
      {kAttnContribution, K::PerLayer, "attention contribution |delta| / |x|", "", S::Log,
       C::Sequential, kDashboard | kCompare,
       "mean over tokens of the norm of what block l's attention adds to the stream over the "
       "norm of the stream it reads (Csordás et al. 2025)"},
      {kMlpContribution, K::PerLayer, "MLP contribution |delta| / |h|", "", S::Log, C::Sequential,
       kDashboard | kCompare,
       "mean over tokens of the norm of what block l's MLP adds over the norm of the stream it "
       "reads"},
      {kAttnCos, K::PerLayer, "attention cos(delta, x)", "", S::Linear, C::Diverging, kCompare,
       "mean cosine between what block l's attention adds and the stream it reads: near 0 "
       "writes new directions, near -1 erases"},
      {kMlpCos, K::PerLayer, "MLP cos(delta, h)", "", S::Linear, C::Diverging, kCompare,
       "mean cosine between what block l's MLP adds and the stream it reads"},
      {kAttnEntropy, K::PerLayer, "attention entropy", "nats", S::Linear, C::Sequential, kCompare,
       "mean entropy of a query's attention over its keys in block l (heads and positions "
       "after the first)"},
      {kAttnSink, K::PerLayer, "attention on the first token", "", S::Linear, C::Sequential,
       kDashboard | kCompare,
       "mean attention the queries of block l give the first position (the attention sink)"},
      {kSinkRate, K::PerLayer, "sink rate", "", S::Linear, C::Sequential, kCompare,
       "share of block l's heads whose mean attention on the first position exceeds 0.3 "
       "(Gu et al. 2024)"},
      {kAngularAdjacentLast, K::PerLayer, "adjacent angular distance, last token", "", S::Linear,
       C::Sequential, kNoPanel, "d(x_l, x_l+1) on the last position of each probe sequence"},
      {kBlockInfluenceLast, K::PerLayer, "Block Influence, last token", "", S::Linear,
       C::Sequential, kNoPanel, "1 - cos(input, output) of the block on the last position"},
      {kBlockPruneBestStart, K::PerLayer, "best block start", "layer", S::Linear, C::None, kNoPanel,
       "for n = 1..L, the start l minimising d(x_l, x_l+n)"},
      {kJacobianIdentity, K::PerLayer, "Jacobian distance to identity", "", S::Linear,
       C::Sequential, kNoPanel, "mean ||J_l^T u - u|| over random unit vectors u (0 = identity)"},
      // Matrices
      {kAngular, K::Matrix, "angular distance d(x_l, x_l+n)", "", S::Linear, C::SmallBright,
       kDashboard | kExport, "angular distance between block l's input and block l+n's"},
      {kAngularLast, K::Matrix, "angular distance d(x_l, x_l+n), last token", "", S::Linear,
       C::Sequential, kNoPanel,
       "the (l, n) angular distance on the last position of each sequence"},
      {kBlockPrune, K::Matrix, "block pruning delta", "nats", S::Linear, C::Diverging, kDashboard,
       "loss increase when n consecutive blocks from l are removed"},
      {kSkipEffect, K::Matrix, "skip effect on later blocks", "", S::Linear, C::Sequential,
       kDashboard,
       "row s, column l > s: mean over sequences of the largest relative change of block l's "
       "contribution when block s is skipped (Csordás et al. 2025)"},
      {kTaskAccPruned, K::Matrix, "task accuracy, blocks removed", "", S::Linear, C::None, kNoPanel,
       "acc of eval --task --prune with n = 0..N blocks removed (columns): row 0 the n-block span "
       "of least angular distance (Gromov et al. 2025), row 1 the n deepest before the last"},
      {kTaskAccNormPruned, K::Matrix, "task acc_norm, blocks removed", "", S::Linear, C::None,
       kNoPanel, "acc_norm of the same sweep (log-likelihoods over the choices' lengths)"},
      {kTaskLossPruned, K::Matrix, "loss, blocks removed", "nats", S::Linear, C::None, kNoPanel,
       "the loss on the probe text of the same pruned models"},
      {kTaskPruneFirst, K::Matrix, "first block removed", "block", S::Linear, C::None, kNoPanel,
       "the first removed block (0-based) of each point of the sweep"},
      {kBlockPruneError, K::Matrix, "block pruning delta standard error", "nats", S::Linear,
       C::None, kNoPanel, "standard error of the block pruning delta over its probe sequences"},
  };
  return rows;
}

const Metric* find(std::string_view key, Kind kind) {
  for (const auto& m : catalogue()) {
    if (m.kind == kind && m.key == key) return &m;
  }
  return nullptr;
}

const Metric& require(std::string_view key, Kind kind) {
  if (const Metric* m = find(key, kind)) return *m;
  std::string as;
  for (const auto& m : catalogue()) {
    if (m.key == key) as += std::string(as.empty() ? "" : ", ") + toString(m.kind);
  }
  throw std::invalid_argument(
      "unknown " + std::string(toString(kind)) + " metric '" + std::string(key) + "'" +
      (as.empty() ? " (not in the metric catalogue)" : " (the catalogue has it as " + as + ")"));
}

std::vector<std::string> keysFor(Kind kind, Panel panel) {
  std::vector<std::string> out;
  for (const auto& m : catalogue()) {
    if (m.kind == kind && (m.panels & panel)) out.emplace_back(m.key);
  }
  return out;
}

bool someSchemesOnly(std::string_view key) {
  return key == kDytSaturation || key == kDytSaturationFinal;
}

const char* toString(Kind kind) {
  switch (kind) {
    case Kind::Scalar: return "scalar";
    case Kind::PerLayer: return "per-layer";
    case Kind::Matrix: return "matrix";
  }
  return "?";
}

}  // namespace depthlab::metrics
