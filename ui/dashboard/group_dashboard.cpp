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

#include "dashboard/dashboard_plot_items.h"
#include "plot/colormaps.h"
#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

using dashboard::placeCursor;
using dashboard::schemeOf;

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

}  // namespace depthlab::ui
