// CompareView's drawing: loss curves, per-layer profiles, variance heatmaps, the difference
// map, config diff and results table, redrawn from the loaded runs; see compare_view.h.
#include "compare/compare_view.h"
#include "dashboard/panel_specs.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "analysis/statistics.h"
#include "compare/compare_profiles.h"
#include "compare/variance_difference.h"
#include "experiment/run_config.h"
#include "export/figure_style.h"
#include "plot/axis_fit.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/live_plot.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"

namespace depthlab::ui {

using compare::kHeatmapColumns;
using compare::profiles;

void CompareView::redraw() {
  if (!m_loaded) return;  // nothing read yet
  drawMissing();
  drawLoss();
  drawProfiles();
  drawHeatmaps();
  drawDifference();
  drawGroups();
  drawConfigDiff();
  drawResultsTable();
}

void CompareView::drawMissing() {
  // Missing metrics, said plainly.
  QStringList missing;
  for (const auto& r : m_runs) {
    QStringList m;
    const bool imported = experiment::isImportedRun(r.info);  // a model trains nothing here
    if (r.lossTrain.empty() && !imported) m << QStringLiteral("train loss");
    if (r.lossVal.empty() && !imported) m << QStringLiteral("validation loss");
    for (const auto& p : m_profiles) {  // not what only other schemes write (DyT's saturation)
      if (r.layers.at(p).steps.empty() && !metrics::someSchemesOnly(p))
        m << QString::fromStdString(p);
    }
    if (!m.isEmpty())
      missing << tr("run %1 has no %2").arg(r.info.id).arg(m.join(QStringLiteral(", ")));
  }
  m_missing->setText(missing.join(QStringLiteral("; ")));
}

void CompareView::drawLoss() {
  // Loss curves: a shade of its scheme's colour per run (colorOf), solid; validation dashed.
  auto* loss = m_plots[QStringLiteral("loss")];
  loss->clearGraphs();
  std::vector<figures::LossRun> runs;
  m_hover.clear();
  for (const auto& r : m_runs) {
    m_hover.push_back(
        {labelWithId(r.info.id), smooth(r.lossTrain, compare::kLossSmoothing), r.lossVal});
    runs.push_back(
        {labelOf(r.info.id), colorOf(r.info), Qt::SolidLine, r.lossTrain, r.lossVal, {}});
  }
  figures::LossStyle style;  // smoothed, one legend entry per run
  style.smoothing = compare::kLossSmoothing;
  style.columns = 800;
  style.trainWidth = 1.4;
  style.valWidth = 2.0;
  style.valInLegend = false;
  style.trainSuffix = QString();
  figures::lossOverlay(loss->xAxis, loss->yAxis, runs, style);
  drawSeedBands(loss);
  figures::fitLossAxes(loss->xAxis, loss->yAxis, runs);
  figures::placeLegend(loss, loss->axisRect(), figures::LegendOutside::Right);
  replotWhenShown(loss);
}

void CompareView::drawConfigDiff() {
  std::vector<store::RunInfo> infos;
  for (const auto& r : m_runs) infos.push_back(r.info);
  auto diff = analysis::configDiff(infos);
  m_diff->clear();
  m_diff->setRowCount(static_cast<int>(diff.size()));
  m_diff->setColumnCount(static_cast<int>(m_runs.size()) + 1);
  QStringList headers{tr("key")};
  for (const auto& r : m_runs) headers << labelWithId(r.info.id);
  m_diff->setHorizontalHeaderLabels(headers);
  int row = 0;
  for (const auto& [key, values] : diff) {
    m_diff->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(key)));
    for (size_t i = 0; i < values.size(); ++i) {
      m_diff->setItem(row, static_cast<int>(i) + 1,
                      new QTableWidgetItem(QString::fromStdString(values[i])));
    }
    ++row;
  }
  m_diff->horizontalHeader()->setStretchLastSection(true);
}

void CompareView::drawResultsTable() {
  // Results table with the best per column in bold.
  m_results->clear();
  m_results->setRowCount(static_cast<int>(m_table.rows.size()));
  m_results->setColumnCount(static_cast<int>(m_table.columns.size()));
  QStringList cols;
  for (const auto& c : m_table.columns) cols << QString::fromStdString(c);
  m_results->setHorizontalHeaderLabels(cols);
  QStringList rows;
  for (const auto& r : m_table.rows) rows << QString::fromStdString(r);
  m_results->setVerticalHeaderLabels(rows);
  for (size_t c = 0; c < m_table.columns.size(); ++c) {
    double best = 1e300;
    for (size_t r = 0; r < m_table.rows.size(); ++r)
      if (m_table.ppl[r][c]) best = std::min(best, *m_table.ppl[r][c]);
    for (size_t r = 0; r < m_table.rows.size(); ++r) {
      auto* item = new QTableWidgetItem(m_table.ppl[r][c]
                                            ? QString::number(*m_table.ppl[r][c], 'f', 2) +
                                                  QStringLiteral(" (n=%1)").arg(m_table.n[r][c])
                                            : QStringLiteral("–"));
      if (m_table.ppl[r][c] && *m_table.ppl[r][c] == best) {
        QFont f = item->font();
        f.setBold(true);
        item->setFont(f);
      }
      m_results->setItem(static_cast<int>(r), static_cast<int>(c), item);
    }
  }
  m_results->resizeColumnsToContents();  // the model size and shape in each header, whole
}

void CompareView::drawHeatmaps() {
  std::vector<figures::Heatmap> maps;
  for (const auto& r : m_runs) {
    auto it = m_plots.find(QStringLiteral("variance_map:%1").arg(r.info.id));
    if (it == m_plots.end()) continue;
    auto* p = it->second;
    p->clearPlottables();
    const auto& s = r.layers.at(metrics::kVariance);
    if (s.steps.empty()) {
      replotWhenShown(p);
      continue;
    }
    maps.push_back(
        figures::layerHeatmap(p->xAxis, p->yAxis, s, kHeatmapColumns, metrics::kVariance));
    p->rescaleAxes();
  }
  figures::shareColourRange(maps);  // one colour scale for every run
  for (const auto& m : maps) figures::heatmapColourBar(m.map, tr("output variance"), 1, 1);
  for (const auto& m : maps) replotWhenShown(m.map->parentPlot());
}

void CompareView::drawProfiles() {
  const bool relative = m_relativeDepth->isChecked();
  for (const auto& metric : m_profiles) {
    auto* p = m_plots[QString::fromStdString(metric)];
    p->clearPlottables();  // graphs and their error bars
    p->xAxis->setLabel(relative ? tr("relative depth l / L") : tr("layer"));
    std::vector<double> tops;  // each run's largest value: the shared scale's rule
    for (const auto& r : m_runs) {
      const auto& s = r.layers.at(metric);
      if (s.steps.empty()) continue;
      auto v = layerValuesAt(s, s.steps.back());
      std::vector<double> profile(v.begin(), v.end());
      double top = 0;
      for (double x : profile) top = std::isfinite(x) ? std::max(top, x) : top;
      tops.push_back(top);
      auto* g = p->addGraph();
      g->setName(QStringLiteral("%1 (L=%2)").arg(labelOf(r.info.id)).arg(v.size()));
      g->setPen(QPen(colorOf(r.info), 1.6));
      // Discs outlined with a solid 1-px pen: with the line's 1.6-px (often dashed) pen, each
      // disc went through Qt's dash stroker, a quarter of Compare's first frame.
      g->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssDisc, colorOf(r.info), colorOf(r.info), 4));
      for (size_t l = 0; l < profile.size(); ++l) {
        const double x =
            relative ? static_cast<double>(l + 1) / profile.size() : static_cast<double>(l + 1);
        g->addData(x, profile[l]);
      }
      // Pruning deltas carry their standard error from the same step (none for one sequence).
      if (auto e = r.layers.find(dashboard::errorMetricOf(metric));
          e != r.layers.end() && !e->second.steps.empty()) {
        figures::addErrorBars(g, layerValuesExactlyAt(e->second, s.steps.back()),
                              QPen(g->pen().color(), 1.2));
      }
    }
    // The dashboard's and the paper's scale rule (panel_specs: sharedScaleIsLog): where one run's
    // final variance dwarfs another's tenfold, logarithmic (DyT's 2e5 flattened DeepNorm's 1).
    setLogScale(p->yAxis, dashboard::sharedScaleIsLog(QString::fromStdString(metric), tops, false));
    // Half a layer of margin, and 5% above and below: the outermost points and error bars
    // stay whole. Layer 1's pruning delta (~2 nats against hundredths) runs off, marked.
    figures::useLengthAwareTicks(p->xAxis, /*wholeNumbers=*/!relative);  // layers: 2, 4, not 2.5
    figures::fitLayerProfileAxes(p->xAxis, p->yAxis, relative ? 0.03 : 0.5);
    figures::placeLegend(p, p->axisRect(), figures::LegendOutside::Right);
    replotWhenShown(p);
  }
}

QString CompareView::latestStepOf(const Loaded& r) {
  const auto& s = r.layers.at(metrics::kVariance);
  return experiment::isSnapshotRun(r.info) ? QStringLiteral("imported")
                                           : QStringLiteral("step %1").arg(s.steps.back());
}

void CompareView::setDifferenceStepAxis(QCPAxis* x, const std::optional<QString>& snapshotTick) {
  if (snapshotTick) {  // one column: "latest", each run's step named below it
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    ticker->addTick(0, *snapshotTick);
    x->setTicker(ticker);
    x->setLabel(QString());
    return;
  }
  if (x->ticker().dynamicCast<QCPAxisTickerText>())
    x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  x->setLabel(tr("step"));
}

void CompareView::drawDifference() {
  auto* p = m_plots[QStringLiteral("difference")];
  p->clearPlottables();
  p->legend->setVisible(false);
  if (!m_diffTitle) {
    p->plotLayout()->insertRow(0);
    m_diffTitle = new QCPTextElement(p, QString());
    p->plotLayout()->addElement(0, 0, m_diffTitle);
  }
  const auto [idA, idB] = differencePair();
  const Loaded* runA = nullptr;
  const Loaded* runB = nullptr;
  for (const auto& r : m_runs) {
    if (r.info.id == idA) runA = &r;
    if (r.info.id == idB) runB = &r;
  }
  auto hasVariance = [](const Loaded* r) {
    return r && !r->layers.at(metrics::kVariance).steps.empty();
  };
  if (!hasVariance(runA) || !hasVariance(runB) || idA == idB) {
    m_diffTitle->setText(idA == idB ? tr("pick two different runs (B minus A)")
                                    : tr("needs two runs with per-layer variance"));
    replotWhenShown(p);
    return;
  }
  const auto& a = runA->layers.at(metrics::kVariance);
  const auto& b = runB->layers.at(metrics::kVariance);
  const bool relative = m_relativeDepth->isChecked() || a.nLayers != b.nLayers;
  // An imported model (probed outside any training, its "step 0" is not training's) has no
  // course to line up with: the difference is then of the two runs' latest probes, one column
  // (it had set a trained run's untrained step 0 against the imported model).
  auto imported = [](const Loaded& r) { return experiment::isSnapshotRun(r.info); };
  const bool snapshot = imported(*runA) || imported(*runB);
  const auto diff = compare::varianceDifference(a, b, relative, snapshot, kHeatmapColumns);
  if (!diff.shareSteps) {
    m_diffTitle->setText(tr("%1 and %2 share no steps").arg(labelOf(idA), labelOf(idB)));
    replotWhenShown(p);
    return;
  }
  auto* map = new QCPColorMap(p->xAxis, p->yAxis);
  map->setInterpolate(false);
  map->data()->setSize(diff.columns, diff.rows);
  // (a single column spans exactly the data's key range: a snapshot's is centred on its tick)
  const double x0 = diff.firstStep, x1 = diff.lastStep;
  map->data()->setRange(snapshot ? QCPRange(-0.5, 0.5) : QCPRange(x0, x1 > x0 ? x1 : x0 + 1),
                        QCPRange(1, diff.rows));
  std::vector<double> magnitudes;  // (columns x rows) |B - A| of every cell
  for (int c = 0; c < diff.columns; ++c) {
    for (int l = 0; l < diff.rows; ++l) {
      const double d = diff.cells[static_cast<size_t>(c) * static_cast<size_t>(diff.rows) +
                                  static_cast<size_t>(l)];
      map->data()->setCell(c, l, d);
      if (std::isfinite(d)) magnitudes.push_back(std::abs(d));
    }
  }
  // Blue-white-red with white exactly at 0: the range is symmetric, a few outlying cells left
  // out as on the dashboard's diverging maps (the colour bar says how many).
  int clipped = 0;
  const double limit =
      std::max(figures::divergingColourLimit(std::move(magnitudes), &clipped), 1e-12);
  map->setGradient(divergingGradient());
  map->setDataRange(QCPRange(-limit, limit));
  map->setProperty(figures::kClippedCellsProperty, clipped);
  figures::heatmapColourBar(map, tr("variance B − A"), 1, 1);
  m_diffTitle->setText(tr("variance: %1 minus %2%3")
                           .arg(labelOf(idB), labelOf(idA))
                           .arg(relative ? tr(" (relative depth)") : QString()));
  setDifferenceStepAxis(
      p->xAxis, snapshot
                    ? std::optional<QString>(
                          tr("latest: %1 and %2").arg(latestStepOf(*runB), latestStepOf(*runA)))
                    : std::nullopt);
  p->yAxis->setLabel(relative ? tr("relative depth bin") : tr("layer"));
  p->rescaleAxes();
  figures::fitTitles(p);  // run names can make it wider than the panel
  replotWhenShown(p);
}

}  // namespace depthlab::ui
