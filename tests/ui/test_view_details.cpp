// Smaller things a researcher meets in the lab, each seen once broken: what the status bar says
// when a group ends, the smoothing slider's value and width on a 1366 x 768 screen, a runs
// filter that cannot be one said to be invalid, a tokens axis that reads 100k, a number typed
// outside a box's range said at once, messages in the form's words, not config keys, and a
// comparison that drops deleted runs.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QFocusEvent>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTest>

#include <filesystem>

#include "compare/compare_view.h"
#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "launch/group_end_text.h"
#include "launch/run_launcher.h"
#include "main_window.h"
#include "plot/axis_fit.h"
#include "runs/runs_filter_model.h"
#include "runs/runs_table_model.h"
#include "setup/setup_panel.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(ViewDetails, AGroupsEndSaysWhatBecameOfItsRuns) {
  auto run = [](const char* group, store::RunStatus status) {
    store::RunInfo r;
    r.groupName = group;
    r.status = status;
    return r;
  };
  using S = store::RunStatus;
  const QString g = QStringLiteral("g");
  EXPECT_EQ(ui::groupEndMessage(
                g, {run("g", S::Stopped), run("g", S::Stopped), run("h", S::Finished)}, 0, {}),
            QStringLiteral("Group g stopped"));
  EXPECT_EQ(ui::groupEndMessage(g, {run("g", S::Finished), run("g", S::Finished)}, 0, {}),
            QStringLiteral("Group g finished"));
  EXPECT_EQ(ui::groupEndMessage(g, {run("g", S::Finished), run("g", S::Stopped)}, 0, {}),
            QStringLiteral("Group g ended: 1 finished, 1 stopped"));
  EXPECT_EQ(ui::groupEndMessage(g, {run("g", S::Crashed)}, 1, QStringLiteral("a\nout of memory\n")),
            QStringLiteral("Group g ended with an error: out of memory"));
}

TEST(ViewDetails, TheSmoothingSliderShowsItsValueAndKeepsItsWidthOnASmallScreen) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
  ui::GroupDashboard d(QStringLiteral("g"));
  d.resize(1366 - 420, 700);  // a 1366 x 768 screen, the set-up panel docked beside it
  d.show();
  d.refresh(s, {});
  auto* slider = d.findChild<QSlider*>(QStringLiteral("smoothing"));
  auto* value = d.findChild<QLabel*>(QStringLiteral("smoothingValue"));
  ASSERT_NE(slider, nullptr);
  ASSERT_NE(value, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(slider->width() >= 90, 2000);
  EXPECT_TRUE(slider->isVisible());
  EXPECT_EQ(value->text(), QStringLiteral("0.60"));
  slider->setValue(85);
  EXPECT_EQ(value->text(), QStringLiteral("0.85"));
  EXPECT_GE(value->width(), value->fontMetrics().horizontalAdvance(value->text()));
  EXPECT_LE(d.minimumSizeHint().width(), 1366 - 420);  // the options wrap rather than widen it
}

TEST(ViewDetails, ARunsFilterThatCannotBeOneSaysSo) {
  ui::RunsFilterModel f;
  f.setRunFilter(QStringLiteral("val loss < abc"), -1);
  EXPECT_TRUE(f.filterInvalid());
  EXPECT_TRUE(f.filterDescription().contains(QStringLiteral("\"abc\" is not a number")))
      << f.filterDescription().toStdString();
  f.setRunFilter(QStringLiteral("vall loss < 1.5"), -1);
  EXPECT_TRUE(f.filterInvalid());
  EXPECT_TRUE(f.filterDescription().contains(QStringLiteral("no column \"vall loss\"")))
      << f.filterDescription().toStdString();
  f.setRunFilter(QStringLiteral("val loss < 1.5"), -1);
  EXPECT_FALSE(f.filterInvalid());
  EXPECT_TRUE(f.filterDescription().startsWith(QStringLiteral("runs where")))
      << f.filterDescription().toStdString();
  f.setRunFilter(QStringLiteral("lns"), -1);  // free text
  EXPECT_FALSE(f.filterInvalid());
}

TEST(ViewDetails, ATokensAxisReadsShortCounts) {
  EXPECT_EQ(ui::figures::compactCount(100000), QStringLiteral("100k"));
  EXPECT_EQ(ui::figures::compactCount(1500000), QStringLiteral("1.5M"));
  EXPECT_EQ(ui::figures::compactCount(2e9), QStringLiteral("2B"));
  EXPECT_EQ(ui::figures::compactCount(950), QStringLiteral("950"));
  EXPECT_EQ(ui::figures::compactCount(0), QStringLiteral("0"));
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
  ui::GroupDashboard d(QStringLiteral("g"));
  d.resize(1400, 1200);
  d.show();
  d.refresh(s, {});
  d.setLossAxis(QStringLiteral("tokens"));
  auto* loss = d.plots().at(QStringLiteral("loss"));
  loss->replot(QCustomPlot::rpImmediateRefresh);
  QStringList labels = loss->xAxis->tickVectorLabels().toList();
  ASSERT_FALSE(labels.isEmpty());
  bool shortened = false;
  for (const auto& l : labels) {
    EXPECT_LE(l.size(), 5) << l.toStdString();
    shortened = shortened || l.endsWith(QLatin1Char('k')) || l.endsWith(QLatin1Char('M'));
  }
  EXPECT_TRUE(shortened) << labels.join(QLatin1Char(' ')).toStdString();
  d.setLossAxis(QStringLiteral("step"));
  loss->replot(QCustomPlot::rpImmediateRefresh);
  for (const auto& l : loss->xAxis->tickVectorLabels())
    EXPECT_FALSE(l.endsWith(QLatin1Char('k'))) << l.toStdString();
}

TEST(ViewDetails, ANumberTypedOutsideItsRangeIsSaidAndLeavingTakesTheNearest) {
  ui::SetupPanel p;
  auto* width = p.findChild<QSpinBox*>(QStringLiteral("model.dModel"));
  auto* issues = p.findChild<QLabel*>(QStringLiteral("issues"));
  ASSERT_NE(width, nullptr);
  ASSERT_NE(issues, nullptr);
  ASSERT_TRUE(p.launchEnabled());
  width->selectAll();
  QTest::keyClicks(width, QStringLiteral("6"));
  EXPECT_TRUE(issues->text().contains(QStringLiteral("Width: 6 is below the smallest, 8")))
      << issues->text().toStdString() << " / typed: " << width->text().toStdString();
  EXPECT_FALSE(p.launchEnabled());
  QFocusEvent out(QEvent::FocusOut, Qt::TabFocusReason);  // Tab: the nearest allowed value
  QApplication::sendEvent(width, &out);
  EXPECT_EQ(width->value(), 8);
  EXPECT_FALSE(issues->text().contains(QStringLiteral("is below the smallest")))
      << issues->text().toStdString();
}

TEST(ViewDetails, SetupMessagesNameFieldsByTheirLabels) {
  ui::SetupPanel p;
  p.setField(QStringLiteral("model.nHeads"), 5);  // 64 is not divisible by 5
  auto* issues = p.findChild<QLabel*>(QStringLiteral("issues"));
  ASSERT_NE(issues, nullptr);
  EXPECT_TRUE(issues->text().contains(QStringLiteral("Heads:"))) << issues->text().toStdString();
  EXPECT_FALSE(issues->text().contains(QStringLiteral("model."))) << issues->text().toStdString();
}

TEST(ViewDetails, AComparisonLosesRunsDeletedFromTheStore) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
    test::addFakeRun(s, test::FakeRun{"g", "lns", 1});
    test::addFakeRun(s, test::FakeRun{"h", "pre_ln", 2});
  }
  ui::MainWindow w(store::RunStore::open(dir.file("lab.db")),
                   ui::MainWindowOptions{{},
                                         {},
                                         QString::fromStdString(depthlab::test::cliPath()),
                                         QString::fromStdString(dir.file("window.ini"))});
  auto* tabs = qobject_cast<QTabWidget*>(w.centralWidget());
  ASSERT_NE(tabs, nullptr);
  auto* v = w.compareRuns({1, 2, 3});
  ASSERT_NE(v, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(v->isLoaded(), 5000);  // read on the loader thread
  w.showTab(v);
  auto comparison = [&]() -> ui::CompareView* {
    return qobject_cast<ui::CompareView*>(tabs->currentWidget());
  };
  w.deleteRuns({3}, true);
  ASSERT_NE(comparison(), nullptr);
  EXPECT_EQ(comparison()->runIds(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(tabs->tabText(tabs->currentIndex()), QStringLiteral("Compare 1,2"));
  w.deleteRuns({2}, true);  // one run left: nothing to compare
  for (int i = 0; i < tabs->count(); ++i)
    EXPECT_EQ(qobject_cast<ui::CompareView*>(tabs->widget(i)), nullptr);
}

TEST(ViewDetails, AQueuedGroupSaysItsPlaceAndLeavesNoCellBlank) {
  test::TempDir dir;
  const std::string cli = dir.file("slow-cli.sh");  // a training process that takes its time
  test::writeFile(cli, "#!/bin/sh\nsleep 20\n");
  std::filesystem::permissions(cli, std::filesystem::perms::owner_all);
  ui::RunLauncher launcher(QString::fromStdString(dir.file("lab.db")), QString::fromStdString(cli));
  launcher.setMaxParallel(1);
  auto c = *experiment::presetConfig("tiny");
  std::vector<experiment::ExperimentConfig> groups(3, c);
  for (int i = 0; i < 3; ++i) groups[static_cast<size_t>(i)].name = "q" + std::to_string(i);
  launcher.enqueueGroups(groups);
  EXPECT_EQ(launcher.queuePosition(QStringLiteral("q0")), 0);  // started
  EXPECT_EQ(launcher.queuePosition(QStringLiteral("q1")), 1);
  EXPECT_EQ(launcher.queuePosition(QStringLiteral("q2")), 2);
  ui::RunsTableModel m;
  m.resetRuns(
      {}, {},
      {{QStringLiteral("q1"), QStringLiteral("lns"), QStringLiteral("queued: 1 of 2 in line")}});
  ASSERT_EQ(m.rowCount(), 1);
  for (int col = 0; col < m.columnCount(); ++col) {
    EXPECT_FALSE(m.index(0, col).data().toString().isEmpty())
        << ui::RunsTableModel::columnName(col).toStdString();
  }
  launcher.clearQueue();
}
