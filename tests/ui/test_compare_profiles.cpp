// Compare's final profiles: three to a row, on the dashboard's scale rule (logarithmic where one
// run's variance dwarfs another's tenfold), and a profile only some schemes write (DyT's
// saturation) appears where a run has it and is never called missing for a run of another scheme.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "daily_use_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(CompareProfiles, DytSaturationIsAPanelOnlyWhereARunHasItAndNeverMissingForOthers) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("p.db"));
  test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
  test::addFakeRun(s, test::FakeRun{"g", "lns", 1});
  {
    ui::CompareView v(s, {1, 2});
    EXPECT_EQ(v.plots().count(QString::fromLatin1(metrics::kDytSaturation)), 0u) << "an empty DyT panel";
    EXPECT_FALSE(v.missingText().contains(QString::fromLatin1(metrics::kDytSaturation))) << v.missingText().toStdString();
    EXPECT_EQ(v.plots().count(QString::fromLatin1(metrics::kVariance)), 1u);
  }
  const int64_t dyt = test::addFakeRun(s, test::FakeRun{"g", "dyt", 1});
  store::WriteBatch b;
  b.layer(150, metrics::kDytSaturation, std::vector<float>(6, 0.25f));
  s.write(dyt, b);
  ui::CompareView v(s, {1, 2, dyt});
  ASSERT_EQ(v.plots().count(QString::fromLatin1(metrics::kDytSaturation)), 1u);
  auto* panel = v.plots().at(QString::fromLatin1(metrics::kDytSaturation));
  EXPECT_EQ(panel->graphCount(), 1) << "the DyT run's profile alone";
  EXPECT_FALSE(v.missingText().contains(QString::fromLatin1(metrics::kDytSaturation))) << v.missingText().toStdString();
  // The fourth profile starts a second row under the first: not a fourth column off the page.
  v.resize(1200, 900);
  v.show();
  QApplication::processEvents();
  auto* variance = v.plots().at(QString::fromLatin1(metrics::kVariance));
  EXPECT_GT(panel->mapTo(&v, QPoint(0, 0)).y(), variance->mapTo(&v, QPoint(0, 0)).y());
  EXPECT_EQ(panel->mapTo(&v, QPoint(0, 0)).x(), variance->mapTo(&v, QPoint(0, 0)).x());
}

TEST(CompareProfiles, TheFinalVarianceTakesTheDashboardsScaleRule) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("p.db"));
  test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});  // variance x11 a layer
  test::addFakeRun(s, test::FakeRun{"g", "lns", 1});     // x1.5 a layer: a tenth and less of it
  test::addFakeRun(s, test::FakeRun{"h", "pre_ln", 2});
  const QString variance = QString::fromLatin1(metrics::kVariance);
  ui::CompareView apart(s, {1, 2});
  EXPECT_EQ(apart.plots().at(variance)->yAxis->scaleType(), QCPAxis::stLogarithmic);
  ui::GroupDashboard d(QStringLiteral("g"));
  d.refresh(s, {});
  d.redraw();
  EXPECT_EQ(d.plots().at(QStringLiteral("variance:lns"))->yAxis->scaleType(), QCPAxis::stLogarithmic)
      << "the dashboard's panel and Compare's disagree on the scale";
  ui::CompareView alike(s, {1, 3});  // two seeds of one scheme: one magnitude
  EXPECT_EQ(alike.plots().at(variance)->yAxis->scaleType(), QCPAxis::stLinear);
  // Angular distances are never logarithmic (the catalogue's linear scale).
  EXPECT_EQ(apart.plots().at(QString::fromLatin1(metrics::kAngularAdjacent))->yAxis->scaleType(), QCPAxis::stLinear);
}

TEST(CompareProfiles, TheDashboardMakesADytPanelOnlyForARunThatHasIt) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("d.db"));
  test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
  test::addFakeRun(s, test::FakeRun{"g", "lns", 1});
  const QString dytPanel = QString::fromLatin1(metrics::kDytSaturation) + QStringLiteral("_map:");
  {
    ui::GroupDashboard d(QStringLiteral("g"));
    d.refresh(s, {});
    for (const auto& [name, plot] : d.plots()) {
      EXPECT_FALSE(name.startsWith(dytPanel)) << "an empty DyT panel: " << name.toStdString();
    }
    EXPECT_TRUE(d.plots().count(QStringLiteral("variance:lns")));
  }
  const int64_t dyt = test::addFakeRun(s, test::FakeRun{"g", "dyt", 1});
  store::WriteBatch b;
  b.layer(150, metrics::kDytSaturation, std::vector<float>(6, 0.25f));
  s.write(dyt, b);
  ui::GroupDashboard d(QStringLiteral("g"));
  d.refresh(s, {});
  EXPECT_TRUE(d.plots().count(dytPanel + QStringLiteral("dyt")));
  EXPECT_FALSE(d.plots().count(dytPanel + QStringLiteral("pre_ln")));
  EXPECT_FALSE(d.plots().count(dytPanel + QStringLiteral("lns")));
}
