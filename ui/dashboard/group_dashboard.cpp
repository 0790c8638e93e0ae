// GroupDashboard; see group_dashboard.h.
#include "dashboard/group_dashboard.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QScrollArea>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

constexpr double kLazy = 0.05, kLow = 0.2;  // thresholds drawn on the effectiveness panel

QString schemeOf(const RunData& r) { return QString::fromStdString(r.info.scheme); }

QCPItemStraightLine* cursorLine(QCustomPlot* p) {
  for (int i = 0; i < p->itemCount(); ++i) {
    if (auto* l = qobject_cast<QCPItemStraightLine*>(p->item(i)); l && l->objectName() == QLatin1String("cursor")) return l;
  }
  auto* l = new QCPItemStraightLine(p);
  l->setObjectName(QStringLiteral("cursor"));
  l->setPen(QPen(QColor(80, 80, 80, 160), 1, Qt::DashLine));
  return l;
}

void placeCursor(QCustomPlot* p, double x) {
  auto* l = cursorLine(p);
  l->point1->setCoords(x, 0);
  l->point2->setCoords(x, 1);
}

QCPColorMap* colorMapOf(QCustomPlot* p) {
  for (int i = 0; i < p->plottableCount(); ++i) {
    if (auto* m = qobject_cast<QCPColorMap*>(p->plottable(i))) return m;
  }
  auto* m = new QCPColorMap(p->xAxis, p->yAxis);
  m->setGradient(viridisGradient());
  m->setInterpolate(false);
  return m;
}

}  // namespace

GroupDashboard::GroupDashboard(QString group, QWidget* parent)
    : QWidget(parent), m_data(std::move(group)) {
  auto* outer = new QVBoxLayout(this);
  m_status = new QLabel;
  m_status->setObjectName(QStringLiteral("status"));
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(m_status);

  auto* controls = new QHBoxLayout;
  m_scrubber = new QSlider(Qt::Horizontal);
  m_scrubber->setObjectName(QStringLiteral("scrubber"));
  m_cursorLabel = new QLabel(tr("step 0"));
  m_logY = new QCheckBox(tr("log loss"));
  m_smoothing = new QSlider(Qt::Horizontal);
  m_smoothing->setRange(0, 99);
  m_smoothing->setValue(60);
  m_smoothing->setMaximumWidth(120);
  m_smoothing->setToolTip(tr("Smoothing of the train loss (EMA); the raw curve stays faint"));
  m_rowNormalize = new QCheckBox(tr("angular (l, n): per-row normalized"));
  controls->addWidget(new QLabel(tr("Step")));
  controls->addWidget(m_scrubber, 1);
  controls->addWidget(m_cursorLabel);
  controls->addWidget(m_logY);
  controls->addWidget(new QLabel(tr("smoothing")));
  controls->addWidget(m_smoothing);
  controls->addWidget(m_rowNormalize);
  outer->addLayout(controls);
  m_decimation = new QLabel;
  m_decimation->setStyleSheet(QStringLiteral("color: #666;"));
  outer->addWidget(m_decimation);

  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  m_panelHost = new QWidget;
  m_panels = new QVBoxLayout(m_panelHost);
  scroll->setWidget(m_panelHost);
  outer->addWidget(scroll, 1);

  m_zoomTimer.setSingleShot(true);
  m_zoomTimer.setInterval(80);
  connect(&m_zoomTimer, &QTimer::timeout, this, [this] { redraw(); });
  connect(m_scrubber, &QSlider::valueChanged, this, [this](int i) {
    if (i < 0 || i >= static_cast<int>(m_steps.size())) return;
    m_followLatest = i == static_cast<int>(m_steps.size()) - 1;
    setCursorStep(m_steps[static_cast<size_t>(i)]);
  });
  connect(m_logY, &QCheckBox::toggled, this, [this] { drawLoss(); });
  connect(m_smoothing, &QSlider::valueChanged, this, [this] { drawLoss(); });
  connect(m_rowNormalize, &QCheckBox::toggled, this, [this] { drawCursorPanels(); });
}

GroupDashboard::~GroupDashboard() = default;

void GroupDashboard::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  // Decimation depends on the plots' pixel widths: redo it once the layout settles.
  if (!m_data.runs().empty()) QTimer::singleShot(0, this, [this] { redraw(); });
}

QCustomPlot* GroupDashboard::addPlot(const QString& name, QWidget* parent, int minHeight) {
  auto* p = new QCustomPlot(parent);
  p->setObjectName(name);
  p->setMinimumHeight(minHeight);
  // Live panels favour speed: no antialiasing on curves, fast polylines (exports re-render
  // with antialiasing).
  p->setNoAntialiasingOnDrag(true);
  p->setNotAntialiasedElements(QCP::aePlottables | QCP::aeGrid | QCP::aeSubGrid);
  p->setPlottingHint(QCP::phFastPolylines, true);
  p->setPlottingHint(QCP::phCacheLabels, true);
  makeInteractive(p);
  // Zooming or panning re-decimates for the new view (full data is kept; only the drawn
  // points change), shortly after the gesture so a wheel spin costs one rebuild.
  auto redecimate = [this] { m_zoomTimer.start(); };
  connect(p, &QCustomPlot::mouseWheel, this, redecimate);
  connect(p, &QCustomPlot::mouseRelease, this, redecimate);
  const QString figure = figureForPanel(name);
  if (!figure.isEmpty()) {
    p->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(p, &QWidget::customContextMenuRequested, this, [this, p, figure](const QPoint& pos) {
      QMenu menu;
      auto* exportAction = menu.addAction(tr("Export as paper figure (%1)…").arg(figure));
      auto* reset = menu.addAction(tr("Reset zoom"));
      auto* chosen = menu.exec(p->mapToGlobal(pos));
      if (chosen == reset) resetZoom(p);
      if (chosen == exportAction) {
        std::vector<int64_t> ids;
        for (const auto& r : m_data.runs()) ids.push_back(r.info.id);
        Q_EMIT exportRequested(figure, ids);
      }
    });
  }
  m_plots[name] = p;
  return p;
}

void GroupDashboard::rebuildPanels() {
  while (auto* item = m_panels->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  m_plots.clear();
  auto section = [&](const QString& title) {
    auto* box = new QGroupBox(title);
    auto* grid = new QGridLayout(box);
    m_panels->addWidget(box);
    return std::make_pair(box, grid);
  };
  {
    auto [box, grid] = section(tr("Loss and learning rate"));
    auto* loss = addPlot(QStringLiteral("loss"), box);
    loss->xAxis->setLabel(tr("step"));
    loss->yAxis->setLabel(tr("loss"));
    loss->legend->setVisible(true);
    auto* lr = addPlot(QStringLiteral("lr"), box, 160);
    lr->xAxis->setLabel(tr("step"));
    lr->yAxis->setLabel(tr("learning rate"));
    grid->addWidget(loss, 0, 0);
    grid->addWidget(lr, 0, 1);
    grid->setColumnStretch(0, 3);
    grid->setColumnStretch(1, 1);
  }
  auto perScheme = [&](const QString& title, const QString& prefix, const QString& xLabel,
                       const QString& yLabel, int row, QGridLayout* grid, QWidget* box) {
    for (size_t i = 0; i < m_schemes.size(); ++i) {
      auto* p = addPlot(prefix + QLatin1Char(':') + m_schemes[i], box);
      p->plotLayout()->insertRow(0);
      p->plotLayout()->addElement(0, 0, new QCPTextElement(p, m_schemes[i] + QStringLiteral(" — ") + title));
      p->xAxis->setLabel(xLabel);
      p->yAxis->setLabel(yLabel);
      grid->addWidget(p, row, static_cast<int>(i));
    }
  };
  {
    auto [box, grid] = section(tr("Per-layer output variance (same colour scale across schemes)"));
    perScheme(tr("variance per layer"), QStringLiteral("variance"), tr("step"), tr("variance"), 0, grid, box);
    perScheme(tr("variance heatmap"), QStringLiteral("variance_map"), tr("step"), tr("layer"), 1, grid, box);
  }
  {
    auto [box, grid] = section(tr("Angular distance (paper's pattern reported after ~2B tokens; small runs may differ)"));
    perScheme(tr("adjacent d(x_l, x_l+1)"), QStringLiteral("angular_map"), tr("step"), tr("layer"), 0, grid, box);
    perScheme(tr("d(x_l, x_l+n) at cursor"), QStringLiteral("angular_ln"), tr("offset n"), tr("layer l"), 1, grid, box);
  }
  {
    auto [box, grid] = section(tr("Single-layer pruning: loss increase when block l is removed"));
    perScheme(tr("pruning delta"), QStringLiteral("prune_map"), tr("step"), tr("layer"), 0, grid, box);
    perScheme(tr("block pruning (l, n), end of run"), QStringLiteral("block_prune"), tr("blocks removed n"),
              tr("first block l"), 2, grid, box);
    auto* bars = addPlot(QStringLiteral("prune_bars"), box);
    bars->xAxis->setLabel(tr("layer"));
    bars->yAxis->setLabel(tr("delta loss at cursor"));
    bars->legend->setVisible(true);
    grid->addWidget(bars, 1, 0, 1, std::max<int>(1, static_cast<int>(m_schemes.size())));
  }
  {
    auto [box, grid] = section(tr("Layer effectiveness and gradient norm at the cursor"));
    auto* eff = addPlot(QStringLiteral("effectiveness"), box);
    eff->xAxis->setLabel(tr("layer"));
    eff->yAxis->setLabel(tr("E_l = |h_l - h_l-1|^2 / |h_l|^2"));
    eff->legend->setVisible(true);
    auto* grad = addPlot(QStringLiteral("grad_norm"), box);
    grad->xAxis->setLabel(tr("layer"));
    grad->yAxis->setLabel(tr("gradient norm"));
    grad->legend->setVisible(true);
    grid->addWidget(eff, 0, 0);
    grid->addWidget(grad, 0, 1);
  }
}

void GroupDashboard::refresh(store::RunStore& store, const std::vector<int64_t>& changed) {
  if (!m_data.reload(store, changed)) return;
  std::vector<QString> schemes;
  for (const auto& r : m_data.runs()) schemes.push_back(schemeOf(r));
  if (schemes != m_schemes) {
    m_schemes = schemes;
    rebuildPanels();
  }
  m_steps = m_data.probeSteps();
  {
    QSignalBlocker block(m_scrubber);
    m_scrubber->setRange(0, std::max(0, static_cast<int>(m_steps.size()) - 1));
    if (m_followLatest && !m_steps.empty()) {
      m_scrubber->setValue(static_cast<int>(m_steps.size()) - 1);
      m_cursor = m_steps.back();
      m_cursorLabel->setText(tr("step %1").arg(m_cursor));
    }
  }
  redraw();
}

void GroupDashboard::redraw() {
  QStringList status;
  for (const auto& r : m_data.runs()) status << r.statusLine();
  m_status->setText(status.join(QLatin1Char('\n')));
  m_decimationNotes.clear();
  drawLoss();
  drawLayerPanels();
  drawCursorPanels();
  m_decimation->setText(m_decimationNotes.isEmpty() ? QString() : m_decimationNotes.join(QStringLiteral("; ")));
}

QString GroupDashboard::decimationNote() const { return m_decimation->text(); }

QString GroupDashboard::figureForPanel(const QString& panel) {
  if (panel == QLatin1String("loss") || panel == QLatin1String("lr")) return QStringLiteral("loss");
  if (panel.startsWith(QLatin1String("variance"))) return QStringLiteral("variance");
  if (panel.startsWith(QLatin1String("angular"))) return QStringLiteral("angular");
  if (panel.startsWith(QLatin1String("prune"))) return QStringLiteral("pruning");
  return QString();
}

void GroupDashboard::setCursorStep(int64_t step) {
  m_cursor = step;
  m_cursorLabel->setText(tr("step %1").arg(step));
  drawCursorPanels();
}

void GroupDashboard::drawLoss() {
  auto* loss = m_plots.count(QStringLiteral("loss")) ? m_plots[QStringLiteral("loss")] : nullptr;
  auto* lr = m_plots.count(QStringLiteral("lr")) ? m_plots[QStringLiteral("lr")] : nullptr;
  if (!loss || !lr) return;
  const bool keepX = userZoomed(loss);
  loss->clearGraphs();
  lr->clearGraphs();
  loss->yAxis->setScaleType(m_logY->isChecked() ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  const double alpha = m_smoothing->value() / 100.0;
  const int columns = std::max(200, loss->axisRect()->width());
  const double x0 = keepX ? loss->xAxis->range().lower : 0;
  const double x1 = keepX ? loss->xAxis->range().upper : static_cast<double>(std::max<int64_t>(1, m_data.lastStep()));
  for (const auto& r : m_data.runs()) {
    const QColor c = schemeColor(schemeOf(r));
    auto add = [&](QCustomPlot* p, const std::vector<store::ScalarPoint>& pts, const QString& name,
                   QPen pen, bool legend) {
      if (pts.empty()) return;
      auto d = decimateMinMax(pts, x0, x1, columns);
      if (d.decimated()) m_decimationNotes << tr("%1: %2 of %3 points").arg(name).arg(d.keys.size()).arg(d.sourcePoints);
      auto* g = p->addGraph();
      g->setName(name);
      g->setPen(pen);
      setGraphData(g, d);
      if (!legend) g->removeFromLegend();
    };
    const auto& train = r.scalars.at(metrics::kLossTrain);
    QColor faint = c;
    faint.setAlpha(60);
    add(loss, train, schemeOf(r) + tr(" train (raw)"), QPen(faint, 1), false);
    add(loss, smooth(train, alpha), schemeOf(r) + tr(" train"), QPen(c, 1.6), true);
    QPen val(c, 2.2, Qt::DashLine);
    add(loss, r.scalars.at(metrics::kLossVal), schemeOf(r) + tr(" val"), val, true);
    if (auto* g = loss->graphCount() ? loss->graph(loss->graphCount() - 1) : nullptr) {
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    }
    add(lr, r.scalars.at(metrics::kLr), schemeOf(r), QPen(c, 1.4), false);
  }
  if (!keepX) loss->rescaleAxes();
  else loss->yAxis->rescale();
  if (!userZoomed(lr)) lr->rescaleAxes();
  placeCursor(loss, static_cast<double>(m_cursor));
  loss->replot(QCustomPlot::rpQueuedReplot);
  lr->replot(QCustomPlot::rpQueuedReplot);
}

void GroupDashboard::drawLayerPanels() {
  // Shared colour ranges across schemes, so Pre-LN and LNS are compared on one scale.
  std::map<QString, std::pair<double, double>> ranges;
  auto widen = [&](const QString& key, std::pair<double, double> r) {
    auto it = ranges.find(key);
    if (it == ranges.end()) ranges[key] = r;
    else it->second = {std::min(it->second.first, r.first), std::max(it->second.second, r.second)};
  };
  std::vector<std::pair<QCPColorMap*, QString>> maps;
  double varMax = 0;
  for (const auto& r : m_data.runs()) {
    const QString s = schemeOf(r);
    // Variance curves: one per layer, sequential colours.
    if (auto* p = m_plots[QStringLiteral("variance:") + s]) {
      const bool keep = userZoomed(p);
      p->clearGraphs();
      const auto& v = r.layers.at(metrics::kVariance);
      std::optional<std::pair<double, double>> window;
      if (keep) window = std::make_pair(p->xAxis->range().lower, p->xAxis->range().upper);
      varMax = std::max(varMax, figures::layerCurves(p->xAxis, p->yAxis, v, 1.3,
                                                     std::max(200, p->axisRect()->width()), window));
      // Legend by layer: a colour bar layer 1..L beside the curves (the curves use the same
      // sequential colours), compact at any depth; hover a curve for its exact layer.
      p->legend->setVisible(false);
      if (v.nLayers > 0) figures::layerColourBar(p, v.nLayers, 1, 1);  // row 0 holds the title
      if (!keep) p->rescaleAxes();
      placeCursor(p, static_cast<double>(m_cursor));
    }
    struct Heat { const char* prefix; const char* metric; };
    for (auto h : {Heat{"variance_map", metrics::kVariance},
                   Heat{"angular_map", metrics::kAngularAdjacent},
                   Heat{"prune_map", metrics::kPruneDelta}}) {
      if (auto* p = m_plots[QLatin1String(h.prefix) + QLatin1Char(':') + s]) {
        auto* map = colorMapOf(p);
        widen(QLatin1String(h.prefix), fillLayerHeatmap(map, r.layers.at(h.metric), 800));
        maps.emplace_back(map, QLatin1String(h.prefix));
        if (!userZoomed(p)) p->rescaleAxes();
        placeCursor(p, static_cast<double>(m_cursor));
      }
    }
  }
  for (auto& [map, key] : maps) map->setDataRange(QCPRange(ranges[key].first, ranges[key].second));
  // Same y range for the variance curves of every scheme.
  for (const auto& s : m_schemes) {
    if (auto* p = m_plots[QStringLiteral("variance:") + s]; p && !userZoomed(p) && varMax > 0) {
      p->yAxis->setRange(0, varMax * 1.05);
    }
  }
  for (auto& [name, p] : m_plots) {
    if (name.contains(QLatin1Char(':'))) p->replot(QCustomPlot::rpQueuedReplot);
  }
}

void GroupDashboard::drawCursorPanels() {
  auto bars = [&](const QString& plotName, const char* metric, bool thresholds) {
    auto it = m_plots.find(plotName);
    if (it == m_plots.end()) return;
    auto* p = it->second;
    p->clearPlottables();
    p->clearItems();
    std::vector<figures::BarSeries> series;
    for (const auto& r : m_data.runs()) {
      figures::BarSeries b{schemeOf(r), schemeColor(schemeOf(r)),
                           layerValuesAt(r.layers.at(metric), m_cursor)};
      if (thresholds && !b.values.empty()) {
        int lazy = 0;
        for (float v : b.values) lazy += v < kLazy;
        b.name += tr(" (%1 lazy)").arg(lazy);
      }
      series.push_back(std::move(b));
    }
    const int L = figures::layerBars(p->xAxis, p->yAxis, series);
    if (thresholds && L > 0) {
      for (double t : {kLazy, kLow}) {
        auto* line = new QCPItemStraightLine(p);
        line->point1->setCoords(0, t);
        line->point2->setCoords(1, t);
        line->setPen(QPen(QColor(192, 57, 43), 1, Qt::DashLine));
      }
    }
    if (!userZoomed(p)) {
      p->rescaleAxes();
      p->xAxis->setRange(0.4, std::max(1, L) + 0.6);
    }
    p->replot(QCustomPlot::rpQueuedReplot);
  };
  bars(QStringLiteral("prune_bars"), metrics::kPruneDelta, false);
  bars(QStringLiteral("effectiveness"), metrics::kEffectiveness, true);
  bars(QStringLiteral("grad_norm"), metrics::kLayerGradNorm, false);
  // Gromov block pruning (stored at the end of a run, or by `analyze`).
  for (const auto& r : m_data.runs()) {
    auto it = m_plots.find(QStringLiteral("block_prune:") + schemeOf(r));
    if (it == m_plots.end()) continue;
    auto* map = colorMapOf(it->second);
    if (r.blockPrune) {
      auto range = fillMatrixHeatmap(map, *r.blockPrune, false);
      map->setDataRange(QCPRange(range.first, range.second));
      if (!userZoomed(it->second)) it->second->rescaleAxes();
    } else {
      map->data()->clear();
    }
    it->second->replot(QCustomPlot::rpQueuedReplot);
  }
  // The full (l, n) angular matrix at the cursor step, read from the store snapshot.
  for (const auto& r : m_data.runs()) {
    auto it = m_plots.find(QStringLiteral("angular_ln:") + schemeOf(r));
    if (it == m_plots.end()) continue;
    auto* p = it->second;
    auto* map = colorMapOf(p);
    if (const auto* m = r.angularAt(m_cursor)) {
      auto range = fillMatrixHeatmap(map, *m, m_rowNormalize->isChecked());
      map->setDataRange(QCPRange(range.first, range.second));
      map->setGradient(viridisGradient(/*reversed=*/true));
      if (!userZoomed(p)) p->rescaleAxes();
    } else {
      map->data()->clear();
    }
    p->replot(QCustomPlot::rpQueuedReplot);
  }
  for (auto& [name, p] : m_plots) {
    if (name.startsWith(QLatin1String("variance:")) || name.endsWith(QLatin1String("_map")) ||
        name.contains(QLatin1String("_map:")) || name == QLatin1String("loss")) {
      placeCursor(p, static_cast<double>(m_cursor));
      p->replot(QCustomPlot::rpQueuedReplot);
    }
  }
}

}  // namespace depthlab::ui
