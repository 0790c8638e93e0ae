// See compare_diagnosis.h.
#include "compare/compare_diagnosis.h"

#include <qcustomplot.h>

#include <QColor>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "flow_layout.h"
#include "plot/figure_builders.h"
#include "plot/figure_layout.h"
#include "plot/live_plot.h"
#include "plot/plot_helpers.h"
#include "plot/plot_theme.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui::compare {

namespace {

// Layers with both values, by delta descending, and how many of the first stand 10x or more
// above all the others (at most a tenth of them: removing block 1 costs nats, a deep block
// hundredths).
std::pair<std::vector<int>, size_t> byDelta(const analysis::LayerDiagnosis& d,
                                            const analysis::ProxyColumn& p) {
  std::vector<int> layers;
  for (int l = 0; l < d.layers; ++l) {
    const auto L = static_cast<size_t>(l);
    if (std::isfinite(p.values[L]) && std::isfinite(d.pruning[L])) layers.push_back(l);
  }
  auto delta = [&](int l) { return d.pruning[static_cast<size_t>(l)]; };
  std::sort(layers.begin(), layers.end(), [&](int a, int b) { return delta(a) > delta(b); });
  size_t off = 0;
  for (size_t k = 1; k <= layers.size() / 10; ++k) {
    double rest = 0;
    for (size_t i = k; i < layers.size(); ++i) rest = std::max(rest, std::abs(delta(layers[i])));
    if (rest > 0 && delta(layers[k - 1]) >= 10 * rest) off = k;
  }
  return {layers, off};
}

// The axes over the points but the off-scale ones, which stay in the data outside the view.
void fitScatter(QCustomPlot* plot, const analysis::LayerDiagnosis& d,
                const analysis::ProxyColumn& p) {
  const auto [layers, off] = byDelta(d, p);
  if (layers.size() <= off) return;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (size_t i = off; i < layers.size(); ++i) {
    const auto L = static_cast<size_t>(layers[i]);
    x0 = std::min(x0, p.values[L]);
    x1 = std::max(x1, p.values[L]);
    y0 = std::min(y0, d.pruning[L]);
    y1 = std::max(y1, d.pruning[L]);
  }
  auto widen = [](double lo, double hi) {
    const double m = hi > lo ? 0.08 * (hi - lo) : std::max(1e-3, 0.1 * std::abs(lo));
    return QCPRange(lo - m, hi + m);
  };
  plot->xAxis->setRange(widen(x0, x1));
  plot->yAxis->setRange(widen(y0, y1));
}

// The off-scale points named for the title's second line: "↑ off scale: layer 1 (0.388, 1.15)"
// ("" when none).
QString offScaleText(const analysis::LayerDiagnosis& d, const analysis::ProxyColumn& p) {
  const auto [layers, off] = byDelta(d, p);
  QStringList named;
  for (size_t i = 0; i < off; ++i) {
    const auto L = static_cast<size_t>(layers[i]);
    named << QObject::tr("layer %1 (%2, %3)")
                 .arg(layers[i] + 1)
                 .arg(sig3(p.values[L]), sig3(d.pruning[L]));
  }
  return named.isEmpty() ? QString()
                         : QObject::tr("\u2191 off scale: ") + named.join(QStringLiteral(", "));
}

// The proxy (x) against the measured pruning delta (y), one point per layer; resolved deltas
// blue, those within noise grey. Its title and property "spearman" carry the rho.
QCustomPlot* makeScatter(const DiagnosisRun& run, const analysis::ProxyColumn& p) {
  const auto& d = run.diagnosis;
  auto* plot = new LivePlot;
  plot->setObjectName(
      QStringLiteral("diagnosisScatter:%1:%2").arg(run.runId).arg(QString::fromStdString(p.key)));
  plot->setFixedSize(280, 230);
  const QString name = proxyShortName(p.key);
  const QString rho = p.spearmanVsPruning
                          ? QObject::tr("Spearman \u03c1 = %1").arg(*p.spearmanVsPruning, 0, 'f', 2)
                          : QObject::tr("Spearman \u03c1 = \u2013 (not measured)");
  if (p.spearmanVsPruning) plot->setProperty("spearman", *p.spearmanVsPruning);
  plot->plotLayout()->insertRow(0);
  QString title = name + QStringLiteral(" vs pruning \u0394:  ") + rho;
  if (const QString off = offScaleText(d, p); !off.isEmpty()) title += QLatin1Char('\n') + off;
  plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title));
  plot->xAxis->setLabel(name);
  plot->xAxis->ticker()->setTickCount(4);  // 280 px: "0.0025 0.005" ran together at 5
  plot->yAxis->ticker()->setTickCount(4);
  plot->yAxis->setLabel(QObject::tr("pruning \u0394 loss"));
  auto* resolved = plot->addGraph();
  auto* noise = plot->addGraph();
  resolved->setName(QObject::tr("layers"));
  noise->setName(QObject::tr("layers within noise"));
  for (auto* g : {resolved, noise}) {
    const QColor c = g == resolved ? QColor(0, 114, 178) : QColor(150, 150, 150);
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 6));
  }
  for (int l = 0; l < d.layers; ++l) {
    const auto L = static_cast<size_t>(l);
    const double x = p.values[L], y = d.pruning[L];
    if (std::isfinite(x) && std::isfinite(y)) (d.withinNoise(l) ? noise : resolved)->addData(x, y);
  }
  fitScatter(plot, d, p);
  setRefit(plot, [plot, d, p] { fitScatter(plot, d, p); });  // double-click: this view again
  makeInteractive(plot);
  figures::fitOnResize(plot);
  figures::fitTitles(plot);
  replotWhenShown(plot);
  return plot;
}

QWidget* makeRunBox(const DiagnosisRun& run) {
  const auto& d = run.diagnosis;
  auto* box =
      new QGroupBox(diagnosisTitle(run));
  auto* v = new QVBoxLayout(box);
  auto* thresholds = new QLabel(thresholdText(run.thresholds));
  thresholds->setObjectName(QStringLiteral("diagnosisThresholds:%1").arg(run.runId));
  thresholds->setWordWrap(true);
  thresholds->setStyleSheet(mutedTextStyle(thresholds->palette()));
  v->addWidget(thresholds);
  // The table, then the scatters beside it where the view is wide enough, else below it (a
  // row of both asked ~1,100 px and gave all of Compare a horizontal scroll bar).
  auto* flowHost = new QWidget;
  auto* flow = new FlowLayout(flowHost);
  flow->setContentsMargins(0, 0, 0, 0);
  flow->addWidget(makeDiagnosisTable(run));
  for (const auto& p : d.proxies) flow->addWidget(makeScatter(run, p));
  v->addWidget(flowHost);
  return box;
}

}  // namespace

QGroupBox* makeDiagnosisBox(const std::vector<DiagnosisRun>& runs) {
  auto* box =
      new QGroupBox(QObject::tr("Layer diagnosis: measured pruning loss beside the cheap proxies"));
  box->setObjectName(QStringLiteral("diagnosisBox"));
  auto* v = new QVBoxLayout(box);
  auto* help = new QLabel(QObject::tr(
      "Each table orders a run's layers by the loss increase measured when that block alone is "
      "removed (drop rank 1 = the cheapest to drop), beside the cheap proxies (small = the block "
      "changes little) and their ranks. Beside it, each proxy against the measured \u0394, one "
      "point per layer, with its Spearman rank correlation (1 = the proxy orders the layers "
      "exactly as removing them does)."));
  help->setWordWrap(true);
  v->addWidget(help);
  QStringList without;
  for (const auto& r : runs) {
    if (r.diagnosis.step < 0) {
      without << r.label;
    } else {
      v->addWidget(makeRunBox(r));
    }
  }
  if (!without.isEmpty()) {
    auto* none = new QLabel(QObject::tr("No pruning measurement (probes.pruningEvery) yet: %1")
                                .arg(without.join(QStringLiteral(", "))));
    none->setObjectName(QStringLiteral("diagnosisMissing"));
    none->setWordWrap(true);
    v->addWidget(none);
  }
  return box;
}

}  // namespace depthlab::ui::compare
