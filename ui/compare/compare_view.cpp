// CompareView; see compare_view.h.
#include "compare/compare_view.h"
#include "compare/compare_data.h"
#include "dashboard/panel_specs.h"

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

#include <algorithm>
#include <cmath>

#include "analysis/statistics.h"
#include "compare/compare_profiles.h"
#include "compare/compare_families.h"
#include "model/scheme_catalogue.h"
#include "export/figure_style.h"
#include "flow_layout.h"
#include "plot/colormaps.h"
#include "plot/figure_layout.h"
#include "plot/live_plot.h"
#include "plot/plot_helpers.h"
#include "plot/run_labels.h"
#include "plot/series_adapter.h"

namespace depthlab::ui {

using compare::kHeatmapColumns;
using compare::profiles;
using compare::profileTitle;


CompareView::CompareView(store::RunStore& store, std::vector<int64_t> runIds, QWidget* parent)
    : CompareView(runIds, parent) {
  setData(compare::loadCompareData(store, runIds));
}

CompareView::CompareView(std::vector<int64_t> runIds, QWidget* parent) : QWidget(parent), m_requested(std::move(runIds)) {
  auto* outer = new QVBoxLayout(this);
  m_loading = new QLabel(tr("Reading %1 runs from the database\u2026").arg(m_requested.size()));
  m_loading->setObjectName(QStringLiteral("compareLoading"));
  m_loading->setAlignment(Qt::AlignCenter);
  m_loading->setWordWrap(true);
  outer->addWidget(m_loading, 1);
}

void CompareView::setLoadError(const QString& message) {
  if (m_loaded) return;
  m_loading->setText(tr("The comparison could not be read: %1").arg(message));
}

void CompareView::setData(std::shared_ptr<compare::CompareData> data) {
  if (m_loaded || !data) return;
  m_loaded = true;
  takeData(std::move(*data));
  m_loading->hide();
  auto* outer = static_cast<QVBoxLayout*>(layout());
  outer->addWidget(makeControls());
  m_missing = new QLabel;
  m_missing->setStyleSheet(QStringLiteral("color: #a04000;"));
  m_missing->setWordWrap(true);
  outer->addWidget(m_missing);
  // Before any trend or gain is read: the runs are not like for like.
  m_mismatch = new QLabel;
  m_mismatch->setObjectName(QStringLiteral("mismatchWarning"));
  m_mismatch->setWordWrap(true);
  m_mismatch->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_mismatch->setStyleSheet(
      QStringLiteral("color: #8a1c00; background: #fff1e0; border: 1px solid #e0a060; padding: 4px;"));
  m_mismatch->setText(tr("\u26a0 Not like for like \u2014 %1. The losses, the depth trend and the LNS "
                         "gain below set runs trained differently side by side.")
                          .arg(m_mismatchText));
  m_mismatch->setVisible(!m_mismatchText.isEmpty());
  outer->addWidget(m_mismatch);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  auto* host = new QWidget;
  auto* grid = new QGridLayout(host);
  scroll->setWidget(host);
  outer->addWidget(scroll, 1);
  addPlots(grid);
  addTables(grid);
  connect(m_relativeDepth, &QCheckBox::toggled, this, [this] { redraw(); });
  connect(m_band, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(m_colorBy, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(m_diffA, &QComboBox::currentIndexChanged, this, [this] { drawDifference(); });
  connect(m_diffB, &QComboBox::currentIndexChanged, this, [this] { drawDifference(); });
  redraw();
  if (m_allImported) {  // models at one step: no steps to subtract
    for (QWidget* unit : {m_diffA->parentWidget(), m_diffB->parentWidget()}) unit->hide();
  }
  Q_EMIT loaded();
}

void CompareView::takeData(compare::CompareData&& d) {
  m_readOn = d.readOn;
  m_runs = std::move(d.runs);
  m_labels = std::move(d.labels);
  m_groups = std::move(d.groups);
  m_sharedStep = d.sharedStep;
  m_table = std::move(d.table);
  m_families = std::move(d.families);
  m_allImported = d.allImported;
  m_configDiff = std::move(d.configDiff);
  m_mismatchText = std::move(d.mismatchText);
  m_mismatchLabels = std::move(d.mismatchLabels);
  m_diagnoses = std::move(d.diagnoses);
}

QString CompareView::labelOf(int64_t runId) const {
  auto it = m_labels.find(runId);
  return it == m_labels.end() ? QStringLiteral("#%1").arg(runId) : it->second;
}

QString CompareView::labelWithId(int64_t runId) const { return compare::labelWithId(m_labels, runId); }

void CompareView::setDifferencePair(int64_t a, int64_t b) {
  if (!m_loaded) return;
  m_diffA->setCurrentIndex(m_diffA->findData(QVariant::fromValue<qlonglong>(a)));
  m_diffB->setCurrentIndex(m_diffB->findData(QVariant::fromValue<qlonglong>(b)));
}

std::pair<int64_t, int64_t> CompareView::differencePair() const {
  if (!m_loaded) return {0, 0};
  return {m_diffA->currentData().toLongLong(), m_diffB->currentData().toLongLong()};
}

QString CompareView::differenceTitle() const { return m_diffTitle ? m_diffTitle->text() : QString(); }

QWidget* CompareView::makeControls() {
  // The controls flow onto a second line where the view is narrow (one row of them asked
  // ~1,000 px and squeezed the set-up panel beside Compare); a label stays with its box.
  auto* row = new QWidget;
  auto* flow = new FlowLayout(row);
  flow->setContentsMargins(0, 0, 0, 0);
  struct Pairs {
    FlowLayout* flow;
    QHBoxLayout* open = nullptr;
    void addWidget(QWidget* w) {
      if (qobject_cast<QLabel*>(w) || !open) {  // a label starts a unit, its box ends it
        auto* unit = new QWidget;
        open = new QHBoxLayout(unit);
        open->setContentsMargins(0, 0, 0, 0);
        flow->addWidget(unit);
      }
      open->addWidget(w);
      if (!qobject_cast<QLabel*>(w)) open = nullptr;
    }
  } pairs{flow};
  auto* controls = &pairs;
  m_relativeDepth = new QCheckBox(tr("align runs of different depth by relative depth"));
  m_band = new QComboBox;
  m_band->addItems({tr("std"), tr("standard error"), tr("min-max")});
  controls->addWidget(m_relativeDepth);
  controls->addWidget(new QLabel(tr("seed band")));
  controls->addWidget(m_band);
  m_colorBy = new QComboBox;
  m_colorBy->setObjectName(QStringLiteral("colorBy"));
  m_colorBy->setToolTip(tr("One colour per scheme, per run (seeds apart), or per value of a config key that differs"));
  m_colorBy->addItem(tr("scheme"), QString());
  m_colorBy->addItem(tr("run"), QStringLiteral("#run"));
  for (const auto& [key, values] : m_configDiff) {
    if (key != "scheme" && key != "name" && key != "schemes") m_colorBy->addItem(QString::fromStdString(key), QString::fromStdString(key));
  }
  controls->addWidget(new QLabel(tr("colour by")));
  controls->addWidget(m_colorBy);
  // The difference heatmap's sides: B minus A. Default: Pre-LN (A) and LNS (B) of one seed.
  m_diffA = new QComboBox;
  m_diffA->setObjectName(QStringLiteral("diffA"));
  m_diffB = new QComboBox;
  m_diffB->setObjectName(QStringLiteral("diffB"));
  for (auto* c : {m_diffA, m_diffB}) {
    for (const auto& r : m_runs) c->addItem(labelWithId(r.info.id), QVariant::fromValue<qlonglong>(r.info.id));
  }
  m_diffA->setToolTip(tr("Difference heatmap: this run is subtracted"));
  m_diffB->setToolTip(tr("Difference heatmap: variance of this run minus that of the first"));
  int64_t a = m_runs.empty() ? 0 : m_runs.front().info.id, b = m_runs.size() > 1 ? m_runs[1].info.id : a;
  // A scheme (B) against the one it pairs with in the scheme catalogue (A, the earlier entry):
  // its designated partner first (Pre-LN and LNS), one seed before two, else the first two.
  int best = -1;
  for (const auto& x : m_runs) {
    for (const auto& y : m_runs) {
      const auto* ex = model::findScheme(x.info.scheme);
      const auto* ey = model::findScheme(y.info.scheme);
      if (!ex || !ey || ex >= ey || (ey->pairsWith != ex->id && ex->pairsWith != ey->id)) continue;
      const int score = (x.info.seed == y.info.seed ? 2 : 0) + (ex->pairsWith == ey->id ? 1 : 0);
      if (score > best) {
        best = score;
        a = x.info.id;
        b = y.info.id;
      }
    }
  }
  m_diffA->setCurrentIndex(m_diffA->findData(QVariant::fromValue<qlonglong>(a)));
  m_diffB->setCurrentIndex(m_diffB->findData(QVariant::fromValue<qlonglong>(b)));
  controls->addWidget(new QLabel(tr("difference: B")));
  controls->addWidget(m_diffB);
  controls->addWidget(new QLabel(tr("minus A")));
  controls->addWidget(m_diffA);
  return row;
}

void CompareView::addPlots(QGridLayout* grid) {
  for (int c = 0; c < 3; ++c) grid->setColumnStretch(c, 1);
  auto addPlot = [&](const QString& name, const QString& x, const QString& y, int row, int col, int span = 1,
                     QGridLayout* into = nullptr) {
    auto* p = new LivePlot;
    p->setObjectName(name);
    p->setMinimumHeight(240);
    p->setMinimumWidth(250);  // three to a row beside the set-up panel at 1366 px
    QFont small = p->legend->font();
    small.setPointSizeF(std::round(small.pointSizeF() * 0.8));
    p->legend->setFont(small);
    // Compact entries (QCustomPlot's 32 x 18 icons and 3 px rows give each ~25 px): eight runs'
    // entries beside a 240 px panel fit whole.
    p->legend->setIconSize(QFontMetrics(small).height() * 2, QFontMetrics(small).height() / 2);
    p->legend->setRowSpacing(0);
    p->xAxis->setLabel(x);
    p->yAxis->setLabel(y);
    p->legend->setVisible(true);
    p->setNotAntialiasedElements(QCP::aePlottables);
    makeInteractive(p);
    addSaveMenu(p, QStringLiteral("compare-") + name);
    figures::fitOnResize(p);  // ticks that fit and the legend's emptiest corner, at the size shown
    (into ? into : grid)->addWidget(p, row, col, 1, span);
    m_plots[name] = p;
    return p;
  };
  auto* loss = addPlot(QStringLiteral("loss"), tr("step"), tr("loss (train smoothed, val dashed)"), 0, 0, 2);
  compare::installStepHover(loss, [this](double step) { return stepHoverText(step); });
  addPlot(QStringLiteral("difference"), tr("step"), tr("layer"), 0, 2);
  // The final profiles, three to a row (a fourth, DyT's saturation, wrapped off the page's
  // right edge); one only some schemes write appears where a run has it.
  for (const auto& m : profiles()) {
    const bool anyHas = std::any_of(m_runs.begin(), m_runs.end(),
                                    [&](const Loaded& r) { return !r.layers.at(m).steps.empty(); });
    if (anyHas || !metrics::someSchemesOnly(m)) m_profiles.push_back(m);
  }
  auto* profileBox = new QWidget;
  auto* profileGrid = new QGridLayout(profileBox);
  profileGrid->setContentsMargins(0, 0, 0, 0);
  for (int c = 0; c < 3; ++c) profileGrid->setColumnStretch(c, 1);
  for (size_t i = 0; i < m_profiles.size(); ++i) {
    addPlot(QString::fromStdString(m_profiles[i]), tr("layer"), profileTitle(m_profiles[i]),
            static_cast<int>(i / 3), static_cast<int>(i % 3), 1, profileGrid);
  }
  grid->addWidget(profileBox, 1, 0, 1, 3);
  addPlot(QStringLiteral("seed_groups"), tr("seed group"), tr("final validation loss"), 2, 0);
  addPlot(QStringLiteral("depth_scaling"), tr("depth (layers)"), tr("final validation loss"), 2, 1);
  // Per-layer variance of every run side by side (4 per row), one shared colour scale.
  auto* heatBox = new QGroupBox(tr("Per-layer output variance over training, side by side (one colour scale)"));
  auto* heatGrid = new QGridLayout(heatBox);
  for (size_t i = 0; i < m_runs.size(); ++i) {
    auto* p = new LivePlot;
    const QString name = QStringLiteral("variance_map:%1").arg(m_runs[i].info.id);
    p->setObjectName(name);
    p->setMinimumHeight(200);
    p->setMinimumWidth(190);  // four to a row within ~870 px (240 gave Compare a side scroll)
    p->plotLayout()->insertRow(0);
    p->plotLayout()->addElement(0, 0, new QCPTextElement(p, labelWithId(m_runs[i].info.id)));
    p->xAxis->setLabel(tr("step"));
    p->yAxis->setLabel(tr("layer"));
    makeInteractive(p);
    addSaveMenu(p, QStringLiteral("compare-") + name);
    figures::fitOnResize(p);  // four to a row: step labels of long runs need fewer ticks
    heatGrid->addWidget(p, static_cast<int>(i / 4), static_cast<int>(i % 4));
    m_plots[name] = p;
  }
  grid->addWidget(heatBox, 4, 0, 1, 3);
  if (m_allImported) {  // models at one step: nothing trained to plot over steps or seeds
    for (const char* name : {"loss", "difference", "seed_groups", "depth_scaling"}) {
      m_plots[QString::fromLatin1(name)]->hide();
    }
    heatBox->hide();
  }
}

void CompareView::addTables(QGridLayout* grid) {
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
  statsBox->setVisible(!m_allImported);
  resultsBox->setVisible(!m_allImported);
  if (!m_families.rows.empty()) grid->addWidget(makeFamilyBox(m_families), 5, 0, 1, 3);
  grid->addWidget(compare::makeDiagnosisBox(m_diagnoses), 6, 0, 1, 3);

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
}

QString CompareView::missingText() const { return !m_missing || m_missing->isHidden() ? QString() : m_missing->text(); }

QString CompareView::mismatchText() const { return !m_mismatch || m_mismatch->isHidden() ? QString() : m_mismatch->text(); }

QString CompareView::stepHoverText(double step) const {
  return compare::stepHoverText(m_hover, step, compare::kLossSmoothing);
}

void CompareView::setColorBy(const QString& key) {
  if (!m_loaded) return;
  const int i = m_colorBy->findData(key);
  m_colorBy->setCurrentIndex(i >= 0 ? i : 0);
}

QColor CompareView::colorOf(const store::RunInfo& run) const {
  const QString key = m_colorBy->currentData().toString();
  if (key.isEmpty()) {  // the k-th run of its scheme: a shade of the scheme's colour, as on paper
    int k = 0;
    for (const auto& r : m_runs) {
      if (r.info.id == run.id) break;
      k += r.info.scheme == run.scheme;
    }
    return dashboard::runShade(schemeColor(QString::fromStdString(run.scheme)), k);
  }
  if (key == QLatin1String("#run")) {  // one colour per run, in the order of the selection
    const auto palette = paletteColors(QStringLiteral("tol-bright"));
    for (size_t i = 0; i < m_runs.size(); ++i) {
      if (m_runs[i].info.id == run.id) return palette[i % palette.size()];
    }
  }
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

}  // namespace depthlab::ui
