// What the views skip to stay fast, checked for doing the same as the work they skip: a heatmap
// refilled with the cells it holds keeps its cached image (and rebuilds it for any other cell,
// NaN and alpha included); laying a plot out without drawing it places everything where a
// replot places it; Compare's difference map of long runs samples at most 400 steps, each
// column exactly B minus A at its step (runs probed at other steps: the rows nearest each
// column), and its profiles show each run's final row; a live plot's opaque buffer shows the
// pixels QCustomPlot's transparent one does; a live panel out of view replots when it comes
// into view (or is grabbed), with the pixels of a replot.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/compare_profiles.h"
#include "compare/compare_view.h"
#include "plot/figure_layout.h"
#include "plot/live_plot.h"
#include "plot/plot_helpers.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// A colour map that tells whether it will rebuild its image at the next draw.
class WatchedMap : public QCPColorMap {
 public:
  using QCPColorMap::QCPColorMap;
  bool imageStale() const { return mMapImageInvalidated; }
};

store::LayerSeries series(int steps, int layers, double scale) {
  store::LayerSeries s;
  s.nLayers = layers;
  for (int k = 0; k < steps; ++k) {
    s.steps.push_back(10 * k);
    for (int l = 0; l < layers; ++l) s.values.push_back(static_cast<float>(scale * (k + 0.1 * l)));
  }
  return s;
}

}  // namespace

TEST(RedrawEconomy, AHeatmapRefilledWithItsOwnCellsKeepsItsImage) {
  QCustomPlot p;
  p.resize(400, 300);
  auto* map = new WatchedMap(p.xAxis, p.yAxis);
  const auto s = series(50, 6, 1.0);
  ui::fillLayerHeatmap(map, s, 30);  // 30 of 50 steps: the sampled columns are compared too
  EXPECT_TRUE(map->imageStale());
  p.replot();
  ASSERT_FALSE(map->imageStale());
  ui::fillLayerHeatmap(map, s, 30);
  EXPECT_FALSE(map->imageStale()) << "the same cells made the map rebuild its image";
  auto changed = s;
  changed.values.back() += 1.0f;  // one cell of the last column
  ui::fillLayerHeatmap(map, changed, 30);
  EXPECT_TRUE(map->imageStale());
  p.replot();
  ui::fillLayerHeatmap(map, changed, 40);  // same data, more columns: other cells
  EXPECT_TRUE(map->imageStale());
  EXPECT_EQ(map->data()->keySize(), 40);

  // A matrix with masked (NaN, transparent) cells: NaN equals NaN; a cell that loses its mask
  // is a change.
  auto* matrix = new WatchedMap(p.xAxis2, p.yAxis2);
  store::Matrix m;
  m.rows = m.cols = 4;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) m.data.push_back(r + c < 4 ? 0.1f * static_cast<float>(r + c) : NAN);
  ui::fillMatrixHeatmap(matrix, m, false);
  p.replot();
  ASSERT_FALSE(matrix->imageStale());
  ui::fillMatrixHeatmap(matrix, m, false);
  EXPECT_FALSE(matrix->imageStale());
  EXPECT_EQ(matrix->data()->alpha(3, 3), 0);  // still masked
  ui::fillMatrixHeatmap(matrix, m, true);  // row-normalised: other values
  EXPECT_TRUE(matrix->imageStale());
  p.replot();
  m.data[15] = 0.5f;  // the masked corner gets a value
  ui::fillMatrixHeatmap(matrix, m, true);
  EXPECT_TRUE(matrix->imageStale());
  EXPECT_EQ(matrix->data()->alpha(3, 3), 255);
}

TEST(RedrawEconomy, LayingOutWithoutDrawingPlacesWhatAReplotPlaces) {
  QCustomPlot p;
  p.resize(500, 320);
  p.show();  // (a hidden widget's viewport stays at its first size)
  p.plotLayout()->insertRow(0);
  p.plotLayout()->addElement(0, 0, new QCPTextElement(&p, QStringLiteral("a title above the panel")));
  p.xAxis->setLabel(QStringLiteral("step"));
  p.yAxis->setLabel(QStringLiteral("output variance"));
  p.legend->setVisible(true);
  auto* g = p.addGraph();
  g->setName(QStringLiteral("layer 1"));
  for (int x = 0; x < 100; ++x) g->addData(x * 1000.0, 1e5 * std::sin(x * 0.1));
  p.rescaleAxes();
  ui::figures::layOut(&p);
  const QRect rect = p.axisRect()->rect(), legend = p.legend->outerRect();
  const auto ticks = p.yAxis->tickVector();
  const auto boxes = ui::figures::tickLabelBoxes(p.yAxis);
  ASSERT_GT(rect.width(), 100);  // laid out at the plot's size, margins for the labels taken
  ASSERT_LT(rect.width(), 500 - 40);
  ASSERT_FALSE(boxes.empty());
  p.replot();
  EXPECT_EQ(p.axisRect()->rect(), rect);
  EXPECT_EQ(p.legend->outerRect(), legend);
  EXPECT_EQ(p.yAxis->tickVector(), ticks);
  const auto after = ui::figures::tickLabelBoxes(p.yAxis);
  ASSERT_EQ(after.size(), boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) EXPECT_EQ(after[i].box, boxes[i].box) << i;
}

namespace {

// A panel with what the dashboard draws: a title, axis labels, a legend, antialiased text,
// 24 curves and a heatmap over them (semi-transparent cells blend with what lies beneath).
void fillPanel(QCustomPlot& p) {
  p.setFixedSize(520, 300);
  p.show();
  p.plotLayout()->insertRow(0);
  p.plotLayout()->addElement(0, 0, new QCPTextElement(&p, QStringLiteral("Pre-LN \u2014 output variance")));
  p.xAxis->setLabel(QStringLiteral("step"));
  p.yAxis->setLabel(QStringLiteral("layer"));
  p.legend->setVisible(true);
  for (int l = 0; l < 24; ++l) {
    auto* g = p.addGraph();
    g->setName(QStringLiteral("layer %1").arg(l + 1));
    g->setPen(QPen(QColor::fromHsv(l * 15, 220, 200), l % 3 == 0 ? 2.0 : 1.0));
    for (int x = 0; x < 400; ++x) g->addData(x * 25.0, l + 0.4 * std::sin(x * 0.07 + l));
  }
  auto* map = new QCPColorMap(p.xAxis, p.yAxis);
  map->data()->setSize(40, 24);
  map->data()->setRange(QCPRange(0, 9975), QCPRange(0, 23));
  for (int x = 0; x < 40; ++x) {
    for (int y = 0; y < 24; ++y) map->data()->setCell(x, y, std::cos(0.2 * x) * y);
  }
  map->setGradient(QCPColorGradient(QCPColorGradient::gpThermal));
  map->data()->setAlpha(3, 4, 90);
  map->rescaleDataRange();
  p.rescaleAxes();
}

QImage shown(QCustomPlot& p) {
  p.replot(QCustomPlot::rpImmediateRefresh);
  return p.grab().toImage().convertToFormat(QImage::Format_ARGB32);
}

// Whether two same-sized images differ by at most 1/255 in any channel (blending onto the
// background directly or through a transparent buffer rounds antialiased edges differently),
// in at most 1% of their pixels.
::testing::AssertionResult sameToRounding(const QImage& a, const QImage& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes differ";
  int differing = 0, worst = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int x = 0; x < a.width(); ++x) {
      const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
      const int d = std::max({std::abs(qRed(p) - qRed(q)), std::abs(qGreen(p) - qGreen(q)),
                              std::abs(qBlue(p) - qBlue(q)), std::abs(qAlpha(p) - qAlpha(q))});
      differing += d > 0;
      worst = std::max(worst, d);
    }
  }
  if (worst <= 1 && differing * 100 <= a.width() * a.height()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differing << " pixels differ, by up to " << worst;
}

}  // namespace

TEST(RedrawEconomy, ALivePlotShowsThePixelsOfQCustomPlot) {
  QCustomPlot plain;
  ui::LivePlot live;
  fillPanel(plain);
  fillPanel(live);
  ASSERT_TRUE(live.paintsOpaqueBuffer());
  const QImage want = shown(plain);
  EXPECT_TRUE(sameToRounding(shown(live), want));
  // Another opaque background: the buffer follows it.
  for (auto* p : {static_cast<QCustomPlot*>(&plain), static_cast<QCustomPlot*>(&live)}) {
    p->setBackground(QBrush(QColor(250, 245, 230)));
  }
  EXPECT_TRUE(live.paintsOpaqueBuffer());
  EXPECT_TRUE(sameToRounding(shown(live), shown(plain)));
  // A translucent background (QCustomPlot leaves what lies beneath it undefined, so only the
  // choice is checked), or a layer with a buffer of its own: QCustomPlot's own painting.
  live.setBackground(QBrush(QColor(255, 255, 255, 120)));
  shown(live);
  EXPECT_FALSE(live.paintsOpaqueBuffer());
  EXPECT_EQ(live.bufferClearColour(), QColor(Qt::transparent));
  for (auto* p : {static_cast<QCustomPlot*>(&plain), static_cast<QCustomPlot*>(&live)}) {
    p->setBackground(QBrush(Qt::white));
    p->layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmBuffered);
  }
  const QImage buffered = shown(live);
  EXPECT_FALSE(live.paintsOpaqueBuffer());
  EXPECT_TRUE(sameToRounding(buffered, shown(plain)));
  EXPECT_TRUE(sameToRounding(buffered, want));
  // Back to one buffer: the fast path again, same pixels.
  for (auto* p : {static_cast<QCustomPlot*>(&plain), static_cast<QCustomPlot*>(&live)}) {
    p->layer(QStringLiteral("overlay"))->setMode(QCPLayer::lmLogical);
  }
  EXPECT_TRUE(sameToRounding(shown(live), want));
  EXPECT_TRUE(live.paintsOpaqueBuffer());
}

TEST(RedrawEconomy, CompareSamplesTheDifferenceOfLongRunsAndShowsEachRunsFinalProfile) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("long.db"));
  constexpr int kSteps = 3000, kLayers = 4;
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "lns"}) {
    store::NewRun nr;
    nr.name = std::string("long ") + scheme;
    nr.groupName = "long";
    nr.scheme = scheme;
    const int64_t id = s.createRun(nr);
    const float factor = std::string(scheme) == "lns" ? 2.0f : 1.0f;
    store::WriteBatch b;
    for (int step = 0; step < kSteps; ++step) {
      // B - A = step * 1000 + layer: each column says which step it shows.
      std::vector<float> v(kLayers), prune(kLayers);
      for (int l = 0; l < kLayers; ++l) {
        v[static_cast<size_t>(l)] = factor * static_cast<float>(step * 1000 + l);
        prune[static_cast<size_t>(l)] = factor * static_cast<float>(step + l);
      }
      b.layer(step, metrics::kVariance, v);
      b.layer(step, metrics::kPruneDelta, prune);
      b.layer(step, metrics::kAngularAdjacent, prune);
    }
    b.layer(kSteps - 1, metrics::kPruneDeltaError, std::vector<float>(kLayers, 0.25f));
    s.write(id, b);
    ids.push_back(id);
  }
  ui::CompareView v(s, ids);
  auto* plot = v.plots().at(QStringLiteral("difference"));
  QCPColorMap* map = nullptr;
  for (int i = 0; i < plot->plottableCount() && !map; ++i) map = qobject_cast<QCPColorMap*>(plot->plottable(i));
  ASSERT_NE(map, nullptr);
  const int columns = map->data()->keySize();
  EXPECT_EQ(columns, 400);
  EXPECT_EQ(map->data()->keyRange(), QCPRange(0, kSteps - 1));
  const double spacing = (kSteps - 1.0) / (columns - 1);
  for (int c = 0; c < columns; ++c) {
    double key = 0, layer = 0;
    map->data()->cellToCoord(c, 0, &key, &layer);
    const double shown = std::floor(map->data()->cell(c, 0) / 1000.0);  // the step this column shows
    EXPECT_LE(std::abs(shown - key), spacing / 2 + 0.5) << "column " << c;
    for (int l = 0; l < kLayers; ++l) EXPECT_DOUBLE_EQ(map->data()->cell(c, l), shown * 1000 + l) << c << " " << l;
  }
  EXPECT_DOUBLE_EQ(map->data()->cell(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(map->data()->cell(columns - 1, 1), (kSteps - 1) * 1000.0 + 1);
  // Profiles: every run's last row, with the pruning error bars of that step.
  auto* prune = v.plots().at(QString::fromStdString(metrics::kPruneDelta));
  ASSERT_EQ(prune->graphCount(), 2);
  for (int g = 0; g < 2; ++g) {
    const double factor = g == 0 ? 1.0 : 2.0;
    ASSERT_EQ(prune->graph(g)->dataCount(), kLayers);
    for (int l = 0; l < kLayers; ++l) {
      EXPECT_DOUBLE_EQ(prune->graph(g)->data()->at(l)->value, factor * (kSteps - 1 + l)) << g << " " << l;
    }
  }
  int errorBars = 0;
  for (int i = 0; i < prune->plottableCount(); ++i) {
    if (auto* e = qobject_cast<QCPErrorBars*>(prune->plottable(i))) {
      ++errorBars;
      ASSERT_EQ(e->dataCount(), kLayers);
      EXPECT_DOUBLE_EQ(e->data()->at(0).errorPlus, 0.25);
    }
  }
  EXPECT_EQ(errorBars, 2);
  EXPECT_TRUE(v.missingText().isEmpty() || !v.missingText().contains(QStringLiteral("prune_delta"))) << v.missingText().toStdString();
}

TEST(RedrawEconomy, CompareOfRunsProbedAtOtherStepsDiffersTheRowsNearestEachColumn) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("cadence.db"));
  constexpr int kLayers = 3;
  // A: every 10 steps to 6,000 (more rows than columns: a sampled load); B: every 25 to 4,000;
  // C: steps 7,000-8,000, which neither shares.
  struct Spec { const char* scheme; int every, from, to; float offset; };
  std::vector<int64_t> ids;
  for (const Spec& spec : {Spec{"pre_ln", 10, 0, 6000, 0.0f}, Spec{"lns", 25, 0, 4000, 1e5f},
                           Spec{"lns", 50, 7000, 8000, 2e5f}}) {
    store::NewRun nr;
    nr.name = std::string("cadence ") + spec.scheme + std::to_string(spec.every);
    nr.groupName = "cadence";
    nr.scheme = spec.scheme;
    const int64_t id = s.createRun(nr);
    store::WriteBatch b;
    for (int step = spec.from; step <= spec.to; step += spec.every) {
      b.layer(step, metrics::kVariance, std::vector<float>(kLayers, spec.offset + static_cast<float>(step)));
    }
    s.write(id, b);
    ids.push_back(id);
  }
  ui::CompareView v(s, ids);
  v.setDifferencePair(ids[0], ids[1]);
  auto* plot = v.plots().at(QStringLiteral("difference"));
  QCPColorMap* map = nullptr;
  for (int i = 0; i < plot->plottableCount() && !map; ++i) map = qobject_cast<QCPColorMap*>(plot->plottable(i));
  ASSERT_NE(map, nullptr);
  // Over the steps both span (0-4,000), one column per row of B (161), each B's row nearest
  // its centre minus A's row nearest it, of the rows Compare loaded.
  ASSERT_EQ(map->data()->keySize(), 161);
  EXPECT_EQ(map->data()->keyRange(), QCPRange(0, 4000));
  const auto loadedA = s.layerSeriesSampled(ids[0], metrics::kVariance, ui::compare::kHeatmapColumns);
  ASSERT_EQ(loadedA.steps.size(), 400u);
  for (int c = 0; c < 161; ++c) {
    double key = 0, layer = 0;
    map->data()->cellToCoord(c, 0, &key, &layer);
    const int64_t stepB = 25 * c;
    EXPECT_DOUBLE_EQ(key, static_cast<double>(stepB));
    int64_t stepA = loadedA.steps[0];
    for (int64_t st : loadedA.steps) {
      if (std::abs(static_cast<double>(st) - key) <= std::abs(static_cast<double>(stepA) - key)) stepA = st;
    }
    for (int l = 0; l < kLayers; ++l) {
      EXPECT_DOUBLE_EQ(map->data()->cell(c, l), 1e5 + static_cast<double>(stepB) - static_cast<double>(stepA)) << c;
    }
  }
  v.setDifferencePair(ids[0], ids[2]);
  EXPECT_TRUE(v.differenceTitle().contains(QStringLiteral("share no steps"))) << v.differenceTitle().toStdString();
}

TEST(RedrawEconomy, CompareDiffersAnImportedSnapshotFromATrainedRunsLatestProbe) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("snapshot.db"));
  constexpr int kLayers = 3;
  std::vector<int64_t> ids;
  for (const char* name : {"trained", "imported", "trained again"}) {
    store::NewRun nr;
    nr.name = name;
    nr.groupName = name;
    nr.scheme = "pre_ln";
    // The imported one's config carries the "import" record hf::importHfModel writes.
    if (ids.size() == 1) nr.configJson = R"({"import": {"architecture": "LlamaForCausalLM"}})";
    const int64_t id = s.createRun(nr);
    if (ids.size() == 1) s.addTag(id, "imported");
    store::WriteBatch b;
    if (ids.size() != 1) {  // probed from an untrained step 0 to step 300
      for (int step = 0; step <= 300; step += 25) {
        b.layer(step, metrics::kVariance,
                std::vector<float>(kLayers, 0.01f * static_cast<float>(step)));
      }
    } else {  // a model probed once, outside any training: its "step 0"
      b.layer(0, metrics::kVariance, {3.5f, 3.0f, 2.0f});
    }
    s.write(id, b);
    ids.push_back(id);
  }
  ui::CompareView v(s, ids);
  v.setDifferencePair(ids[1], ids[0]);  // trained minus imported
  auto* plot = v.plots().at(QStringLiteral("difference"));
  QCPColorMap* map = nullptr;
  for (int i = 0; i < plot->plottableCount() && !map; ++i)
    map = qobject_cast<QCPColorMap*>(plot->plottable(i));
  ASSERT_NE(map, nullptr);
  // One column: the trained run's latest probe (step 300) minus the snapshot, not its
  // untrained step 0 (which had given -3.5, -3, -2).
  ASSERT_EQ(map->data()->keySize(), 1);
  EXPECT_DOUBLE_EQ(map->data()->cell(0, 0), 3.0 - 3.5);
  EXPECT_DOUBLE_EQ(map->data()->cell(0, 1), 3.0 - 3.0);
  EXPECT_DOUBLE_EQ(map->data()->cell(0, 2), 3.0 - 2.0);
  auto ticker = plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
  ASSERT_FALSE(ticker.isNull());
  ASSERT_EQ(ticker->ticks().size(), 1);
  EXPECT_EQ(ticker->ticks().first(), QStringLiteral("latest: step 300 and imported"));
  // Two trained runs again: their course over the steps, on a step axis.
  v.setDifferencePair(ids[0], ids[2]);
  map = nullptr;
  for (int i = 0; i < plot->plottableCount() && !map; ++i)
    map = qobject_cast<QCPColorMap*>(plot->plottable(i));
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->data()->keySize(), 13);
  EXPECT_TRUE(plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>().isNull());
  EXPECT_EQ(plot->xAxis->label(), QStringLiteral("step"));
}

TEST(RedrawEconomy, APanelOutOfViewReplotsWhenItComesIntoView) {
  QScrollArea area;
  area.resize(420, 220);  // the first panel (260 px) fills the view
  auto* host = new QWidget;
  auto* column = new QVBoxLayout(host);
  auto* top = new ui::LivePlot;
  auto* below = new ui::LivePlot;  // under the first: out of view until scrolled to
  for (auto* p : {top, below}) {
    p->setMinimumHeight(260);
    column->addWidget(p);
    auto* g = p->addGraph();
    for (int x = 0; x < 50; ++x) g->addData(x, std::sin(0.2 * x));
    p->rescaleAxes();
  }
  area.setWidgetResizable(true);
  area.setWidget(host);
  area.show();
  for (int i = 0; i < 10; ++i) QApplication::processEvents();
  int topReplots = 0, belowReplots = 0;
  QObject::connect(top, &QCustomPlot::afterReplot, [&] { ++topReplots; });
  QObject::connect(below, &QCustomPlot::afterReplot, [&] { ++belowReplots; });

  // New rows for both panels: the one in view replots, the other waits.
  for (auto* p : {top, below}) {
    for (int x = 50; x < 80; ++x) p->graph(0)->addData(x, 3 * std::cos(0.1 * x));
    p->rescaleAxes();
    ui::replotWhenShown(p);
  }
  for (int i = 0; i < 10; ++i) QApplication::processEvents();
  EXPECT_EQ(topReplots, 1);
  EXPECT_EQ(belowReplots, 0);
  EXPECT_TRUE(below->replotPending());

  // Scrolled into view: it replots before it is painted, and shows the new rows.
  area.verticalScrollBar()->setValue(area.verticalScrollBar()->maximum());
  for (int i = 0; i < 10; ++i) QApplication::processEvents();
  EXPECT_EQ(belowReplots, 1);
  EXPECT_FALSE(below->replotPending());
  const QImage seen = below->grab().toImage();
  below->replot(QCustomPlot::rpImmediateRefresh);
  EXPECT_EQ(below->grab().toImage(), seen);
  EXPECT_EQ(belowReplots, 2);  // (the grab itself did not replot again)

  // A panel that is not shown at all (another tab) waits too, and a grab draws its new rows.
  ui::LivePlot hidden;
  hidden.resize(300, 200);
  hidden.addGraph()->addData(0, 1);
  ui::replotWhenShown(&hidden);
  EXPECT_TRUE(hidden.replotPending());
  hidden.graph(0)->addData(1, 2);
  hidden.rescaleAxes();
  const QImage grabbed = hidden.grab().toImage();
  EXPECT_FALSE(hidden.replotPending());
  hidden.replot(QCustomPlot::rpImmediateRefresh);
  EXPECT_EQ(hidden.grab().toImage(), grabbed);
}
