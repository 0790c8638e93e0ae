// The figure builders (plot/figure_builders.h) are what the dashboard and the paper-figure
// export both draw with: for the same stored runs, the dashboard's pruning bars and variance
// curves and the exported pruning and variance figures hold the same data, bar for bar and
// point for point; and the builders themselves place grouped bars and colour curves by layer.
// Pruning deltas' standard errors show as error bars and in the hover text.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QApplication>

#include <cmath>
#include <map>
#include <memory>

#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "experiment/group_names.h"
#include "export/figure_export.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/plot_helpers.h"
#include "store/metric_catalogue.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

constexpr int kLayers = 5;

// A `scheme` run of group "pair" (its default name), 5 layers, planned for `steps` updates.
int64_t createPairRun(store::RunStore& s, const std::string& scheme, int steps) {
  store::NewRun nr;
  nr.name = experiment::defaultRunName("pair", scheme, 0);
  nr.groupName = "pair";
  nr.scheme = scheme;
  nr.configJson = R"({"model":{"nLayers":5},"optim":{"steps":)" + std::to_string(steps) + "}}";
  return s.createRun(nr);
}

// pre_ln and lns runs of group "pair" (default names): variance and pruning at steps 0, 50, 100.
std::vector<int64_t> writePair(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "lns"}) {
    const int64_t id = createPairRun(s, scheme, 101);
    const float k = std::string(scheme) == "lns" ? 0.3f : 1.0f;
    store::WriteBatch b;
    for (int step = 0; step <= 100; step += 50) {
      b.scalar(step, metrics::kLossTrain, 4.0 - step * 0.01);
      std::vector<float> v(kLayers), d(kLayers);
      for (int l = 0; l < kLayers; ++l) {
        v[l] = k * (l + 1) * (1 + step);
        d[l] = 0.1f * (kLayers - l) * k + 0.001f * step;
      }
      b.layer(step, metrics::kVariance, v);
      b.layer(step, metrics::kPruneDelta, d);
      std::vector<float> m(kLayers * kLayers, NAN);  // (l, n): row l, column n - 1
      for (int l = 0; l < kLayers; ++l)
        for (int n = 1; l + n <= kLayers; ++n)
          m[l * kLayers + n - 1] = k * (0.1f * n + 0.01f * l) + 0.001f * step;
      b.matrix(step, metrics::kAngular, kLayers, kLayers, m);
    }
    s.write(id, b);
    ids.push_back(id);
  }
  return ids;
}

QCPColorMap* colourMapOf(QCustomPlot* p) {
  for (int i = 0; i < p->plottableCount(); ++i) {
    if (auto* m = qobject_cast<QCPColorMap*>(p->plottable(i))) return m;
  }
  return nullptr;
}

// The dashboard of group "pair", sized as on screen and loaded from the store.
std::unique_ptr<ui::GroupDashboard> openDashboard(store::RunStore& s) {
  auto d = std::make_unique<ui::GroupDashboard>(QStringLiteral("pair"));
  d->resize(1400, 2400);
  d->show();  // laid out: the panels have their real sizes (hover positions depend on them)
  d->refresh(s, {});
  QApplication::processEvents();
  return d;
}

// The paper figure `figure` for `runs`, drawn onto `paper` as the export draws it; its warnings.
QStringList drawExport(QCustomPlot* paper, store::RunStore& s, const std::vector<int64_t>& runs,
                       const QString& figure) {
  ui::ExportRequest req;
  req.runs = runs;
  req.figure = figure;
  return ui::drawFigure(paper, s, req);
}

std::vector<QCPBars*> barsOf(QCustomPlot* p) {
  std::vector<QCPBars*> out;
  for (int i = 0; i < p->plottableCount(); ++i) {
    if (auto* b = qobject_cast<QCPBars*>(p->plottable(i))) out.push_back(b);
  }
  return out;
}

std::vector<std::pair<double, double>> pointsOf(const QCPBars* b) {
  std::vector<std::pair<double, double>> out;
  for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) {
    out.emplace_back(it->key, it->value);
  }
  return out;
}

std::vector<std::pair<double, double>> pointsOf(const QCPGraph* g) {
  std::vector<std::pair<double, double>> out;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
    out.emplace_back(it->key, it->value);
  }
  return out;
}

}  // namespace

TEST(FigureBuilders, TheExportedPruningFigureHasTheDashboardsBars) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  const auto ids = writePair(s);
  auto dashboard = openDashboard(s);
  auto& d = *dashboard;
  d.setCursorStep(100);
  auto dashboardBars = barsOf(d.plots().at(QStringLiteral("prune_bars")));
  QCustomPlot paper;
  EXPECT_TRUE(drawExport(&paper, s, ids, QStringLiteral("pruning")).isEmpty());
  auto paperBars = barsOf(&paper);
  ASSERT_EQ(dashboardBars.size(), 2u);
  ASSERT_EQ(paperBars.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(pointsOf(dashboardBars[i]), pointsOf(paperBars[i])) << "run " << i;
    EXPECT_EQ(pointsOf(paperBars[i]).size(), static_cast<size_t>(kLayers));
  }
}

TEST(FigureBuilders, PruningErrorBarsShowOnTheBarsTheExportCompareAndTheHeatmapsHover) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  const auto ids = writePair(s);
  std::map<int64_t, std::vector<float>> errorsOf;  // run -> (L) at step 100
  for (int64_t id : ids) {
    store::WriteBatch b;
    for (int step = 0; step <= 100; step += 50) {
      std::vector<float> e(kLayers);
      for (int l = 0; l < kLayers; ++l) e[l] = 0.01f * (l + 1) + 0.0001f * step + 0.001f * id;
      b.layer(step, metrics::kPruneDeltaError, e);
      errorsOf[id] = e;
    }
    std::vector<float> m(kLayers * kLayers, NAN), me(kLayers * kLayers, NAN);
    for (int l = 0; l < kLayers; ++l) {
      for (int n = 1; l + n <= kLayers; ++n) {
        m[l * kLayers + n - 1] = 0.2f * n;
        me[l * kLayers + n - 1] = 0.03f + 0.001f * (l * kLayers + n);
      }
    }
    b.matrix(100, metrics::kBlockPrune, kLayers, kLayers, m);
    b.matrix(100, metrics::kBlockPruneError, kLayers, kLayers, me);
    s.write(id, b);
  }
  auto dashboard = openDashboard(s);
  dashboard->setCursorStep(100);
  auto whiskersOf = [](QCustomPlot* p) {
    std::vector<QCPErrorBars*> out;
    for (int i = 0; i < p->plottableCount(); ++i) {
      if (auto* e = qobject_cast<QCPErrorBars*>(p->plottable(i))) out.push_back(e);
    }
    return out;
  };
  auto* bars = dashboard->plots().at(QStringLiteral("prune_bars"));
  QCustomPlot paper;
  EXPECT_TRUE(drawExport(&paper, s, ids, QStringLiteral("pruning")).isEmpty());
  for (QCustomPlot* p : {bars, &paper}) {
    const auto whiskers = whiskersOf(p);
    ASSERT_EQ(whiskers.size(), 2u);
    for (size_t r = 0; r < 2; ++r) {
      ASSERT_EQ(whiskers[r]->dataCount(), kLayers);
      EXPECT_EQ(whiskers[r]->dataPlottable(), barsOf(p)[r]);
      for (int l = 0; l < kLayers; ++l) {
        EXPECT_FLOAT_EQ(whiskers[r]->data()->at(l).errorPlus, errorsOf[ids[r]][l]);
        EXPECT_FLOAT_EQ(whiskers[r]->data()->at(l).errorMinus, errorsOf[ids[r]][l]);
      }
    }
    // Every whisker ends inside the frame with room to spare (it had ended on the frame,
    // reading as cut off).
    double top = 0;
    for (size_t r = 0; r < 2; ++r) {
      for (int l = 0; l < kLayers; ++l) {
        top =
            std::max(top, pointsOf(barsOf(p)[r])[l].second + whiskers[r]->data()->at(l).errorPlus);
      }
    }
    const QCPRange y = p->yAxis->range();
    EXPECT_GE(y.upper, top + 0.04 * (top - y.lower)) << y.upper << " vs " << top;
  }
  // Hovering the first run's bar of layer 2 names the layer, the delta and its error.
  bars->replot(QCustomPlot::rpImmediateRefresh);
  const auto first = pointsOf(barsOf(bars)[0]);
  const QPoint overBar(static_cast<int>(bars->xAxis->coordToPixel(first[1].first)),
                       static_cast<int>(bars->yAxis->coordToPixel(first[1].second * 0.5)));
  const QString barText = ui::hoverText(bars, overBar);
  EXPECT_TRUE(barText.contains(QStringLiteral("layer 2:"))) << barText.toStdString();
  EXPECT_TRUE(barText.contains(QStringLiteral("\u00b1 %1").arg(errorsOf[ids[0]][1], 0, 'g', 3)))
      << barText.toStdString();
  // The block-pruning heatmap's cell (l = 1, n = 2) hovers with its standard error.
  auto* heat = dashboard->plots().at(QStringLiteral("block_prune:pre_ln"));
  heat->replot(QCustomPlot::rpImmediateRefresh);
  const QPoint overCell(static_cast<int>(heat->xAxis->coordToPixel(2)),
                        static_cast<int>(heat->yAxis->coordToPixel(2)));
  const QString cellText = ui::hoverText(heat, overCell);
  EXPECT_TRUE(
      cellText.contains(QStringLiteral("value 0.4 \u00b1 %1").arg(0.03 + 0.001 * 7, 0, 'g', 3)))
      << cellText.toStdString();
  // "Save CSV" of both panels carries the errors: the bar rows and the heatmap's cells.
  const QString barsCsv = ui::plotCsv(bars);
  EXPECT_TRUE(barsCsv.startsWith(QStringLiteral("series,x,y,value,standard_error\n")));
  const QString barRow =
      QStringLiteral("%1,2,%2,,%3\n")
          .arg(QStringLiteral("\"") + barsOf(bars)[0]->name() + QStringLiteral("\""))
          .arg(first[1].second, 0, 'g', 10)
          .arg(static_cast<double>(errorsOf[ids[0]][1]), 0, 'g', 10);
  EXPECT_TRUE(barsCsv.contains(barRow)) << barRow.toStdString() << " in\n" << barsCsv.toStdString();
  const QString heatCsv = ui::plotCsv(heat);
  const QString cellRow = QStringLiteral(",2,2,%1,%2\n")
                              .arg(static_cast<double>(0.2f * 2), 0, 'g', 10)
                              .arg(static_cast<double>(0.03f + 0.001f * 7), 0, 'g', 10);
  EXPECT_TRUE(heatCsv.contains(cellRow)) << cellRow.toStdString() << " in\n"
                                         << heatCsv.toStdString();
  // Compare's final pruning-delta profiles carry the same errors, from their last step: on the
  // curves, in the hover and in the CSV.
  ui::CompareView compare(s, ids);
  auto* profile = compare.plots().at(QString::fromLatin1(metrics::kPruneDelta));
  const auto curveWhiskers = whiskersOf(profile);
  ASSERT_EQ(curveWhiskers.size(), 2u);
  ASSERT_EQ(profile->graphCount(), 2);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(curveWhiskers[r]->dataPlottable(), profile->graph(static_cast<int>(r)));
    ASSERT_EQ(curveWhiskers[r]->dataCount(), kLayers);
    for (int l = 0; l < kLayers; ++l) {
      EXPECT_FLOAT_EQ(curveWhiskers[r]->data()->at(l).errorPlus, errorsOf[ids[r]][l]);
    }
  }
  profile->replot(QCustomPlot::rpImmediateRefresh);
  auto* curve = profile->graph(0);
  const auto point = curve->data()->at(1);  // layer 2
  const QPoint overPoint(static_cast<int>(profile->xAxis->coordToPixel(point->key)),
                         static_cast<int>(profile->yAxis->coordToPixel(point->value)));
  const QString pointText = ui::hoverText(profile, overPoint);
  EXPECT_TRUE(pointText.contains(QStringLiteral("\u00b1 %1").arg(errorsOf[ids[0]][1], 0, 'g', 3)))
      << pointText.toStdString();
  const QString curveRow = QStringLiteral("%1,2,%2,,%3\n")
                               .arg(QStringLiteral("\"") + curve->name() + QStringLiteral("\""))
                               .arg(point->value, 0, 'g', 10)
                               .arg(static_cast<double>(errorsOf[ids[0]][1]), 0, 'g', 10);
  const QString curveCsv = ui::plotCsv(profile);
  EXPECT_TRUE(curveCsv.contains(curveRow)) << curveRow.toStdString() << " in\n"
                                           << curveCsv.toStdString();
}

TEST(FigureBuilders, TheExportedVarianceFigureHasTheDashboardsCurves) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  const auto ids = writePair(s);
  auto dashboard = openDashboard(s);
  auto& d = *dashboard;
  auto* panel = d.plots().at(QStringLiteral("variance:pre_ln"));
  QCustomPlot paper;
  EXPECT_TRUE(drawExport(&paper, s, {ids[0]}, QStringLiteral("variance")).isEmpty());
  ASSERT_EQ(panel->graphCount(), kLayers);
  ASSERT_EQ(paper.graphCount(), kLayers);
  for (int l = 0; l < kLayers; ++l) {
    EXPECT_EQ(pointsOf(panel->graph(l)), pointsOf(paper.graph(l))) << "layer " << l + 1;
    EXPECT_EQ(panel->graph(l)->pen().color(), paper.graph(l)->pen().color()) << "layer " << l + 1;
    EXPECT_EQ(paper.graph(l)->pen().color(), ui::layerColor(l, kLayers));
  }
}

TEST(FigureBuilders, TheExportedVarianceFigureGoesLogWhenOneRunDwarfsAnotherTenfold) {
  // Sandwich-LN's variance at 1,700 beside DeepNorm's 3 on one linear scale had flattened
  // DeepNorm's curves into the axis: the shared scale turns logarithmic at a tenfold gap.
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("var.db"));
  std::vector<int64_t> ids;
  for (const auto& [scheme, k] : {std::pair{"deepnorm", 1.0f}, std::pair{"sandwich", 200.0f}}) {
    const int64_t id = createPairRun(s, scheme, 101);
    store::WriteBatch b;
    for (int step = 0; step <= 100; step += 50) {
      std::vector<float> v(kLayers);
      for (int l = 0; l < kLayers; ++l) v[l] = k * 0.01f * (l + 1) * (1 + step);
      b.layer(step, metrics::kVariance, v);
    }
    s.write(id, b);
    ids.push_back(id);
  }
  auto leftAxes = [](QCustomPlot& p) {
    std::vector<QCPAxis*> out;
    for (auto* rect : p.axisRects()) out.push_back(rect->axis(QCPAxis::atLeft));
    return out;
  };
  QCustomPlot paper;
  drawExport(&paper, s, ids, QStringLiteral("variance"));
  ASSERT_EQ(leftAxes(paper).size(), 2u);
  for (auto* y : leftAxes(paper)) {
    EXPECT_EQ(y->scaleType(), QCPAxis::stLogarithmic);
    EXPECT_NEAR(y->range().lower, 0.01 / 1.5, 1e-6);  // the smallest value of either run
    EXPECT_NEAR(y->range().upper, 200 * 0.01 * kLayers * 101 * 1.5, 1e-3);
  }
  // Within tenfold (writePair: LNS at 0.3x Pre-LN) the scale stays linear from 0.
  test::TempDir other;
  auto pair = store::RunStore::open(other.file("pair.db"));
  QCustomPlot linear;
  drawExport(&linear, pair, writePair(pair), QStringLiteral("variance"));
  for (auto* y : leftAxes(linear)) {
    EXPECT_EQ(y->scaleType(), QCPAxis::stLinear);
    EXPECT_EQ(y->range().lower, 0);
  }
}

TEST(FigureBuilders, TheExportedAngularFigureHasTheDashboardsMatrix) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  const auto ids = writePair(s);
  auto dashboard = openDashboard(s);
  auto& d = *dashboard;
  d.setCursorStep(100);  // the last matrix, as the export uses
  auto* panel = colourMapOf(d.plots().at(QStringLiteral("angular_ln:lns")));
  QCustomPlot paper;
  EXPECT_TRUE(drawExport(&paper, s, {ids[1]}, QStringLiteral("angular")).isEmpty());
  auto* figure = colourMapOf(&paper);
  ASSERT_NE(panel, nullptr);
  ASSERT_NE(figure, nullptr);
  ASSERT_EQ(panel->data()->keySize(), kLayers);
  ASSERT_EQ(figure->data()->keySize(), panel->data()->keySize());
  ASSERT_EQ(figure->data()->valueSize(), panel->data()->valueSize());
  for (int i = 0; i < kLayers; ++i) {
    for (int j = 0; j < kLayers; ++j) {
      const double a = panel->data()->cell(i, j), b = figure->data()->cell(i, j);
      if (std::isnan(a))
        EXPECT_TRUE(std::isnan(b)) << i << "," << j;
      else
        EXPECT_DOUBLE_EQ(a, b) << i << "," << j;
    }
  }
  EXPECT_EQ(panel->interpolate(), figure->interpolate());
}

TEST(FigureBuilders, TheExportedLossFigureHasTheDashboardsLosses) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  const auto ids = writePair(s);
  {
    store::WriteBatch b;  // validation losses for the first run
    for (int step : {0, 50, 100}) b.scalar(step, metrics::kLossVal, 4.5 - step * 0.01);
    s.write(ids[0], b);
  }
  auto dashboard = openDashboard(s);
  auto& d = *dashboard;
  auto* panel = d.plots().at(QStringLiteral("loss"));
  QCustomPlot paper;
  drawExport(&paper, s, ids,
             QStringLiteral("loss"));  // warns that the second run has no validation loss
  auto graph = [](QCustomPlot* p, const QString& name) -> QCPGraph* {
    for (int i = 0; i < p->graphCount(); ++i) {
      if (p->graph(i)->name() == name) return p->graph(i);
    }
    return nullptr;
  };
  // Runs go by their display names on screen and on paper (one legend entry per run on paper).
  for (const char* scheme : {"Pre-LN", "LNS"}) {
    SCOPED_TRACE(scheme);
    const QString name = QString::fromLatin1(scheme);
    auto* rawOnScreen = graph(panel, name + QStringLiteral(" train (raw)"));
    auto* onPaper = graph(&paper, name);
    ASSERT_NE(rawOnScreen, nullptr);
    ASSERT_NE(onPaper, nullptr);
    EXPECT_EQ(pointsOf(rawOnScreen), pointsOf(onPaper));
  }
  auto* valOnScreen = graph(panel, QStringLiteral("Pre-LN val"));
  auto* valOnPaper = graph(&paper, QStringLiteral("Pre-LN val"));
  ASSERT_NE(valOnScreen, nullptr);
  ASSERT_NE(valOnPaper, nullptr);
  EXPECT_EQ(pointsOf(valOnScreen), pointsOf(valOnPaper));
  EXPECT_EQ(pointsOf(valOnPaper).size(), 3u);
  EXPECT_EQ(graph(&paper, QStringLiteral("lns val")), nullptr);  // none stored
}

namespace {

// A loss curve from 5.5 at step 0 down to 2.0 at step 300; where `spike` > 0 at `spike` from step
// 150 to 200 (a Post-LN run that diverged and came back).
std::vector<store::ScalarPoint> lossCurve(double spike) {
  std::vector<store::ScalarPoint> pts;
  for (int step = 0; step <= 300; step += 10) {
    const bool high = spike > 0 && step >= 150 && step <= 200;
    pts.push_back({step, high ? spike : 5.5 - 3.5 * step / 300.0});
  }
  return pts;
}

std::vector<QCPItemText*> textsOf(QCustomPlot* p) {
  std::vector<QCPItemText*> out;
  for (int i = 0; i < p->itemCount(); ++i) {
    if (auto* t = qobject_cast<QCPItemText*>(p->item(i))) out.push_back(t);
  }
  return out;
}

}  // namespace

TEST(FigureBuilders, ALossSpikeFarAboveEveryRunsStartRunsOffTheTopWithItsPeakNamed) {
  // A Post-LN run that diverged to 9.8 nats had the loss axes span 2..9.8: the runs that train
  // were squeezed into the bottom third. Now the axis stops at the highest starting loss.
  std::vector<ui::figures::LossRun> runs{
      {QStringLiteral("Pre-LN"), Qt::blue, Qt::SolidLine, lossCurve(0), {}, {}},
      {QStringLiteral("Post-LN"), Qt::red, Qt::SolidLine, lossCurve(9.8), {}, {}}};
  QCustomPlot plot;
  ui::figures::lossOverlay(plot.xAxis, plot.yAxis, runs, {});
  EXPECT_EQ(ui::figures::fitLossAxes(plot.xAxis, plot.yAxis, runs), 1);
  const double pad = 0.05 * (5.5 - 2.0);
  EXPECT_NEAR(plot.yAxis->range().upper, 5.5 + pad, 1e-9);
  EXPECT_NEAR(plot.yAxis->range().lower, 2.0 - pad, 1e-9);
  EXPECT_NEAR(plot.xAxis->range().upper, 300, 1e-9);
  auto marks = textsOf(&plot);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]->text(), QStringLiteral("\u2191 Post-LN: 9.8 at step 150"));
  EXPECT_EQ(marks[0]->color(), QColor(Qt::red).darker(140));
  EXPECT_TRUE(marks[0]->property(ui::kFitMarkProperty).toBool());

  // Reset zoom after a zoom fits the same range again, with one mark (not one per fit).
  plot.yAxis->setRange(0, 20);
  ui::resetZoom(&plot);
  EXPECT_NEAR(plot.yAxis->range().upper, 5.5 + pad, 1e-9);
  EXPECT_EQ(textsOf(&plot).size(), 1u);

  // On a log axis the same rule in decades.
  QCustomPlot log;
  log.yAxis->setScaleType(QCPAxis::stLogarithmic);
  ui::figures::lossOverlay(log.xAxis, log.yAxis, runs, {});
  EXPECT_EQ(ui::figures::fitLossAxes(log.xAxis, log.yAxis, runs), 1);
  const double decades = std::log10(5.5) - std::log10(2.0);
  EXPECT_NEAR(std::log10(log.yAxis->range().upper), std::log10(5.5) + 0.05 * decades, 1e-9);

  // A rise of less than a quarter of the span above the start stays in view, unmarked.
  std::vector<ui::figures::LossRun> mild{
      {QStringLiteral("Pre-LN"), Qt::blue, Qt::SolidLine, lossCurve(0), {}, {}},
      {QStringLiteral("Post-LN"), Qt::red, Qt::SolidLine, lossCurve(6.0), {}, {}}};
  QCustomPlot calm;
  ui::figures::lossOverlay(calm.xAxis, calm.yAxis, mild, {});
  EXPECT_EQ(ui::figures::fitLossAxes(calm.xAxis, calm.yAxis, mild), 0);
  EXPECT_NEAR(calm.yAxis->range().upper, 6.0 + 0.05 * (6.0 - 2.0), 1e-9);
  EXPECT_TRUE(textsOf(&calm).empty());
}

TEST(FigureBuilders, TheExportedLossFigureAndCompareKeepADivergedRunsSpikeOffTheirAxes) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("spike.db"));
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "post_ln"}) {
    const int64_t id = createPairRun(s, scheme, 301);
    store::WriteBatch b;
    for (const auto& p : lossCurve(std::string(scheme) == "post_ln" ? 9.8 : 0)) {
      b.scalar(p.step, metrics::kLossTrain, p.value);
    }
    s.write(id, b);
    ids.push_back(id);
  }
  QCustomPlot paper;
  drawExport(&paper, s, ids, QStringLiteral("loss"));
  EXPECT_LT(paper.yAxis->range().upper, 6.0);
  EXPECT_GT(paper.yAxis->range().upper, 5.5);
  ASSERT_EQ(textsOf(&paper).size(), 1u);
  EXPECT_TRUE(textsOf(&paper)[0]->text().contains(QStringLiteral("9.8 at step 150")));

  ui::CompareView compare(s, ids);
  compare.resize(1400, 900);
  auto* loss = compare.plots().at(QStringLiteral("loss"));  // smoothed curves, raw peak named
  EXPECT_LT(loss->yAxis->range().upper, 6.0);
  EXPECT_EQ(textsOf(loss).size(), 1u);
}

TEST(FigureBuilders, EveryDashboardHeatmapHasALabelledColourBar) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  writePair(s);
  auto dashboard = openDashboard(s);
  auto& d = *dashboard;
  d.setCursorStep(100);
  int heatmaps = 0;
  for (const auto& [name, p] : d.plots()) {
    auto* map = colourMapOf(p);
    if (!map || map->data()->isEmpty()) continue;
    ++heatmaps;
    ASSERT_NE(map->colorScale(), nullptr) << name.toStdString();
    EXPECT_FALSE(map->colorScale()->label().isEmpty()) << name.toStdString();
    EXPECT_EQ(map->colorScale()->dataRange(), map->dataRange()) << name.toStdString();
  }
  EXPECT_GE(heatmaps, 6);  // variance, adjacent angular, pruning and the (l, n) matrix, per scheme
  // One scale across schemes.
  EXPECT_EQ(colourMapOf(d.plots().at(QStringLiteral("variance_map:pre_ln")))->dataRange(),
            colourMapOf(d.plots().at(QStringLiteral("variance_map:lns")))->dataRange());
}

TEST(FigureBuilders, LayerBarsGroupSeriesPerLayerAndKeepEmptySlots) {
  QCustomPlot p;
  std::vector<ui::figures::BarSeries> series = {
      {QStringLiteral("a"), Qt::red, {1.0f, 2.0f, 3.0f}, {}},
      {QStringLiteral("missing"), Qt::green, {}, {}},
      {QStringLiteral("c"), Qt::blue, {4.0f, 5.0f}, {}}};
  EXPECT_EQ(ui::figures::layerBars(p.xAxis, p.yAxis, series), 3);
  auto bars = barsOf(&p);
  ASSERT_EQ(bars.size(), 2u);  // the empty series draws nothing but keeps its slot
  const double w = 0.8 / 3;
  EXPECT_DOUBLE_EQ(bars[0]->width(), w);
  EXPECT_DOUBLE_EQ(pointsOf(bars[0])[0].first, 1 - 0.4 + w * 0.5);
  EXPECT_DOUBLE_EQ(pointsOf(bars[1])[0].first, 1 - 0.4 + w * 2.5);  // third slot
  EXPECT_DOUBLE_EQ(pointsOf(bars[1])[1].second, 5.0);
}

TEST(FigureBuilders, LayerCurvesColourByLayerAndDecimateOnlyWhenAsked) {
  store::LayerSeries s;
  s.nLayers = 2;
  for (int step = 0; step < 1000; ++step) {
    s.steps.push_back(step);
    s.values.push_back(static_cast<float>(step % 7));
    s.values.push_back(static_cast<float>(step));
  }
  QCustomPlot all, decimated;
  EXPECT_DOUBLE_EQ(ui::figures::layerCurves(all.xAxis, all.yAxis, s, 1.0), 999.0);
  ASSERT_EQ(all.graphCount(), 2);
  EXPECT_EQ(all.graph(0)->data()->size(), 1000);
  EXPECT_EQ(all.graph(1)->name(), QStringLiteral("layer 2"));
  EXPECT_EQ(all.graph(1)->pen().color(), ui::layerColor(1, 2));
  ui::figures::layerCurves(decimated.xAxis, decimated.yAxis, s, 1.0, /*columns=*/50);
  EXPECT_LE(decimated.graph(0)->data()->size(), 2 * (50 + 1));  // min and max per column
  EXPECT_GT(decimated.graph(0)->data()->size(), 0);
}

TEST(FigureBuilders, ADivergingScaleLeavesOutAFewCellsTenTimesAboveTheRest) {
  int clipped = -1;
  // Layer 1's delta in two runs (~2 nats) against hundredths for every other layer.
  std::vector<double> deltas = {2.1, 2.35};
  for (int i = 0; i < 46; ++i) deltas.push_back(0.001 * (i % 23 + 1) + 0.0005 * (i / 23));
  EXPECT_DOUBLE_EQ(ui::figures::divergingColourLimit(deltas, &clipped), 0.0235);
  EXPECT_EQ(clipped, 2);
  // No gap of 10x: the largest value sets the scale.
  EXPECT_DOUBLE_EQ(ui::figures::divergingColourLimit({3.0, 0.5, 0.4, 0.2, 0.1, 0.05}, &clipped),
                   3.0);
  EXPECT_EQ(clipped, 0);
  // More than a tenth of the cells above the gap is a pattern, not an outlier: kept in range.
  EXPECT_DOUBLE_EQ(
      ui::figures::divergingColourLimit({2, 2, 2, 0.01, 0.01, 0.01, 0.01, 0.01}, &clipped), 2.0);
  EXPECT_EQ(clipped, 0);
  EXPECT_DOUBLE_EQ(ui::figures::divergingColourLimit({}, &clipped), 0.0);

  // On a pruning-delta heatmap: the range leaves layer 1 out, the colour bar says so, hover keeps
  // the true value.
  store::LayerSeries s;
  s.nLayers = 12;
  s.steps = {100, 200};
  for (int step = 0; step < 2; ++step) {
    for (int l = 0; l < 12; ++l)
      s.values.push_back(l == 0 ? 2.0f : 0.01f * static_cast<float>(l) - 0.05f);
  }
  QCustomPlot p;
  auto h = ui::figures::layerHeatmap(p.xAxis, p.yAxis, s, 800, metrics::kPruneDelta);
  ui::figures::shareColourRange({h});
  EXPECT_NEAR(h.map->dataRange().upper, 0.06, 1e-6);
  EXPECT_NEAR(h.map->dataRange().lower, -0.06, 1e-6);
  auto* bar = ui::figures::heatmapColourBar(h.map, QStringLiteral("pruning delta (nats)"), 0, 1);
  EXPECT_EQ(bar->label(), QStringLiteral("pruning delta (nats)\n2 cells beyond \u00b10.06"));
  EXPECT_DOUBLE_EQ(h.map->data()->cell(0, 0), 2.0);
  // Data without outliers: the whole range, a one-line label.
  for (auto& v : s.values) v = std::min(v, 0.06f);
  h = ui::figures::layerHeatmap(p.xAxis, p.yAxis, s, 800, metrics::kPruneDelta);
  ui::figures::shareColourRange({h});
  EXPECT_NEAR(h.map->dataRange().upper, 0.06, 1e-6);
  EXPECT_EQ(
      ui::figures::heatmapColourBar(h.map, QStringLiteral("pruning delta (nats)"), 0, 1)->label(),
      QStringLiteral("pruning delta (nats)"));
}

TEST(FigureBuilders, LayerCurvesOfOneProbeStepAreDotsAtThatStep) {
  // An imported model (one probe): lines of one point drew nothing in the exported variance
  // figure (the dashboard alone had made them dots).
  store::LayerSeries s;
  s.nLayers = 3;
  s.steps = {0};
  s.values = {1.0f, 2.0f, 3.0f};
  QCustomPlot p;
  EXPECT_DOUBLE_EQ(ui::figures::layerCurves(p.xAxis, p.yAxis, s, 1.0), 3.0);
  ASSERT_EQ(p.graphCount(), 3);
  for (int g = 0; g < 3; ++g)
    EXPECT_EQ(p.graph(g)->scatterStyle().shape(), QCPScatterStyle::ssDisc);
  auto ticks = p.xAxis->ticker().dynamicCast<QCPAxisTickerText>();
  ASSERT_FALSE(ticks.isNull());
  EXPECT_EQ(ticks->ticks().values(), QVector<QString>{QStringLiteral("0")});
  // Several steps: lines, the default ticker back.
  s.steps = {0, 10};
  s.values = {1, 2, 3, 4, 5, 6};
  QCustomPlot q;
  ui::figures::layerCurves(q.xAxis, q.yAxis, s, 1.0);
  EXPECT_EQ(q.graph(0)->scatterStyle().shape(), QCPScatterStyle::ssNone);
  EXPECT_TRUE(q.xAxis->ticker().dynamicCast<QCPAxisTickerText>().isNull());
}

TEST(FigureBuilders, BarsTenTimesAboveTheRestRunOffTheAxisWithTheirValuesBesideThem) {
  // Two runs' pruning deltas: layer 1 costs ~2 nats, every other layer hundredths; on an axis
  // up to 2.4 the deep layers (the point of the panel) were flat.
  std::vector<float> pre(24), lns(24);
  for (int l = 0; l < 24; ++l) {
    pre[l] = l == 0 ? 2.11f : 0.001f * static_cast<float>(l) - 0.004f;
    lns[l] = l == 0 ? 2.36f : 0.0012f * static_cast<float>(l);
  }
  std::vector<float> errors(24, 0.002f);
  QCustomPlot p;
  p.resize(900, 300);
  p.setViewport(QRect(0, 0, 900, 300));
  p.legend->setVisible(true);
  ui::makeInteractive(&p);
  const int L = ui::figures::layerBars(p.xAxis, p.yAxis,
                                       {{QStringLiteral("Pre-LN"), Qt::blue, pre, errors},
                                        {QStringLiteral("LNS"), Qt::red, lns, errors}});
  EXPECT_EQ(ui::figures::fitLayerBarAxes(p.xAxis, p.yAxis, L), 2);
  // The others' range with its 5% headroom: LNS layer 24 and its error bar on top, Pre-LN
  // layer 2's negative delta and its error bar below.
  const double top = 0.0012 * 23 + 0.002, bottom = 0.001 - 0.004 - 0.002;
  const double pad = 0.05 * (top - bottom);
  EXPECT_NEAR(p.yAxis->range().upper, top + pad, 1e-5);
  EXPECT_NEAR(p.yAxis->range().lower, bottom - pad, 1e-5);
  // Each bar run off carries its true value, in series order, right of layer 1's group.
  std::vector<QCPItemText*> labels;
  int breaks = 0;
  for (int i = 0; i < p.itemCount(); ++i) {
    if (!p.item(i)->property(ui::kFitMarkProperty).toBool()) continue;
    if (auto* t = qobject_cast<QCPItemText*>(p.item(i))) labels.push_back(t);
    breaks += qobject_cast<QCPItemLine*>(p.item(i)) != nullptr;
  }
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(breaks, 2);
  EXPECT_EQ(labels[0]->text(), QStringLiteral("2.11"));
  EXPECT_EQ(labels[1]->text(), QStringLiteral("2.36"));
  p.replot(QCustomPlot::rpImmediateRefresh);
  const QPointF first = labels[0]->topLeft->pixelPosition();
  EXPECT_GT(first.x(), p.xAxis->coordToPixel(1.4));
  EXPECT_LT(first.x(), p.xAxis->coordToPixel(2.0));
  EXPECT_DOUBLE_EQ(labels[0]->position->pixelPosition().y(),
                   labels[1]->position->pixelPosition().y());
  EXPECT_GT(labels[1]->bottomLeft->pixelPosition().y(),
            labels[0]->bottomLeft->pixelPosition().y() + 5)
      << "the second value sits a line below the first";
  // The legend does not cover the values.
  ui::figures::placeLegend(&p, p.axisRect(), ui::figures::LegendOutside::Right);
  const QRectF legend(p.legend->outerRect());
  for (auto* t : labels) {
    EXPECT_FALSE(
        legend.intersects(QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition())));
  }
  // Zoomed, the marks (which describe the fitted range) hide; a reset zoom fits the same way
  // again (it had rescaled to all data, up to 2.36 and without headroom).
  const QCPRange fitted = p.yAxis->range();
  p.yAxis->setRange(0, 3);
  ui::setUserZoomed(&p, true);
  for (auto* t : labels) EXPECT_FALSE(t->visible());
  ui::resetZoom(&p);
  EXPECT_DOUBLE_EQ(p.yAxis->range().upper, fitted.upper);
  EXPECT_DOUBLE_EQ(p.yAxis->range().lower, fitted.lower);
  int marks = 0;
  for (int i = 0; i < p.itemCount(); ++i) {
    marks += p.item(i)->property(ui::kFitMarkProperty).toBool() && p.item(i)->visible();
  }
  EXPECT_EQ(marks, 4);  // the two values and two breaks, once each

  // Threshold lines stay in view (effectiveness: layer 1 near 1 off the axis, 0.05 and 0.2 in).
  QCustomPlot e;
  std::vector<float> eff(24, 0.01f);
  eff[0] = 0.99f;
  ui::figures::layerBars(e.xAxis, e.yAxis, {{QStringLiteral("a"), Qt::blue, eff, {}}});
  EXPECT_EQ(ui::figures::fitLayerBarAxes(e.xAxis, e.yAxis, 24, {0.05, 0.2}), 1);
  EXPECT_NEAR(e.yAxis->range().upper, 0.21, 1e-9);
  // No bar 10x above the rest: every bar in range, no marks.
  QCustomPlot g;
  std::vector<float> grads(24, 0.05f);
  grads[0] = 0.42f;
  ui::figures::layerBars(g.xAxis, g.yAxis, {{QStringLiteral("a"), Qt::blue, grads, {}}});
  EXPECT_EQ(ui::figures::fitLayerBarAxes(g.xAxis, g.yAxis, 24), 0);
  EXPECT_NEAR(g.yAxis->range().upper, 0.42 * 1.05, 1e-6);
  EXPECT_EQ(g.itemCount(), 0);

  // Compare's final profiles (graphs): the same rule, room below the lowest point too.
  QCustomPlot profiles;
  for (const auto* values : {&pre, &lns}) {
    auto* graph = profiles.addGraph();
    for (int l = 0; l < 24; ++l) graph->addData(l + 1, (*values)[l]);
  }
  EXPECT_EQ(ui::figures::fitLayerProfileAxes(profiles.xAxis, profiles.yAxis, 0.5), 2);
  const double high = 0.0012 * 23, low = 0.001 - 0.004, room = 0.05 * (high - low);
  EXPECT_NEAR(profiles.yAxis->range().upper, high + room, 1e-6);
  EXPECT_NEAR(profiles.yAxis->range().lower, low - room, 1e-6);
  EXPECT_NEAR(profiles.xAxis->range().lower, 0.5, 1e-9);
  EXPECT_NEAR(profiles.xAxis->range().upper, 24.5, 1e-9);
  int values = 0;
  for (int i = 0; i < profiles.itemCount(); ++i)
    values += qobject_cast<QCPItemText*>(profiles.item(i)) != nullptr;
  EXPECT_EQ(values, 2);
  // A plot that rebuilt its axis rects since the fit (a figure of another kind): reset zoom
  // rescales instead of fitting axes that are gone.
  profiles.plotLayout()->clear();
  profiles.plotLayout()->addElement(0, 0, new QCPAxisRect(&profiles));
  ui::resetZoom(&profiles);
}

TEST(FigureBuilders, RunsTrainedToDifferentLengthsAreComparedAtTheLastStepBothHave) {
  // LNS trained further (to step 150): the exported pruning and angular figures had set
  // Pre-LN at 100 beside LNS at 150, and said nothing.
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("pair.db"));
  const auto ids = writePair(s);
  s.setRunConfig(ids[1], R"({"model":{"nLayers":5},"optim":{"steps":151,"scheduleSteps":101}})");
  {
    store::WriteBatch b;
    for (int step = 101; step <= 150; ++step) b.scalar(step, metrics::kLossTrain, 3.0);
    b.layer(150, metrics::kPruneDelta, std::vector<float>(kLayers, 9.0f));
    b.matrix(150, metrics::kAngular, kLayers, kLayers, std::vector<float>(kLayers * kLayers, 0.9f));
    s.write(ids[1], b);
  }
  QCustomPlot paper;
  const QStringList warnings = drawExport(&paper, s, ids, QStringLiteral("pruning"));
  ASSERT_EQ(warnings.size(), 1) << warnings.join(QStringLiteral("; ")).toStdString();
  EXPECT_TRUE(warnings[0].contains(QStringLiteral("shown at step 100")))
      << warnings[0].toStdString();
  EXPECT_TRUE(warnings[0].contains(QStringLiteral("its last probe is at step 150")))
      << warnings[0].toStdString();
  const auto lns = pointsOf(barsOf(&paper)[1]);
  ASSERT_EQ(lns.size(), static_cast<size_t>(kLayers));
  for (int l = 0; l < kLayers; ++l)
    EXPECT_NEAR(lns[l].second, 0.1 * (kLayers - l) * 0.3 + 0.1, 1e-6);
  QCustomPlot angular;
  const QStringList angularWarnings = drawExport(&angular, s, ids, QStringLiteral("angular"));
  ASSERT_EQ(angularWarnings.size(), 1);
  EXPECT_TRUE(angularWarnings[0].contains(QStringLiteral("shown at step 100")));
  std::vector<QCPColorMap*> maps;
  for (int i = 0; i < angular.plottableCount(); ++i) {
    if (auto* m = qobject_cast<QCPColorMap*>(angular.plottable(i))) maps.push_back(m);
  }
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_NE(maps[1]->data()->cell(0, 0), 0.9);  // not step 150's matrix
  // The dashboard at step 150 shows each run's last bars and says which steps they are.
  auto dashboard = openDashboard(s);
  dashboard->setCursorStep(150);
  const QString label = dashboard->plots().at(QStringLiteral("prune_bars"))->yAxis->label();
  EXPECT_TRUE(label.contains(QStringLiteral("at steps 100 / 150"))) << label.toStdString();
  // Compare's final profiles and statistics: also after the fewest steps, saying so.
  ui::CompareView compare(s, ids);
  EXPECT_TRUE(compare.statsText().contains(QStringLiteral("final values after 101 steps")))
      << compare.statsText().toStdString();
  auto* profile = compare.plots().at(QString::fromStdString(metrics::kPruneDelta));
  ASSERT_GE(profile->graphCount(), 2);
  for (int g = 0; g < profile->graphCount(); ++g) {
    for (const auto& point : pointsOf(profile->graph(g)))
      EXPECT_LT(point.second, 1.0) << "step 150's 9.0";
  }
  // Runs of one length: no warning (the other tests), one step in the label.
  dashboard->setCursorStep(100);
  EXPECT_TRUE(dashboard->plots()
                  .at(QStringLiteral("prune_bars"))
                  ->yAxis->label()
                  .contains(QStringLiteral("at step 100")));
}

TEST(FigureBuilders, ADivergingMatrixSpreadOverDecadesGetsASymmetricLogScale) {
  // A block-pruning (l, n) matrix: removing blocks from layer 1 costs 1-2.5 nats for every n
  // (more than a tenth of the cells: none is left out), removing deep blocks hundredths. On a
  // linear scale every deep cell is white.
  store::Matrix m;
  m.rows = 8;
  m.cols = 6;
  for (int l = 0; l < m.rows; ++l) {
    for (int n = 0; n < m.cols; ++n) {
      m.data.push_back(l == 0 ? 1.0f + 0.25f * static_cast<float>(n)
                              : 0.005f * static_cast<float>(l + n) * (n % 3 == 2 ? -1.0f : 1.0f));
    }
  }
  QCustomPlot p;
  auto h = ui::figures::matrixHeatmap(p.xAxis, p.yAxis, m, false, metrics::kBlockPrune);
  ui::figures::shareColourRange({h});
  const double linear = h.map->property(ui::figures::kSymlogProperty).toDouble();
  ASSERT_GT(linear, 0.0);
  EXPECT_NEAR(h.map->dataRange().upper, 2.25, 1e-6);  // the whole range, nothing left out
  EXPECT_EQ(h.map->property(ui::figures::kClippedCellsProperty).toInt(), 0);
  // A deep block's 0.04 nats is clearly red (a linear scale gives it 98% white); 0 stays white;
  // the values themselves are untouched (hover, CSV).
  const QCPRange range = h.map->dataRange();
  const QColor deep = QColor::fromRgb(h.map->gradient().color(0.04, range));
  const QColor linearDeep = QColor::fromRgb(ui::divergingGradient().color(0.04, range));
  EXPECT_GT(linearDeep.green(), 240);
  EXPECT_LT(deep.green(), 200);
  EXPECT_GT(deep.red(), deep.blue());
  const QColor negative = QColor::fromRgb(h.map->gradient().color(-0.04, range));
  EXPECT_GT(negative.blue(), negative.red());
  const QColor zero = QColor::fromRgb(h.map->gradient().color(0.0, range));
  EXPECT_GT(zero.red() + zero.green() + zero.blue(), 3 * 245);
  EXPECT_FLOAT_EQ(static_cast<float>(h.map->data()->cell(0, 0)), 1.0f);

  // The colour bar is drawn on the symmetric-log positions, its ticks labelled with values,
  // and its colours are the map's.
  auto* bar = ui::figures::heatmapColourBar(h.map, QStringLiteral("Δ loss (nats)"), 0, 1);
  EXPECT_TRUE(bar->label().contains(QStringLiteral("sym. log"))) << bar->label().toStdString();
  EXPECT_EQ(h.map->colorScale(), nullptr);
  auto ticker = bar->axis()->ticker().dynamicCast<QCPAxisTickerText>();
  ASSERT_TRUE(ticker);
  QStringList labels;
  for (auto it = ticker->ticks().constBegin(); it != ticker->ticks().constEnd(); ++it)
    labels << it.value();
  const std::string all = labels.join(QLatin1Char(' ')).toStdString();
  EXPECT_TRUE(labels.contains(QStringLiteral("0"))) << all;
  EXPECT_TRUE(labels.contains(QStringLiteral("0.1"))) << all;
  EXPECT_TRUE(labels.contains(QStringLiteral("\u22120.1"))) << all;
  EXPECT_TRUE(ticker->ticks().contains(1.0) && ticker->ticks().contains(-1.0)) << all;  // the ends
  // Marks that would crowd their neighbours are left out: no two within a fifth of the half-bar.
  const auto positions = ticker->ticks().keys();
  for (int i = 1; i < positions.size(); ++i) EXPECT_GE(positions[i] - positions[i - 1], 0.2) << all;
  for (const double v : {0.04, -0.2, 1.5}) {
    const double t = ui::figures::symlogPosition(v, range.upper, linear);
    const QColor onBar = QColor::fromRgb(bar->gradient().color(t, bar->dataRange()));
    const QColor onMap = QColor::fromRgb(h.map->gradient().color(v, range));
    EXPECT_NEAR(onBar.red(), onMap.red(), 8) << v;
    EXPECT_NEAR(onBar.green(), onMap.green(), 8) << v;
    EXPECT_NEAR(onBar.blue(), onMap.blue(), 8) << v;
  }
  // Drawn again with values that do not spread: a linear scale, the bar linked to the map again.
  for (auto& v : m.data) v = v > 0.5f ? 0.06f : v;
  h = ui::figures::matrixHeatmap(p.xAxis, p.yAxis, m, false, metrics::kBlockPrune);
  ui::figures::shareColourRange({h});
  EXPECT_EQ(h.map->property(ui::figures::kSymlogProperty).toDouble(), 0.0);
  bar = ui::figures::heatmapColourBar(h.map, QStringLiteral("Δ loss (nats)"), 0, 1);
  EXPECT_EQ(h.map->colorScale(), bar);
  EXPECT_FALSE(bar->axis()->ticker().dynamicCast<QCPAxisTickerText>());
  EXPECT_EQ(bar->label(), QStringLiteral("Δ loss (nats)"));
}
