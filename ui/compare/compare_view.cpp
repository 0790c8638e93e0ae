// CompareView; see compare_view.h.
#include "compare/compare_view.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QFile>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

#include "analysis/statistics.h"
#include "export/figure_style.h"
#include "plot/colormaps.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {
// The per-layer profiles Compare draws, from the metric catalogue.
const std::vector<std::string>& profiles() {
  static const auto keys = metrics::keysFor(metrics::Kind::PerLayer, metrics::kCompare);
  return keys;
}
QString profileTitle(const std::string& key) {
  const auto& m = metrics::require(key, metrics::Kind::PerLayer);
  return QStringLiteral("final %1").arg(QString::fromUtf8(m.label.data(), static_cast<int>(m.label.size())));
}
Qt::PenStyle styleFor(int k) {
  static const Qt::PenStyle s[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine};
  return s[k % 4];
}
}  // namespace

CompareView::CompareView(store::RunStore& store, std::vector<int64_t> runIds, QWidget* parent)
    : QWidget(parent) {
  std::vector<store::RunInfo> infos;
  for (int64_t id : runIds) {
    auto r = store.run(id);
    if (!r) continue;
    Loaded l;
    l.info = *r;
    l.lossTrain = store.scalarSeries(id, metrics::kLossTrain);
    l.lossVal = store.scalarSeries(id, metrics::kLossVal);
    for (const auto& m : profiles()) l.layers[m] = store.layerSeries(id, m);
    infos.push_back(*r);
    m_runs.push_back(std::move(l));
  }
  m_groups = analysis::seedGroups(store, infos);
  m_configDiff = analysis::configDiff(infos);
  m_table = analysis::resultsTable(m_groups);

  auto* outer = new QVBoxLayout(this);
  auto* controls = new QHBoxLayout;
  m_relativeDepth = new QCheckBox(tr("align runs of different depth by relative depth"));
  m_band = new QComboBox;
  m_band->addItems({tr("std"), tr("standard error"), tr("min-max")});
  controls->addWidget(m_relativeDepth);
  controls->addWidget(new QLabel(tr("seed band")));
  controls->addWidget(m_band);
  m_colorBy = new QComboBox;
  m_colorBy->addItem(tr("scheme"), QString());
  for (const auto& [key, values] : m_configDiff) {
    if (key != "scheme" && key != "name" && key != "schemes") m_colorBy->addItem(QString::fromStdString(key), QString::fromStdString(key));
  }
  controls->addWidget(new QLabel(tr("colour by")));
  controls->addWidget(m_colorBy);
  controls->addStretch(1);
  outer->addLayout(controls);
  m_missing = new QLabel;
  m_missing->setStyleSheet(QStringLiteral("color: #a04000;"));
  m_missing->setWordWrap(true);
  outer->addWidget(m_missing);

  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  auto* host = new QWidget;
  auto* grid = new QGridLayout(host);
  scroll->setWidget(host);
  outer->addWidget(scroll, 1);
  for (int c = 0; c < 3; ++c) grid->setColumnStretch(c, 1);
  auto addPlot = [&](const QString& name, const QString& x, const QString& y, int row, int col, int span = 1) {
    auto* p = new QCustomPlot;
    p->setObjectName(name);
    p->setMinimumHeight(240);
    p->setMinimumWidth(280);
    QFont small = p->legend->font();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    p->legend->setFont(small);
    p->xAxis->setLabel(x);
    p->yAxis->setLabel(y);
    p->legend->setVisible(true);
    p->setNotAntialiasedElements(QCP::aePlottables);
    makeInteractive(p);
    grid->addWidget(p, row, col, 1, span);
    m_plots[name] = p;
    return p;
  };
  addPlot(QStringLiteral("loss"), tr("step"), tr("loss (train smoothed, val dashed)"), 0, 0, 2);
  addPlot(QStringLiteral("difference"), tr("step"), tr("layer"), 0, 2);
  for (size_t i = 0; i < profiles().size(); ++i) {
    addPlot(QString::fromStdString(profiles()[i]), tr("layer"), profileTitle(profiles()[i]), 1,
            static_cast<int>(i));
  }
  addPlot(QStringLiteral("seed_groups"), tr("seed group"), tr("final validation loss"), 2, 0);
  addPlot(QStringLiteral("depth_scaling"), tr("depth (layers)"), tr("final validation loss"), 2, 1);
  // Per-layer variance of every run side by side (4 per row), one shared colour scale.
  auto* heatBox = new QGroupBox(tr("Per-layer output variance over training, side by side (one colour scale)"));
  auto* heatGrid = new QGridLayout(heatBox);
  for (size_t i = 0; i < m_runs.size(); ++i) {
    auto* p = new QCustomPlot;
    const QString name = QStringLiteral("variance_map:%1").arg(m_runs[i].info.id);
    p->setObjectName(name);
    p->setMinimumHeight(200);
    p->setMinimumWidth(240);
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, QStringLiteral("%1 #%2").arg(
        QString::fromStdString(m_runs[i].info.scheme)).arg(m_runs[i].info.id)));
    p->xAxis->setLabel(tr("step"));
    p->yAxis->setLabel(tr("layer"));
    makeInteractive(p);
    heatGrid->addWidget(p, static_cast<int>(i / 4), static_cast<int>(i % 4));
    m_plots[name] = p;
  }
  grid->addWidget(heatBox, 4, 0, 1, 3);
  m_stats = new QLabel;
  m_stats->setWordWrap(true);
  m_stats->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_gain = new QLabel;
  auto* statsBox = new QGroupBox(tr("Statistics"));
  auto* sl = new QVBoxLayout(statsBox);
  sl->addWidget(m_stats);
  sl->addWidget(m_gain);
  sl->addStretch(1);
  grid->addWidget(statsBox, 2, 2);

  m_diff = new QTableWidget;
  m_diff->setObjectName(QStringLiteral("configDiff"));
  auto* diffBox = new QGroupBox(tr("Config keys that differ"));
  (new QVBoxLayout(diffBox))->addWidget(m_diff);
  grid->addWidget(diffBox, 3, 0, 1, 2);
  m_results = new QTableWidget;
  auto* resultsBox = new QGroupBox(tr("Results table (perplexity; best per column in bold)"));
  auto* rl = new QVBoxLayout(resultsBox);
  rl->addWidget(m_results);
  auto* copyLatex = new QPushButton(tr("Copy LaTeX"));
  auto* saveCsv = new QPushButton(tr("Save CSV…"));
  auto* saveTex = new QPushButton(tr("Save LaTeX…"));
  auto* rb = new QHBoxLayout;
  rb->addWidget(copyLatex);
  rb->addWidget(saveCsv);
  rb->addWidget(saveTex);
  rl->addLayout(rb);
  grid->addWidget(resultsBox, 3, 2);

  auto saveText = [this](const QString& filter, const std::string& text) {
    auto f = QFileDialog::getSaveFileName(this, tr("Save"), QString(), filter);
    if (f.isEmpty()) return;
    QFile out(f);
    if (out.open(QIODevice::WriteOnly)) out.write(QByteArray::fromStdString(text));
  };
  connect(copyLatex, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(QString::fromStdString(m_table.toLatex())); });
  connect(saveCsv, &QPushButton::clicked, this, [this, saveText] { saveText(tr("CSV (*.csv)"), m_table.toCsv()); });
  connect(saveTex, &QPushButton::clicked, this, [this, saveText] { saveText(tr("LaTeX (*.tex)"), m_table.toLatex()); });
  connect(m_relativeDepth, &QCheckBox::toggled, this, [this] { redraw(); });
  connect(m_band, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(m_colorBy, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  redraw();
}

QString CompareView::missingText() const { return m_missing->text(); }

void CompareView::setColorBy(const QString& key) {
  const int i = m_colorBy->findData(key);
  m_colorBy->setCurrentIndex(i >= 0 ? i : 0);
}

QColor CompareView::colorOf(const store::RunInfo& run) const {
  const QString key = m_colorBy->currentData().toString();
  if (key.isEmpty()) return schemeColor(QString::fromStdString(run.scheme));
  // A colour per distinct value of the chosen key, in order of first appearance.
  auto it = m_configDiff.find(key.toStdString());
  if (it == m_configDiff.end()) return schemeColor(QString::fromStdString(run.scheme));
  std::vector<std::string> distinct;
  for (const auto& v : it->second) if (std::find(distinct.begin(), distinct.end(), v) == distinct.end()) distinct.push_back(v);
  size_t runIndex = 0;
  for (size_t i = 0; i < m_runs.size(); ++i) if (m_runs[i].info.id == run.id) runIndex = i;
  const auto& value = it->second[runIndex];
  const size_t k = static_cast<size_t>(std::find(distinct.begin(), distinct.end(), value) - distinct.begin());
  const auto palette = paletteColors(QStringLiteral("okabe-ito"));
  return palette[k % palette.size()];
}

void CompareView::redraw() {
  // Missing metrics, said plainly.
  QStringList missing;
  for (const auto& r : m_runs) {
    QStringList m;
    if (r.lossTrain.empty()) m << QStringLiteral("train loss");
    if (r.lossVal.empty()) m << QStringLiteral("validation loss");
    for (const auto& p : profiles()) {
      if (r.layers.at(p).steps.empty()) m << QString::fromStdString(p);
    }
    if (!m.isEmpty()) missing << tr("run %1 has no %2").arg(r.info.id).arg(m.join(QStringLiteral(", ")));
  }
  m_missing->setText(missing.join(QStringLiteral("; ")));

  // Loss curves: one colour per scheme, a line style per run within the scheme.
  auto* loss = m_plots[QStringLiteral("loss")];
  loss->clearGraphs();
  std::map<std::string, int> perScheme;
  for (const auto& r : m_runs) {
    const QColor c = colorOf(r.info);
    const int k = perScheme[r.info.scheme]++;
    const QString label = QStringLiteral("%1 #%2").arg(QString::fromStdString(r.info.scheme)).arg(r.info.id);
    if (!r.lossTrain.empty()) {
      auto d = decimateMinMax(smooth(r.lossTrain, 0.9), static_cast<double>(r.lossTrain.front().step),
                              static_cast<double>(r.lossTrain.back().step), 800);
      auto* g = loss->addGraph();
      g->setName(label);
      g->setPen(QPen(c, 1.4, styleFor(k)));
      setGraphData(g, d);
    }
    if (!r.lossVal.empty()) {
      auto* g = loss->addGraph();
      g->setName(label + tr(" val"));
      g->setPen(QPen(c, 2.0, Qt::DashLine));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
      for (const auto& p : r.lossVal) g->addData(static_cast<double>(p.step), p.value);
      g->removeFromLegend();
    }
  }
  drawSeedBands(loss);
  loss->rescaleAxes();
  loss->replot(QCustomPlot::rpQueuedReplot);
  drawProfiles();
  drawHeatmaps();
  drawDifference();
  drawGroups();

  // Config diff.
  std::vector<store::RunInfo> infos;
  for (const auto& r : m_runs) infos.push_back(r.info);
  auto diff = analysis::configDiff(infos);
  m_diff->clear();
  m_diff->setRowCount(static_cast<int>(diff.size()));
  m_diff->setColumnCount(static_cast<int>(m_runs.size()) + 1);
  QStringList headers{tr("key")};
  for (const auto& r : m_runs) headers << tr("run %1").arg(r.info.id);
  m_diff->setHorizontalHeaderLabels(headers);
  int row = 0;
  for (const auto& [key, values] : diff) {
    m_diff->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(key)));
    for (size_t i = 0; i < values.size(); ++i) {
      m_diff->setItem(row, static_cast<int>(i) + 1, new QTableWidgetItem(QString::fromStdString(values[i])));
    }
    ++row;
  }
  m_diff->horizontalHeader()->setStretchLastSection(true);

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
    for (size_t r = 0; r < m_table.rows.size(); ++r) if (m_table.ppl[r][c]) best = std::min(best, *m_table.ppl[r][c]);
    for (size_t r = 0; r < m_table.rows.size(); ++r) {
      auto* item = new QTableWidgetItem(m_table.ppl[r][c] ? QString::number(*m_table.ppl[r][c], 'f', 2) +
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
}

void CompareView::drawHeatmaps() {
  double lo = 1e300, hi = -1e300;
  std::vector<QCPColorMap*> maps;
  for (const auto& r : m_runs) {
    auto it = m_plots.find(QStringLiteral("variance_map:%1").arg(r.info.id));
    if (it == m_plots.end()) continue;
    auto* p = it->second;
    p->clearPlottables();
    const auto& s = r.layers.at(metrics::kVariance);
    if (s.steps.empty()) { p->replot(QCustomPlot::rpQueuedReplot); continue; }
    auto* map = new QCPColorMap(p->xAxis, p->yAxis);
    map->setGradient(viridisGradient());
    auto range = fillLayerHeatmap(map, s, 400);
    lo = std::min(lo, range.first);
    hi = std::max(hi, range.second);
    maps.push_back(map);
    p->rescaleAxes();
  }
  for (auto* m : maps) {
    m->setDataRange(QCPRange(lo, hi));
    m->parentPlot()->replot(QCustomPlot::rpQueuedReplot);
  }
}

void CompareView::drawProfiles() {
  const bool relative = m_relativeDepth->isChecked();
  for (const auto& metric : profiles()) {
    auto* p = m_plots[QString::fromStdString(metric)];
    p->clearGraphs();
    p->xAxis->setLabel(relative ? tr("relative depth l / L") : tr("layer"));
    std::map<std::string, int> perScheme;
    for (const auto& r : m_runs) {
      const auto& s = r.layers.at(metric);
      if (s.steps.empty()) continue;
      auto v = layerValuesAt(s, s.steps.back());
      std::vector<double> profile(v.begin(), v.end());
      auto* g = p->addGraph();
      g->setName(QStringLiteral("%1 #%2 (L=%3)").arg(QString::fromStdString(r.info.scheme)).arg(r.info.id).arg(v.size()));
      g->setPen(QPen(colorOf(r.info), 1.6, styleFor(perScheme[r.info.scheme]++)));
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 3));
      for (size_t l = 0; l < profile.size(); ++l) {
        const double x = relative ? static_cast<double>(l + 1) / profile.size() : static_cast<double>(l + 1);
        g->addData(x, profile[l]);
      }
    }
    p->rescaleAxes();
    p->replot(QCustomPlot::rpQueuedReplot);
  }
}

void CompareView::drawDifference() {
  auto* p = m_plots[QStringLiteral("difference")];
  p->clearPlottables();
  p->legend->setVisible(false);
  std::vector<const Loaded*> withVar;
  for (const auto& r : m_runs) if (!r.layers.at(metrics::kVariance).steps.empty()) withVar.push_back(&r);
  if (withVar.size() < 2) {
    p->plotLayout()->setVisible(true);
    p->xAxis->setLabel(tr("needs two runs with per-layer variance"));
    p->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  const auto& a = withVar[0]->layers.at(metrics::kVariance);
  const auto& b = withVar[1]->layers.at(metrics::kVariance);
  const bool relative = m_relativeDepth->isChecked() || a.nLayers != b.nLayers;
  const int rows = relative ? std::max(a.nLayers, b.nLayers) : a.nLayers;
  // Steps both runs have, in order.
  std::vector<int64_t> steps;
  std::set_intersection(a.steps.begin(), a.steps.end(), b.steps.begin(), b.steps.end(), std::back_inserter(steps));
  auto* map = new QCPColorMap(p->xAxis, p->yAxis);
  map->data()->setSize(std::max<int>(1, static_cast<int>(steps.size())), rows);
  map->data()->setRange(QCPRange(steps.empty() ? 0 : static_cast<double>(steps.front()),
                                 steps.empty() ? 1 : static_cast<double>(steps.back())),
                        QCPRange(1, rows));
  double maxAbs = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto va = layerValuesAt(a, steps[i]), vb = layerValuesAt(b, steps[i]);
    std::vector<double> pa(va.begin(), va.end()), pb(vb.begin(), vb.end());
    if (relative) {
      pa = analysis::toRelativeDepth(pa, rows);
      pb = analysis::toRelativeDepth(pb, rows);
    }
    for (int l = 0; l < rows; ++l) {
      const double d = pb[static_cast<size_t>(l)] - pa[static_cast<size_t>(l)];
      map->data()->setCell(static_cast<int>(i), l, d);
      maxAbs = std::max(maxAbs, std::abs(d));
    }
  }
  map->setGradient(QCPColorGradient::gpPolar);  // diverging
  map->setDataRange(QCPRange(-std::max(maxAbs, 1e-12), std::max(maxAbs, 1e-12)));  // centred at 0
  p->xAxis->setLabel(tr("step — variance of #%1 minus #%2%3")
                         .arg(withVar[1]->info.id).arg(withVar[0]->info.id)
                         .arg(relative ? tr(" (relative depth)") : QString()));
  p->yAxis->setLabel(relative ? tr("relative depth bin") : tr("layer"));
  p->rescaleAxes();
  p->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace depthlab::ui
