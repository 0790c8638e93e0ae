// Depth probes: what each block of a model does, measured on a fixed probe batch in fp32
// under NoGradGuard and eval mode (the model is returned to train mode; no RNG is drawn, no
// gradient state is left). Pure functions of (model, batch): they return plain arrays and
// never write anywhere; the run loop decides cadence and storage.
// Choices the paper leaves open (see docs/probes.md): every token of every probe sequence
// counts, except the pads of document packing (probe_tokens.h: hidden states count where
// the input is a real token, losses where the target is); "output variance" is the
// population variance over all elements of the residual stream after block l (at real tokens).
// Legend: L blocks, B probe rows, T sequence length.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <optional>
#include <vector>

#include "model/decoder.h"
#include "probes/attention_sinks.h"
#include "probes/logit_lens.h"
#include "probes/stream_outliers.h"
#include "probes/sublayer_contributions.h"

namespace depthlab::probes {

struct ForwardProbes {
  std::vector<float> variance;             // (L) Var of the residual stream after block l
  std::vector<float> normVarAttn;          // (L) Var of block l's scaled attention-norm output
  std::vector<float> normVarFfn;           // (L) ... of its scaled FFN-norm output
  std::vector<float> angularAdjacent;      // (L) d(x_l, x_{l+1}): input vs output of block l
  std::vector<float> blockInfluence;       // (L) 1 - mean cos(input, output) of block l
  std::vector<float> effectiveness;        // (L) ||h_l - h_{l-1}||^2 / ||h_l||^2
  std::vector<float> angularMatrix;        // (L x L) row l, column n-1: d(x_l, x_{l+n}); NaN
                                           // where l + n > L. Empty unless asked for.
  std::vector<float> saturation;           // (L) DyT schemes only (else empty): share of DyT
                                           // inputs with |alpha x| > 2 (probes/saturation_probe.h)
  std::optional<double> saturationFinal;   // the same of the final DyT's input (DyT only)
  double probeLoss = 0;                    // the model's loss on the probe batch
  std::optional<LogitLens> lens;           // the logit lens, when asked for (logit_lens.h)
  std::optional<StreamOutliers> outliers;  // massive activations, first token, RankMe
  SublayerContributions sublayers;         // empty when the trace has no deltas
  AttentionSinks sinks;                    // empty when the trace has no attention statistics
};

struct ForwardProbeOptions {
  bool lastTokenOnly = false;
  bool angularMatrix = false;
  bool logitLens = false;  // runForwardProbes only: the lens needs the model's head
  bool outliers = true;    // stream_outliers.h and sublayer_contributions.h, over every real
                           // token whatever lastTokenOnly
};

ForwardProbes runForwardProbes(model::Decoder& model, const torch::Tensor& inputs,
                               const torch::Tensor& targets, const ForwardProbeOptions& o);

/// The statistics of a pass already traced (no forward runs here): variance, the norm outputs
/// variance, adjacent angular distance, Block Influence, E_l and, when asked, the angular
/// matrix, exactly as runForwardProbes computes them; not the loss or DyT saturation. For models
/// outside the lab (the Python binding's hooks fill the trace of a user's PyTorch model).
/// trace: L+1 residual streams (B, T, C) on one device, L block traces (a norm output left
/// undefined has no row: NaN). targets (B, T): pads (-100) mark positions that do not count;
/// undefined: every position counts. Throws std::invalid_argument on shapes that do not fit.
ForwardProbes statsOfTrace(const model::ForwardTrace& trace, const torch::Tensor& targets,
                           const ForwardProbeOptions& o);

// Lazy, low and effective layers from E_l: probes::classifyLayers (probes/lazy_layers.h),
// by the run's thresholds, as the dashboard counts them too.

/// Loss with the blocks in `skip` replaced by the identity. For depth-scaled schemes the
/// survivors keep their original 1/sqrt(l) unless `renumber`, which gives them
/// 1/sqrt(position among the survivors).
double lossWithout(model::Decoder& model, const torch::Tensor& inputs, const torch::Tensor& targets,
                   const std::vector<bool>& skip, bool renumber);

/// Told after each pruned evaluation is queued: (done, total). Optional.
using EvaluationProgress = std::function<void(int done, int total)>;

/// Pruning deltas with their error bars. A delta is the mean over the B probe sequences of
/// (pruned loss - full loss) on each sequence (a sequence's loss: the mean over its counted
/// targets), which is the difference of the batch losses when every sequence has T counted
/// tokens (no pads); its standard error is the paired deltas' sample standard deviation /
/// sqrt(B), NaN with one sequence.
struct PruningSweep {
  std::vector<float> delta;          // (L) loss(block l removed) - loss(full model)
  std::vector<float> standardError;  // (L)
};
PruningSweep singleLayerPruning(model::Decoder& model, const torch::Tensor& inputs,
                                const torch::Tensor& targets, bool renumber,
                                const EvaluationProgress& progress = {});

struct BlockPruning {
  std::vector<float> delta;          // (L x L) row l, column n-1: loss(n blocks from l removed)
                                     // - loss(full); NaN where l + n > L
  std::vector<float> standardError;  // (L x L) the delta's standard error (as PruningSweep)
  std::vector<float> bestStart;      // (L) for n = 1..L: l*(n) = argmin_l d(x_l, x_{l+n})
                                     // (Gromov et al.), NaN past n = L
};
BlockPruning blockPruning(model::Decoder& model, const torch::Tensor& inputs,
                          const torch::Tensor& targets, const std::vector<float>& angularMatrix,
                          bool renumber, const EvaluationProgress& progress = {});

/// (L) mean over `samples` random unit vectors u of ||J_l^T u - u||: how far block l's
/// Jacobian is from the identity (0 = identity), from vector-Jacobian products. Needs grad
/// mode internally; leaves no gradient on the parameters. With `targets`, u is 0 at pads.
std::vector<float> jacobianToIdentity(model::Decoder& model, const torch::Tensor& inputs,
                                      int samples, uint64_t seed,
                                      const torch::Tensor& targets = {});

}  // namespace depthlab::probes
