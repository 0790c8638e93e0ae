// The dashboard as a researcher handles it: lazy layers counted by each run's own thresholds
// (as `report` counts them), the wheel that scrolls the page (plots zoom with Ctrl+wheel or
// once clicked), a zoom notice that covers no data, double-click and "Reset all zoom" that
// bring every linked panel back.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QScrollArea>
#include <QScrollBar>
#include <QTest>
#include <QWheelEvent>

#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "main_window.h"
#include "plot/plot_helpers.h"
#include "probes/lazy_layers.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::unique_ptr<ui::GroupDashboard> openDashboard(store::RunStore& s, const QString& group,
                                                  int height) {
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

void wheel(QCustomPlot* p, Qt::KeyboardModifiers modifiers, int delta = -120) {
  const QPoint at = p->axisRect()->rect().center();
  QWheelEvent e(at, p->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, modifiers,
                Qt::NoScrollPhase, false);
  QApplication::sendEvent(p, &e);
}

void doubleClick(QCustomPlot* p) {
  const QPointF at = p->axisRect()->rect().center();
  QMouseEvent e(QEvent::MouseButtonDblClick, at, p->mapToGlobal(at), Qt::LeftButton, Qt::LeftButton,
                Qt::NoModifier);
  QApplication::sendEvent(p, &e);
}

QScrollBar* pageScroll(QWidget* d) { return d->findChild<QScrollArea*>()->verticalScrollBar(); }

}  // namespace

TEST(DashboardInteraction, LazyLayersAreCountedByTheRunsOwnThresholds) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  pairOfRuns(s, 0.1);  // E_l of the fake runs: 0.3, 0.15, 0.1, 0.075, 0.06, 0.05
  auto d = openDashboard(s, QStringLiteral("g"), 3000);
  d->setCursorStep(150);
  auto* p = d->plots().at(QStringLiteral("effectiveness"));
  const int expected =
      probes::classifyLayers({0.3f, 0.15f, 0.1f, 0.075f, 0.06f, 0.05f}, {0.1, 0.2}).lazy;
  ASSERT_EQ(expected, 3);
  int bars = 0;
  for (int i = 0; i < p->plottableCount(); ++i) {
    if (!qobject_cast<QCPBars*>(p->plottable(i))) continue;
    ++bars;
    EXPECT_TRUE(p->plottable(i)->name().contains(QStringLiteral("(3 lazy)")))
        << p->plottable(i)->name().toStdString();
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

TEST(DashboardInteraction, TheWheelScrollsThePageAndLeavesThePlotAlone) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  pairOfRuns(s);
  auto d = openDashboard(s, QStringLiteral("g"), 800);  // shorter than its panels: it scrolls
  auto* loss = d->plots().at(QStringLiteral("loss"));
  auto* scroll = pageScroll(d.get());
  QTRY_VERIFY_WITH_TIMEOUT(scroll->maximum() > 0, 2000);
  const int top = scroll->value();
  const QCPRange x = loss->xAxis->range(), y = loss->yAxis->range();
  wheel(loss, Qt::NoModifier);
  EXPECT_GT(scroll->value(), top);
  EXPECT_EQ(loss->xAxis->range(), x);
  EXPECT_EQ(loss->yAxis->range(), y);
  EXPECT_FALSE(ui::userZoomed(loss));
  EXPECT_TRUE(ui::zoomBadgeText(loss).isEmpty());
  QTest::qWait(200);  // no linked zoom arrives later either
  auto* variance = d->plots().at(QStringLiteral("variance:lns"));
  EXPECT_FALSE(ui::userZoomed(variance));
}

TEST(DashboardInteraction, CtrlWheelZoomsWithANoticeAboveTheDataAndDoubleClickResets) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  pairOfRuns(s);
  auto d = openDashboard(s, QStringLiteral("g"), 800);
  auto* loss = d->plots().at(QStringLiteral("loss"));
  auto* variance = d->plots().at(QStringLiteral("variance:lns"));
  auto* scroll = pageScroll(d.get());
  loss->replot(QCustomPlot::rpImmediateRefresh);
  const QRect before = loss->axisRect()->rect();
  const int top = scroll->value();
  const QCPRange x = loss->xAxis->range();
  wheel(loss, Qt::ControlModifier, 120);
  EXPECT_EQ(scroll->value(), top);
  EXPECT_NE(loss->xAxis->range(), x);
  EXPECT_TRUE(ui::userZoomed(loss));
  EXPECT_TRUE(ui::zoomBadgeText(loss).contains(QStringLiteral("not following")));
  // The notice sits above the data, in the plot's top margin: the data area gave it room.
  loss->replot(QCustomPlot::rpImmediateRefresh);
  const QRect after = loss->axisRect()->rect();
  EXPECT_GE(after.top() - before.top(), QFontMetrics(loss->xAxis2->labelFont()).height() / 2);
  // Linked: the step panels follow the zoom; a double-click on one of them resets them all.
  QTRY_COMPARE_WITH_TIMEOUT(variance->xAxis->range(), loss->xAxis->range(), 2000);
  EXPECT_FALSE(ui::zoomBadgeText(variance).isEmpty());
  doubleClick(variance);
  EXPECT_FALSE(ui::userZoomed(loss));
  EXPECT_FALSE(ui::userZoomed(variance));
  EXPECT_TRUE(ui::zoomBadgeText(loss).isEmpty());
  EXPECT_TRUE(ui::zoomBadgeText(variance).isEmpty());
  QTest::qWait(200);
  EXPECT_FALSE(ui::userZoomed(loss));
  EXPECT_EQ(loss->xAxis->range(), x);
}

TEST(DashboardInteraction, AClickedPlotTakesThePlainWheel) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  pairOfRuns(s);
  auto d = openDashboard(s, QStringLiteral("g"), 800);
  d->activateWindow();
  if (!QTest::qWaitForWindowActive(d.get(), 2000))
    GTEST_SKIP() << "no active window on this platform";
  auto* loss = d->plots().at(QStringLiteral("loss"));
  EXPECT_EQ(loss->focusPolicy(), Qt::ClickFocus);
  loss->setFocus(Qt::MouseFocusReason);
  ASSERT_TRUE(loss->hasFocus());
  const int top = pageScroll(d.get())->value();
  wheel(loss, Qt::NoModifier, 120);
  EXPECT_TRUE(ui::userZoomed(loss));
  EXPECT_EQ(pageScroll(d.get())->value(), top);
}

TEST(DashboardInteraction, ResetAllZoomIsAMenuActionWithAShortcut) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    pairOfRuns(s);
  }
  ui::MainWindow w(store::RunStore::open(dir.file("lab.db")),
                   ui::MainWindowOptions{{},
                                         {},
                                         QString::fromStdString(depthlab::test::cliPath()),
                                         QString::fromStdString(dir.file("window.ini"))});
  w.show();
  auto* d = w.dashboard(QStringLiteral("g"));
  ASSERT_NE(d, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(d->isLoaded() && !d->loading(), 5000);  // read on the loader thread
  w.showTab(d);
  d->redraw();
  auto* loss = d->plots().at(QStringLiteral("loss"));
  wheel(loss, Qt::ControlModifier, 120);
  auto* variance = d->plots().at(QStringLiteral("variance:pre_ln"));
  QTRY_VERIFY_WITH_TIMEOUT(ui::userZoomed(variance), 2000);
  QAction* reset = nullptr;
  for (auto* a : w.findChildren<QAction*>()) {
    if (a->text().remove(QLatin1Char('&')) == QLatin1String("Reset all zoom")) reset = a;
  }
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ(reset->shortcut(), QKeySequence(QStringLiteral("Ctrl+0")));
  reset->trigger();
  EXPECT_FALSE(ui::userZoomed(loss));
  EXPECT_FALSE(ui::userZoomed(variance));
  EXPECT_TRUE(ui::zoomBadgeText(loss).isEmpty());
}
