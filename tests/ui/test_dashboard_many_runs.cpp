// A study's dashboard: the twelve schemes of `--scheme all-depth-fixes` wrap into rows of at most
// four panels instead of one row of twelve scrolling sideways (five seen at 1366 px), every
// scheme's panel is there, the fifth below the first; a pair keeps its two panels side by side;
// a panel's Save PNG leaves the hover crosshair out.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <QScrollArea>
#include <QScrollBar>

#include <memory>
#include <set>

#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "model/scheme_sets.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::unique_ptr<ui::GroupDashboard> shown(store::RunStore& s, const QString& group, int width) {
  auto d = std::make_unique<ui::GroupDashboard>(group);
  d->resize(width, 3000);
  d->show();
  d->refresh(s, {});
  d->redraw();
  QApplication::processEvents();
  d->resize(width, 3000);
  QApplication::processEvents();
  return d;
}

}  // namespace

TEST(DashboardManyRuns, TwelveSchemesWrapIntoRowsOfFourThatFitTheWidth) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("m.db"));
  const auto* set = model::findSchemeSet("all-depth-fixes");
  ASSERT_NE(set, nullptr);
  ASSERT_GE(set->schemes.size(), 9u);
  for (const auto& scheme : set->schemes) test::addFakeRun(s, test::FakeRun{"study", scheme});
  const auto d = shown(s, QStringLiteral("study"), 1100);  // 1366 px beside the set-up panel
  auto* scroll = d->findChild<QScrollArea*>();
  ASSERT_NE(scroll, nullptr);
  EXPECT_FALSE(scroll->horizontalScrollBar()->isVisible());
  std::set<int> xs, ys;
  for (const auto& scheme : set->schemes) {
    const auto it = d->plots().find(QStringLiteral("variance:") + QString::fromStdString(scheme));
    ASSERT_NE(it, d->plots().end()) << scheme;
    const QPoint at = it->second->mapTo(d.get(), QPoint(0, 0));
    xs.insert(at.x());
    ys.insert(at.y());
  }
  EXPECT_EQ(xs.size(), 4u);  // four columns
  EXPECT_EQ(ys.size(), (set->schemes.size() + 3) / 4);  // and as many rows as that takes
  const auto first = d->plots().at(QStringLiteral("variance:") + QString::fromStdString(set->schemes[0]));
  const auto fifth = d->plots().at(QStringLiteral("variance:") + QString::fromStdString(set->schemes[4]));
  EXPECT_EQ(fifth->mapTo(d.get(), QPoint(0, 0)).x(), first->mapTo(d.get(), QPoint(0, 0)).x());
  EXPECT_GT(fifth->mapTo(d.get(), QPoint(0, 0)).y(), first->mapTo(d.get(), QPoint(0, 0)).y());
}

TEST(DashboardManyRuns, APairKeepsItsPanelsSideBySide) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("p.db"));
  test::addFakeRun(s, test::FakeRun{"pair", "pre_ln"});
  test::addFakeRun(s, test::FakeRun{"pair", "lns"});
  const auto d = shown(s, QStringLiteral("pair"), 1100);
  const auto a = d->plots().at(QStringLiteral("variance:pre_ln"))->mapTo(d.get(), QPoint(0, 0));
  const auto b = d->plots().at(QStringLiteral("variance:lns"))->mapTo(d.get(), QPoint(0, 0));
  EXPECT_EQ(a.y(), b.y());
  EXPECT_LT(a.x(), b.x());
}

// A panel's Save PNG leaves out the hover crosshair: the file saved after the mouse passed is
// the file saved before.
TEST(DashboardManyRuns, SavePngLeavesOutTheHoverCrosshair) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("x.db"));
  test::addFakeRun(s, test::FakeRun{"pair", "pre_ln"});
  test::addFakeRun(s, test::FakeRun{"pair", "lns"});
  const auto d = shown(s, QStringLiteral("pair"), 1100);
  const QString panel = QStringLiteral("variance:pre_ln");
  ASSERT_TRUE(d->savePanelPng(panel, QString::fromStdString(dir.file("before.png"))));
  auto* p = d->plots().at(panel);
  const QPoint at(p->axisRect()->center());
  QMouseEvent move(QEvent::MouseMove, QPointF(at), p->mapToGlobal(QPointF(at)), Qt::NoButton,
                   Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(p, &move);
  QApplication::processEvents();
  bool crosshair = false;
  for (int i = 0; i < p->itemCount(); ++i) crosshair = crosshair || p->item(i)->objectName() == QLatin1String("crosshair");
  ASSERT_TRUE(crosshair) << "the mouse drew no crosshair to leave out";
  ASSERT_TRUE(d->savePanelPng(panel, QString::fromStdString(dir.file("after.png"))));
  EXPECT_EQ(QImage(QString::fromStdString(dir.file("after.png"))),
            QImage(QString::fromStdString(dir.file("before.png"))));
}
