// Compare's final profiles: three to a row, and a profile only some schemes write (DyT's
// saturation) appears where a run has it and is never called missing for a run of another scheme.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include "compare/compare_view.h"
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
