// See diagnosis_panel.h.
#include "dashboard/diagnosis_panel.h"

#include <QColor>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "flow_layout.h"
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

void DiagnosisPanel::setDiagnoses(const std::vector<DiagnosisRun>& runs) {
  while (m_boxes.size() > runs.size()) {
    delete m_boxes.back();
    m_boxes.pop_back();
    m_tables.pop_back();
    m_summaries.pop_back();
    m_shown.pop_back();
  }
  while (m_boxes.size() < runs.size()) {
    auto* box = new QGroupBox;
    auto* v = new QVBoxLayout(box);
    auto* summary = new QLabel;
    summary->setWordWrap(true);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(summary);
    m_row->addWidget(box);
    m_boxes.push_back(box);
    m_tables.push_back(nullptr);
    m_summaries.push_back(summary);
    m_shown.emplace_back();
  }
  for (size_t i = 0; i < runs.size(); ++i) showRun(i, runs[i]);
}

void DiagnosisPanel::showRun(size_t i, const DiagnosisRun& run) {
  const auto& d = run.diagnosis;
  // A poll or a zoom redraws the dashboard: a table that would show the same rows is kept
  // (with its selection and scroll position).
  const QString shown = QStringLiteral("%1|%2|%3|%4|%5|%6")
                            .arg(run.runId)
                            .arg(d.step)
                            .arg(d.layers)
                            .arg(run.thresholds.lazy)
                            .arg(run.thresholds.low)
                            .arg(run.label);
  if (shown == m_shown[i] && (m_tables[i] || d.step < 0)) return;
  m_shown[i] = shown;
  auto* box = static_cast<QGroupBox*>(m_boxes[i]);
  delete m_tables[i];  // a new table for the new rows
  m_tables[i] = nullptr;
  if (d.step < 0) {
    box->setTitle(tr("%1 — no pruning measurement yet").arg(run.label));
    m_summaries[i]->setText(tr("The single-layer pruning probe has not run for this run yet "
                               "(its cadence is probes.pruningEvery)."));
    return;
  }
  box->setTitle(diagnosisTitle(run));
  QStringList rho;
  for (const auto& p : d.proxies) {
    rho << (p.spearmanVsPruning
                ? QStringLiteral("%1 ρ = %2").arg(proxyShortName(p.key)).arg(*p.spearmanVsPruning, 0, 'f', 2)
                : QStringLiteral("%1 ρ = – (not measured)").arg(proxyShortName(p.key)));
  }
  QString summary = rho.join(QStringLiteral(" · "));
  if (const int noise = d.withinNoiseCount(); noise > 0) {
    summary += tr("\n%1 of %2 deltas lie within two standard errors of 0 (grey)")
                   .arg(noise)
                   .arg(d.layers);
  }
  summary += QStringLiteral("\n") + thresholdText(run.thresholds);
  m_summaries[i]->setText(summary);
  m_tables[i] = makeDiagnosisTable(run);
  box->layout()->addWidget(m_tables[i]);
}

}  // namespace depthlab::ui
