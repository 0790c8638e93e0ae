// RunStore::createGroup: a new group's name is chosen and its runs created in one write
// transaction, so launches racing with one name (threads here, processes in use) never share a
// group.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "experiment/group_names.h"
#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(CreateGroup, RacingLaunchesOfOneNameGetGroupsOfTheirOwn) {
  test::TempDir dir;
  const std::string db = dir.file("race.db");
  { auto s = store::RunStore::open(db); }
  constexpr int kLaunches = 6;
  std::vector<std::thread> threads;
  std::vector<std::string> names(kLaunches);
  for (int i = 0; i < kLaunches; ++i) {
    threads.emplace_back([&, i] {
      auto s = store::RunStore::open(db);
      s.setBusyTimeout(10000);
      std::vector<store::NewRun> runs(2);
      runs[0].scheme = "pre_ln";
      runs[1].scheme = "lns";
      names[static_cast<size_t>(i)] =
          s.createGroup(
               runs, [](const std::set<std::string>& taken) { return experiment::uniqueGroupName("cpu-demo", taken); },
               [](const std::string& group, store::NewRun& r) {
                 r.name = experiment::defaultRunName(group, r.scheme, 1);
               })
              .first;
    });
  }
  for (auto& t : threads) t.join();
  auto s = store::RunStore::open(db);
  std::map<std::string, int> perGroup;
  for (const auto& r : s.listRuns()) {
    ++perGroup[r.groupName];
    EXPECT_EQ(r.name, experiment::defaultRunName(r.groupName, r.scheme, 1));
  }
  EXPECT_EQ(perGroup.size(), static_cast<size_t>(kLaunches));  // six groups, none merged
  for (const auto& [group, n] : perGroup) EXPECT_EQ(n, 2) << group;
  EXPECT_EQ(perGroup.count("cpu-demo"), 1u);
  EXPECT_EQ(perGroup.count("cpu-demo 6"), 1u);
}
