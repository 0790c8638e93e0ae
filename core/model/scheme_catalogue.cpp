// The scheme catalogue; see scheme_catalogue.h. Formulas: block_plan.h's notation.
#include "model/scheme_catalogue.h"

#include <cmath>

#include "util/config_error.h"

namespace depthlab::model {

namespace {

double invSqrt(int l) { return 1.0 / std::sqrt(static_cast<double>(l)); }

void planPreLn(BlockPlan&, int, int, const SchemeOptions&) {}

void planLns(BlockPlan& p, int l, int, const SchemeOptions& o) {
  p.placement = placementFromString(o.lnsPlacement);
  p.depthScale = invSqrt(l);
}

void planLnsLearnable(BlockPlan& p, int l, int, const SchemeOptions&) {
  p.placement = Placement::AfterNorm;
  p.depthScale = invSqrt(l);
  p.learnableScale = true;
}

void planPostLn(BlockPlan& p, int, int, const SchemeOptions&) { p.postLn = true; }

void planMixLn(BlockPlan& p, int l, int L, const SchemeOptions& o) {
  p.postLn = l - 1 < mixLnPostBlocks(L, o.mixLnAlpha);
}

void planDeepNorm(BlockPlan& p, int L, bool official) {
  p.postLn = true;
  p.residualAlpha = deepnormAlpha(L, official);
  p.xavierGainQK = 1.0;
  p.xavierGainVOF = deepnormGain(L, official);
}

void planDeepNormPaper(BlockPlan& p, int, int L, const SchemeOptions&) {
  planDeepNorm(p, L, false);
}
void planDeepNormOfficial(BlockPlan& p, int, int L, const SchemeOptions&) {
  planDeepNorm(p, L, true);
}

void planSandwich(BlockPlan& p, int, int, const SchemeOptions&) { p.sandwich = true; }

void planDyt(BlockPlan& p, int, int, const SchemeOptions&) { p.dyt = true; }

void planDytLns(BlockPlan& p, int l, int, const SchemeOptions&) {
  p.dyt = true;
  p.placement = Placement::AfterNorm;
  p.depthScale = invSqrt(l);
}

void planHybridNorm(BlockPlan& p, int, int, const SchemeOptions&) {
  p.hybrid = true;
  p.qkNorm = QkNorm::PerHead;
  p.vNorm = true;
}

void planHybridNormStar(BlockPlan& p, int l, int L, const SchemeOptions& o) {
  planHybridNorm(p, l, L, o);
  p.hybrid = l > 1;  // block 1: Pre-Norm before both sublayers, QKV-norm kept
}

void planOlmo2(BlockPlan& p, int, int, const SchemeOptions&) {
  p.normBeforeSublayer = false;
  p.sandwich = true;  // the norms after each sublayer
  p.qkNorm = QkNorm::Whole;
}

void addDepthFixes2025(std::vector<SchemeEntry>& c, const std::string& curse) {
  const std::string dyt =
      "Zhu, Chen, He, LeCun, Liu 2025, Transformers without Normalization, arXiv:2503.10622";
  const std::string hybrid =
      "Zhuo et al. 2025, HybridNorm: Towards Stable and Efficient Transformer Training via "
      "Hybrid Normalization, arXiv:2503.04598";
  c.push_back({"dyt", "DyT",
               "every norm replaced by DyT: weight * tanh(alpha x), alpha a learnable scalar; "
               "the embeddings times a learnable scalar (init sqrt(C))",
               dyt, planDyt, {}, "pre_ln", false, false});
  c.back().options = {"options.dytAlphaAttn", "options.dytAlphaOther"};
  c.push_back({"dyt_lns", "DyT + LNS",
               "DyT with block l's DyT outputs times 1/sqrt(l), as LNS scales its norms",
               dyt + "; " + curse, planDytLns, {}, "dyt", false, false});
  c.back().options = {"options.dytAlphaAttn", "options.dytAlphaOther"};
  c.push_back({"hybridnorm", "HybridNorm",
               "q, k and v RMSNorm'd per head, no norm before attention; Post-Norm FFN: "
               "g = N(h), out = g + F(g)",
               hybrid, planHybridNorm, {}, "pre_ln", false, false});
  c.push_back({"hybridnorm_star", "HybridNorm*",
               "HybridNorm with block 1 Pre-Norm before attention and MLP (QKV-norm kept)",
               hybrid, planHybridNormStar, {}, "hybridnorm", false, false});
  c.push_back({"olmo2", "OLMo 2 norm",
               "norms after attention and after the MLP, inside the residual, and QK-norm "
               "over the whole q and k projections",
               "OLMo Team 2025, 2 OLMo 2 Furious, arXiv:2501.00656", planOlmo2, {}, "pre_ln",
               false, false});
}

/// The schemes the Curse of Depth paper compares (Pre-LN, LNS, Post-LN, Mix-LN, DeepNorm in
/// both constant sets, Sandwich-LN).
void addPaperSchemes(std::vector<SchemeEntry>& c, const std::string& curse) {
  const std::string deepnet =
      "Wang et al. 2022, DeepNet: Scaling Transformers to 1,000 Layers, arXiv:2203.00555";
  c.push_back({"pre_ln",
               "Pre-LN",
               "norm before each sublayer: the LLaMA baseline, whose deep layers the Curse of "
               "Depth makes lazy",
               "Xiong et al. 2020, On Layer Normalization in the Transformer Architecture, "
               "arXiv:2002.04745",
               planPreLn,
               {},
               "lns",
               true,
               false});
  c.push_back({"lns", "LNS",
               "LayerNorm Scaling: each block's norm outputs times 1/sqrt(l) (the paper's fix)",
               curse, planLns, lnsPlacements(), "pre_ln", true, false});
  c.push_back({"post_ln",
               "Post-LN",
               "norm after each residual add (the original Transformer)",
               "Vaswani et al. 2017, Attention Is All You Need, arXiv:1706.03762",
               planPostLn,
               {},
               "pre_ln",
               false,
               false});
  c.push_back(
      {"mix_ln",
       "Mix-LN",
       "Post-LN in the first round(alpha L) blocks (alpha = options.mixLnAlpha, 0.25), Pre-LN "
       "after",
       "Li et al. 2024, Mix-LN: Unleashing the Power of Deeper Layers by Combining Pre-LN and "
       "Post-LN, arXiv:2412.13795",
       planMixLn,
       {},
       "pre_ln",
       false,
       false});
  c.back().options = {"options.mixLnAlpha"};
  c.push_back({"deepnorm",
               "DeepNorm",
               "Post-LN with the skip path times (2L)^(1/4) and v/o/MLP init gain (8L)^(-1/4)",
               deepnet,
               planDeepNormPaper,
               {},
               "pre_ln",
               false,
               false});
  c.push_back({"deepnorm_official",
               "DeepNorm (official)",
               "DeepNorm with the Curse of Depth code's constants: skip times sqrt(8), init gain "
               "(8L)^(1/4)",
               deepnet + "; constants of the official code of arXiv:2502.05795",
               planDeepNormOfficial,
               {},
               "pre_ln",
               false,
               false});
  c.push_back(
      {"sandwich",
       "Sandwich-LN",
       "Sandwich / Peri-LN: norms before and after each sublayer",
       "Ding et al. 2021, CogView, arXiv:2105.13290; Kim et al. 2025, Peri-LN, arXiv:2502.02732",
       planSandwich,
       {},
       "pre_ln",
       false,
       false});
}

std::vector<SchemeEntry> makeCatalogue() {
  const std::string curse =
      "Sun et al. 2025, The Curse of Depth in Large Language Models, arXiv:2502.05795";
  std::vector<SchemeEntry> c;
  addPaperSchemes(c, curse);
  addDepthFixes2025(c, curse);
  c.push_back({"lns_learnable",
               "LNS (learnable)",
               "LNS with a learnable per-channel scale, initialised at 1/sqrt(l), and a gate",
               "DepthLab's own variant of " + curse,
               planLnsLearnable,
               {"after_norm"},
               "lns",
               false,
               true});
  c.back().options = {"options.lnsLearnableLr"};
  return c;
}

}  // namespace

const std::vector<std::string>& lnsPlacements() {
  static const std::vector<std::string> p = {"after_norm",     "before_norm",     "after_sublayer",
                                             "after_residual", "after_attn_only", "after_ffn_only"};
  return p;
}

const std::vector<SchemeEntry>& schemeCatalogue() {
  static const std::vector<SchemeEntry> c = makeCatalogue();
  return c;
}

std::vector<std::string> schemeIds() {
  std::vector<std::string> ids;
  for (const auto& e : schemeCatalogue()) ids.push_back(e.id);
  return ids;
}

const SchemeEntry* findScheme(const std::string& id) {
  for (const auto& e : schemeCatalogue()) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

const SchemeEntry& requireScheme(const std::string& id) {
  if (const SchemeEntry* e = findScheme(id)) return *e;
  std::string known;
  for (const auto& e : schemeCatalogue()) known += (known.empty() ? "" : ", ") + e.id;
  throw util::ConfigError("schemes: unknown scheme '" + id + "' (known: " + known + ")");
}

std::string schemeDisplayName(const std::string& id) {
  const SchemeEntry* e = findScheme(id);
  return e ? e->displayName : id;
}

}  // namespace depthlab::model
