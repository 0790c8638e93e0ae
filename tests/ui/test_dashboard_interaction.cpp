// The dashboard as a researcher handles it: lazy layers counted by each run's own thresholds
// (as `report` counts them).
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include "analysis/lazy_layers.h"
#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::unique_ptr<ui::GroupDashboard> openDashboard(store::RunStore& s, const QString& group, int height) {
  auto d = std::make_unique<ui::GroupDashboard>(group);
  d->resize(1400, height);
  d->show();
  d->refresh(s, {});
  d->redraw();
  return d;
}

void pairOfRuns(store::RunStore& s, double lazyThreshold = 0.05) {
  for (const char* scheme : {"pre_ln", "lns"}) {
    test::FakeRun f{"g", scheme, 1};
    f.lazyThreshold = lazyThreshold;
    test::addFakeRun(s, f);
  }
}

}  // namespace

TEST(DashboardInteraction, LazyLayersAreCountedByTheRunsOwnThresholds) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  pairOfRuns(s, 0.1);  // E_l of the fake runs: 0.3, 0.15, 0.1, 0.075, 0.06, 0.05
  auto d = openDashboard(s, QStringLiteral("g"), 3000);
  d->setCursorStep(150);
  auto* p = d->plots().at(QStringLiteral("effectiveness"));
  const int expected = analysis::classifyLayers({0.3f, 0.15f, 0.1f, 0.075f, 0.06f, 0.05f}, {0.1, 0.2}).lazy;
  ASSERT_EQ(expected, 3);
  int bars = 0;
  for (int i = 0; i < p->plottableCount(); ++i) {
    if (!qobject_cast<QCPBars*>(p->plottable(i))) continue;
    ++bars;
    EXPECT_TRUE(p->plottable(i)->name().contains(QStringLiteral("(3 lazy)"))) << p->plottable(i)->name().toStdString();
  }
  EXPECT_EQ(bars, 2);
  // The threshold lines drawn are the run's: 0.1 and 0.2, not the default 0.05.
  std::vector<double> lines;
  for (int i = 0; i < p->itemCount(); ++i) {
    if (auto* l = qobject_cast<QCPItemStraightLine*>(p->item(i)); l && l->objectName().isEmpty()) {
      lines.push_back(l->point1->coords().y());
    }
  }
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<double>{0.1, 0.2}));
}
