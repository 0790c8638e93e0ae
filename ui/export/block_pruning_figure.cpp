// The block-pruning figure (Gromov et al., arXiv 2403.17887, Fig. 1 kind): for each run the
// (l, n) matrix of the loss increase when the n blocks from block l on are removed, at the end
// of the run (stored by the end-of-run probes or `analyze`), a panel per run, one diverging
// colour scale for all. The CSV holds every finite cell with its standard error where stored.
// A figure of the catalogue (figure_catalogue.cpp): its row and this builder are all it took.
#include <qcustomplot.h>

#include <cmath>

#include "dashboard/run_series.h"
#include "export/figure_catalogue.h"
#include "export/figure_csv.h"
#include "export/paper_figures.h"
#include "export/paper_layout.h"
#include "plot/figure_builders.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

// The cell (l, n) of `m`, or NaN where `m` is absent or smaller.
double cellOf(const store::Matrix* m, int row, int col) {
  if (!m || row >= m->rows || col >= m->cols) return std::nan("");
  return m
      ->data[static_cast<size_t>(row) * static_cast<size_t>(m->cols) + static_cast<size_t>(col)];
}

}  // namespace

void buildBlockPruning(QCustomPlot* plot, const FigureInput& in) {
  in.csv.header = {QStringLiteral("run"),           QStringLiteral("step"),
                   QStringLiteral("first_block_l"), QStringLiteral("blocks_removed_n"),
                   QStringLiteral("delta_loss"),    QStringLiteral("standard_error")};
  QStringList titles;
  for (const auto& r : in.runs) titles << r.label;
  const int columns = paper::panelColumns(static_cast<int>(in.runs.size()), in.style.widthPt);
  auto rects = paper::panelGrid(plot, titles, columns);
  std::vector<figures::Heatmap> maps;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const auto& run = in.runs[i];
    auto* rect = rects[i];
    rect->axis(QCPAxis::atBottom)
        ->setLabel(QStringLiteral("blocks n"));  // as "offset n": fits 6 cm
    rect->axis(QCPAxis::atLeft)
        ->setLabel(i % static_cast<size_t>(columns) == 0 ? QStringLiteral("first block l")
                                                         : QString());
    if (!run.data->blockPrune) {
      in.warnings << QStringLiteral(
                         "run %1 has no block-pruning matrix (made at the end of a run "
                         "with pruning probes, or by analyze)")
                         .arg(run.info.id);
      continue;
    }
    const store::Matrix& m = *run.data->blockPrune;
    const store::Matrix* se = run.data->blockPruneError ? &*run.data->blockPruneError : nullptr;
    maps.push_back(figures::matrixHeatmap(rect->axis(QCPAxis::atBottom),
                                          rect->axis(QCPAxis::atLeft), m,
                                          /*rowNormalise=*/false, metrics::kBlockPrune));
    for (int l = 0; l < m.rows; ++l) {
      for (int n = 0; n < m.cols; ++n) {
        const double v = cellOf(&m, l, n);
        if (!std::isfinite(v)) continue;  // the blocks past the last layer
        in.csv.integer(run.info.id)
            .integer(m.step)
            .integer(l + 1)
            .integer(n + 1)
            .value(v)
            .value(cellOf(se, l, n))
            .endRow();
      }
    }
    // Whole cells, as the angular figure's.
    rect->axis(QCPAxis::atBottom)->setRange(0.5, m.cols + 0.5);
    rect->axis(QCPAxis::atLeft)->setRange(0.5, m.rows + 0.5);
    for (auto type : {QCPAxis::atBottom, QCPAxis::atLeft}) rect->axis(type)->setOffset(3);
  }
  if (maps.empty()) return;
  figures::shareColourRange(maps);  // one diverging scale, white at 0
  auto* bar =
      figures::heatmapColourBar(maps.front().map, QStringLiteral("loss increase (nats)"), 0, 1);
  for (const auto& m : maps) m.map->setColorScale(bar);
  paper::placeColourBar(bar, in.style);
}

}  // namespace depthlab::ui
