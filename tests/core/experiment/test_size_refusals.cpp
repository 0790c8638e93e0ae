// Every size is refused before anything is allocated or prepared, by the field that makes it:
// a probe batch, a depth or an accumulation no machine could run leaves no run
// behind, no token store beside the corpus, and names the field to change.
#include <gtest/gtest.h>

#include <filesystem>

#include "experiment/config_set.h"
#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "experiment/resource_estimate.h"
#include "experiment/run_group.h"
#include "support/error_of.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

bool anyStoreBeside(const std::string& corpus) {
  for (const auto& e : fs::directory_iterator(fs::path(corpus).parent_path())) {
    if (e.path().extension() == ".dlstore") return true;
  }
  return false;
}

}  // namespace

TEST(SizeRefusals, EachHugeSizeIsRefusedBeforeAnyRunOrStoreByItsField) {
  struct Case {
    const char* set;
    const char* field;  // what the refusal must name
  };
  const Case cases[] = {
      {"probes.probeBatch=1000000000", "probes.probeBatch"},  // ~69 TB: no machine's
      {"model.nLayers=10000000", "model.nLayers"},
      {"optim.gradAccum=100000000", "optim.gradAccum"},
      {"run.evalBatches=100000000", "run.evalBatches"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.set);
    test::TempDir dir;
    auto s = store::RunStore::open(dir.file("runs.db"));
    auto c = test::smallConfig(2);
    c.data.corpus = test::writeWordCorpus(dir);
    c.schemes = {"pre_ln"};
    std::string why;
    try {
      experiment::applyConfigAssignment(c, k.set);  // a range refuses some at once
      experiment::RunGroupOptions o;
      o.checkpointDir = dir.file("ckpt");
      why = errorOf([&] { experiment::runGroup(c, s, o); });
    } catch (const std::exception& e) {
      why = e.what();
    }
    EXPECT_NE(why.find(k.field), std::string::npos) << why;
    EXPECT_TRUE(s.listRuns().empty());
    EXPECT_FALSE(anyStoreBeside(c.data.corpus));
  }
}

TEST(SizeRefusals, TheEstimateCountsTheProbeBatchAndTheHeadsWidth) {
  auto c = test::smallConfig(2);
  c.schemes = {"pre_ln"};
  const auto base = experiment::estimateRun(c, "pre_ln");
  c.probes.probeBatch *= 1000;
  EXPECT_GT(experiment::estimateRun(c, "pre_ln").probeMB, 500 * base.probeMB);
  auto wide = test::smallConfig(2);
  wide.model.headDim = 64;  // 4 heads of 64 on a 32-wide stream
  EXPECT_GT(experiment::estimateRun(wide, "pre_ln").params,
            experiment::estimateRun(test::smallConfig(2), "pre_ln").params);
  const auto why = errorOf([&] { experiment::requireFits(c, 1.0, "this machine"); });
  EXPECT_NE(why.find("probes.probeBatch"), std::string::npos) << why;
}
