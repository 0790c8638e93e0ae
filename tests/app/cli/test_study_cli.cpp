// The depth study through the real depthlab-cli: `train --scheme SET` trains every scheme of
// the set as one group (a set beside schemes too, each once), an unknown name is refused naming
// the schemes and the sets, `schemes` lists the sets, and `report --study --group G` ranks the
// group's schemes in one table (text and --json), "-" where a probe is missing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "model/scheme_catalogue.h"
#include "model/scheme_sets.h"
#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::string corpus(const test::TempDir& dir) {
  std::string text;
  for (int i = 0; text.size() < 20000; ++i)
    text += "the curse of depth " + std::to_string(i % 31) + "\n";
  test::writeFile(dir.file("text.txt"), text);
  return dir.file("text.txt");
}

nlohmann::json runsJson(const std::string& cli) {
  std::string out;
  EXPECT_EQ(test::runCommand(cli + " --json runs list 2>/dev/null", &out), 0) << out;
  return nlohmann::json::parse(out, nullptr, false);
}

}  // namespace

TEST(StudyCli, ASetNameTrainsEverySchemeOfItAsOneGroupAndTheReportRanksThem) {
  test::TempDir dir;
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db");
  std::string out;
  // paper's schemes plus one of them again: each scheme once.
  ASSERT_EQ(test::runCommand(cli +
                                 " train --preset tiny --scheme paper,lns --steps 2 --quiet --set "
                                 "model.nLayers=4 --corpus " +
                                 corpus(dir) + " 2>&1",
                             &out),
            0)
      << out;
  const auto runs = runsJson(cli);
  ASSERT_TRUE(runs.is_array()) << runs;
  const auto* paper = model::findSchemeSet("paper");
  ASSERT_NE(paper, nullptr);
  ASSERT_EQ(runs.size(), paper->schemes.size());
  std::set<std::string> schemes, groups;
  for (const auto& r : runs) {
    schemes.insert(r["scheme"].get<std::string>());
    groups.insert(r["group"].get<std::string>());
  }
  EXPECT_EQ(schemes, std::set<std::string>(paper->schemes.begin(), paper->schemes.end()));
  ASSERT_EQ(groups.size(), 1u);  // one launch, one group
  const std::string group = *groups.begin();

  ASSERT_EQ(test::runCommand(cli + " report --study --group '" + group + "' 2>&1", &out), 0) << out;
  for (const auto& s : paper->schemes)
    EXPECT_NE(out.find(model::schemeDisplayName(s)), std::string::npos) << s << "\n" << out;
  EXPECT_NE(out.find("prune deep 1/4"), std::string::npos) << out;
  ASSERT_EQ(
      test::runCommand(cli + " --json report --study --group '" + group + "' 2>/dev/null", &out), 0)
      << out;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  ASSERT_EQ(j["schemes"].size(), paper->schemes.size());
  // Ranked by validation loss: each row's mean at most the next one's.
  for (size_t i = 0; i + 1 < j["schemes"].size(); ++i) {
    const auto& a = j["schemes"][i]["loss_val"];
    const auto& b = j["schemes"][i + 1]["loss_val"];
    if (a.is_null() || b.is_null()) continue;
    EXPECT_LE(a["mean"].get<double>(), b["mean"].get<double>()) << j.dump(1);
    EXPECT_EQ(j["schemes"][i]["loss_rank"].get<int>() + 1,
              j["schemes"][i + 1]["loss_rank"].get<int>());
  }
  // Every run probed at its end: a deep-quarter pruning loss (one layer of 4) for each scheme.
  for (const auto& row : j["schemes"]) {
    EXPECT_FALSE(row["prune_delta_deep_quarter"].is_null()) << row.dump(1);
    EXPECT_EQ(row["deep_quarter_layers"], 1);
  }
}

TEST(StudyCli, AnUnknownNameIsRefusedNamingTheSchemesAndTheSets) {
  test::TempDir dir;
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db");
  std::string out;
  EXPECT_NE(
      test::runCommand(
          cli + " train --preset tiny --scheme pre_ln,all-depth-fix --steps 2 --quiet --corpus " +
              corpus(dir) + " 2>&1",
          &out),
      0)
      << out;
  EXPECT_NE(out.find("unknown scheme 'all-depth-fix'"), std::string::npos) << out;
  for (const auto& id : model::schemeIds())
    EXPECT_NE(out.find(id), std::string::npos) << id << "\n" << out;
  for (const auto& set : model::schemeSets())
    EXPECT_NE(out.find(set.id), std::string::npos) << set.id << "\n" << out;
  EXPECT_NE(out.find("sets: "), std::string::npos) << out;
  EXPECT_TRUE(runsJson(cli).empty());  // nothing launched
}

TEST(StudyCli, SchemesListsTheSetsAndReportNeedsRunsOrAGroup) {
  test::TempDir dir;
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db");
  std::string out;
  ASSERT_EQ(test::runCommand(cli + " schemes 2>&1", &out), 0) << out;
  for (const auto& set : model::schemeSets())
    EXPECT_NE(out.find(set.id + ": "), std::string::npos) << out;
  ASSERT_EQ(test::runCommand(cli + " --json schemes 2>&1", &out), 0) << out;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_array()) << out;
  for (const auto& e : j) {
    const auto& sets = e["sets"];
    const bool inPaper = std::find(sets.begin(), sets.end(), "paper") != sets.end();
    const auto& paper = model::findSchemeSet("paper")->schemes;
    EXPECT_EQ(inPaper, std::find(paper.begin(), paper.end(), e["id"]) != paper.end()) << e.dump();
  }
  store::RunStore::open(dir.file("runs.db"));  // an empty store: report reads, never creates
  EXPECT_NE(test::runCommand(cli + " report --study 2>&1", &out), 0);
  EXPECT_NE(out.find("--runs IDS or --group NAME"), std::string::npos) << out;
  EXPECT_NE(test::runCommand(cli + " report --study --group nosuch 2>&1", &out), 0);
  EXPECT_NE(out.find("nosuch"), std::string::npos) << out;
}
