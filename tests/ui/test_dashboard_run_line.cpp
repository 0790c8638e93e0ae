// A dashboard run line for a run left overnight (ui/dashboard/group_data): tokens seen of the
// run's budget beside tokens/s and the ETA, an ETA in hours or days once it is that long, and
// "-" for what a run with no update has not measured (it had said "0 tok/s").
#include <gtest/gtest.h>

#include "daily_use_fixtures.h"
#include "dashboard/group_data.h"

using namespace depthlab;

TEST(DashboardRunLine, SaysTokensSeenOfTheBudgetBesideTokensPerSecondAndETA) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::FakeRun f{"night", "pre_ln"};
  f.steps = 150;  // cpu-demo: 16 x 64 = 1,024 tokens a step, 600 steps
  f.finished = false;
  test::addFakeRun(s, f);
  ui::GroupData g(QStringLiteral("night"));
  g.reload(s, {});
  const auto& run = g.runs().at(0);
  const QString line = run.statusLine(QString(), g.etaSeconds(run));
  EXPECT_TRUE(line.contains(
      QStringLiteral("step 150/600 · 153.6k / 614.4k tokens · 20000 tok/s · ETA 0:23")))
      << line.toStdString();
}

TEST(DashboardRunLine, ARunStoppedBeforeItsFirstUpdateShowsDashes) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  auto c = *experiment::presetConfig("cpu-demo");
  c.schemes = {"pre_ln"};
  store::NewRun nr;
  nr.name = "night pre_ln";
  nr.groupName = "night";
  nr.scheme = "pre_ln";
  nr.configJson = experiment::toJson(c).dump();
  const int64_t id = s.createRun(nr);
  s.finishRun(id, store::RunStatus::Stopped);
  ui::GroupData g(QStringLiteral("night"));
  g.reload(s, {});
  const QString line = g.runs().at(0).statusLine();
  EXPECT_TRUE(line.contains(QStringLiteral("step 0/600 · 0 / 614.4k tokens · - tok/s · ETA - ·")))
      << line.toStdString();
  EXPECT_TRUE(line.endsWith(QStringLiteral("stopped"))) << line.toStdString();
}

TEST(DashboardRunLine, LongETAsReadInHoursThenDays) {
  EXPECT_EQ(ui::etaText(90), QStringLiteral("1:30"));
  EXPECT_EQ(ui::etaText(5 * 3600 + 130), QStringLiteral("5:02:10"));
  EXPECT_EQ(ui::etaText(1.88e6), QStringLiteral("21.8 days"));
}
