// Parity with the independent PyTorch implementation (bench/reference_model.py): the same
// weights and tokens give logits equal within 1e-5 of their scale (max |logit|, ~5 here) for
// every scheme the reference writes out, and for options.qkNorm and DyT's LayerNorm form (with
// a bias). The norms' weights, DyT's alphas and the embedding scalar are drawn at random first,
// so a swapped or ignored one shows.
// Skipped, with the reason, where Debian's /usr/bin/python3 has no torch.
#include <gtest/gtest.h>

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "experiment/experiment_config.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

struct ParityCase {
  std::string scheme;
  bool qkNorm = false;
  std::string norm = "rmsnorm";
};

std::string caseName(const ::testing::TestParamInfo<ParityCase>& info) {
  std::string n = info.param.scheme + (info.param.qkNorm ? "_qknorm" : "");
  return info.param.norm == "rmsnorm" ? n : n + "_" + info.param.norm;
}

void PrintTo(const ParityCase& pc, std::ostream* os) {  // gtest's failure message
  *os << pc.scheme << (pc.qkNorm ? " qkNorm " : " ") << pc.norm;
}

/// Every parameter of at most one dimension (norm weights and biases, DyT's alphas, the
/// embedding scalar) drawn from U(0.5, 1.5): their inits (ones, zeros) hide swaps.
void randomizeSmallParameters(model::Decoder& m) {
  torch::NoGradGuard ng;
  for (auto& p : m->parameters()) {
    if (p.dim() <= 1) p.uniform_(0.5, 1.5);
  }
}

}  // namespace

class ReferenceParity : public ::testing::TestWithParam<ParityCase> {};

TEST_P(ReferenceParity, LogitsMatchPyTorch) {
  if (auto why = test::pythonTorchMissingReason(); !why.empty()) GTEST_SKIP() << why;
  const ParityCase& pc = GetParam();
  test::TempDir dir;
  auto c = test::smallConfig(4);  // mix_ln: round(0.25 * 4) = 1 Post-LN block
  c.model.embedStd = 1.0;         // larger activations make scheme differences visible,
  c.model.initStd = 0.2;          // and branches as large as the stream they add to
  c.model.norm = pc.norm;
  c.options.qkNorm = pc.qkNorm;
  experiment::saveConfigFile(c, dir.file("config.json"));
  torch::manual_seed(7);
  model::Decoder m(c.model, c.options, pc.scheme);
  randomizeSmallParameters(m);
  io::saveSafetensors(dir.file("weights.safetensors"), io::namedTensors(*m));
  auto idx = torch::randint(0, c.model.vocabSize, {3, c.model.seqLen}, torch::kInt64);
  io::saveSafetensors(dir.file("tokens.safetensors"), {{"inputs", idx}});

  std::string out;
  int rc = test::runReference("logits --config " + dir.file("config.json") + " --scheme " +
                                  pc.scheme + " --weights " + dir.file("weights.safetensors") +
                                  " --tokens " + dir.file("tokens.safetensors") + " --out " +
                                  dir.file("logits.safetensors"),
                              &out);
  ASSERT_EQ(rc, 0) << out;
  auto ref = io::loadSafetensors(dir.file("logits.safetensors")).at("logits");
  torch::NoGradGuard ng;
  auto ours = m->forward(idx);
  ASSERT_EQ(ours.sizes(), ref.sizes());
  const double maxDiff = (ours - ref).abs().max().item<double>();
  const double scale = std::max(1.0, ref.abs().max().item<double>());
  std::ostringstream diff;
  diff << std::scientific << std::setprecision(2) << maxDiff << " of " << scale;
  RecordProperty("max_abs_logit_diff", diff.str());  // --gtest_output=xml shows it
  EXPECT_LT(maxDiff, 1e-5 * scale) << diff.str();
}

INSTANTIATE_TEST_SUITE_P(Schemes, ReferenceParity,
                         ::testing::Values(ParityCase{"pre_ln"}, ParityCase{"lns"},
                                           ParityCase{"post_ln"}, ParityCase{"mix_ln"},
                                           ParityCase{"deepnorm"}, ParityCase{"deepnorm_official"},
                                           ParityCase{"sandwich"}, ParityCase{"dyt"},
                                           ParityCase{"dyt_lns"}, ParityCase{"hybridnorm"},
                                           ParityCase{"hybridnorm_star"}, ParityCase{"olmo2"},
                                           ParityCase{"pre_ln", true}, ParityCase{"lns", true},
                                           ParityCase{"dyt", false, "layernorm"}),
                         caseName);
