// Probes beside training (experiment/background_probes) and the schedule they run: rows equal
// to inline ones and landing with their step, the weights copied at the step they were due,
// torch's generator left as it was, failures brought back to the training thread, the
// two pruning families sharing their evaluations, and the rows the pruning sweeps (and the
// skip-effect matrix) evaluate.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <stdexcept>

#include "data/token_dataset.h"
#include "experiment/background_probes.h"
#include "experiment/probe_schedule.h"
#include "probes/depth_probes.h"
#include "probes/depth_summaries.h"
#include "probes/skip_effect.h"
#include "support/model_fixtures.h"

using namespace depthlab;

namespace {

model::Decoder build(const experiment::ExperimentConfig& c) {
  torch::manual_seed(3);
  return model::Decoder(c.model, c.options, "lns");
}

// Nudges every weight as an update would.
void nudge(model::Decoder& m, double by) {
  torch::NoGradGuard ng;
  for (auto& p : m->parameters()) p.add_(by);
}

// "metric@step" -> values, every layer row and matrix of a batch (probe_seconds left out).
std::map<std::string, std::vector<float>> rowsOf(const store::WriteBatch& b) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& l : b.layers) out[l.metric + "@" + std::to_string(l.step)] = l.values;
  for (const auto& m : b.matrices) out[m.kind + "@" + std::to_string(m.step)] = m.data;
  for (const auto& s : b.scalars) {
    if (s.key != "probe_seconds")
      out[s.key + "@" + std::to_string(s.step)] = {static_cast<float>(s.value)};
  }
  return out;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Fixture {
  experiment::ExperimentConfig c = test::smallConfig(4);
  data::TokenDataset data{test::patternTokens(4000, 64), 64, 0.1, 16, 4};
  Fixture() {
    c.probes.forwardEvery = 2;
    c.probes.angularMatrixEvery = 3;
    c.probes.pruningEvery = 4;
    c.probes.jacobianEvery = 5;
  }
};

}  // namespace

TEST(BackgroundProbes, RowsEqualInlineOnesAtTheStepTheyWereDue) {
  Fixture f;
  experiment::ProbeSchedule schedule(f.c.probes, f.data, torch::kCPU);
  auto liveA = build(f.c), liveB = build(f.c);
  experiment::BackgroundProbes inlined(schedule, 1, false), beside(schedule, 1, true);
  store::WriteBatch a, b;
  for (int64_t step = 0; step <= 12; ++step) {
    inlined.runDue(0, liveA, step, a);
    beside.runDue(0, liveB, step, b);
    // The next update changes the live weights at once; the probes queued for `step` must
    // still see the weights they were due at.
    nudge(liveA, 1e-3);
    nudge(liveB, 1e-3);
  }
  beside.settle(0, b);
  EXPECT_FALSE(beside.busy());
  EXPECT_GT(beside.besideSeconds(), 0);
  EXPECT_EQ(inlined.besideSeconds(), 0);
  const auto x = rowsOf(a), y = rowsOf(b);
  ASSERT_EQ(x.size(), y.size());
  EXPECT_TRUE(x.count("prune_delta@8"));
  EXPECT_TRUE(x.count("jacobian_identity@10"));
  for (const auto& [key, values] : x) {
    ASSERT_TRUE(y.count(key)) << key;
    EXPECT_TRUE(sameBits(values, y.at(key))) << key;
  }
}

TEST(BackgroundProbes, TheSnapshotLeavesTorchsGeneratorAsItWas) {
  Fixture f;
  experiment::ProbeSchedule schedule(f.c.probes, f.data, torch::kCPU);
  auto live = build(f.c);
  experiment::BackgroundProbes beside(schedule, 1, true);
  store::WriteBatch out;
  torch::manual_seed(11);
  beside.runDue(0, live, 0, out);  // builds the snapshot decoder (module constructors draw)
  const auto after = torch::rand({8});
  torch::manual_seed(11);
  const auto expected = torch::rand({8});
  EXPECT_TRUE(torch::equal(after, expected));
  beside.settle(0, out);
}

TEST(BackgroundProbes, AFailureReachesTheTrainingThread) {
  Fixture f;
  // Targets outside the vocabulary: the probes' loss fails on the worker.
  auto inputs = torch::zeros({2, 16}, torch::kInt64);
  auto targets = torch::full({2, 16}, 1000, torch::kInt64);
  experiment::ProbeSchedule schedule(f.c.probes, inputs, targets);
  auto live = build(f.c);
  experiment::BackgroundProbes beside(schedule, 1, true);
  store::WriteBatch out;
  EXPECT_EQ(beside.runDue(0, live, 1, out), 0);  // nothing due at step 1
  beside.runDue(0, live, 2, out);                // queued; fails beside training
  EXPECT_THROW(beside.settle(0, out), std::exception);
  EXPECT_TRUE(out.empty());
  EXPECT_NO_THROW(beside.settle(0, out));  // reported once
}

TEST(BackgroundProbes, OnlyWhereACoreIsSpare) {
  EXPECT_TRUE(experiment::probesFitBeside(torch::kCPU, 1, 2, 1));
  EXPECT_FALSE(experiment::probesFitBeside(torch::kCPU, 2, 2, 1));   // training has every core
  EXPECT_FALSE(experiment::probesFitBeside(torch::kCPU, 1, 1, 1));   // one core
  EXPECT_FALSE(experiment::probesFitBeside(torch::kCPU, 1, 16, 2));  // data-parallel ranks
  EXPECT_FALSE(experiment::probesFitBeside(torch::Device(torch::kCUDA, 0), 1, 16, 1));
}

TEST(ProbeSchedule, TheSingleLayerSweepIsTheBlockSweepsFirstColumn) {
  Fixture f;
  experiment::ProbeSchedule schedule(f.c.probes, f.data, torch::kCPU);
  auto m = build(f.c);
  store::WriteBatch both, alone;
  schedule.run(m, 7, {"pruning", "block_pruning"}, both);
  schedule.run(m, 7, {"pruning"}, alone);
  const auto x = rowsOf(both), y = rowsOf(alone);
  ASSERT_TRUE(x.count("prune_delta@7") && y.count("prune_delta@7"));
  EXPECT_TRUE(sameBits(x.at("prune_delta@7"), y.at("prune_delta@7")));
  const auto& block = x.at("block_prune@7");  // (L x L), column n = 1 first in each row
  for (int l = 0; l < 4; ++l)
    EXPECT_EQ(block[static_cast<size_t>(l) * 4], y.at("prune_delta@7")[static_cast<size_t>(l)]);
}

TEST(ProbeSchedule, PruningRowsAreEvenlySpacedAndFixed) {
  using probes::pruningRows;
  EXPECT_EQ(pruningRows(8, 4), (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(pruningRows(8, 3), (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(pruningRows(8, 1), (std::vector<int64_t>{0}));
  EXPECT_EQ(pruningRows(3, 0), (std::vector<int64_t>{0, 1, 2}));  // 0 = all
  EXPECT_EQ(pruningRows(3, 5), (std::vector<int64_t>{0, 1, 2}));  // more than there are
}

TEST(ProbeSchedule, ThePruningSweepsEvaluateTheirRowsAndStoreTheErrorBars) {
  // A 6-row probe batch with pruneSequences 3: the stored deltas and errors are the sweeps' on
  // rows 0, 2, 4 (and the forward probes still see all six rows).
  Fixture f;
  f.c.probes.probeBatch = 6;
  f.c.probes.pruneSequences = 3;
  auto b = f.data.probeBatch(6);
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  auto x = torch::from_blob(b.inputs.data(), {b.batch, b.seqLen}, opts).clone();
  auto y = torch::from_blob(b.targets.data(), {b.batch, b.seqLen}, opts).clone();
  experiment::ProbeSchedule schedule(f.c.probes, x, y);
  auto m = build(f.c);
  store::WriteBatch out;
  schedule.run(m, 5, {"variance", "pruning", "block_pruning", "skip_effect"}, out);
  const auto rows = rowsOf(out);
  auto index = torch::tensor(std::vector<int64_t>{0, 2, 4}, torch::kInt64);
  auto xs = x.index_select(0, index), ys = y.index_select(0, index);
  const auto single = probes::singleLayerPruning(m, xs, ys, false);
  const auto block = probes::blockPruning(m, xs, ys, {}, false);
  EXPECT_TRUE(sameBits(rows.at("prune_delta@5"), single.delta));
  EXPECT_TRUE(sameBits(rows.at("prune_delta_se@5"), single.standardError));
  EXPECT_TRUE(sameBits(rows.at("block_prune@5"), block.delta));
  EXPECT_TRUE(sameBits(rows.at("block_prune_se@5"), block.standardError));
  // The skip-effect matrix, on the pruning sweeps' rows.
  EXPECT_TRUE(sameBits(rows.at("skip_effect@5"), probes::skipEffect(m, xs, ys).matrix));
  EXPECT_FLOAT_EQ(rows.at("jump_strength@5")[0],
                  static_cast<float>(probes::jumpStrength(rows.at("angular_adjacent@5"))));
  const auto all = probes::singleLayerPruning(m, x, y, false);
  EXPECT_FALSE(sameBits(rows.at("prune_delta@5"), all.delta));  // not the whole batch
  EXPECT_FLOAT_EQ(rows.at("loss_probe@5")[0],
                  static_cast<float>(probes::runForwardProbes(m, x, y, {}).probeLoss));
}
