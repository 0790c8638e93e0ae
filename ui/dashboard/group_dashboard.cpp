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

#include <algorithm>
#include <cmath>
#include <set>

#include <QComboBox>
#include <QFileDialog>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>

#include "dashboard/dashboard_plot_items.h"
#include "dashboard/diagnosis_panel.h"
#include "plot/plot_theme.h"
#include "plot/run_labels.h"
#include "dashboard/panel_specs.h"
#include "flow_layout.h"
#include "plot/colormaps.h"
#include "plot/live_plot.h"
#include "plot/eliding_title.h"
#include "plot/figure_builders.h"
#include "plot/axis_fit.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

using dashboard::placeCursor;
using dashboard::schemeOf;

GroupDashboard::GroupDashboard(QString group, QWidget* parent)
    : QWidget(parent), m_group(group), m_data(std::make_shared<GroupData>(std::move(group))) {
  auto* outer = new QVBoxLayout(this);
  addProgressRows(outer);
  addViewControls(outer);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  m_panelHost = new QWidget;
  m_panels = new QVBoxLayout(m_panelHost);
  scroll->setWidget(m_panelHost);
  outer->addWidget(scroll, 1);
  connectViewControls();
}

// The group's progress bar and ETA, and its runs' status lines.
void GroupDashboard::addProgressRows(QVBoxLayout* outer) {
  auto* progressRow = new QHBoxLayout;
  m_progress = new QProgressBar;
  m_progress->setObjectName(QStringLiteral("progress"));
  m_progress->setToolTip(
      tr("Steps done by the group's slowest run (a finished run counts as "
         "complete); the ETA comes from the runs' measured tokens/s"));
  m_eta = new QLabel;
  m_eta->setObjectName(QStringLiteral("eta"));
  progressRow->addWidget(m_progress, 1);
  progressRow->addWidget(m_eta);
  outer->addLayout(progressRow);
  m_status = new QLabel;
  m_status->setObjectName(QStringLiteral("status"));
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(m_status);
}

// The step scrubber and the view options (wrapping where the window is narrow).
void GroupDashboard::addViewControls(QVBoxLayout* outer) {
  auto* controls = new QHBoxLayout;
  m_scrubber = new QSlider(Qt::Horizontal);
  m_scrubber->setObjectName(QStringLiteral("scrubber"));
  m_cursorLabel = new QLabel(tr("step 0"));
  m_scrubber->setToolTip(tr("The step every 'at cursor' panel shows (or click a step panel)"));
  m_logY = new QCheckBox(tr("log loss"));
  m_logY->setToolTip(tr("Logarithmic loss axis"));
  m_logLayers = new QCheckBox(tr("log variance / grad norm"));
  m_logLayers->setToolTip(tr("Logarithmic y axis for the per-layer variance curves and the gradient norm"));
  m_linkZoom = new QCheckBox(tr("link step zoom"));
  m_linkZoom->setChecked(true);
  m_linkZoom->setToolTip(tr("Zooming or panning the step axis of one panel does the same to every step panel"));
  m_follow = new QPushButton(tr("Follow"));
  m_follow->setObjectName(QStringLiteral("follow"));
  m_follow->setToolTip(tr("Reset every panel's zoom: all follow the newest data again (Ctrl+0, "
                          "or double-click a panel)"));
  m_lossAxis = new QComboBox;
  m_lossAxis->setObjectName(QStringLiteral("lossAxis"));
  m_lossAxis->addItem(tr("x: step"), QStringLiteral("step"));
  m_lossAxis->addItem(tr("x: tokens"), QStringLiteral("tokens"));
  m_lossAxis->addItem(tr("x: training time"), QStringLiteral("time"));
  m_lossAxis->setToolTip(tr("What the loss and learning-rate panels are plotted against (training "
                            "time: from the measured tokens/s, probes excluded)"));
  m_smoothing = new QSlider(Qt::Horizontal);
  m_smoothing->setRange(0, 99);
  m_smoothing->setValue(60);
  m_smoothing->setObjectName(QStringLiteral("smoothing"));
  m_smoothing->setMinimumWidth(90);  // it shrank to nothing on a 1366 x 768 screen
  m_smoothing->setMaximumWidth(140);
  m_smoothing->setToolTip(tr("Smoothing of the train loss (EMA); the raw curve stays faint"));
  auto* smoothingValue = new QLabel;
  smoothingValue->setObjectName(QStringLiteral("smoothingValue"));
  smoothingValue->setMinimumWidth(smoothingValue->fontMetrics().horizontalAdvance(QStringLiteral("0.00")));
  auto showSmoothing = [smoothingValue](int v) { smoothingValue->setText(QString::number(v / 100.0, 'f', 2)); };
  showSmoothing(m_smoothing->value());
  connect(m_smoothing, &QSlider::valueChanged, smoothingValue, showSmoothing);
  m_rowNormalize = new QCheckBox(tr("angular (l, n): per-row normalized"));
  m_rowNormalize->setToolTip(tr("Scale each row of the (l, n) angular matrix to [0, 1], as the paper's figure does"));
  controls->addWidget(new QLabel(tr("Step")));
  controls->addWidget(m_scrubber, 1);
  controls->addWidget(m_cursorLabel);
  outer->addLayout(controls);
  // The view options on rows of their own (the scrubber keeps its width), wrapping where the
  // window is narrow; the smoothing label, slider and value stay together.
  auto* options = new QWidget;
  auto* flow = new FlowLayout(options);
  flow->setContentsMargins(0, 0, 0, 0);
  auto* smoothing = new QWidget;
  auto* smoothingRow = new QHBoxLayout(smoothing);
  smoothingRow->setContentsMargins(0, 0, 0, 0);
  smoothingRow->addWidget(new QLabel(tr("smoothing")));
  smoothingRow->addWidget(m_smoothing);
  smoothingRow->addWidget(smoothingValue);
  for (QWidget* w : std::initializer_list<QWidget*>{m_logY, m_lossAxis, smoothing, m_rowNormalize, m_logLayers,
                                                    m_linkZoom, m_follow}) {
    flow->addWidget(w);
  }
  outer->addWidget(options);
  m_decimation = new QLabel;
  m_decimation->setStyleSheet(mutedTextStyle(palette()));
  m_decimation->setWordWrap(true);  // one line held the dashboard at 1,858 px for four schemes
  outer->addWidget(m_decimation);
}

void GroupDashboard::connectViewControls() {
  m_zoomTimer.setSingleShot(true);
  m_zoomTimer.setInterval(80);
  connect(&m_zoomTimer, &QTimer::timeout, this, [this] {
    if (m_zoomSource) linkZoomFrom(m_zoomSource);
    m_zoomSource = nullptr;
    redraw();
  });
  connect(m_scrubber, &QSlider::valueChanged, this, [this](int i) {
    if (i < 0 || i >= static_cast<int>(m_steps.size())) return;
    m_followLatest = i == static_cast<int>(m_steps.size()) - 1;
    setCursorStep(m_steps[static_cast<size_t>(i)]);
  });
  connect(m_logY, &QCheckBox::toggled, this, [this] { drawLoss(); });
  connect(m_logLayers, &QCheckBox::toggled, this, [this] { redraw(); });
  connect(m_lossAxis, &QComboBox::currentIndexChanged, this, [this] {
    for (const auto& key : {QStringLiteral("loss"), QStringLiteral("lr")}) {
      if (auto it = m_plots.find(key); it != m_plots.end()) {
        setUserZoomed(it->second, false);
        it->second->xAxis->setLabel(m_lossAxis->currentData().toString() == QLatin1String("step") ? tr("step")
                                    : m_lossAxis->currentData().toString() == QLatin1String("tokens") ? tr("tokens")
                                                                                                 : tr("training time (s)"));
      }
    }
    drawLoss();
  });
  connect(m_follow, &QPushButton::clicked, this, &GroupDashboard::followAll);
  connect(m_smoothing, &QSlider::valueChanged, this, [this] { drawLoss(); });
  connect(m_rowNormalize, &QCheckBox::toggled, this, [this] { drawCursorPanels(); });
}

GroupDashboard::~GroupDashboard() = default;

void GroupDashboard::resizeEvent(QResizeEvent* e) {
  QWidget::resizeEvent(e);
  // Decimation depends on the plots' pixel widths: redo it once the layout settles.
  if (!m_data->runs().empty()) QTimer::singleShot(0, this, [this] { redraw(); });
}

QCustomPlot* GroupDashboard::addPlot(const QString& name, QWidget* parent, int minHeight) {
  auto* p = new LivePlot(parent);
  p->setObjectName(name);
  p->setMinimumHeight(minHeight);
  // Live panels favour speed (exports re-render antialiased, at their own widths):
  // - no antialiasing on curves and grids;
  // - each curve one polyline: QCustomPlot's "fast polylines" hint draws every segment as its
  //   own line, and Qt's raster engine sets up its line stroker per call (a variance panel of
  //   24 curves took 9.7 ms to draw that way, 3.0 ms as polylines);
  // - one opaque paint buffer (LivePlot).
  p->setNoAntialiasingOnDrag(true);
  p->setNotAntialiasedElements(QCP::aePlottables | QCP::aeGrid | QCP::aeSubGrid);
  p->setPlottingHint(QCP::phFastPolylines, false);
  p->setPlottingHint(QCP::phCacheLabels, true);
  // The step labels widen as a run goes on (0..100, then 0..20,000): fewer ticks where they
  // would run together on a narrow panel, at every redraw.
  figures::useLengthAwareTicks(p->xAxis);
  makeInteractive(p);
  // Zooming or panning re-decimates for the new view (full data is kept; only the drawn
  // points change), shortly after the gesture so a wheel spin costs one rebuild; a linked
  // step zoom goes to every step panel then.
  auto gesture = [this, p] {
    m_zoomSource = p;
    m_zoomTimer.start();
  };
  connect(p, &QCustomPlot::mouseWheel, this, gesture);
  connect(p, &QCustomPlot::mouseRelease, this, [this, p, name, gesture](QMouseEvent* e) {
    if (!wasClick(p, e->pos())) {
      gesture();
      return;
    }
    // A click on a step panel moves the cursor there (the nearest probed step).
    if (e->button() != Qt::LeftButton || !isStepPanel(name) || m_steps.empty()) return;
    const double x = p->xAxis->pixelToCoord(e->pos().x());
    auto it = std::lower_bound(m_steps.begin(), m_steps.end(), static_cast<int64_t>(std::llround(x)));
    size_t i = static_cast<size_t>(std::min<ptrdiff_t>(it - m_steps.begin(), static_cast<ptrdiff_t>(m_steps.size()) - 1));
    if (i > 0 && std::abs(static_cast<double>(m_steps[i - 1]) - x) < std::abs(static_cast<double>(m_steps[i]) - x)) --i;
    m_scrubber->setValue(static_cast<int>(i));
  });
  // A double-click resets the panel (makeInteractive); on a linked step panel, every step
  // panel the zoom went to, so no banner stays behind on another one.
  connect(p, &QCustomPlot::mouseDoubleClick, this, [this, name] {
    if (m_linkZoom->isChecked() && isStepPanel(name)) followAll();
  });
  connect(p, &QCustomPlot::mouseMove, this, [this, p, name](QMouseEvent* e) {
    if (isStepPanel(name)) moveCrosshair(p->xAxis->pixelToCoord(e->pos().x()));
  });
  p->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(p, &QWidget::customContextMenuRequested, this,
          [this, p, name](const QPoint& pos) { showPanelMenu(p, name, pos); });
  m_plots[name] = p;
  return p;
}

namespace {
constexpr int kMaxSchemeColumns = 4;  // per-scheme panels side by side before they wrap
}  // namespace

void GroupDashboard::rebuildPanels() {
  while (auto* item = m_panels->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  m_plots.clear();
  m_lossSection = nullptr;
  const int nSchemes = std::max<int>(1, static_cast<int>(m_schemes.size()));
  // Many runs wrap: a row of per-scheme panels holds at most kMaxSchemeColumns, the next
  // schemes go below (a 12-scheme study had been one row of 12 scrolling sideways, five seen).
  const int columns = std::min(nSchemes, kMaxSchemeColumns);
  const int rowsPer = (nSchemes + columns - 1) / columns;  // grid rows of one per-scheme spec
  // An imported model (one probe step) shows each per-layer metric once, as a profile over
  // its layers: a heatmap of a metric a curves or bars panel already draws is left out.
  const bool snapshot = m_data->progress().imported;
  std::set<QString> profiled;
  for (auto kind : {dashboard::PanelKind::LayerCurves, dashboard::PanelKind::LayerBarsAtCursor}) {
    for (const auto* spec : dashboard::panelsOfKind(kind)) profiled.insert(spec->metrics.front());
  }
  auto snapshotSkips = [&](const dashboard::PanelSpec& spec) {
    return snapshot && spec.kind == dashboard::PanelKind::LayerHeatmap && profiled.count(spec.metrics.front());
  };
  auto xLabelOf = [&](const dashboard::PanelSpec& spec) {
    const bool layerPanel = spec.kind == dashboard::PanelKind::LayerCurves || spec.kind == dashboard::PanelKind::LayerHeatmap;
    return snapshot && layerPanel ? tr("layer") : spec.xLabel;
  };
  // A per-scheme panel of a metric only some schemes write: only where the run has it.
  auto writes = [&](const dashboard::PanelSpec& spec, const QString& scheme) {
    const QString metric = spec.metrics.front();
    return !metrics::someSchemesOnly(metric.toStdString()) ||
           m_partialPanels.count(metric + QLatin1Char(':') + scheme) > 0;
  };
  for (const auto& section : dashboard::dashboardSections()) {
    const bool anyPanel = std::any_of(section.panels.begin(), section.panels.end(), [&](const auto& spec) {
      return !spec.perScheme ||
             std::any_of(m_schemes.begin(), m_schemes.end(), [&](const QString& s) { return writes(spec, s); });
    });
    if (!anyPanel) continue;  // a section of such metrics alone, which no run has
    auto* box = new QGroupBox(section.title);
    auto* grid = new QGridLayout(box);
    m_panels->addWidget(box);
    for (size_t c = 0; c < section.columnStretch.size(); ++c) {
      grid->setColumnStretch(static_cast<int>(c), section.columnStretch[c]);
    }
    for (const auto& spec : section.panels) {
      if (spec.kind == dashboard::PanelKind::LossOverlay) m_lossSection = box;
      if (!spec.perScheme) {
        auto* p = addPlot(spec.key, box, spec.minHeight > 0 ? spec.minHeight : 220);
        p->xAxis->setLabel(spec.xLabel);
        p->yAxis->setLabel(spec.yLabel);
        p->legend->setVisible(spec.legend);
        grid->addWidget(p, spec.row * rowsPer, spec.column, 1, spec.span < 0 ? columns : spec.span);
        continue;
      }
      if (snapshotSkips(spec)) continue;
      int k = 0;  // the panels of this spec so far: they fill `columns` a row, then wrap
      for (size_t i = 0; i < m_schemes.size(); ++i) {
        if (!writes(spec, m_schemes[i])) continue;
        auto* p = addPlot(spec.key + QLatin1Char(':') + m_schemes[i], box,
                          spec.minHeight > 0 ? spec.minHeight : 220);
        p->plotLayout()->insertRow(0);
        p->plotLayout()->addElement(
            0, 0, new figures::ElidingTitle(p, labelOf(m_schemes[i]) + QStringLiteral(" — ") + spec.title));
        p->xAxis->setLabel(xLabelOf(spec));
        p->yAxis->setLabel(spec.yLabel);
        grid->addWidget(p, spec.row * rowsPer + k / columns, k % columns);
        ++k;
      }
    }
  }
  auto* box = new QGroupBox(tr("Diagnosis: which layers could be dropped, and which proxy says so"));
  auto* v = new QVBoxLayout(box);
  m_diagnosis = new DiagnosisPanel;
  m_diagnosis->setObjectName(QStringLiteral("diagnosis"));
  v->addWidget(m_diagnosis);
  m_panels->addWidget(box);
}

QString GroupDashboard::decimationNote() const { return m_decimation->text(); }

QString GroupDashboard::labelOf(const QString& scheme) const {
  auto it = m_labels.find(scheme);
  return it == m_labels.end() ? scheme : it->second;
}

bool GroupDashboard::isStepPanel(const QString& panel) const {
  const auto* spec = dashboard::panelSpec(panel);
  if (!spec || spec->xLabel != QLatin1String("step")) return false;
  // The loss and lr panels leave the step axis when plotted against tokens or time.
  const bool lossLike = spec->kind == dashboard::PanelKind::LossOverlay || spec->kind == dashboard::PanelKind::LearningRate;
  return !lossLike || m_lossAxis->currentData().toString() == QLatin1String("step");
}

void GroupDashboard::setLinkedZoom(bool linked) { m_linkZoom->setChecked(linked); }

void GroupDashboard::followAll() {
  for (auto& [name, p] : m_plots) {
    setUserZoomed(p, false);
    p->rescaleAxes();
  }
  m_followLatest = true;
  if (!m_steps.empty()) m_scrubber->setValue(static_cast<int>(m_steps.size()) - 1);
  redraw();
}

void GroupDashboard::setLossAxis(const QString& mode) {
  const int i = m_lossAxis->findData(mode);
  if (i >= 0) m_lossAxis->setCurrentIndex(i);
}

void GroupDashboard::setLogLayers(bool on) { m_logLayers->setChecked(on); }

QString GroupDashboard::progressText() const { return m_progress->text() + QStringLiteral(" · ") + m_eta->text(); }
int GroupDashboard::progressPercent() const {
  return m_progress->maximum() > 0 ? static_cast<int>(100LL * m_progress->value() / m_progress->maximum()) : 0;
}

void GroupDashboard::linkZoomFrom(QCustomPlot* source) {
  const QString name = source->objectName();
  if (!m_linkZoom->isChecked() || !isStepPanel(name) || !userZoomed(source)) return;
  const QCPRange range = source->xAxis->range();
  for (auto& [other, p] : m_plots) {
    if (p == source || !isStepPanel(other)) continue;
    p->xAxis->setRange(range);
    setUserZoomed(p, true);
  }
}

void GroupDashboard::moveCrosshair(double step) {
  for (auto& [name, p] : m_plots) {
    if (!isStepPanel(name)) continue;
    auto* line = dashboard::namedLine(p, QStringLiteral("crosshair"), QPen(QColor(40, 40, 40, 90), 1, Qt::DotLine));
    line->point1->setCoords(step, 0);
    line->point2->setCoords(step, 1);
    replotWhenShown(p);
  }
}

bool GroupDashboard::savePanelPng(const QString& panel, const QString& path) {
  const auto it = m_plots.find(panel);
  if (it == m_plots.end()) return false;
  QCustomPlot* p = it->second;
  std::vector<QCPAbstractItem*> hidden;  // the hover crosshair is the mouse's, not the figure's
  for (int i = 0; i < p->itemCount(); ++i) {
    auto* item = p->item(i);
    if (item->objectName() == QLatin1String("crosshair") && item->visible()) {
      item->setVisible(false);
      hidden.push_back(item);
    }
  }
  const bool ok = p->savePng(path, 0, 0, 2.0);
  for (auto* item : hidden) item->setVisible(true);
  return ok;
}

void GroupDashboard::showPanelMenu(QCustomPlot* p, const QString& name, const QPoint& pos) {
  QMenu menu;
  const QString figure = figureForPanel(name);
  QAction* exportAction = figure.isEmpty() ? nullptr : menu.addAction(tr("Export as paper figure (%1)…").arg(figure));
  auto* png = menu.addAction(tr("Save PNG…"));
  auto* csv = menu.addAction(tr("Save CSV…"));
  auto* reset = menu.addAction(userZoomed(p) ? tr("Follow new data (reset zoom)") : tr("Reset zoom"));
  auto* chosen = menu.exec(p->mapToGlobal(pos));
  if (!chosen) return;
  QString base = group() + QLatin1Char('-') + name;
  base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("_"));
  if (chosen == reset) {
    if (m_linkZoom->isChecked() && isStepPanel(name)) followAll();
    else resetZoom(p);
  } else if (chosen == png) {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save panel as PNG"), base + QStringLiteral(".png"), tr("PNG (*.png)"));
    if (!path.isEmpty()) savePanelPng(name, path);
  } else if (chosen == csv) {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save panel data as CSV"), base + QStringLiteral(".csv"), tr("CSV (*.csv)"));
    if (!path.isEmpty()) savePlotCsv(p, path);
  } else if (chosen == exportAction) {
    std::vector<int64_t> ids;
    for (const auto& r : m_data->runs()) ids.push_back(r.info.id);
    Q_EMIT exportRequested(figure, ids);
  }
}

QString GroupDashboard::figureForPanel(const QString& panel) {
  const auto* spec = dashboard::panelSpec(panel);
  return spec ? spec->figure : QString();
}

void GroupDashboard::setCursorStep(int64_t step) {
  m_cursor = step;
  m_cursorLabel->setText(tr("step %1").arg(step));
  drawCursorPanels();
}

}  // namespace depthlab::ui
