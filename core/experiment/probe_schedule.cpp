// See probe_schedule.h.
#include "experiment/probe_schedule.h"

#include <chrono>
#include <cmath>

#include "probes/depth_probes.h"
#include "probes/depth_summaries.h"
#include "probes/lazy_layers.h"
#include "probes/skip_effect.h"
#include "probes/weight_spectra.h"
#include "store/metric_catalogue.h"

namespace depthlab::experiment {

const std::vector<std::string> kProbeNames = {"variance", "angular",       "lens",
                                              "pruning",  "block_pruning", "skip_effect",
                                              "jacobian", "spectra"};

namespace {
// A family runs at multiples of its cadence and once more at the end; 0 switches it off.
bool due(int every, int64_t step, bool final) { return every > 0 && (final || step % every == 0); }
}  // namespace

ProbeSchedule::ProbeSchedule(const ProbeConfig& config, const data::TokenDataset& data,
                             torch::Device device)
    : m_config(config) {
  auto b = data.probeBatch(config.probeBatch);
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  m_inputs = torch::from_blob(b.inputs.data(), {b.batch, b.seqLen}, opts).clone().to(device);
  m_targets = torch::from_blob(b.targets.data(), {b.batch, b.seqLen}, opts).clone().to(device);
  selectPruningRows();
}

ProbeSchedule::ProbeSchedule(const ProbeConfig& config, torch::Tensor inputs, torch::Tensor targets)
    : m_config(config), m_inputs(std::move(inputs)), m_targets(std::move(targets)) {
  selectPruningRows();
}

void ProbeSchedule::selectPruningRows() {
  const auto rows = probes::pruningRows(m_inputs.size(0), m_config.pruneSequences);
  if (static_cast<int64_t>(rows.size()) == m_inputs.size(0)) {
    m_pruneInputs = m_inputs;
    m_pruneTargets = m_targets;
    return;
  }
  auto index = torch::tensor(rows, torch::kInt64).to(m_inputs.device());
  m_pruneInputs = m_inputs.index_select(0, index);
  m_pruneTargets = m_targets.index_select(0, index);
}

std::set<std::string> ProbeSchedule::dueAt(int64_t step, bool final) const {
  std::set<std::string> which;
  const auto& c = m_config;
  if (due(c.forwardEvery, step, final)) which.insert("variance");
  if (due(c.angularMatrixEvery, step, final)) which.insert("angular");
  if (due(c.lensEvery, step, final)) which.insert("lens");
  if (due(c.pruningEvery, step, final)) which.insert("pruning");
  if (final && c.blockPruningAtEnd) which.insert("block_pruning");
  if (final && c.pruningEvery > 0) which.insert("skip_effect");  // with the pruning probes
  if (due(c.jacobianEvery, step, final)) which.insert("jacobian");
  if (final && c.spectraAtEnd) which.insert("spectra");
  return which;
}

void addForwardRows(store::WriteBatch& out, int64_t step, const probes::ForwardProbes& f,
                    const ProbeConfig& config, bool matrix) {
  const int L = static_cast<int>(f.variance.size());
  out.scalar(step, metrics::kLossProbe, f.probeLoss);
  out.layer(step, metrics::kVariance, f.variance);
  out.layer(step, metrics::kNormVarAttn, f.normVarAttn);
  out.layer(step, metrics::kNormVarFfn, f.normVarFfn);
  out.layer(step, metrics::kAngularAdjacent, f.angularAdjacent);
  out.layer(step, metrics::kBlockInfluence, f.blockInfluence);
  out.layer(step, metrics::kEffectiveness, f.effectiveness);
  if (const double jump = probes::jumpStrength(f.angularAdjacent); std::isfinite(jump)) {
    out.scalar(step, metrics::kJumpStrength, jump);
  }
  if (!f.saturation.empty()) out.layer(step, metrics::kDytSaturation, f.saturation);
  if (f.saturationFinal) out.scalar(step, metrics::kDytSaturationFinal, *f.saturationFinal);
  auto counts = probes::classifyLayers(f.effectiveness, probes::layerThresholds(config));
  out.scalar(step, metrics::kLazyLayers, counts.lazy);
  out.scalar(step, metrics::kLowLayers, counts.low);
  out.scalar(step, metrics::kLazyRatio, static_cast<double>(counts.lazy) / L);
  if (matrix) out.matrix(step, metrics::kAngular, L, L, f.angularMatrix);
  if (f.outliers) {
    out.layer(step, metrics::kActMax, f.outliers->maxAbs);
    out.layer(step, metrics::kActMaxRatio, f.outliers->maxToMedian);
    out.layer(step, metrics::kFirstTokenRatio, f.outliers->firstTokenRatio);
    out.layer(step, metrics::kRankMe, f.outliers->rankMe);
  }
  if (!f.sublayers.attnRelative.empty()) {
    out.layer(step, metrics::kAttnContribution, f.sublayers.attnRelative);
    out.layer(step, metrics::kMlpContribution, f.sublayers.ffnRelative);
    out.layer(step, metrics::kAttnCos, f.sublayers.attnCos);
    out.layer(step, metrics::kMlpCos, f.sublayers.ffnCos);
  }
  if (!f.sinks.entropy.empty()) {
    out.layer(step, metrics::kAttnEntropy, f.sinks.entropy);
    out.layer(step, metrics::kAttnSink, f.sinks.firstKeyShare);
    out.layer(step, metrics::kSinkRate, f.sinks.sinkRate);
  }
  if (f.lens) {
    out.layer(step, metrics::kLensKl, f.lens->kl);
    out.layer(step, metrics::kLensTop1, f.lens->top1);
    out.layer(step, metrics::kLensEntropy, f.lens->entropy);
    out.layer(step, metrics::kLensCrossEntropy, f.lens->crossEntropy);
    out.scalar(step, metrics::kLensSettle, f.lens->settleDepth);
    if (const double ratio = probes::effectiveDepthRatio(f.lens->kl); std::isfinite(ratio)) {
      out.scalar(step, metrics::kEffectiveDepth, ratio);
    }
  }
}

void addSpectraRows(store::WriteBatch& out, int64_t step, const probes::WeightSpectra& s) {
  out.layer(step, metrics::kSpectralAlpha, s.alpha);
  out.layer(step, metrics::kStableRank, s.stableRank);
  if (std::isfinite(s.meanAlpha)) out.scalar(step, metrics::kSpectralAlphaMean, s.meanAlpha);
}

double ProbeSchedule::runDue(model::Decoder& model, int64_t step, bool final,
                             store::WriteBatch& out) const {
  const auto which = dueAt(step, final);
  if (which.empty()) return 0;
  return run(model, step, which, out);
}

double ProbeSchedule::run(model::Decoder& model, int64_t step, const std::set<std::string>& which,
                          store::WriteBatch& out) const {
  const auto t0 = std::chrono::steady_clock::now();
  const int L = model->nLayers();
  const bool wantMatrix = which.count("angular") || which.count("block_pruning");
  probes::ForwardProbes f;
  const bool wantLens = which.count("lens") > 0;
  if (which.count("variance") || wantMatrix || wantLens) {
    // The stream outliers, sublayer contributions and attention sinks (a detailed pass) come
    // with the lens, at its cadence: every forward probe would cost a third more.
    f = probes::runForwardProbes(
        model, m_inputs, m_targets,
        {m_config.lastTokenOnly, /*angularMatrix=*/wantMatrix, wantLens, /*outliers=*/wantLens});
    addForwardRows(out, step, f, m_config, which.count("angular") > 0);
    if (m_config.lastTokenToo && !m_config.lastTokenOnly) {
      const auto last = probes::runForwardProbes(
          model, m_inputs, m_targets,
          {/*lastTokenOnly=*/true, which.count("angular") > 0, /*logitLens=*/false,
           /*outliers=*/false});
      out.layer(step, metrics::kAngularAdjacentLast, last.angularAdjacent);
      out.layer(step, metrics::kBlockInfluenceLast, last.blockInfluence);
      if (which.count("angular")) out.matrix(step, metrics::kAngularLast, L, L, last.angularMatrix);
    }
    if (m_progress && (which.count("variance") || wantMatrix)) m_progress("variance", 1, 1);
    if (wantLens && m_progress) m_progress("lens", 1, 1);
  }
  auto evaluations = [this](const char* family) {
    return m_progress ? probes::EvaluationProgress([this, family](int done, int total) {
      m_progress(family, done, total);
    })
                      : probes::EvaluationProgress();
  };
  if (which.count("skip_effect")) {  // the pruning sweep's intervention, on the later blocks
    out.matrix(step, metrics::kSkipEffect, L, L,
               probes::skipEffect(model, m_pruneInputs, m_pruneTargets).matrix);
    if (m_progress) m_progress("skip_effect", 1, 1);
  }
  if (which.count("block_pruning")) {
    auto bp = probes::blockPruning(model, m_pruneInputs, m_pruneTargets, f.angularMatrix,
                                   m_config.pruneRenumber, evaluations("block_pruning"));
    out.matrix(step, metrics::kBlockPrune, L, L, bp.delta);
    out.matrix(step, metrics::kBlockPruneError, L, L, bp.standardError);
    out.layer(step, metrics::kBlockPruneBestStart, bp.bestStart);
    if (which.count("pruning")) {  // column n = 1: block l alone removed
      std::vector<float> single, error;
      for (int l = 0; l < L; ++l) {
        single.push_back(bp.delta[static_cast<size_t>(l) * L]);
        error.push_back(bp.standardError[static_cast<size_t>(l) * L]);
      }
      out.layer(step, metrics::kPruneDelta, single);
      out.layer(step, metrics::kPruneDeltaError, error);
      if (m_progress) m_progress("pruning", L, L);
    }
  } else if (which.count("pruning")) {
    auto sweep = probes::singleLayerPruning(model, m_pruneInputs, m_pruneTargets,
                                            m_config.pruneRenumber, evaluations("pruning"));
    out.layer(step, metrics::kPruneDelta, sweep.delta);
    out.layer(step, metrics::kPruneDeltaError, sweep.standardError);
  }
  if (which.count("jacobian")) {
    out.layer(step, metrics::kJacobianIdentity,
              probes::jacobianToIdentity(model, m_inputs, m_config.jacobianSamples,
                                         static_cast<uint64_t>(step) + 1, m_targets));
    if (m_progress) m_progress("jacobian", 1, 1);
  }
  if (which.count("spectra")) {
    addSpectraRows(out, step, probes::weightSpectra(model));
    if (m_progress) m_progress("spectra", 1, 1);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.scalar(step, metrics::kProbeSeconds, seconds);
  return seconds;
}

}  // namespace depthlab::experiment
