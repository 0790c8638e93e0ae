// Scheme -> per-block plan; see block_plan.h.
#include "model/block_plan.h"

#include <cmath>

#include "model/scheme_catalogue.h"

namespace depthlab::model {

using util::ConfigError;

int mixLnPostBlocks(int nLayers, double alpha) {
  return static_cast<int>(std::lround(alpha * nLayers));
}

double deepnormAlpha(int nLayers, bool official) {
  return official ? std::sqrt(8.0) : std::pow(2.0 * nLayers, 0.25);
}

double deepnormGain(int nLayers, bool official) {
  return official ? std::pow(8.0 * nLayers, 0.25) : std::pow(8.0 * nLayers, -0.25);
}

Placement placementFromString(const std::string& s) {
  if (s == "after_norm") return Placement::AfterNorm;
  if (s == "before_norm") return Placement::BeforeNorm;
  if (s == "after_sublayer") return Placement::AfterSublayer;
  if (s == "after_residual") return Placement::AfterResidual;
  if (s == "after_attn_only") return Placement::AfterAttnOnly;
  if (s == "after_ffn_only") return Placement::AfterFfnOnly;
  throw ConfigError("options.lnsPlacement: unknown placement '" + s + "'");
}

double dytAlphaByWidth(int width, bool attention) {
  if (width <= 4096) return attention ? 0.8 : 0.2;
  if (width <= 5120) return attention ? 0.6 : 0.15;
  return attention ? 0.2 : 0.05;
}

std::vector<BlockPlan> planBlocks(const ModelConfig& model, const SchemeOptions& o,
                                  const std::string& scheme) {
  const int L = model.nLayers;
  const SchemeEntry& entry = requireScheme(scheme);  // throws, naming the known ones
  std::vector<BlockPlan> plans(static_cast<size_t>(L));
  for (int i = 0; i < L; ++i) {
    BlockPlan& p = plans[static_cast<size_t>(i)];
    const int l = i + 1;
    p.index = l;
    p.stdIn = model.initStd;
    p.stdOut = model.initStd;
    entry.plan(p, l, L, o);
    // Imported architectures: norms where the checkpoint has them, whatever the scheme says.
    if (!model.normBeforeSublayer) p.normBeforeSublayer = false;
    if (model.normAfterSublayer) p.sandwich = true;
    if (model.parallelResidual) {
      if (p.postLn || p.hybrid || p.placement == Placement::BeforeNorm ||
          p.placement == Placement::AfterResidual) {
        throw ConfigError("model.parallelResidual: scheme '" + scheme +
                          "' adds or scales the residual between the sublayers; a parallel block "
                          "is Pre-LN only");
      }
      p.parallel = true;
    }
    if (static_cast<size_t>(i) < model.localRopeLayers.size()) {
      p.localRope = model.localRopeLayers[static_cast<size_t>(i)];
    }
    if (o.scaledInit) p.stdOut = model.initStd / std::sqrt(2.0 * L);
    if (o.depthScaledInit) {
      p.stdIn = model.initStd / std::sqrt(2.0 * l);
      p.stdOut = p.stdIn;
    }
    if (o.skipInit) {
      p.skipInit = true;
      p.skipInitValue = 1.0 / std::sqrt(static_cast<double>(L));
    }
    if (o.layerScale) {
      p.layerScale = true;
      p.layerScaleValue = o.layerScaleInit;
    }
    if (p.dyt) {
      p.dytAlphaAttn = o.dytAlphaAttn > 0 ? o.dytAlphaAttn : dytAlphaByWidth(model.dModel, true);
      p.dytAlphaOther = o.dytAlphaOther > 0 ? o.dytAlphaOther : dytAlphaByWidth(model.dModel, false);
    }
    if (o.qkNorm && p.qkNorm == QkNorm::None) p.qkNorm = QkNorm::PerHead;
    if (model.qkNorm != QkNorm::None) p.qkNorm = model.qkNorm;  // an imported model's own
  }
  return plans;
}

}  // namespace depthlab::model
