// The one loader and the one spec: the store poller's loader thread reads and assembles a
// group's series and hands the GUI thread immutable snapshots; the curves it pre-decimates
// keep every layer's extent; the exported variance figure and the dashboard's variance panel
// are one spec drawn twice (same axis name, scale and ranges); the figure set is what the
// metric catalogue flags for export.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QTest>
#include <QThread>

#include <algorithm>

#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "dashboard/panel_specs.h"
#include "dashboard/series_loader.h"
#include "export/figure_export.h"
#include "plot/series_adapter.h"
#include "store_poller.h"

using namespace depthlab;

namespace {

// The axis rects of a paper figure that hold curves, left to right.
std::vector<QCPAxisRect*> curveRects(QCustomPlot* plot) {
  std::vector<QCPAxisRect*> out;
  for (auto* rect : plot->axisRects()) {
    if (!rect->graphs().isEmpty()) out.push_back(rect);
  }
  return out;
}

// The group's dashboard `d` (loaded from `s`) and the exported variance figure of `runs` on
// `paper`: the two views of one spec. Returns the figure's curve panels.
std::vector<QCPAxisRect*> drawBothViews(store::RunStore& s, ui::GroupDashboard& d,
                                        QCustomPlot& paper, std::vector<int64_t> runs) {
  d.resize(1400, 900);
  d.refresh(s, {});
  ui::ExportRequest req;
  req.runs = std::move(runs);
  req.figure = QStringLiteral("variance");
  ui::drawFigure(&paper, s, req);
  return curveRects(&paper);
}

}  // namespace

TEST(SeriesLoader, ThePollerDeliversSnapshotsLoadedOffTheGuiThread) {
  test::TempDir dir;
  const std::string path = dir.file("s.db");
  int64_t id = 0;
  {
    auto s = store::RunStore::open(path);
    id = test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1, 4, 100, {0, 50}, 2.0, false});
  }
  ui::StorePoller poller(store::RunStore::open(path), 100000);  // polled by hand here
  ASSERT_EQ(ui::StorePoller::owning(poller.store()), &poller);
  ui::GroupDashboard d(QStringLiteral("g"));
  d.refresh(poller.store(), {});  // the first load too: on the loader thread
  EXPECT_TRUE(d.loading());
  EXPECT_FALSE(d.isLoaded());
  QTRY_VERIFY_WITH_TIMEOUT(d.isLoaded(), 5000);
  ASSERT_EQ(d.data().runs().size(), 1u);
  EXPECT_NE(d.snapshot()->loadedOn(), QThread::currentThreadId()) << "first load on the GUI thread";
  const ui::GroupSnapshot first = d.snapshot();
  EXPECT_EQ(first->runs()[0].stepsDone(), 100);
  {
    auto writer = store::RunStore::open(path);
    store::WriteBatch b;
    for (int step = 100; step < 120; ++step) b.scalar(step, metrics::kLossTrain, 1.0);
    writer.write(id, b);
  }
  d.refresh(poller.store(), {id});
  EXPECT_TRUE(d.loading()) << "with the window's store, the poller's loader thread reads";
  QTRY_COMPARE_WITH_TIMEOUT(d.data().runs()[0].stepsDone(), 120, 5000);
  EXPECT_FALSE(d.loading());
  EXPECT_NE(d.snapshot()->loadedOn(), QThread::currentThreadId()) << "loaded on the GUI thread";
  EXPECT_NE(d.snapshot()->loadedOn(), nullptr);
  // The snapshot the GUI held is immutable: the new rows went into a copy.
  EXPECT_EQ(first->runs()[0].stepsDone(), 100);
  // The curves panel draws from the overview the loader assembled.
  EXPECT_EQ(d.snapshot()->runs()[0].overview.count(metrics::kVariance), 1u);
}

TEST(SeriesLoader, TheLoaderAnswersOnTheGuiThreadAndNotWhenTheReceiverIsGone) {
  test::TempDir dir;
  const std::string path = dir.file("s.db");
  {
    auto s = store::RunStore::open(path);
    test::addFakeRun(s, test::FakeRun{"g", "lns", 1, 3, 50, {0}});
  }
  ui::StorePoller poller(store::RunStore::open(path), 100000);
  QObject receiver;
  ui::GroupSnapshot got;
  Qt::HANDLE answeredOn = nullptr;
  ASSERT_TRUE(
      poller.loadAsync(QStringLiteral("g"), nullptr, {}, &receiver, [&](ui::GroupSnapshot s) {
        got = std::move(s);
        answeredOn = QThread::currentThreadId();
      }));
  QTRY_VERIFY_WITH_TIMEOUT(got != nullptr, 5000);
  EXPECT_EQ(answeredOn, QThread::currentThreadId());
  EXPECT_NE(got->loadedOn(), QThread::currentThreadId());
  EXPECT_EQ(got->runs().size(), 1u);
  // A receiver closed before the answer: nothing is called.
  bool called = false;
  auto* gone = new QObject;
  poller.loadAsync(QStringLiteral("g"), nullptr, {}, gone,
                   [&](ui::GroupSnapshot) { called = true; });
  delete gone;
  QTest::qWait(300);
  EXPECT_FALSE(called);
}

TEST(SeriesLoader, TheOverviewKeepsEveryLayersExtentInStepOrder) {
  store::LayerSeries s;
  s.nLayers = 3;
  for (int step = 0; step < 5000; ++step) {
    s.steps.push_back(step);
    for (int l = 0; l < 3; ++l)
      s.values.push_back(static_cast<float>((l + 1) * std::sin(step * 0.01 * (l + 1))));
  }
  s.values[1234 * 3 + 1] = 50.0f;  // a spike in layer 2
  const auto overview = ui::layerOverview(s, 100);
  ASSERT_EQ(overview.size(), 3u);
  for (int l = 0; l < 3; ++l) {
    const auto& o = overview[static_cast<size_t>(l)];
    EXPECT_LE(o.keys.size(), 202);  // two a column; the last step closes a column of its own
    EXPECT_TRUE(std::is_sorted(o.keys.begin(), o.keys.end()));
    float lo = 1e9f, hi = -1e9f;
    for (int i = 0; i < 5000; ++i)
      lo = std::min(lo, s.values[static_cast<size_t>(i * 3 + l)]),
      hi = std::max(hi, s.values[static_cast<size_t>(i * 3 + l)]);
    EXPECT_DOUBLE_EQ(*std::min_element(o.values.begin(), o.values.end()), lo) << "layer " << l + 1;
    EXPECT_DOUBLE_EQ(*std::max_element(o.values.begin(), o.values.end()), hi) << "layer " << l + 1;
    // Re-decimated to a panel's width, as the full series decimated there.
    std::vector<store::ScalarPoint> pts;
    for (int i = 0; i < 5000; ++i) pts.push_back({i, s.values[static_cast<size_t>(i * 3 + l)]});
    const auto direct = ui::decimateMinMax(pts, 0, 4999, 50);
    const auto viaOverview = ui::decimateMinMax(o, 0, 4999, 50);
    EXPECT_DOUBLE_EQ(*std::max_element(direct.values.begin(), direct.values.end()),
                     *std::max_element(viaOverview.values.begin(), viaOverview.values.end()));
    EXPECT_LE(viaOverview.keys.size(), 102);
  }
}

TEST(OneSpec, TheVarianceFigureAndTheDashboardPanelAgreeOnNameScaleAndRanges) {
  test::TempDir dir;
  const std::string path = dir.file("f.db");
  auto s = store::RunStore::open(path);
  // Pre-LN's variance dwarfs LNS's (thousands beside tenths): both views go logarithmic.
  const int64_t pre = test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1, 6});
  const int64_t lns = test::addFakeRun(s, test::FakeRun{"g", "lns", 1, 6});
  ui::GroupDashboard d(QStringLiteral("g"));
  QCustomPlot paper;
  const auto rects = drawBothViews(s, d, paper, {pre, lns});
  ASSERT_EQ(rects.size(), 2u);
  const auto* spec = ui::dashboard::panelSpec(QStringLiteral("variance"));
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->yLabel, QStringLiteral("output variance"));  // the catalogue's label
  for (size_t i = 0; i < rects.size(); ++i) {
    auto* panel = d.plots().at(QStringLiteral("variance:") +
                               (i == 0 ? QStringLiteral("pre_ln") : QStringLiteral("lns")));
    auto* y = rects[i]->axis(QCPAxis::atLeft);
    auto* x = rects[i]->axis(QCPAxis::atBottom);
    if (i == 0) EXPECT_EQ(y->label(), panel->yAxis->label());
    EXPECT_EQ(y->scaleType(), QCPAxis::stLogarithmic) << "panel " << i;
    EXPECT_EQ(panel->yAxis->scaleType(), QCPAxis::stLogarithmic) << "panel " << i;
    EXPECT_DOUBLE_EQ(x->range().lower, panel->xAxis->range().lower);
    EXPECT_DOUBLE_EQ(x->range().upper, panel->xAxis->range().upper);
  }
}

TEST(OneSpec, RunsOfOneMagnitudeShareALinearScaleFromZeroInBothViews) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("f.db"));
  const int64_t a = test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1, 5});
  const int64_t b = test::addFakeRun(s, test::FakeRun{"g", "post_ln", 1, 5});
  ui::GroupDashboard d(QStringLiteral("g"));
  QCustomPlot paper;
  const auto rects = drawBothViews(s, d, paper, {a, b});
  ASSERT_EQ(rects.size(), 2u);
  auto* panel = d.plots().at(QStringLiteral("variance:pre_ln"));
  EXPECT_EQ(panel->yAxis->scaleType(), QCPAxis::stLinear);
  EXPECT_EQ(rects[0]->axis(QCPAxis::atLeft)->scaleType(), QCPAxis::stLinear);
  EXPECT_DOUBLE_EQ(panel->yAxis->range().lower, 0.0);
  EXPECT_NEAR(rects[0]->axis(QCPAxis::atLeft)->range().upper, panel->yAxis->range().upper,
              1e-9 * panel->yAxis->range().upper);
}

TEST(OneSpec, TheExportedFiguresAreThoseOfMetricsTheCatalogueExports) {
  const auto figures = ui::dashboard::exportedFigures();
  for (const char* f : {"loss", "variance", "angular", "pruning"}) {
    EXPECT_NE(std::find(figures.begin(), figures.end(), QString::fromLatin1(f)), figures.end())
        << f;
  }
  // The axis rules come from the catalogue: variance may be logarithmic, pruning deltas not.
  EXPECT_TRUE(ui::dashboard::logAxis(*ui::dashboard::panelSpec(QStringLiteral("variance"))));
  EXPECT_FALSE(ui::dashboard::logAxis(*ui::dashboard::panelSpec(QStringLiteral("prune_bars"))));
  EXPECT_EQ(ui::dashboard::metricLabel(QStringLiteral("prune_delta")),
            QStringLiteral("pruning delta (nats)"));
  // One value / error pairing for every view.
  EXPECT_EQ(ui::dashboard::errorMetricOf(metrics::kPruneDelta), metrics::kPruneDeltaError);
  EXPECT_EQ(ui::dashboard::errorMetricOf(metrics::kBlockPrune), metrics::kBlockPruneError);
  EXPECT_EQ(ui::dashboard::errorMetricOf(metrics::kVariance), "");
}
