// See diagnosis_panel.h.
#include "dashboard/diagnosis_panel.h"

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
#include "plot/figure_layout.h"
#include "plot/plot_theme.h"

namespace depthlab::ui {

DiagnosisPanel::DiagnosisPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  auto* help = new QLabel(tr(
      "Layers ranked by the measured loss increase when each block alone is removed (rank 1 = "
      "the cheapest to drop), beside the cheap proxies (small = the block changes little) and "
      "their ranks. ρ: Spearman rank correlation of a proxy with the measured pruning (1 = it "
      "orders the layers exactly as removing them does)."));
  help->setWordWrap(true);
  help->setStyleSheet(mutedTextStyle(palette()));
  outer->addWidget(help);
  m_row = new FlowLayout;
  outer->addLayout(m_row);
}

QTableWidget* DiagnosisPanel::table(int i) const {
  return i >= 0 && i < runCount() ? m_tables[static_cast<size_t>(i)] : nullptr;
}

QString DiagnosisPanel::summary(int i) const {
  return i >= 0 && i < runCount() ? m_summaries[static_cast<size_t>(i)]->text() : QString();
}

namespace {

QString cell(double v) { return std::isfinite(v) ? QString::number(v, 'g', 4) : QStringLiteral("–"); }
QString rankCell(double r) { return std::isfinite(r) ? QString::number(r, 'g', 3) : QStringLiteral("–"); }

// A long header on two lines ("adjacent angular\ndistance"), so a column is as wide as its
// numbers rather than its name.
QString header(const QString& label) {
  return label.size() <= 14 ? label : figures::onTwoLines(label);
}

// The table's size for all its columns and up to 12 rows (more scroll vertically).
void fitTable(QTableWidget* t) {
  t->resizeColumnsToContents();
  int width = 2 * t->frameWidth() + t->verticalScrollBar()->sizeHint().width();
  for (int c = 0; c < t->columnCount(); ++c) width += t->columnWidth(c);
  const int rows = std::min(t->rowCount(), 12);
  const int rowHeight = t->rowCount() > 0 ? t->rowHeight(0) : 0;
  t->setMinimumWidth(width);
  t->setMinimumHeight(std::max(
      220, 2 * t->frameWidth() + t->horizontalHeader()->sizeHint().height() + rows * rowHeight));
}

}  // namespace

void DiagnosisPanel::setDiagnoses(const std::vector<std::pair<QString, analysis::LayerDiagnosis>>& runs) {
  while (m_boxes.size() > runs.size()) {
    delete m_boxes.back();
    m_boxes.pop_back();
    m_tables.pop_back();
    m_summaries.pop_back();
  }
  while (m_boxes.size() < runs.size()) {
    auto* box = new QGroupBox;
    auto* v = new QVBoxLayout(box);
    auto* summary = new QLabel;
    summary->setWordWrap(true);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* t = new QTableWidget;
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->setMinimumHeight(220);
    v->addWidget(summary);
    v->addWidget(t, 1);
    m_row->addWidget(box);
    m_boxes.push_back(box);
    m_tables.push_back(t);
    m_summaries.push_back(summary);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& [label, d] = runs[i];
    auto* box = static_cast<QGroupBox*>(m_boxes[i]);
    auto* t = m_tables[i];
    if (d.step < 0) {
      box->setTitle(tr("%1 — no pruning measurement yet").arg(label));
      m_summaries[i]->setText(tr("The single-layer pruning probe has not run for this run yet "
                                 "(its cadence is probes.pruningEvery)."));
      t->clear();
      t->setRowCount(0);
      t->setColumnCount(0);
      continue;
    }
    box->setTitle(tr("%1 — layers to drop, at step %2").arg(label).arg(d.step));
    QStringList rho;
    for (const auto& p : d.proxies) {
      rho << (p.spearmanVsPruning ? QStringLiteral("%1 ρ = %2").arg(QString::fromStdString(p.label))
                                        .arg(*p.spearmanVsPruning, 0, 'f', 2)
                                  : QStringLiteral("%1 ρ = – (not measured)").arg(QString::fromStdString(p.label)));
    }
    QString summary = rho.join(QStringLiteral(" · "));
    if (const int noise = d.withinNoiseCount(); noise > 0) {
      summary += tr("\n%1 of %2 deltas lie within two standard errors of 0 (grey): removing one of "
                    "those changes the loss by less than the probe sequences resolve, so their "
                    "order among themselves is noise")
                     .arg(noise)
                     .arg(d.layers);
    }
    m_summaries[i]->setText(summary);
    QStringList headers{tr("drop rank"), tr("layer"), tr("pruning Δ loss ± s.e.")};
    for (const auto& p : d.proxies)
      headers << header(QString::fromStdString(p.label)) << tr("rank");
    t->clear();
    t->setColumnCount(headers.size());
    t->setHorizontalHeaderLabels(headers);
    t->setRowCount(d.layers);
    for (int r = 0; r < d.layers; ++r) {
      const int l = d.dropOrder[static_cast<size_t>(r)];
      const auto L = static_cast<size_t>(l);
      int c = 0;
      t->setItem(r, c++, new QTableWidgetItem(rankCell(d.pruningRanks[L])));
      t->setItem(r, c++, new QTableWidgetItem(QString::number(l + 1)));
      const double se = L < d.pruningError.size() ? d.pruningError[L] : NAN;
      auto* delta = new QTableWidgetItem(
          std::isfinite(se) && std::isfinite(d.pruning[L])
              ? QStringLiteral("%1 ± %2").arg(cell(d.pruning[L]), QString::number(se, 'g', 2))
              : cell(d.pruning[L]));
      if (d.withinNoise(l)) {
        delta->setForeground(QColor(128, 128, 128));
        delta->setToolTip(tr("within two standard errors of 0"));
      }
      t->setItem(r, c++, delta);
      for (const auto& p : d.proxies) {
        t->setItem(r, c++, new QTableWidgetItem(cell(p.values[L])));
        t->setItem(r, c++, new QTableWidgetItem(rankCell(p.ranks[L])));
      }
    }
    fitTable(t);
  }
}

}  // namespace depthlab::ui
