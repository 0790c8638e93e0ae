// The fused-step Adam / AdamW against torch::optim's own: the same parameters after several
// steps (with and without weight decay, two parameter groups, a parameter without gradient),
// state that torch::optim can load and continue from, and the fallback where it cannot fuse.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <type_traits>

#include "kernels/cpu_kernels.h"
#include "train/fused_adam.h"

using namespace depthlab;

namespace {

std::vector<torch::Tensor> makeParams() {
  torch::manual_seed(21);
  return {torch::randn({300, 70}).requires_grad_(true), torch::randn({70}).requires_grad_(true),
          torch::randn({5}).requires_grad_(true)};
}

// Deterministic pseudo-gradients for step s (the last parameter never gets one).
void setGrads(std::vector<torch::Tensor>& ps, int s) {
  for (size_t i = 0; i + 1 < ps.size(); ++i) {
    torch::manual_seed(static_cast<uint64_t>(100 * s + static_cast<int>(i)));
    ps[i].mutable_grad() = torch::randn_like(ps[i]) * (0.1 + s);
  }
  ps.back().mutable_grad() = torch::Tensor();
}

template <class Optim, class Options>
std::vector<torch::Tensor> trainSteps(Options o, int steps, bool twoGroups,
                                      bool multiTensor = false,
                                      std::string* lastPath = nullptr) {
  auto ps = makeParams();
  std::vector<torch::optim::OptimizerParamGroup> groups;
  if (twoGroups) {
    groups.emplace_back(std::vector<torch::Tensor>{ps[0], ps[2]}, std::make_unique<Options>(o));
    auto second = std::make_unique<Options>(o);
    second->lr(o.lr() * 0.1);
    groups.emplace_back(std::vector<torch::Tensor>{ps[1]}, std::move(second));
  } else {
    groups.emplace_back(ps, std::make_unique<Options>(o));
  }
  Optim opt(groups, o);
  if constexpr (!std::is_same_v<Optim, torch::optim::Adam> &&
                !std::is_same_v<Optim, torch::optim::AdamW>) {
    opt.preferMultiTensorOnCpu(multiTensor);
  }
  for (int s = 0; s < steps; ++s) {
    setGrads(ps, s);
    opt.step();
    if constexpr (!std::is_same_v<Optim, torch::optim::Adam> &&
                  !std::is_same_v<Optim, torch::optim::AdamW>) {
      if (lastPath) *lastPath = opt.lastPath();
    }
  }
  return ps;
}

void expectClose(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-5, 1e-6))
        << "parameter " << i << " max diff " << (a[i] - b[i]).abs().max().item<double>();
  }
}

}  // namespace

TEST(FusedAdam, MatchesTorchAdam) {
  for (double wd : {0.0, 0.01}) {
    SCOPED_TRACE(wd);
    auto o = torch::optim::AdamOptions(3e-3).betas({0.9, 0.95}).eps(1e-8).weight_decay(wd);
    auto fused = trainSteps<train::FusedAdam>(o, 8, /*twoGroups=*/true);
    auto plain = trainSteps<torch::optim::Adam>(o, 8, /*twoGroups=*/true);
    expectClose(fused, plain);
    EXPECT_TRUE(torch::equal(fused[2], makeParams()[2]));  // never had a gradient: untouched
  }
}

TEST(FusedAdam, MatchesTorchAdamW) {
  for (double wd : {0.0, 0.1}) {
    SCOPED_TRACE(wd);
    auto o = torch::optim::AdamWOptions(1e-2).weight_decay(wd);
    std::string path;
    expectClose(trainSteps<train::FusedAdamW>(o, 8, false, false, &path),
                trainSteps<torch::optim::AdamW>(o, 8, false));
    EXPECT_EQ(path, "cpu-kernel");
  }
}

// ATen's multi-tensor kernels (the CUDA path, also on the CPU from LibTorch 2.4): same numbers
// as torch::optim, two groups, a parameter without gradient, decay on and off.
TEST(FusedAdam, MultiTensorPathMatchesTorchOptim) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  for (double wd : {0.0, 0.05}) {
    SCOPED_TRACE(wd);
    auto a = torch::optim::AdamOptions(3e-3).betas({0.9, 0.95}).eps(1e-8).weight_decay(wd);
    std::string path;
    auto fused = trainSteps<train::FusedAdam>(a, 8, /*twoGroups=*/true, /*multiTensor=*/true,
                                              &path);
    EXPECT_EQ(path, "multi-tensor");
    expectClose(fused, trainSteps<torch::optim::Adam>(a, 8, true));
    EXPECT_TRUE(torch::equal(fused[2], makeParams()[2]));
    auto w = torch::optim::AdamWOptions(1e-2).weight_decay(wd);
    path.clear();
    expectClose(trainSteps<train::FusedAdamW>(w, 8, true, true, &path),
                trainSteps<torch::optim::AdamW>(w, 8, true));
    EXPECT_EQ(path, "multi-tensor");
  }
#else
  GTEST_SKIP() << "ATen's fused Adam runs on the CPU from LibTorch 2.4; this is "
               << TORCH_VERSION;
#endif
}

TEST(FusedAdam, TorchAdamContinuesFromItsSavedState) {
  auto o = torch::optim::AdamOptions(3e-3);
  auto ps = makeParams();
  auto ref = makeParams();
  train::FusedAdam fused(ps, o);
  torch::optim::Adam plain(ref, o);
  for (int s = 0; s < 3; ++s) {
    setGrads(ps, s);
    setGrads(ref, s);
    fused.step();
    plain.step();
  }
  std::stringstream buf;
  {
    torch::serialize::OutputArchive a;
    fused.save(a);
    a.save_to(buf);
  }
  auto resumedParams = makeParams();
  for (size_t i = 0; i < ps.size(); ++i) resumedParams[i].data().copy_(ps[i].data());
  torch::optim::Adam resumed(resumedParams, o);
  torch::serialize::InputArchive in;
  in.load_from(buf);
  resumed.load(in);
  for (int s = 3; s < 6; ++s) {
    setGrads(resumedParams, s);
    setGrads(ref, s);
    resumed.step();
    plain.step();
  }
  expectClose(resumedParams, ref);
}

TEST(FusedAdam, FallsBackToTorchWhereItCannotFuse) {
  // With the switch off it is torch::optim::Adam, bit for bit.
  kernels::setFusedKernelsEnabled(false);
  auto off = trainSteps<train::FusedAdam>(torch::optim::AdamOptions(3e-3), 5, true);
  kernels::setFusedKernelsEnabled(true);
  auto torchOnly = trainSteps<torch::optim::Adam>(torch::optim::AdamOptions(3e-3), 5, true);
  for (size_t i = 0; i < off.size(); ++i) EXPECT_TRUE(torch::equal(off[i], torchOnly[i]));

  // amsgrad and float64 parameters take torch::optim's path and so match it exactly.
  auto o = torch::optim::AdamOptions(3e-3).amsgrad(true);
  auto a = trainSteps<train::FusedAdam>(o, 5, false);
  auto b = trainSteps<torch::optim::Adam>(o, 5, false);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i]));

  torch::manual_seed(1);
  auto p = torch::randn({10}, torch::kFloat64).requires_grad_(true);
  auto q = p.detach().clone().requires_grad_(true);
  train::FusedAdam fa({p}, torch::optim::AdamOptions(1e-2));
  torch::optim::Adam ta({q}, torch::optim::AdamOptions(1e-2));
  for (int s = 0; s < 3; ++s) {
    p.mutable_grad() = torch::ones_like(p) * s;
    q.mutable_grad() = torch::ones_like(q) * s;
    fa.step();
    ta.step();
  }
  EXPECT_TRUE(torch::equal(p, q));
}
