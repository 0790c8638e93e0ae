// CompareView, seed-group part: mean validation curves with a band, the seed-group panel,
// Welch's t-test and bootstrap interval, and the depth-scaling view. See compare_view.h.
#include <qcustomplot.h>

#include <QComboBox>
#include <QStringList>

#include <QLabel>
#include <algorithm>

#include "analysis/statistics.h"
#include "compare/compare_view.h"
#include "export/figure_style.h"
#include "plot/colormaps.h"
#include "plot/figure_layout.h"
#include "plot/live_plot.h"

namespace depthlab::ui {

void CompareView::drawSeedBands(QCustomPlot* loss) {
  // Seed groups of two or more runs: the mean validation curve with the chosen band.
  const int band = m_band->currentIndex();
  for (const auto& g : m_groups) {
    if (g.runIds.size() < 2) continue;
    std::map<int64_t, std::vector<double>> byStep;
    for (int64_t id : g.runIds) {
      for (const auto& r : m_runs) {
        if (r.info.id != id) continue;
        for (const auto& p : r.lossVal) byStep[p.step].push_back(p.value);
      }
    }
    auto* lower = loss->addGraph();
    auto* upper = loss->addGraph();
    auto* mean = loss->addGraph();
    QColor c = schemeColor(QString::fromStdString(g.scheme));
    for (const auto& r : m_runs)
      if (r.info.id == g.runIds.front()) c = colorOf(r.info);
    for (const auto& [step, values] : byStep) {
      if (values.size() != g.runIds.size()) continue;  // steps every seed has
      auto s = analysis::summarize(values);
      double lo = s.mean - s.std, hi = s.mean + s.std;
      if (band == 1) {
        lo = s.mean - s.se;
        hi = s.mean + s.se;
      }
      if (band == 2) {
        lo = s.min;
        hi = s.max;
      }
      lower->addData(static_cast<double>(step), lo);
      upper->addData(static_cast<double>(step), hi);
      mean->addData(static_cast<double>(step), s.mean);
    }
    QColor fill = c;
    fill.setAlpha(50);
    lower->setPen(Qt::NoPen);
    upper->setPen(Qt::NoPen);
    upper->setBrush(fill);
    upper->setChannelFillGraph(lower);
    lower->removeFromLegend();
    upper->removeFromLegend();
    mean->setPen(QPen(c, 2.4));
    mean->setName(tr("%1 L=%2 val mean ± %3 (n=%4)")
                      .arg(defaultSchemeName(QString::fromStdString(g.scheme)))
                      .arg(g.depth)
                      .arg(m_band->currentText())
                      .arg(g.runIds.size()));
  }
}
QString CompareView::statsText() const { return m_stats ? m_stats->text() : QString(); }

void CompareView::drawGroups() {
  auto* p = m_plots[QStringLiteral("seed_groups")];
  p->clearPlottables();
  const int band = m_band->currentIndex();
  QStringList lines;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  int x = 0;
  // Groups of one scheme and shape (their configs differ elsewhere) are told apart by their runs.
  auto shape = [](const analysis::SeedGroup& g) { return g.key.substr(0, g.key.rfind(" |")); };
  auto sameName = [&](const analysis::SeedGroup& g) {
    return std::count_if(m_groups.begin(), m_groups.end(),
                         [&](const auto& o) { return shape(o) == shape(g); }) > 1;
  };
  auto runsOf = [](const analysis::SeedGroup& g) {
    QStringList ids;
    for (int64_t id : g.runIds) ids << QStringLiteral("#%1").arg(id);
    return QStringLiteral(" (") + ids.join(QStringLiteral(", ")) + QLatin1Char(')');
  };
  for (const auto& g : m_groups) {
    ++x;
    auto s = analysis::summarize(g.finalValLoss);
    ticker->addTick(x, defaultSchemeName(QString::fromStdString(g.scheme)) +
                           QStringLiteral("\nL=%1").arg(g.depth) +
                           (sameName(g) ? QStringLiteral("\n") + runsOf(g).trimmed() : QString()));
    if (s.n == 0) continue;
    double lo = s.mean - s.std, hi = s.mean + s.std;
    if (band == 1) {
      lo = s.mean - s.se;
      hi = s.mean + s.se;
    }
    if (band == 2) {
      lo = s.min;
      hi = s.max;
    }
    auto* graph = p->addGraph();
    graph->setName(QStringLiteral("%1 L=%2 (n=%3)%4")
                       .arg(defaultSchemeName(QString::fromStdString(g.scheme)))
                       .arg(g.depth)
                       .arg(s.n)
                       .arg(sameName(g) ? runsOf(g) : QString()));
    graph->setPen(QPen(schemeColor(QString::fromStdString(g.scheme)), 2));
    graph->setLineStyle(QCPGraph::lsNone);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
    graph->addData(x, s.mean);
    auto* err = new QCPErrorBars(p->xAxis, p->yAxis);
    err->removeFromLegend();
    err->setDataPlottable(graph);
    err->setData(QVector<double>{s.mean - lo}, QVector<double>{hi - s.mean});
    err->setPen(QPen(schemeColor(QString::fromStdString(g.scheme)), 1.5));
    // "LNS | L=24 d=64": the scheme by the name the rest of the view uses, then its shape.
    const std::string shapeOf = g.key.substr(g.scheme.size(), g.key.rfind(" |") - g.scheme.size());
    QString name = (g.schemeName.empty() ? defaultSchemeName(QString::fromStdString(g.scheme))
                                         : QString::fromStdString(g.schemeName)) +
                   QString::fromStdString(shapeOf);
    if (sameName(g)) name += runsOf(g);  // groups that differ only in what the warning names
    if (s.n < 2) {                       // one seed has no spread to show
      lines << tr("%1: %2, one seed (no %3)")
                   .arg(name)
                   .arg(s.mean, 0, 'f', 4)
                   .arg(m_band->currentText());
      continue;
    }
    lines << tr("%1: mean %2, %3 [%4, %5], n=%6")
                 .arg(name)
                 .arg(s.mean, 0, 'f', 4)
                 .arg(m_band->currentText())
                 .arg(lo, 0, 'f', 4)
                 .arg(hi, 0, 'f', 4)
                 .arg(s.n);
  }
  p->xAxis->setTicker(ticker);
  p->rescaleAxes();
  p->yAxis->scaleRange(1.2, p->yAxis->range().center());  // markers and bands off the frame
  p->xAxis->setRange(0.5, x + 0.5);
  figures::placeLegend(p, p->axisRect(),
                       figures::LegendOutside::Right);  // never over a group's mean or band
  replotWhenShown(p);
  lines << groupTestLine();
  if (m_sharedStep) {
    lines.prepend(tr("Runs planned for different lengths: final values after %1 steps, the "
                     "fewest any was planned for.")
                      .arg(*m_sharedStep));
  }
  m_stats->setText(lines.join(QLatin1Char('\n')));
  drawDepthScaling();
}

QString CompareView::groupTestLine() const {
  // Welch t-test and bootstrap between the first two groups with at least two seeds.
  std::vector<const analysis::SeedGroup*> testable;
  for (const auto& g : m_groups)
    if (g.finalValLoss.size() >= 2) testable.push_back(&g);
  if (testable.size() >= 2) {
    auto w = analysis::welchTTest(testable[0]->finalValLoss, testable[1]->finalValLoss);
    auto ci = analysis::bootstrapMeanDiff(testable[0]->finalValLoss, testable[1]->finalValLoss);
    return tr("Welch t-test %1 vs %2: difference %3, t = %4, df = %5, p = %6; bootstrap 95% "
              "interval [%7, %8]")
               .arg(defaultSchemeName(
                        QString::fromStdString(testable[0]->scheme)),  // "Pre-LN", as elsewhere
                    defaultSchemeName(QString::fromStdString(testable[1]->scheme)))
               .arg(w.meanDiff, 0, 'f', 4)
               .arg(w.t, 0, 'f', 3)
               .arg(w.df, 0, 'f', 1)
               .arg(w.p, 0, 'g', 3)
               .arg(ci.low, 0, 'f', 4)
               .arg(ci.high, 0, 'f', 4) +
           (testable[0]->probeLoss || testable[1]->probeLoss
                ? tr(" (checkpoint series: the last checkpoint's loss on the probe text)")
                : QString());
  }
  return tr("A t-test needs two seed groups with at least two seeds each.");
}

void CompareView::drawDepthScaling() {
  // Final loss against depth per scheme, with the LNS gain.
  auto* d = m_plots[QStringLiteral("depth_scaling")];
  d->clearGraphs();
  auto scaling = analysis::depthScaling(m_groups);
  for (const auto& [scheme, points] : scaling) {
    auto* g = d->addGraph();
    g->setName(defaultSchemeName(QString::fromStdString(scheme)));
    g->setPen(QPen(schemeColor(QString::fromStdString(scheme)), 1.8));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 6));
    for (const auto& pt : points) g->addData(pt.depth, pt.lossVal);
  }
  if (!m_mismatchLabels.isEmpty() && !m_depthWarning) {  // the trend itself says it mixes them
    d->plotLayout()->insertRow(0);
    m_depthWarning = new QCPTextElement(
        d,
        tr("\u26a0 mixes runs of different %1").arg(m_mismatchLabels.join(QStringLiteral(", "))));
    m_depthWarning->setTextColor(QColor(0x8a, 0x1c, 0x00));
    d->plotLayout()->addElement(0, 0, m_depthWarning);
  }
  d->rescaleAxes();
  d->yAxis->scaleRange(1.2, d->yAxis->range().center());
  d->xAxis->scaleRange(1.2, d->xAxis->range().center());
  figures::placeLegend(d, d->axisRect(), figures::LegendOutside::Right);
  replotWhenShown(d);
  QStringList gains;
  for (const auto& [depth, gain] : analysis::lnsGainPercent(scaling)) {
    gains << tr("L=%1: %2%").arg(depth).arg(gain, 0, 'f', 2);
  }
  QString gain = gains.isEmpty()
                     ? tr("LNS gain: needs pre_ln and lns runs at the same depth")
                     : tr("LNS perplexity gain over Pre-LN — ") + gains.join(QStringLiteral(", "));
  // The warning comes first where the runs differ in what sets the loss scale.
  if (!m_mismatchText.isEmpty())
    gain.prepend(tr("\u26a0 Not like for like \u2014 %1: the depth trend and the gain mix them.\n")
                     .arg(m_mismatchText));
  m_gain->setWordWrap(true);
  m_gain->setText(gain);
}

}  // namespace depthlab::ui
