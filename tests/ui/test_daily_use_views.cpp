// Daily use of the dashboard, Compare and paper figures: colour bars (log for variance,
// diverging on white at 0 for signed values), the difference pair the user picks, figures
// whose text never collides at 6, 8.5 and 17 cm with legends off the data and display names,
// the figure dialog's preview, renamed runs everywhere, zoom that says it stopped following and
// links across panels, click-to-step and the crosshair, panels that say their step, Block
// Influence and the layer diagnosis, progress with an ETA, log scales, tokens on the x axis,
// colour per run. Text is checked by its boxes, not pixels.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QFontMetricsF>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QTableWidget>
#include <QTest>
#include <QWheelEvent>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "compare/compare_view.h"
#include "daily_use_fixtures.h"
#include "dashboard/diagnosis_panel.h"
#include "dashboard/group_dashboard.h"
#include "experiment/resource_estimate.h"
#include "experiment/run_config.h"
#include "export/figure_catalogue.h"
#include "export/figure_dialog.h"
#include "export/figure_export.h"
#include "plot/colormaps.h"
#include "plot/eliding_title.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/plot_helpers.h"
#include "store/sqlite_db.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// Pre-LN and LNS, seeds 1 and 2, in groups "s1" and "s2": ids 1 pre_ln s1, 2 lns s1,
// 3 pre_ln s2, 4 lns s2.
std::vector<int64_t> fourRuns(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (int seed : {1, 2}) {
    for (const char* scheme : {"pre_ln", "lns"}) {
      test::FakeRun f{"s" + std::to_string(seed), scheme, seed};
      f.valLoss = std::string(scheme) == "lns" ? 1.9 : 2.0;
      ids.push_back(test::addFakeRun(s, f));
    }
  }
  return ids;
}

std::unique_ptr<ui::GroupDashboard> openDashboard(store::RunStore& s, const QString& group) {
  auto d = std::make_unique<ui::GroupDashboard>(group);
  d->resize(1400, 3000);
  d->show();
  d->refresh(s, {});
  d->redraw();
  return d;
}

QCPColorMap* mapOf(QCustomPlot* p) {
  for (int i = 0; i < p->plottableCount(); ++i) {
    if (auto* m = qobject_cast<QCPColorMap*>(p->plottable(i))) return m;
  }
  return nullptr;
}

QCPItemStraightLine* crosshairOf(QCustomPlot* p) {
  for (int i = 0; i < p->itemCount(); ++i) {
    if (auto* l = qobject_cast<QCPItemStraightLine*>(p->item(i));
        l && l->objectName() == QLatin1String("crosshair"))
      return l;
  }
  return nullptr;
}

void wheelOn(QCustomPlot* p) {
  const QPoint at = p->axisRect()->rect().center();
  QWheelEvent wheel(at, p->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                    Qt::ControlModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(p, &wheel);
}

// Every text of a drawn figure readable: tick labels apart, titles within their panels, and
// the legend over no data. Returns what is wrong ("" when nothing is).
std::string textProblems(QCustomPlot* plot) {
  std::string out;
  for (auto* axis : ui::figures::labelledAxes(plot)) {
    const auto boxes = ui::figures::tickLabelBoxes(axis);
    if (ui::figures::labelsCollide(boxes, 0.0)) {
      out += "colliding tick labels:";
      for (const auto& b : boxes) out += " " + b.text.toStdString();
      out += "; ";
    }
  }
  for (auto* element : plot->plotLayout()->elements(true)) {
    if (auto* t = qobject_cast<QCPTextElement*>(element)) {
      const double w = QFontMetricsF(t->font(), plot).horizontalAdvance(t->text());
      if (w > t->outerRect().width() + 0.5) out += "title cut: " + t->text().toStdString() + "; ";
    }
  }
  for (auto* axis : ui::figures::labelledAxes(plot)) {  // axis titles no longer than their axis
    const double w = QFontMetricsF(axis->labelFont(), plot).horizontalAdvance(axis->label());
    const double length = axis->orientation() == Qt::Horizontal ? axis->axisRect()->width()
                                                                : axis->axisRect()->height();
    if (w > length + 0.5)
      out += "axis title longer than its axis: " + axis->label().toStdString() + "; ";
  }
  if (plot->legend && plot->legend->visible()) {
    for (auto* rect : plot->axisRects()) {
      if (const int n = ui::figures::pointsUnderLegend(plot, rect); n > 0) {
        const QRect l = plot->legend->outerRect(), r = rect->rect();
        out += "legend over " + std::to_string(n) + " points (legend " + std::to_string(l.x()) +
               "," + std::to_string(l.y()) + " " + std::to_string(l.width()) + "x" +
               std::to_string(l.height()) + " in " + std::to_string(r.x()) + "," +
               std::to_string(r.y()) + " " + std::to_string(r.width()) + "x" +
               std::to_string(r.height()) + ":";
        for (const auto& p : ui::figures::dataPixels(rect)) {
          if (QRectF(l).contains(p))
            out += " " + std::to_string(static_cast<int>(p.x())) + "/" +
                   std::to_string(static_cast<int>(p.y()));
        }
        out += "); ";
      }
    }
  }
  return out;
}

}  // namespace

TEST(DailyUseViews, HeatmapsAreLogForVarianceAndDivergingOnWhiteForSignedValues) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  fourRuns(s);
  auto d = openDashboard(s, QStringLiteral("s1"));
  auto* variance = mapOf(d->plots().at(QStringLiteral("variance_map:pre_ln")));
  ASSERT_NE(variance, nullptr);
  EXPECT_EQ(variance->dataScaleType(), QCPAxis::stLogarithmic);  // spans decades
  ASSERT_NE(variance->colorScale(), nullptr);
  EXPECT_EQ(variance->colorScale()->dataScaleType(), QCPAxis::stLogarithmic);
  EXPECT_FALSE(variance->colorScale()->axis()->ticker().dynamicCast<QCPAxisTickerLog>().isNull());
  EXPECT_EQ(mapOf(d->plots().at(QStringLiteral("variance_map:lns")))->dataRange(),
            variance->dataRange());  // one scale
  auto* prune = mapOf(d->plots().at(QStringLiteral("prune_map:pre_ln")));
  ASSERT_NE(prune, nullptr);
  EXPECT_DOUBLE_EQ(prune->dataRange().lower, -prune->dataRange().upper);    // symmetric about 0
  EXPECT_GE(qGray(prune->gradient().color(0.0, prune->dataRange())), 250);  // white at 0
  EXPECT_LT(qAbs(qRed(prune->gradient().color(0.0, prune->dataRange())) -
                 qBlue(prune->gradient().color(0.0, prune->dataRange()))),
            3);
  EXPECT_FALSE(prune->colorScale()->label().isEmpty());
  // Angular distance: small = bright in the adjacent heatmap and in the (l, n) matrix alike.
  auto* adjacent = mapOf(d->plots().at(QStringLiteral("angular_map:pre_ln")));
  auto* matrix = mapOf(d->plots().at(QStringLiteral("angular_ln:pre_ln")));
  ASSERT_TRUE(adjacent && matrix);
  const QColor smallAdj = QColor::fromRgb(adjacent->gradient().color(0, QCPRange(0, 1)));
  const QColor smallMat = QColor::fromRgb(matrix->gradient().color(0, QCPRange(0, 1)));
  EXPECT_EQ(smallAdj, smallMat);
  EXPECT_GT(qGray(smallAdj.rgb()), 180);  // bright
}

TEST(DailyUseViews, TheUserPicksTheDifferencePairAndTheTitleSaysWhichMinusWhich) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  const auto ids = fourRuns(s);
  // Selected in the table's order: lns s2, lns s1, pre_ln s1, pre_ln s2.
  ui::CompareView v(s, {ids[3], ids[1], ids[0], ids[2]});
  EXPECT_EQ(v.differencePair(), std::make_pair(ids[0], ids[1]));  // Pre-LN vs LNS of one seed
  EXPECT_TRUE(v.differenceTitle().startsWith(QStringLiteral("variance: LNS s1 minus Pre-LN s1")))
      << v.differenceTitle().toStdString();
  v.setDifferencePair(ids[2], ids[3]);
  EXPECT_TRUE(v.differenceTitle().startsWith(QStringLiteral("variance: LNS s2 minus Pre-LN s2")))
      << v.differenceTitle().toStdString();
  auto* map = mapOf(v.plots().at(QStringLiteral("difference")));
  ASSERT_NE(map, nullptr);
  // Cell (step 0, layer 6): lns minus pre_ln, negative (LNS keeps the variance down).
  EXPECT_LT(map->data()->cell(0, 5), 0);
  EXPECT_DOUBLE_EQ(map->dataRange().lower, -map->dataRange().upper);
  EXPECT_GE(qGray(map->gradient().color(0.0, map->dataRange())), 250);  // white at 0
  ASSERT_NE(map->colorScale(), nullptr);
}

TEST(DailyUseViews, PaperFigureTextNeverCollidesAt6And85And17Cm) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  const auto ids = fourRuns(s);
  for (const char* width : {"6cm", "8.5cm", "17cm"}) {
    for (const auto& figure : ui::figureIds()) {
      SCOPED_TRACE(std::string(width) + " " + figure.toStdString());
      ui::ExportRequest req;
      req.runs = ids;
      req.figure = figure;
      req.style.widthPt = ui::parseLengthToPoints(QString::fromLatin1(width));
      req.style.schemeNames[QStringLiteral("lns")] = QStringLiteral("LNS (ours)");
      QCustomPlot plot;
      ui::drawFigure(&plot, s, req);
      EXPECT_EQ(plot.size(), ui::figureSizePt(req));
      EXPECT_EQ(textProblems(&plot), "");
      // Display names from the style, distinct (the seed tells the pairs apart).
      QStringList names;
      if (plot.legend && plot.legend->visible()) {
        for (int i = 0; i < plot.legend->itemCount(); ++i) {
          if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
            names << item->plottable()->name();
        }
      }
      for (auto* element : plot.plotLayout()->elements(true)) {
        if (auto* t = qobject_cast<QCPTextElement*>(element))
          names << t->property("fullText").toString();
      }
      EXPECT_TRUE(names.contains(QStringLiteral("LNS (ours) s2")))
          << names.join(QStringLiteral("|")).toStdString();
      EXPECT_EQ(names.size(),
                static_cast<int>(std::set<QString>(names.begin(), names.end()).size()));
      if (figure ==
          QLatin1String("variance")) {  // the layer colour bar stands for the curves' legend
        bool layerBar = false;
        for (auto* element : plot.plotLayout()->elements(true)) {
          if (auto* bar = qobject_cast<QCPColorScale*>(element))
            layerBar = bar->label() == QLatin1String("layer");
        }
        EXPECT_TRUE(layerBar);
      }
    }
  }
}

TEST(DailyUseViews, TheFigureDialogPreviewsTheExportedFigureAndKeepsTheNames) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  const auto ids = fourRuns(s);
  ui::FigureDialog dialog(s, ids, QStringLiteral("variance"), ui::FigureStyle{});
  dialog.updatePreview();
  ASSERT_FALSE(dialog.previewImage().isNull());
  auto aspect = [](QSizeF z) { return z.width() / z.height(); };
  EXPECT_NEAR(aspect(dialog.previewImage().size()), aspect(ui::figureSizePt(dialog.request())),
              0.02);
  const QSize narrow = ui::figureSizePt(dialog.request());
  dialog.setWidthCm(17);
  dialog.updatePreview();
  EXPECT_NE(ui::figureSizePt(dialog.request()), narrow);
  EXPECT_NEAR(aspect(dialog.previewImage().size()), aspect(ui::figureSizePt(dialog.request())),
              0.02);
  // A tall figure (four runs' panels two by two at 8.5 cm) is shown whole: it had been scaled
  // to the preview's width and cut at top and bottom.
  dialog.setWidthCm(8.5);
  dialog.resize(860, 530);
  dialog.show();
  QApplication::processEvents();
  dialog.updatePreview();
  auto* preview = dialog.findChild<QLabel*>(QStringLiteral("preview"));
  ASSERT_NE(preview, nullptr);
  const QSize tall = ui::figureSizePt(dialog.request());
  EXPECT_LE(dialog.previewImage().height(), preview->height())
      << tall.width() << " x " << tall.height();
  EXPECT_LE(dialog.previewImage().width(), preview->width());
  EXPECT_DOUBLE_EQ(ui::FigureDialog::previewScale({200, 400}, {1010, 410}), 1.0);  // by the height
  EXPECT_DOUBLE_EQ(ui::FigureDialog::previewScale({400, 100}, {810, 1000}), 2.0);  // by the width
  EXPECT_DOUBLE_EQ(ui::FigureDialog::previewScale({400, 100}, {10000, 10000}), 2.5);
  EXPECT_DOUBLE_EQ(ui::FigureDialog::previewScale({4000, 1000}, {110, 110}), 0.5);
  dialog.setDisplayName(QStringLiteral("lns"), QStringLiteral("LNS (ours)"));
  dialog.setDisplayName(QString::number(ids[0]), QStringLiteral("baseline"));
  dialog.setFigure(QStringLiteral("loss"));
  dialog.setFormat(QStringLiteral("svg"));
  ui::FigureStyle saved;
  QObject::connect(&dialog, &ui::FigureDialog::styleSaved,
                   [&](const ui::FigureStyle& st) { saved = st; });
  const QStringList files = dialog.saveTo(QString::fromStdString(dir.file("out/loss.svg")));
  ASSERT_EQ(files.size(), 3);
  const QString svg = QString::fromStdString(test::readFile(dir.file("out/loss.svg")));
  EXPECT_TRUE(svg.contains(QStringLiteral("baseline")));
  EXPECT_TRUE(svg.contains(QStringLiteral("LNS (ours) s1")));
  EXPECT_EQ(saved.schemeNames.value(QStringLiteral("lns")), QStringLiteral("LNS (ours)"));
  EXPECT_EQ(saved.runNames.value(ids[0]), QStringLiteral("baseline"));
  // The style round-trips with the names.
  const auto back = ui::styleFromJson(ui::styleToJson(saved));
  EXPECT_EQ(back.schemeNames, saved.schemeNames);
  EXPECT_EQ(back.runNames, saved.runNames);
}

TEST(DailyUseViews, RenamedRunsGoByTheirNameEverywhereAndLegendsStayOffTheData) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  const auto ids = fourRuns(s);
  s.renameRun(ids[0], "baseline PreLN 24L");
  ui::CompareView v(s, ids);
  v.resize(1250, 1500);  // laid out at its size on screen, as the window shows it
  v.show();
  QTest::qWait(100);
  QStringList legend;
  auto* loss = v.plots().at(QStringLiteral("loss"));
  for (int i = 0; i < loss->graphCount(); ++i) legend << loss->graph(i)->name();
  EXPECT_TRUE(legend.contains(QStringLiteral("baseline PreLN 24L")))
      << legend.join(QStringLiteral("|")).toStdString();
  EXPECT_FALSE(legend.join(QLatin1Char('|')).contains(QStringLiteral("pre_ln #")));
  for (const auto& name :
       {QStringLiteral("loss"), QStringLiteral("seed_groups"), QStringLiteral("depth_scaling")}) {
    SCOPED_TRACE(name.toStdString());
    auto* p = v.plots().at(name);
    p->replot(QCustomPlot::rpImmediateRefresh);
    EXPECT_EQ(ui::figures::pointsUnderLegend(p, p->axisRect()), 0) << textProblems(p);
  }
  auto d = openDashboard(s, QStringLiteral("s1"));
  EXPECT_EQ(d->labelOf(QStringLiteral("pre_ln")), QStringLiteral("baseline PreLN 24L"));
  ui::ExportRequest req;
  req.runs = {ids[0], ids[1]};
  req.figure = QStringLiteral("pruning");
  QCustomPlot paper;
  ui::drawFigure(&paper, s, req);
  bool named = false;
  for (int i = 0; i < paper.plottableCount(); ++i)
    named = named || paper.plottable(i)->name() == QLatin1String("baseline PreLN 24L");
  EXPECT_TRUE(named);
}

TEST(DailyUseViews, ZoomSaysItStoppedFollowingLinksStepPanelsAndFollowResumes) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  fourRuns(s);
  auto d = openDashboard(s, QStringLiteral("s1"));
  auto* loss = d->plots().at(QStringLiteral("loss"));
  auto* variance = d->plots().at(QStringLiteral("variance:lns"));
  auto* bars = d->plots().at(QStringLiteral("prune_bars"));
  const QCPRange barsRange = bars->xAxis->range();
  wheelOn(loss);
  ASSERT_TRUE(ui::userZoomed(loss));
  EXPECT_TRUE(ui::zoomBadgeText(loss).contains(QStringLiteral("not following")));
  {  // readable: above the data area, so never under the legend inside it
    QTRY_VERIFY_WITH_TIMEOUT(loss->width() > 400, 2000);  // laid out as the window shows it
    loss->replot();
    ASSERT_TRUE(loss->legend->visible());
    EXPECT_LE(loss->legend->outerRect().bottom(), loss->height());
    EXPECT_GE(loss->legend->outerRect().top(), loss->axisRect()->rect().top());
  }
  // Linked: every step panel shows the same steps; the layer-axis bars do not move.
  QTRY_COMPARE_WITH_TIMEOUT(variance->xAxis->range(), loss->xAxis->range(), 2000);
  EXPECT_TRUE(ui::userZoomed(variance));
  EXPECT_EQ(bars->xAxis->range(), barsRange);
  d->followAll();
  EXPECT_FALSE(ui::userZoomed(loss));
  EXPECT_TRUE(ui::zoomBadgeText(loss).isEmpty());
  EXPECT_FALSE(ui::userZoomed(variance));
  // Unlinked: the zoom stays on its panel.
  d->setLinkedZoom(false);
  const QCPRange before = variance->xAxis->range();
  wheelOn(loss);
  QTest::qWait(300);
  EXPECT_EQ(variance->xAxis->range(), before);
  EXPECT_FALSE(ui::userZoomed(variance));
}

TEST(DailyUseViews, AClickSetsTheStepAndTheCrosshairFollowsAcrossPanels) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  fourRuns(s);
  auto d = openDashboard(s, QStringLiteral("s1"));
  auto* variance = d->plots().at(QStringLiteral("variance:pre_ln"));
  variance->replot(QCustomPlot::rpImmediateRefresh);
  const QPoint at(static_cast<int>(variance->xAxis->coordToPixel(52)),
                  variance->axisRect()->rect().center().y());
  auto send = [&](QEvent::Type type, Qt::MouseButton button, Qt::MouseButtons buttons) {
    QMouseEvent e(type, QPointF(at), variance->mapToGlobal(QPointF(at)), button, buttons,
                  Qt::NoModifier);
    QApplication::sendEvent(variance, &e);
  };
  send(QEvent::MouseMove, Qt::NoButton, Qt::NoButton);
  send(QEvent::MouseButtonPress, Qt::LeftButton, Qt::LeftButton);
  send(QEvent::MouseButtonRelease, Qt::LeftButton, Qt::NoButton);
  EXPECT_EQ(d->cursorStep(), 50);          // the nearest probed step
  EXPECT_FALSE(ui::userZoomed(variance));  // a click is not a zoom
  auto* loss = d->plots().at(QStringLiteral("loss"));
  auto* crosshair = crosshairOf(loss);
  ASSERT_NE(crosshair, nullptr);
  // The same step in every step panel: the one under the mouse in the variance panel.
  auto* own = crosshairOf(variance);
  ASSERT_NE(own, nullptr);
  EXPECT_DOUBLE_EQ(crosshair->point1->coords().x(), own->point1->coords().x());
  EXPECT_GT(own->point1->coords().x(), 25);
  EXPECT_LT(own->point1->coords().x(), 75);
}

TEST(DailyUseViews, CursorPanelsSayTheirStepAndShowBlockInfluenceAndTheDiagnosis) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  fourRuns(s);
  auto d = openDashboard(s, QStringLiteral("s1"));
  d->setCursorStep(120);
  auto* bars = d->plots().at(QStringLiteral("prune_bars"));
  EXPECT_TRUE(bars->yAxis->label().contains(QStringLiteral("at step 100")))
      << bars->yAxis->label().toStdString();
  d->setCursorStep(40);
  EXPECT_TRUE(bars->yAxis->label().contains(QStringLiteral("at step 0")))
      << bars->yAxis->label().toStdString();
  // Each cursor panel's axis title fits its axis, the step on a second line where it must.
  QTRY_VERIFY_WITH_TIMEOUT(bars->width() > 400, 2000);  // laid out as the window shows it
  d->setCursorStep(120);
  for (const char* key : {"prune_bars", "effectiveness", "grad_norm", "block_influence"}) {
    auto* p = d->plots().at(QString::fromLatin1(key));
    p->replot();
    const QFontMetricsF metrics(p->yAxis->labelFont());
    for (const auto& line : p->yAxis->label().split(QLatin1Char('\n'))) {
      EXPECT_LE(metrics.horizontalAdvance(line), p->axisRect()->height() + 0.5)
          << key << ": " << line.toStdString();
    }
    EXPECT_TRUE(p->yAxis->label().contains(QStringLiteral("at step 100"))) << key;
  }
  // Resized after it drew (a window's new layout arrives after the redraw it posts): the
  // title is chosen again at the next replot, for the new length (it had kept the old one).
  bars->setMinimumHeight(0);
  for (const int height : {160, 600, 160}) {
    bars->resize(bars->width(), height);
    bars->replot();
    const QFontMetricsF metrics(bars->yAxis->labelFont(), bars);
    const QString one = bars->yAxis->label();
    EXPECT_EQ(one.contains(QLatin1Char('\n')), height == 160)
        << height << ": " << one.toStdString();
    for (const auto& line : one.split(QLatin1Char('\n'))) {
      EXPECT_LE(metrics.horizontalAdvance(line), bars->axisRect()->height() + 0.5)
          << height << ": " << line.toStdString();
    }
  }
  auto* bi = d->plots().at(QStringLiteral("block_influence"));
  int biBars = 0;
  for (int i = 0; i < bi->plottableCount(); ++i)
    biBars += qobject_cast<QCPBars*>(bi->plottable(i)) != nullptr;
  EXPECT_EQ(biBars, 2);
  d->setCursorStep(150);
  d->redraw();
  auto* diagnosis = d->diagnosis();
  ASSERT_NE(diagnosis, nullptr);
  ASSERT_EQ(diagnosis->runCount(), 2);
  ASSERT_NE(diagnosis->table(0), nullptr);
  EXPECT_EQ(diagnosis->table(0)->rowCount(), 6);
  // The last layer (negative delta) is the first to drop; layer 1 the last.
  EXPECT_EQ(diagnosis->table(0)->item(0, 1)->text(), QStringLiteral("6"));
  EXPECT_EQ(diagnosis->table(0)->item(5, 1)->text(), QStringLiteral("1"));
  EXPECT_TRUE(diagnosis->summary(0).contains(QStringLiteral("ρ =")))
      << diagnosis->summary(0).toStdString();
  // In a narrower window every column stays in view (the tables had split the width between
  // them, hiding Block Influence and effectiveness behind horizontal scroll bars): the tables
  // stack instead, each as wide as its columns.
  d->resize(1000, 3000);
  QTRY_VERIFY_WITH_TIMEOUT(d->width() == 1000, 2000);
  QCoreApplication::processEvents();
  for (int i = 0; i < 2; ++i) {
    auto* t = diagnosis->table(i);
    int columns = 0;
    for (int c = 0; c < t->columnCount(); ++c) columns += t->columnWidth(c);
    EXPECT_LE(columns, t->viewport()->width()) << "table " << i;
    EXPECT_EQ(t->horizontalScrollBar()->maximum(), 0) << "table " << i;
  }
  const QRect first(diagnosis->table(0)->mapTo(diagnosis, QPoint(0, 0)),
                    diagnosis->table(0)->size());
  const QRect second(diagnosis->table(1)->mapTo(diagnosis, QPoint(0, 0)),
                     diagnosis->table(1)->size());
  EXPECT_FALSE(first.intersects(second));
  EXPECT_LE(std::max(first.right(), second.right()), diagnosis->width());
}

TEST(DailyUseViews, ASingleSampleHeatmapShowsItsStepNotAZeroToOneAxis) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::FakeRun f{"one", "pre_ln"};
  f.probeSteps = {100};
  test::addFakeRun(s, f);
  auto d = openDashboard(s, QStringLiteral("one"));
  auto* p = d->plots().at(QStringLiteral("variance_map:pre_ln"));
  p->replot(QCustomPlot::rpImmediateRefresh);
  QStringList labels;
  for (const auto& b : ui::figures::tickLabelBoxes(p->xAxis)) labels << b.text;
  EXPECT_EQ(labels, QStringList{QStringLiteral("100")});
  // The one column is centred on its tick (it spanned [100, 101], the tick at its left edge),
  // and hover and CSV name its step (QCustomPlot's cell coordinate of a one-cell-wide map is
  // NaN).
  EXPECT_DOUBLE_EQ(p->xAxis->range().center(), 100.0);
  const QPoint middle(static_cast<int>(p->xAxis->coordToPixel(100)),
                      static_cast<int>(p->yAxis->coordToPixel(2)));
  const QString hover = ui::hoverText(p, middle);
  EXPECT_TRUE(hover.contains(QStringLiteral("step = 100"))) << hover.toStdString();
  const QString csv = ui::plotCsv(p);
  EXPECT_FALSE(csv.contains(QStringLiteral("nan"))) << csv.left(200).toStdString();
  EXPECT_TRUE(csv.contains(QStringLiteral(",100,"))) << csv.left(200).toStdString();
}

TEST(DailyUseViews, AnImportedModelsDashboardHasNoEmptyLossPanels) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::FakeRun f{"hf", "pre_ln"};
  f.probeSteps = {0};
  const int64_t id = test::addFakeRun(s, f);
  auto d = openDashboard(s, QStringLiteral("hf"));
  QApplication::processEvents();
  EXPECT_TRUE(d->plots().at(QStringLiteral("loss"))->isVisibleTo(d.get()));  // trained here
  auto config = nlohmann::json::parse(s.run(id)->configJson);
  config["import"] = {{"architecture", "LlamaForCausalLM"}};  // what hf::importHfModel records
  s.setRunConfig(id, config.dump());
  d = openDashboard(s, QStringLiteral("hf"));
  EXPECT_FALSE(d->plots().at(QStringLiteral("loss"))->isVisibleTo(d.get()));
  QApplication::processEvents();  // a layout shows the panels it was given once events run
  EXPECT_FALSE(d->plots().at(QStringLiteral("loss"))->isVisibleTo(d.get()));
  // One probe step: the snapshot view, each per-layer metric once as a profile over layers.
  EXPECT_EQ(d->plots().count(QStringLiteral("variance_map:pre_ln")),
            0u);  // the curves panel has it
  auto* variance = d->plots().at(QStringLiteral("variance:pre_ln"));
  EXPECT_TRUE(variance->isVisibleTo(d.get()));
  EXPECT_EQ(variance->xAxis->label(), QStringLiteral("layer"));
  ASSERT_EQ(variance->graphCount(), 1);
  const auto& run = s.run(id);
  const int layers = experiment::configOf(*run).model.nLayers;
  ASSERT_EQ(variance->graph(0)->data()->size(), layers);
  EXPECT_DOUBLE_EQ(variance->graph(0)->data()->at(0)->key, 1.0);
  EXPECT_DOUBLE_EQ(variance->graph(0)->data()->at(layers - 1)->key, static_cast<double>(layers));
  auto* adjacent = d->plots().at(QStringLiteral("angular_map:pre_ln"));  // a profile now
  EXPECT_EQ(adjacent->graphCount(), 1);
  EXPECT_NE(adjacent->yAxis->label(), QStringLiteral("layer"));
  auto* slider = d->findChild<QSlider*>();
  ASSERT_NE(slider, nullptr);
  EXPECT_FALSE(slider->isVisibleTo(d.get()));  // nothing to scrub
}

TEST(DailyUseViews, ProgressLogScalesTokenAxisAndColourPerRun) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::FakeRun f{"live", "pre_ln"};
  f.steps = 150;
  f.finished = false;
  const int64_t id = test::addFakeRun(s, f);
  auto d = openDashboard(s, QStringLiteral("live"));
  EXPECT_EQ(d->progressPercent(), 25);  // 150 of 600 steps
  const auto preset = *experiment::presetConfig("cpu-demo");
  const double tokensPerStep =
      static_cast<double>(preset.optim.batchSize) * preset.model.seqLen * preset.optim.gradAccum;
  const double eta = 450.0 * tokensPerStep / 20000.0;  // 450 steps to go at 20000 tokens/s
  EXPECT_TRUE(d->progressText().contains(QStringLiteral("150 / 600 steps")))
      << d->progressText().toStdString();
  EXPECT_TRUE(
      d->progressText().contains(QString::fromStdString("ETA " + experiment::formatDuration(eta))))
      << d->progressText().toStdString();
  d->setLogLayers(true);
  EXPECT_EQ(d->plots().at(QStringLiteral("variance:pre_ln"))->yAxis->scaleType(),
            QCPAxis::stLogarithmic);
  EXPECT_EQ(d->plots().at(QStringLiteral("grad_norm"))->yAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_EQ(d->plots().at(QStringLiteral("effectiveness"))->yAxis->scaleType(), QCPAxis::stLinear);
  d->setLossAxis(QStringLiteral("tokens"));
  auto* loss = d->plots().at(QStringLiteral("loss"));
  double maxKey = 0;
  for (int i = 0; i < loss->graphCount(); ++i) {
    if (loss->graph(i)->dataCount() > 0)
      maxKey = std::max(maxKey, (loss->graph(i)->data()->constEnd() - 1)->key);
  }
  EXPECT_DOUBLE_EQ(maxKey, 149.0 * tokensPerStep);
  EXPECT_EQ(loss->xAxis->label(), QStringLiteral("tokens"));
  d->setLossAxis(QStringLiteral("time"));
  maxKey = 0;
  for (int i = 0; i < loss->graphCount(); ++i) {
    if (loss->graph(i)->dataCount() > 0)
      maxKey = std::max(maxKey, (loss->graph(i)->data()->constEnd() - 1)->key);
  }
  EXPECT_NEAR(maxKey, 149.0 * tokensPerStep / 20000.0, 0.1);
  (void)id;
  // Compare: one colour per run tells the seeds of one scheme apart.
  test::addFakeRun(s, {"other", "pre_ln", 7});
  ui::CompareView v(s, {1, 2});
  v.setColorBy(QStringLiteral("#run"));
  auto* c = v.plots().at(QStringLiteral("loss"));
  std::set<QRgb> colours;
  for (int i = 0; i < c->graphCount(); ++i) {
    if (c->graph(i)->visible() && !c->graph(i)->name().isEmpty())
      colours.insert(c->graph(i)->pen().color().rgb());
  }
  EXPECT_GE(colours.size(), 2u);
}

// A paired group's process trains its runs one step each in turn, so each run's ETA is the
// time its whole process needs (its line had said a quarter of that for four schemes, under a
// progress bar saying the sum); runs trained by separate processes go on side by side.
TEST(DailyUseViews, RunsTrainedInLockstepShareTheirProcessesETA) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::FakeRun f{"live", "pre_ln"};
  f.steps = 150;  // 450 of 600 steps to go at 20,000 tokens/s
  f.finished = false;
  test::addFakeRun(s, f);
  f.scheme = "lns";
  f.steps = 300;  // 300 to go
  test::addFakeRun(s, f);
  const auto preset = *experiment::presetConfig("cpu-demo");
  const double stepSeconds = static_cast<double>(preset.optim.batchSize) * preset.model.seqLen *
                             preset.optim.gradAccum / 20000.0;
  auto etaText = [](double seconds) {
    const int secs = static_cast<int>(std::lround(seconds));
    return QStringLiteral("ETA %1:%2").arg(secs / 60).arg(secs % 60, 2, 10, QLatin1Char('0'));
  };
  auto eta = [&](ui::GroupData& g, size_t i) {
    g.reload(s, {});
    return g.etaSeconds(g.runs().at(i)).value_or(-1);
  };
  ui::GroupData g(QStringLiteral("live"));
  // One process (this one marked both running): 450 + 300 steps, and 300 + 300.
  EXPECT_NEAR(eta(g, 0), 750 * stepSeconds, 1e-6);
  EXPECT_NEAR(eta(g, 1), 600 * stepSeconds, 1e-6);
  EXPECT_NEAR(*g.progress().etaSeconds, 750 * stepSeconds, 1e-6);
  EXPECT_TRUE(g.runs()[0]
                  .statusLine(QString(), g.etaSeconds(g.runs()[0]))
                  .contains(etaText(750 * stepSeconds)));
  EXPECT_TRUE(g.runs()[0].statusLine().contains(QStringLiteral("ETA -")));
  auto d = openDashboard(s, QStringLiteral("live"));
  EXPECT_TRUE(d->progressText().contains(
      QString::fromStdString("ETA " + experiment::formatDuration(750 * stepSeconds))))
      << d->progressText().toStdString();
  // The LNS run resumed by a process of its own: each goes at its own pace.
  {
    store::SqliteDb db(dir.file("v.db"), SQLITE_OPEN_READWRITE);
    db.exec("UPDATE runs SET pid = pid + 1 WHERE id = 2");
  }
  EXPECT_NEAR(eta(g, 0), 450 * stepSeconds, 1e-6);
  EXPECT_NEAR(eta(g, 1), 300 * stepSeconds, 1e-6);
  EXPECT_NEAR(*g.progress().etaSeconds, 450 * stepSeconds, 1e-6);
  // A finished run has no ETA and leaves the group's to the other.
  s.finishRun(2, store::RunStatus::Finished);
  EXPECT_LT(eta(g, 1), 0);
  EXPECT_NEAR(*g.progress().etaSeconds, 450 * stepSeconds, 1e-6);
}

// Four schemes in a 1,040-px dashboard (a 1500 x 950 window beside the set-up panel), runs
// 20,000 steps long: every panel row fits the width (the panels' titles had held each of them
// at its title's width: 1,396 px for the row, a horizontal scroll bar for the whole dashboard),
// the step labels never run together ("100150200250300"), and the loss panel's legend of eight
// entries stands beside the plot at its own height, inside the panel (it had been stretched
// over the panel's height, its frame on the widget's edge).
TEST(DailyUseViews, FourSchemesFitTheWindowWithReadableStepsAndLegend) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  for (const char* scheme : {"pre_ln", "lns", "post_ln", "mix_ln"}) {
    test::FakeRun f{"four", scheme};
    f.layers = 24;
    f.steps = 20000;
    f.probeSteps = {0, 2500, 5000, 7500, 10000, 12500, 15000, 17500, 19999};
    test::addFakeRun(s, f);
  }
  auto d = std::make_unique<ui::GroupDashboard>(QStringLiteral("four"));
  d->resize(1040, 3000);
  d->show();
  d->refresh(s, {});
  d->redraw();
  QApplication::processEvents();
  d->resize(1040, 3000);  // a top-level widget grew to its panels' first layout
  QApplication::processEvents();
  d->redraw();  // at the laid-out sizes
  auto* scroll = d->findChild<QScrollArea*>();
  ASSERT_NE(scroll, nullptr);
  EXPECT_LE(d->width(), 1040);  // the dashboard itself asks for no more (a long note had)
  EXPECT_LE(scroll->widget()->minimumSizeHint().width(), scroll->viewport()->width());
  EXPECT_FALSE(scroll->horizontalScrollBar()->isVisible());
  int titles = 0, elided = 0;
  for (const auto& [name, p] : d->plots()) {
    p->replot();
    const double gap = 0.5 * QFontMetricsF(p->xAxis->tickLabelFont(), p).height();
    EXPECT_FALSE(ui::figures::labelsCollide(ui::figures::tickLabelBoxes(p->xAxis), gap))
        << name.toStdString();
    for (auto* e : p->plotLayout()->elements(true)) {
      if (auto* t = dynamic_cast<ui::figures::ElidingTitle*>(e)) {
        ++titles;
        elided += t->shownText() != t->text();
        EXPECT_TRUE(t->shownText().startsWith(t->text().left(3))) << t->shownText().toStdString();
      }
    }
  }
  EXPECT_GT(titles, 20);
  EXPECT_GT(elided, 0);  // the long ones, at ~250 px a panel
  auto* loss = d->plots().at(QStringLiteral("loss"));
  ASSERT_EQ(loss->legend->itemCount(), 8);
  const QRect legend = loss->legend->outerRect();
  EXPECT_LE(legend.height(), loss->legend->minimumOuterSizeHint().height() + 2);
  EXPECT_GE(legend.top(), loss->axisRect()->rect().top() - 1);
  EXPECT_LE(legend.right(), loss->viewport().right() - 1);
  EXPECT_GE(legend.left(), loss->axisRect()->outerRect().right());
  // Decimation notes: the curves with one count named together, once.
  EXPECT_EQ(d->decimationNote().count(QStringLiteral(" of 20000 points")), 1)
      << d->decimationNote().toStdString();
  // The same from the loss builder: runs of 1,000, 900 and 1,000 steps on 40 columns.
  auto points = [](int n) {
    std::vector<store::ScalarPoint> p;
    for (int i = 0; i < n; ++i) p.push_back({i, 4.0 - 0.001 * i});
    return p;
  };
  QCustomPlot plot;
  ui::figures::LossStyle style;
  style.columns = 40;
  const auto notes = ui::figures::lossOverlay(
      plot.xAxis, plot.yAxis,
      {{QStringLiteral("a"), Qt::blue, Qt::SolidLine, points(1000), {}, {}},
       {QStringLiteral("b"), Qt::red, Qt::SolidLine, points(900), {}, {}},
       {QStringLiteral("c"), Qt::green, Qt::SolidLine, points(1000), {}, {}}},
      style);
  ASSERT_EQ(notes.size(), 2) << notes.join(QStringLiteral("; ")).toStdString();
  EXPECT_TRUE(notes[0].startsWith(QStringLiteral("a train, c train: ")) &&
              notes[0].endsWith(QStringLiteral(" of 1000 points")))
      << notes[0].toStdString();
  EXPECT_TRUE(notes[1].startsWith(QStringLiteral("b train: ")) &&
              notes[1].endsWith(QStringLiteral(" of 900 points")))
      << notes[1].toStdString();
}

// A depth sweep (Pre-LN and LNS at 6 and 12 layers) compared: layer axes tick whole layers
// (they read 2.5, 5, 7.5, 10, 12.5), the controls flow onto two lines in a narrow view instead
// of holding Compare ~1,000 px wide (the set-up panel beside it was squeezed), and each run's
// id is named once ("LNS #4", not "LNS #4 (#4)").
TEST(DailyUseViews, ADepthSweepComparesOnWholeLayersInANarrowWindow) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  std::vector<int64_t> ids;
  for (int layers : {6, 12}) {
    for (const char* scheme : {"pre_ln", "lns"}) {
      test::FakeRun f{"sweep-L" + std::to_string(layers), scheme};
      f.layers = layers;
      ids.push_back(test::addFakeRun(s, f));
    }
  }
  ui::CompareView v(s, ids);
  EXPECT_LE(v.minimumSizeHint().width(), 900);
  v.resize(900, 2400);
  v.show();
  QApplication::processEvents();
  for (auto* combo : {v.findChild<QComboBox*>(QStringLiteral("diffA")),
                      v.findChild<QComboBox*>(QStringLiteral("diffB"))}) {
    ASSERT_NE(combo, nullptr);
    for (int i = 0; i < combo->count(); ++i) {
      EXPECT_EQ(combo->itemText(i).count(QLatin1Char('#')), 1) << combo->itemText(i).toStdString();
    }
  }
  for (const char* profile : {"variance", "angular_adjacent", "prune_delta"}) {
    auto it = v.plots().find(QString::fromLatin1(profile));
    ASSERT_NE(it, v.plots().end()) << profile;
    it->second->replot();
    const auto labels = it->second->xAxis->tickVectorLabels();
    ASSERT_GE(labels.size(), 2) << profile;
    for (const auto& label : labels)
      EXPECT_FALSE(label.contains(QLatin1Char('.'))) << profile << ": " << label.toStdString();
  }
  // The dashboard's layer bars of a 12-layer group too.
  auto d = openDashboard(s, QStringLiteral("sweep-L12"));
  auto* bars = d->plots().at(QStringLiteral("prune_bars"));
  bars->replot();
  for (const auto& label : bars->xAxis->tickVectorLabels())
    EXPECT_FALSE(label.contains(QLatin1Char('.'))) << label.toStdString();
}

// Eight entries over a short panel whose data keep to the bottom: the top-right corner is free,
// but the legend is taller than the data area. It goes beside the plot whole; it had stayed
// inside, running over the panel's top edge with its frame cut there.
TEST(DailyUseViews, ALegendTallerThanTheDataAreaIsNotPutInside) {
  QCustomPlot p;
  p.resize(800, 220);
  p.show();
  QApplication::processEvents();  // the viewport takes the size
  for (int i = 0; i < 8; ++i) {
    auto* g = p.addGraph();
    g->setName(QStringLiteral("scheme %1 train").arg(i));
    for (int x = 0; x <= 250; ++x) g->addData(x, x < 30 ? 5.5 - 0.1 * x : 2.0 + 0.001 * i);
  }
  p.legend->setVisible(true);
  p.rescaleAxes();
  p.replot();
  ui::figures::placeLegend(&p, p.axisRect(), ui::figures::LegendOutside::Right);
  p.replot();
  const QRect legend = p.legend->outerRect();
  const QRect data = p.axisRect()->rect();
  EXPECT_TRUE(data.contains(legend) || !data.intersects(legend))
      << "legend " << legend.top() << ".." << legend.bottom() << ", data " << data.top() << ".."
      << data.bottom();
  EXPECT_GE(legend.top(), p.viewport().top());
  EXPECT_LE(legend.bottom(), p.viewport().bottom());
}

TEST(DailyUseViews, ALegendWithNoFreeCornerGoesBelowTheDataWhole) {
  QCustomPlot p;
  p.setMinimumHeight(240);
  p.resize(360, 240);
  p.show();
  p.legend->setVisible(true);
  for (int k = 0; k < 4; ++k) {  // curves across the whole frame
    auto* g = p.addGraph();
    g->setName(QStringLiteral("a long legend entry %1 (L=24)").arg(k));
    for (int x = 0; x <= 24; ++x) g->addData(x, (x * 7 + k * 13) % 10);
  }
  p.rescaleAxes();
  EXPECT_FALSE(ui::figures::placeLegend(&p, p.axisRect()));
  p.replot(QCustomPlot::rpImmediateRefresh);
  const QRect legend = p.legend->outerRect(), frame = p.axisRect()->outerRect();
  EXPECT_GE(legend.top(), frame.bottom() - 1) << legend.top() << " " << frame.bottom();
  EXPECT_LE(legend.bottom(), p.height());
  EXPECT_GE(legend.height(), p.legend->minimumOuterSizeHint().height());
  EXPECT_GT(legend.height(), 2 * 10);  // the entries' rows, not a sliver
  EXPECT_EQ(ui::figures::pointsUnderLegend(&p, p.axisRect()), 0);
}

TEST(DailyUseViews, EveryPanelSavesItsDataAsCsv) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  fourRuns(s);
  auto d = openDashboard(s, QStringLiteral("s1"));
  d->setCursorStep(150);
  const QString bars = ui::plotCsv(d->plots().at(QStringLiteral("prune_bars")));
  EXPECT_TRUE(bars.startsWith(QStringLiteral("series,x,y,value,standard_error\n")));
  EXPECT_TRUE(bars.contains(QStringLiteral("\"Pre-LN\",1,2,")))
      << bars.left(200).toStdString();  // layer 1's delta
  const QString heat = ui::plotCsv(d->plots().at(QStringLiteral("variance_map:lns")));
  EXPECT_GE(heat.count(QLatin1Char('\n')), 1 + 4 * 6);  // every (step, layer) cell
  ASSERT_TRUE(ui::savePlotCsv(d->plots().at(QStringLiteral("loss")),
                              QString::fromStdString(dir.file("loss.csv"))));
  EXPECT_NE(test::readFile(dir.file("loss.csv")).find("\"Pre-LN train\""), std::string::npos);
}

TEST(DailyUseViews, AnEmptyLegendIsHiddenUntilItHasEntries) {
  // An imported model's loss and gradient panels have no curves: their legends had drawn an
  // empty box in the corner.
  QCustomPlot p;
  p.resize(400, 300);
  p.legend->setVisible(true);
  ui::figures::placeLegend(&p, p.axisRect(), ui::figures::LegendOutside::Right);
  EXPECT_FALSE(p.legend->visible());
  auto* g = p.addGraph();
  g->setName(QStringLiteral("Pre-LN train"));
  g->addData(0, 1);
  g->addData(1, 2);
  ui::figures::placeLegend(&p, p.axisRect(), ui::figures::LegendOutside::Right);
  EXPECT_TRUE(p.legend->visible());  // entries came: shown again
  p.legend->setVisible(false);       // hidden by its owner: stays hidden
  ui::figures::placeLegend(&p, p.axisRect(), ui::figures::LegendOutside::Right);
  EXPECT_FALSE(p.legend->visible());
}

TEST(DailyUseViews, AnAxisTitleTooLongForItsAxisGoesOnTwoLinesBeforeItIsElided) {
  // A three-panel export's "output variance" had printed as "output var...". (Heights are
  // close guesses: the axis rect is what fitAxisLabels measures.)
  QCustomPlot p;
  auto size = [&p](int w, int h) {  // a hidden plot takes its size from its viewport
    p.resize(w, h);
    p.setViewport(QRect(0, 0, w, h));
  };
  p.yAxis->setLabel(QStringLiteral("output variance"));
  p.xAxis->setLabel(QStringLiteral("step"));
  const QFontMetricsF fm(p.yAxis->labelFont(), &p);
  const double oneLine = fm.horizontalAdvance(QStringLiteral("output variance"));
  const double longerWord = std::max(fm.horizontalAdvance(QStringLiteral("output")),
                                     fm.horizontalAdvance(QStringLiteral("variance")));
  // An axis between the longer word and the whole title: two lines.
  size(300, 300);
  p.replot(QCustomPlot::rpImmediateRefresh);  // lays it out: the margins around the axis rect
  const int margins = p.height() - p.axisRect()->height();
  size(300, margins + static_cast<int>((oneLine + longerWord) / 2));
  ui::figures::fitAxisLabels(&p);
  ASSERT_LT(p.axisRect()->height(), oneLine) << "the test's axis is too tall";
  EXPECT_EQ(p.yAxis->label(), QStringLiteral("output\nvariance"));
  // Too short for either word: elided, one line.
  size(300, margins + static_cast<int>(longerWord / 2));
  ui::figures::fitAxisLabels(&p);
  EXPECT_FALSE(p.yAxis->label().contains(QLatin1Char('\n'))) << p.yAxis->label().toStdString();
  EXPECT_TRUE(p.yAxis->label().endsWith(QChar(0x2026))) << p.yAxis->label().toStdString();
}

TEST(DailyUseViews, TheDropTableShowsEachPruningDeltasErrorAndGreysThoseWithinNoise) {
  analysis::LayerDiagnosis d;
  d.step = 300;
  d.layers = 3;
  d.pruning = {0.9, 0.004, -0.001};
  d.pruningRanks = analysis::ranks(d.pruning);
  d.pruningError = {0.02, 0.001, 0.003};
  d.dropOrder = {2, 1, 0};
  ui::DiagnosisPanel panel;
  panel.setDiagnoses({{7, QStringLiteral("LNS"), d, probes::LayerThresholds{0.1, 0.3}}});
  auto* t = panel.table(0);
  ASSERT_EQ(t->rowCount(), 3);
  EXPECT_EQ(t->item(0, 2)->text(), QStringLiteral("-0.001"));  // layer 3, within noise
  EXPECT_EQ(t->item(0, 3)->text(), QStringLiteral("0.003"));   // its standard error
  EXPECT_EQ(t->item(1, 2)->text(), QStringLiteral("0.004"));
  EXPECT_EQ(t->verticalScrollBarPolicy(), Qt::ScrollBarAlwaysOff);  // full height
  EXPECT_TRUE(panel.summary(0).contains(QStringLiteral("E_l below 0.1 is lazy, below 0.3 low")))
      << panel.summary(0).toStdString();
  panel.setDiagnoses({{7, QStringLiteral("LNS"), d, probes::LayerThresholds{0.1, 0.3}}});
  EXPECT_EQ(panel.table(0), t);  // a poll with the same rows keeps the table (and its selection)
  EXPECT_EQ(t->item(0, 2)->foreground().color(), QColor(128, 128, 128));
  EXPECT_NE(t->item(1, 2)->foreground().color(), QColor(128, 128, 128));
  EXPECT_TRUE(
      panel.summary(0).contains(QStringLiteral("1 of 3 deltas lie within two standard errors")))
      << panel.summary(0).toStdString();
}
