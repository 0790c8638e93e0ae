// The catalogue of every metric a run writes to the store: its key, its kind (one value per
// step, one per layer per step, or an (l, n) matrix), how to label and scale it, its colour map,
// and which views show it. The trainer and the probe schedule write by these keys, the store
// refuses any other (RunStore::write), and the dashboard, Compare, figure export and `report`
// pick what to read from here. Adding a probe: one row here plus its computation.
// Pure data; no Qt, no torch. Does not know how a metric is computed or drawn.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace depthlab::metrics {

// --- keys ---------------------------------------------------------------------------------
// Scalars (one value per step).
inline constexpr char kLossTrain[] = "loss_train";
inline constexpr char kLossVal[] = "loss_val";
inline constexpr char kPplVal[] = "ppl_val";
inline constexpr char kLr[] = "lr";
inline constexpr char kGradNorm[] = "grad_norm";  // also per layer (see kLayerGradNorm)
inline constexpr char kTokensPerSecond[] = "tokens_per_s";
inline constexpr char kTokensSeen[] = "tokens_seen";  // cumulative; pads do not count
inline constexpr char kLossProbe[] = "loss_probe";
inline constexpr char kLazyLayers[] = "lazy_layers";
inline constexpr char kLowLayers[] = "low_layers";
inline constexpr char kLazyRatio[] = "lazy_ratio";
inline constexpr char kProbeSeconds[] = "probe_seconds";
inline constexpr char kDytSaturationFinal[] = "dyt_saturation_final";  // DyT schemes only
inline constexpr char kLensSettle[] = "lens_settle";  // the logit lens's settle depth
inline constexpr char kSpectralAlphaMean[] = "spectral_alpha_mean";  // weight spectra
inline constexpr char kEffectiveDepth[] = "effective_depth";         // probes/depth_summaries.h
inline constexpr char kJumpStrength[] = "jump_strength";
inline constexpr char kTunedSettle[] = "tuned_settle";  // the tuned lens's settle depth
inline constexpr char kTaskChance[] = "task_chance";    // eval --task --prune (hf/task_eval.h)
// Per layer (one value per block per step).
inline constexpr char kVariance[] = "variance";
inline constexpr char kNormVarAttn[] = "norm_var_attn";
inline constexpr char kNormVarFfn[] = "norm_var_ffn";
inline constexpr char kAngularAdjacent[] = "angular_adjacent";
inline constexpr char kBlockInfluence[] = "block_influence";
inline constexpr char kEffectiveness[] = "effectiveness";
inline constexpr char kPruneDelta[] = "prune_delta";
inline constexpr char kPruneDeltaError[] = "prune_delta_se";  // standard error of prune_delta
inline constexpr char kBlockPruneBestStart[] = "block_prune_best_start";
inline constexpr char kJacobianIdentity[] = "jacobian_identity";
inline constexpr char kLayerGradNorm[] = "grad_norm";
inline constexpr char kDytSaturation[] = "dyt_saturation";  // DyT schemes only
inline constexpr char kLensKl[] = "lens_kl";                // the logit lens (probes/logit_lens.h)
inline constexpr char kLensTop1[] = "lens_top1";
inline constexpr char kLensEntropy[] = "lens_entropy";
inline constexpr char kLensCrossEntropy[] = "lens_ce";
inline constexpr char kTunedKl[] = "tuned_kl";  // the tuned lens (probes/tuned_lens.h)
inline constexpr char kTunedTop1[] = "tuned_top1";
inline constexpr char kTunedEntropy[] = "tuned_entropy";
inline constexpr char kTunedCrossEntropy[] = "tuned_ce";
inline constexpr char kSpectralAlpha[] = "spectral_alpha";  // probes/weight_spectra.h
inline constexpr char kStableRank[] = "stable_rank";
inline constexpr char kActMax[] = "act_max";  // probes/stream_outliers.h
inline constexpr char kActMaxRatio[] = "act_max_ratio";
inline constexpr char kFirstTokenRatio[] = "first_token_ratio";
inline constexpr char kRankMe[] = "rankme";
inline constexpr char kAttnContribution[] = "attn_contrib";  // probes/sublayer_contributions.h
inline constexpr char kMlpContribution[] = "mlp_contrib";
inline constexpr char kAttnCos[] = "attn_cos";
inline constexpr char kMlpCos[] = "mlp_cos";
inline constexpr char kAttnEntropy[] = "attn_entropy";  // probes/attention_sinks.h
inline constexpr char kAttnSink[] = "attn_sink";
inline constexpr char kSinkRate[] = "sink_rate";
// The same on the last position of each probe sequence only (analysis of imported models).
inline constexpr char kAngularAdjacentLast[] = "angular_adjacent_last";
inline constexpr char kBlockInfluenceLast[] = "block_influence_last";
// Matrices ((l, n) per step).
inline constexpr char kAngular[] = "angular";
inline constexpr char kBlockPrune[] = "block_prune";
inline constexpr char kBlockPruneError[] = "block_prune_se";  // standard error of block_prune
inline constexpr char kAngularLast[] = "angular_last";
inline constexpr char kSkipEffect[] = "skip_effect";  // (s, l): probes/skip_effect.h
// (choice, n): row 0 Gromov et al.'s angular choice, row 1 the deepest blocks; n = 0..N removed.
inline constexpr char kTaskAccPruned[] = "task_acc_pruned";
inline constexpr char kTaskAccNormPruned[] = "task_acc_norm_pruned";
inline constexpr char kTaskLossPruned[] = "task_loss_pruned";
inline constexpr char kTaskPruneFirst[] = "task_prune_first";

// --- rows -----------------------------------------------------------------------------------
enum class Kind { Scalar, PerLayer, Matrix };
enum class Scale { Linear, Log };
// Sequential: bright where large; SmallBright: bright where small (angular distance, as the
// paper draws it); Diverging: centred on 0.
enum class ColourMap { None, Sequential, SmallBright, Diverging };

/// Views that show a metric (bit flags).
enum Panel : unsigned {
  kNoPanel = 0,
  kDashboard = 1u << 0,  // the group dashboard's panels
  kCompare = 1u << 1,    // the Compare view
  kExport = 1u << 2,     // paper figures and their CSV
  kReport = 1u << 3,     // `depthlab-cli report` and the run report
};

struct Metric {
  std::string_view key;
  Kind kind;
  std::string_view label;  // "output variance": lower case, fits an axis title
  std::string_view unit;   // "" when dimensionless
  Scale scale;             // the default axis or colour scale
  ColourMap colourMap;
  unsigned panels;  // Panel flags
  std::string_view description;
};

/// Every row, in the order views list them.
const std::vector<Metric>& catalogue();
/// The row of `key` of kind `kind`; nullptr when there is none.
const Metric* find(std::string_view key, Kind kind);
/// The row, or std::invalid_argument naming the key and the kinds it does exist as.
const Metric& require(std::string_view key, Kind kind);
/// Keys of kind `kind` shown by `panel`, in catalogue order.
std::vector<std::string> keysFor(Kind kind, Panel panel);
/// Whether only some schemes write `key` (DyT's saturation: its norms only): a run of another
/// scheme lacks it by design, and no view calls it missing there.
bool someSchemesOnly(std::string_view key);
const char* toString(Kind kind);

}  // namespace depthlab::metrics
