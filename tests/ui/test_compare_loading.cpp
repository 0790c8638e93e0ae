// The window's comparison, dashboard and figure dialog read their runs off the GUI thread: a
// Compare tab opens at once saying it is reading, the store poller's loader thread reads the
// runs, and the view is built from what it read (the same as a comparison read in place); a
// failed read says so; the dashboard and the figure dialog's preview wait for theirs alike.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QLabel>
#include <QTabWidget>
#include <QTest>
#include <QThread>

#include "compare/compare_data.h"
#include "compare/compare_view.h"
#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "export/figure_dialog.h"
#include "main_window.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::unique_ptr<ui::MainWindow> windowOn(const test::TempDir& dir) {
  return std::make_unique<ui::MainWindow>(
      store::RunStore::open(dir.file("lab.db")),
      ui::MainWindowOptions{{},
                            {},
                            QString::fromStdString(depthlab::test::cliPath()),
                            QString::fromStdString(dir.file("window.ini"))});
}

}  // namespace

TEST(CompareLoading, TheWindowsComparisonIsReadOnTheLoaderThreadAndShowsWhatItRead) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
    test::addFakeRun(s, test::FakeRun{"g", "lns", 1, 6, 200, {0, 50, 100, 150}, 1.8});
  }
  auto w = windowOn(dir);
  auto* v = w->compareRuns({1, 2});
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->isLoaded()) << "read on the GUI thread before the tab opened";
  auto* reading = v->findChild<QLabel*>(QStringLiteral("compareLoading"));
  ASSERT_NE(reading, nullptr);
  EXPECT_TRUE(reading->text().contains(QStringLiteral("Reading 2 runs")))
      << reading->text().toStdString();
  EXPECT_EQ(v->runIds(), (std::vector<int64_t>{1, 2}));  // those asked for, while it reads
  QTRY_VERIFY_WITH_TIMEOUT(v->isLoaded(), 5000);
  EXPECT_NE(v->readOn(), nullptr);
  EXPECT_NE(v->readOn(), QThread::currentThreadId()) << "the comparison was read on the GUI thread";
  EXPECT_TRUE(reading->isHidden());
  // What it shows is what a comparison read in place shows.
  auto s = store::RunStore::open(dir.file("lab.db"), store::RunStore::Mode::ReadOnly);
  ui::CompareView here(s, {1, 2});
  EXPECT_EQ(here.readOn(), QThread::currentThreadId());
  EXPECT_EQ(v->runIds(), here.runIds());
  EXPECT_EQ(v->statsText(), here.statsText());
  EXPECT_EQ(v->differencePair(), here.differencePair());
  EXPECT_EQ(v->resultsTable().toCsv(), here.resultsTable().toCsv());
  v->redraw();
  here.redraw();
  for (const auto& [name, plot] : here.plots()) {
    ASSERT_TRUE(v->plots().count(name)) << name.toStdString();
    EXPECT_EQ(v->plots().at(name)->plottableCount(), plot->plottableCount()) << name.toStdString();
  }
}

TEST(CompareLoading, AComparisonWhoseReadFailedSaysSoAndStaysEmpty) {
  ui::CompareView v({4, 5});
  v.setLoadError(QStringLiteral("database disk image is malformed"));
  auto* reading = v.findChild<QLabel*>(QStringLiteral("compareLoading"));
  ASSERT_NE(reading, nullptr);
  EXPECT_TRUE(reading->text().contains(
      QStringLiteral("could not be read: database disk image is malformed")));
  EXPECT_FALSE(v.isLoaded());
  EXPECT_TRUE(v.plots().empty());
  v.redraw();  // nothing to draw, nothing crashes
  EXPECT_EQ(v.statsText(), QString());
  EXPECT_EQ(v.mismatchText(), QString());
}

TEST(CompareLoading, TheWindowsDashboardOpensAtOnceAndReadsOnTheLoaderThread) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
  }
  auto w = windowOn(dir);
  EXPECT_EQ(w->dashboard(QStringLiteral("no such group")), nullptr);
  auto* d = w->dashboard(QStringLiteral("g"));
  ASSERT_NE(d, nullptr);
  EXPECT_FALSE(d->isLoaded());
  EXPECT_TRUE(d->loading());
  QTRY_VERIFY_WITH_TIMEOUT(d->isLoaded(), 5000);
  EXPECT_NE(d->snapshot()->loadedOn(), QThread::currentThreadId())
      << "first load on the GUI thread";
  EXPECT_EQ(d->data().runs().size(), 1u);
}

TEST(CompareLoading, TheWindowsFigureDialogReadsItsRunsOnTheLoaderThread) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
    test::addFakeRun(s, test::FakeRun{"g", "lns", 1});
  }
  auto w = windowOn(dir);
  auto* dialog = w->openFigureDialog({1, 2}, QStringLiteral("variance"));
  ASSERT_NE(dialog, nullptr);
  EXPECT_TRUE(dialog->isReading()) << "the runs were read on the GUI thread";
  EXPECT_TRUE(dialog->previewImage().isNull());
  QTRY_VERIFY_WITH_TIMEOUT(!dialog->isReading(), 5000);
  QTRY_VERIFY_WITH_TIMEOUT(!dialog->previewImage().isNull(), 5000);  // drawn from what it read
  EXPECT_TRUE(dialog->warnings().contains(QStringLiteral("cm")))
      << dialog->warnings().toStdString();
}
