// Compare that does not mislead (#56 point 4): runs of different sequence length are named in a
// warning above the plots and before the LNS gain, matched runs get none; the loss plot's hover
// lists every run's value at the step; the diagnosis tables show every row without a scroll
// bar, three significant figures and distinct headers, with the run's own thresholds; each
// proxy's scatter prints the Spearman rho that analysis::spearman gives for its points.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSet>
#include <QTableWidget>
#include <QToolTip>

#include "analysis/layer_diagnosis.h"
#include "compare/compare_diagnosis.h"
#include "compare/compare_view.h"
#include "daily_use_fixtures.h"
#include "experiment/run_config.h"
#include "plot/plot_helpers.h"

using namespace depthlab;

namespace {

// A pre_ln and an lns run; the lns one trained at `lnsSeqLen`.
std::vector<int64_t> pair(store::RunStore& s, int lnsSeqLen) {
  const int64_t a = test::addFakeRun(s, {"g", "pre_ln", 1});
  test::FakeRun lns{"g", "lns", 1};
  lns.lazyThreshold = 0.1;
  const int64_t b = test::addFakeRun(s, lns);
  auto c = experiment::configOf(*s.run(b));
  c.model.seqLen = lnsSeqLen;
  s.setRunConfig(b, experiment::toJson(c).dump());
  return {a, b};
}

QLabel* gainLabel(const ui::CompareView& v) {
  for (auto* l : v.findChildren<QLabel*>()) {
    if (l->text().contains(QStringLiteral("LNS perplexity gain"))) return l;
  }
  return nullptr;
}

// Significant digits of a number written as text ("0.0429" -> 3, "1.23e+03" -> 3, "12" -> 2).
int significantDigits(QString t) {
  t.remove(QRegularExpression(QStringLiteral("e[+-]?\\d+$")));
  t.remove(QLatin1Char('-')).remove(QLatin1Char('.'));
  t.remove(QRegularExpression(QStringLiteral("^0+")));
  return static_cast<int>(t.size());
}

}  // namespace

TEST(CompareHonest, RunsOfDifferentSequenceLengthAreWarnedAboutAboveThePlotsAndBeforeTheGain) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const auto ids = pair(s, 32);
  ui::CompareView v(s, ids);
  v.resize(1400, 900);
  v.show();
  QApplication::processEvents();
  const QString expected =
      QStringLiteral("runs %1 and %2 differ in sequence length: 64 vs 32").arg(ids[0]).arg(ids[1]);
  EXPECT_TRUE(v.mismatchText().contains(expected)) << v.mismatchText().toStdString();
  auto* banner = v.findChild<QLabel*>(QStringLiteral("mismatchWarning"));
  ASSERT_NE(banner, nullptr);
  EXPECT_TRUE(banner->isVisible());
  auto* loss = v.plots().at(QStringLiteral("loss"));
  EXPECT_LT(banner->mapTo(&v, QPoint(0, 0)).y(), loss->mapTo(&v, QPoint(0, 0)).y());  // above
  auto* gain = gainLabel(v);
  ASSERT_NE(gain, nullptr);
  EXPECT_TRUE(gain->text().startsWith(QStringLiteral("\u26a0"))) << gain->text().toStdString();
  EXPECT_LT(gain->text().indexOf(expected),
            gain->text().indexOf(QStringLiteral("LNS perplexity gain")));
  // The depth trend's panel says so too.
  auto* depth = v.plots().at(QStringLiteral("depth_scaling"));
  auto* title = qobject_cast<QCPTextElement*>(depth->plotLayout()->element(0, 0));
  ASSERT_NE(title, nullptr);
  EXPECT_EQ(title->text(), QStringLiteral("\u26a0 mixes runs of different sequence length"));
}

TEST(CompareHonest, RunsOfOneSetupGetNoWarning) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  ui::CompareView v(s, pair(s, 64));
  EXPECT_EQ(v.mismatchText(), QString());
  EXPECT_TRUE(v.findChild<QLabel*>(QStringLiteral("mismatchWarning"))->isHidden());
  ASSERT_NE(gainLabel(v), nullptr);
  EXPECT_FALSE(gainLabel(v)->text().contains(QStringLiteral("\u26a0")));
  EXPECT_EQ(qobject_cast<QCPTextElement*>(
                v.plots().at(QStringLiteral("depth_scaling"))->plotLayout()->element(0, 0)),
            nullptr);
}

// Two Pre-LN seed groups of one shape that differ in sequence length: the statistics name each
// by its runs (both had read "pre_ln | L=6 d=64").
TEST(CompareHonest, SeedGroupsThatDifferOnlyInWhatTheWarningNamesAreToldApartByTheirRuns) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const int64_t a = test::addFakeRun(s, {"g", "pre_ln", 1});
  const int64_t b = test::addFakeRun(s, {"h", "pre_ln", 2});
  auto c = experiment::configOf(*s.run(b));
  c.model.seqLen = 32;
  s.setRunConfig(b, experiment::toJson(c).dump());
  ui::CompareView v(s, {a, b});
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("L=6 d=64 (#%1)").arg(a))) << v.statsText().toStdString();
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("L=6 d=64 (#%1)").arg(b))) << v.statsText().toStdString();
}

TEST(CompareHonest, HoverOverTheLossPlotListsEveryRunsValueAtTheNearestLoggedStep) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const auto ids = pair(s, 64);
  ui::CompareView v(s, ids);
  v.resize(1400, 900);
  v.show();
  QApplication::processEvents();
  const QString text = v.stepHoverText(120.3);
  const QStringList lines = text.split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 3) << text.toStdString();  // the step, then one line per run
  EXPECT_TRUE(lines[0].startsWith(QStringLiteral("step 120 (train smoothed")))
      << text.toStdString();
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto train = ui::smooth(s.scalarSeries(ids[i], metrics::kLossTrain), 0.9);
    const auto val = s.scalarSeries(ids[i], metrics::kLossVal);  // one point, at step 199
    const QString want = QStringLiteral("%1: train %2 at 120 \u00b7 val %3 at 199")
                             .arg(v.labelWithId(ids[i]))
                             .arg(train[120].value, 0, 'g', 4)
                             .arg(val.back().value, 0, 'g', 4);
    EXPECT_EQ(lines[static_cast<int>(i) + 1], want);
  }
  // The pointer over the plot shows that text and a line at the step.
  auto* loss = v.plots().at(QStringLiteral("loss"));
  loss->replot();
  const QPoint at(static_cast<int>(loss->xAxis->coordToPixel(120)),
                  static_cast<int>(loss->axisRect()->center().y()));
  QMouseEvent move(QEvent::MouseMove, QPointF(at), QPointF(loss->mapToGlobal(at)), Qt::NoButton,
                   Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(loss, &move);
  const double step = loss->xAxis->pixelToCoord(at.x());
  EXPECT_EQ(QToolTip::text(), v.stepHoverText(step));
  QCPItemStraightLine* line = nullptr;
  for (int i = 0; i < loss->itemCount(); ++i) {
    if (auto* l = qobject_cast<QCPItemStraightLine*>(loss->item(i))) line = l;
  }
  ASSERT_NE(line, nullptr);
  EXPECT_TRUE(line->visible());
  EXPECT_DOUBLE_EQ(line->point1->coords().x(), step);
}

TEST(CompareHonest, DiagnosisTablesShowEveryRowInThreeSignificantFiguresUnderDistinctHeaders) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const auto ids = pair(s, 64);
  ui::CompareView v(s, ids);
  v.resize(1366, 768);
  v.show();
  QApplication::processEvents();
  for (int64_t id : ids) {
    SCOPED_TRACE(id);
    auto* t = v.findChild<QTableWidget*>(QStringLiteral("diagnosisTable:%1").arg(id));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->rowCount(), 6);
    EXPECT_EQ(t->verticalScrollBar()->maximum(), 0);  // every row shown: nothing to scroll to
    EXPECT_EQ(t->horizontalScrollBar()->maximum(), 0);
    QSet<QString> headers;
    for (int c = 0; c < t->columnCount(); ++c) headers.insert(t->horizontalHeaderItem(c)->text());
    EXPECT_EQ(headers.size(), t->columnCount());
    int numbers = 0;
    for (int r = 0; r < t->rowCount(); ++r) {
      for (int c = 0; c < t->columnCount(); ++c) {
        bool ok = false;
        const QString cell = t->item(r, c)->text();
        cell.toDouble(&ok);
        if (!ok) continue;
        ++numbers;
        EXPECT_LE(significantDigits(cell), 3) << cell.toStdString();
      }
    }
    EXPECT_GT(numbers, 6 * 8);
    // The thresholds are the run's own (the lns run's lazy threshold is 0.1).
    auto* thresholds = v.findChild<QLabel*>(QStringLiteral("diagnosisThresholds:%1").arg(id));
    ASSERT_NE(thresholds, nullptr);
    EXPECT_TRUE(thresholds->text().contains(
        QStringLiteral("below %1 is lazy")
            .arg(id == ids[1] ? QStringLiteral("0.1") : QStringLiteral("0.05"))))
        << thresholds->text().toStdString();
  }
  EXPECT_EQ(ui::sig3(0.3 / 7), QStringLiteral("0.0429"));
  EXPECT_EQ(ui::sig3(1234.5), QStringLiteral("1.23e+03"));
}

TEST(CompareHonest, EachProxyScatterPrintsTheSpearmanRhoOfItsOwnPoints) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const auto ids = pair(s, 64);
  ui::CompareView v(s, ids);
  const auto d = analysis::diagnoseLayers(s, ids[0]);
  ASSERT_EQ(d.proxies.size(), 3u);
  for (const auto& p : d.proxies) {
    SCOPED_TRACE(p.key);
    auto* plot = v.findChild<QCustomPlot*>(
        QStringLiteral("diagnosisScatter:%1:%2").arg(ids[0]).arg(QString::fromStdString(p.key)));
    ASSERT_NE(plot, nullptr);
    std::vector<double> x, y;
    for (int g = 0; g < plot->graphCount(); ++g) {
      for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd();
           ++it) {
        x.push_back(it->key);
        y.push_back(it->value);
      }
    }
    EXPECT_EQ(x.size(), 6u);  // one point per layer
    const auto rho = analysis::spearman(x, y);
    ASSERT_TRUE(rho && p.spearmanVsPruning);
    EXPECT_NEAR(*rho, *p.spearmanVsPruning, 1e-6);
    EXPECT_NEAR(plot->property("spearman").toDouble(), *rho, 1e-12);
    auto* title = qobject_cast<QCPTextElement*>(plot->plotLayout()->element(0, 0));
    ASSERT_NE(title, nullptr);
    EXPECT_TRUE(title->text().contains(QStringLiteral("\u03c1 = %1").arg(*rho, 0, 'f', 2)))
        << title->text().toStdString();
  }
}
