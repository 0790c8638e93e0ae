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
#include "dashboard/panel_specs.h"
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
  const int nSchemes = std::max<int>(1, static_cast<int>(m_schemes.size()));
  for (const auto& section : dashboard::dashboardSections()) {
    auto* box = new QGroupBox(section.title);
    auto* grid = new QGridLayout(box);
    m_panels->addWidget(box);
    for (size_t c = 0; c < section.columnStretch.size(); ++c) {
      grid->setColumnStretch(static_cast<int>(c), section.columnStretch[c]);
    }
    for (const auto& spec : section.panels) {
      if (!spec.perScheme) {
        auto* p = addPlot(spec.key, box, spec.minHeight > 0 ? spec.minHeight : 220);
        p->xAxis->setLabel(spec.xLabel);
        p->yAxis->setLabel(spec.yLabel);
        p->legend->setVisible(spec.legend);
        grid->addWidget(p, spec.row, spec.column, 1, spec.span < 0 ? nSchemes : spec.span);
        continue;
      }
      for (size_t i = 0; i < m_schemes.size(); ++i) {
        auto* p = addPlot(spec.key + QLatin1Char(':') + m_schemes[i], box,
                          spec.minHeight > 0 ? spec.minHeight : 220);
        p->plotLayout()->insertRow(0);
        p->plotLayout()->addElement(
            0, 0, new QCPTextElement(p, m_schemes[i] + QStringLiteral(" — ") + spec.title));
        p->xAxis->setLabel(spec.xLabel);
        p->yAxis->setLabel(spec.yLabel);
        grid->addWidget(p, spec.row, static_cast<int>(i));
      }
    }
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
  const auto* spec = dashboard::panelSpec(panel);
  return spec ? spec->figure : QString();
}

void GroupDashboard::setCursorStep(int64_t step) {
  m_cursor = step;
  m_cursorLabel->setText(tr("step %1").arg(step));
  drawCursorPanels();
}

}  // namespace depthlab::ui
