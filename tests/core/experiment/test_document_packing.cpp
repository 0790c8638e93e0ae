// data.packing end to end: the config accepts packed and document and names both when given
// anything else; a byte-tokenizer run gets a vocabulary that holds the end-of-document id; a
// group trained with document packing on .jsonl records finishes with its probes recorded, and
// its throughput counts only the targets that are not pads.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "data/tokenizer.h"
#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "experiment/run_group.h"
#include "experiment/train_loop.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::string writeRecords(const test::TempDir& dir, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    std::string text = "record " + std::to_string(i) + ":";
    for (int w = 0; w < 3 + i % 11; ++w) text += " the deep layers idle";
    s += "{\"text\": \"" + text + "\"}\n";
  }
  test::writeFile(dir.file("c.jsonl"), s);
  return dir.file("c.jsonl");
}

}  // namespace

TEST(DocumentPackingConfig, PackingIsValidatedAndRoundTrips) {
  experiment::ExperimentConfig c;
  EXPECT_EQ(c.data.packing, "packed");  // the lab's default, the presets' too
  for (const auto& p : experiment::presets()) EXPECT_EQ(p.config.data.packing, "packed") << p.name;
  c.data.packing = "foo";
  const auto issues = experiment::validate(c);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].field, "data.packing");
  EXPECT_NE(issues[0].message.find("unknown packing 'foo' (known: packed, document)"), std::string::npos)
      << issues[0].message;
  EXPECT_THROW(experiment::requireValid(c), experiment::ConfigError);
  c.data.packing = "document";
  EXPECT_TRUE(experiment::validate(c).empty());
  const auto back = experiment::configFromJson(experiment::toJson(c));
  EXPECT_EQ(back.data.packing, "document");
  EXPECT_EQ(experiment::configFromJson(nlohmann::json{{"data", {{"packing", "document"}}}}).data.packing,
            "document");
}

TEST(DocumentPackingConfig, AByteTokenizerRunHasTheEndOfDocumentIdInItsVocabulary) {
  test::TempDir dir;
  auto c = test::smallConfig(2);
  c.data.corpus = writeRecords(dir, 200);
  c.data.packing = "document";
  const auto data = experiment::loadDataset(c, {}, {}, nullptr);
  EXPECT_EQ(c.model.vocabSize, data::kByteVocab);
  EXPECT_EQ(data.vocabSize(), 257);
  EXPECT_EQ(data.packing(), data::Packing::Document);
  EXPECT_EQ(data.documents()->documents(), 200u);
}

TEST(DocumentPackingConfig, AGroupTrainsOnDocumentsWithProbesAndCountsNoPads) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("runs.db"));
  auto c = test::smallConfig(2);
  c.data.corpus = writeRecords(dir, 300);
  c.data.packing = "document";
  c.model.seqLen = 64;  // longer than most records: rows are padded
  c.optim.steps = 4;
  c.run.evalEvery = 2;
  c.probes.forwardEvery = 2;
  c.name = "documents";
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const auto r = experiment::runGroup(c, store, o);
  ASSERT_EQ(r.members.size(), 2u);
  for (const auto& m : r.members) {
    EXPECT_EQ(store.run(m.runId)->status, store::RunStatus::Finished);
    auto cfg = nlohmann::json::parse(store.run(m.runId)->configJson);
    EXPECT_EQ(cfg["data"]["packing"], "document");
    EXPECT_EQ(cfg["model"]["vocabSize"], 257);
    ASSERT_TRUE(m.lossVal);
    EXPECT_TRUE(std::isfinite(*m.lossVal));
    const auto variance = store.layerSeries(m.runId, metrics::kVariance);
    ASSERT_FALSE(variance.steps.empty());
    for (float v : variance.values) EXPECT_TRUE(std::isfinite(v) && v > 0) << v;
    EXPECT_FALSE(store.scalarSeries(m.runId, metrics::kTokensPerSecond).empty());
  }
}
