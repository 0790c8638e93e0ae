// The pruned-task figure (Gromov et al., arXiv 2403.17887, Fig. 1 kind): task accuracy against
// the fraction of blocks removed, for each run the n-block span of least angular distance (solid,
// the key's run entry) and the n deepest blocks before the last (dashed), the chance level (grey,
// dotted), and the loss of the angular choice on the right axis (thin, dash-dotted; the key shows
// each line style once, in grey): where accuracy falls to
// chance while the loss still rises smoothly, the loss has misled. From `eval --task FILE
// --prune` (stored with the run). The CSV holds every point of both choices.
// A figure of the catalogue (figure_catalogue.cpp): its row and this builder.
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "dashboard/run_series.h"
#include "export/figure_catalogue.h"
#include "export/figure_csv.h"
#include "export/figure_style.h"
#include "export/paper_figures.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

double cell(const store::Matrix& m, int row, int col) {
  return m.data[static_cast<size_t>(row) * static_cast<size_t>(m.cols) + static_cast<size_t>(col)];
}

const store::Matrix* matrixOf(const RunMeta& r, const char* key) {
  auto it = r.data->taskPruning.find(key);
  return it == r.data->taskPruning.end() ? nullptr : &it->second;
}

QCPGraph* line(QCustomPlot* plot, QCPAxis* y, const QString& name, const QPen& pen,
               const QVector<double>& x, const QVector<double>& v) {
  auto* g = plot->addGraph(plot->xAxis, y);
  g->setName(name);
  g->setPen(pen);
  g->setData(x, v, /*alreadySorted=*/true);
  return g;
}

// The CSV rows of one run: both choices, every n.
void csvRows(FigureCsv& csv, const RunMeta& r, const store::Matrix& acc, int layers) {
  const auto* norm = matrixOf(r, metrics::kTaskAccNormPruned);
  const auto* loss = matrixOf(r, metrics::kTaskLossPruned);
  const auto* first = matrixOf(r, metrics::kTaskPruneFirst);
  auto at = [](const store::Matrix* m, int row, int n) {
    return m && row < m->rows && n < m->cols ? cell(*m, row, n) : std::nan("");
  };
  for (int row = 0; row < acc.rows; ++row) {
    for (int n = 0; n < acc.cols; ++n) {
      csv.integer(r.info.id)
          .integer(acc.step)
          .text(row == 0 ? "angular" : "deepest")
          .integer(n)
          .value(layers > 0 ? static_cast<double>(n) / layers : std::nan(""))
          .value(at(first, row, n) + 1)
          .value(cell(acc, row, n))
          .value(at(norm, row, n))
          .value(at(loss, row, n))
          .endRow();
    }
  }
}

}  // namespace

void buildPrunedTask(QCustomPlot* plot, const FigureInput& in) {
  in.csv.header = {QStringLiteral("run"),      QStringLiteral("step"),
                   QStringLiteral("choice"),   QStringLiteral("blocks_removed"),
                   QStringLiteral("fraction"), QStringLiteral("first_block"),
                   QStringLiteral("acc"),      QStringLiteral("acc_norm"),
                   QStringLiteral("loss_nats")};
  plot->xAxis->setLabel(QStringLiteral("fraction of blocks removed"));
  plot->yAxis->setLabel(QStringLiteral("accuracy"));
  plot->yAxis2->setVisible(true);
  plot->yAxis2->setLabel(QStringLiteral("loss (nats)"));
  plot->legend->setVisible(true);
  std::map<std::string, int> perScheme;
  double widest = 0;
  std::vector<double> chances;
  for (const auto& r : in.runs) {
    const auto* acc = matrixOf(r, metrics::kTaskAccPruned);
    const int L = r.data->nLayers;
    if (!acc || acc->rows < 2 || L < 1) {
      in.warnings << QStringLiteral(
                         "run %1 has no task accuracy under pruning (depthlab-cli "
                         "eval --run %1 --task FILE --prune)")
                         .arg(r.info.id);
      continue;
    }
    const QColor colour = nextRunColour(r, in.style, perScheme);
    QVector<double> x, angular, deepest, loss;
    const auto* lossM = matrixOf(r, metrics::kTaskLossPruned);
    for (int n = 0; n < acc->cols; ++n) {
      x << static_cast<double>(n) / L;
      angular << cell(*acc, 0, n);
      deepest << cell(*acc, 1, n);
      loss << (lossM && n < lossM->cols ? cell(*lossM, 0, n) : std::nan(""));
    }
    widest = std::max(widest, x.back());
    QPen solid(colour, 1.4), dashed(colour, 1.2, Qt::DashLine), thin(colour, 0.8, Qt::DashDotLine);
    line(plot, plot->yAxis, r.label, solid, x, angular);  // the key names the runs once
    line(plot, plot->yAxis, r.label + QStringLiteral(", deepest n"), dashed, x, deepest)
        ->removeFromLegend();
    if (lossM) {
      line(plot, plot->yAxis2, r.label + QStringLiteral(", loss"), thin, x, loss)
          ->removeFromLegend();
    }
    if (r.data->taskChance) chances.push_back(*r.data->taskChance);
    csvRows(in.csv, r, *acc, L);
  }
  if (widest <= 0) return;
  // The line styles, once, in grey: solid is the angular choice (the runs' own entries).
  line(plot, plot->yAxis, QStringLiteral("deepest n blocks"), QPen(Qt::darkGray, 1.2, Qt::DashLine),
       {}, {});
  line(plot, plot->yAxis, QStringLiteral("loss (right axis)"),
       QPen(Qt::darkGray, 0.8, Qt::DashDotLine), {}, {});
  plot->xAxis->setRange(0, widest);
  plot->yAxis->setRange(0, 1);
  plot->yAxis2->rescale();
  std::sort(chances.begin(), chances.end());
  chances.erase(std::unique(chances.begin(), chances.end()), chances.end());
  for (double c : chances) {  // one line per distinct chance level (one task: one line)
    auto* g = line(plot, plot->yAxis, QStringLiteral("chance"), QPen(Qt::gray, 1, Qt::DotLine),
                   {0.0, widest}, {c, c});
    if (c != chances.front()) plot->legend->removeItem(plot->legend->itemWithPlottable(g));
  }
}

}  // namespace depthlab::ui
