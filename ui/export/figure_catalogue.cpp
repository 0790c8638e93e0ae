// See figure_catalogue.h.
#include "export/figure_catalogue.h"

#include <algorithm>
#include <stdexcept>

#include "export/family_figures.h"
#include "export/figure_export.h"
#include "export/paper_figures.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

// The family table's rows of the figure's runs, in their order.
experiment::FamilyTable familyRowsOf(const FigureInput& in) {
  if (!in.read.family) throw std::runtime_error("the runs' family table was not read");
  experiment::FamilyTable t;
  t.pruneShare = in.read.family->pruneShare;
  for (const auto& r : in.runs) {
    auto it = std::find_if(in.read.family->rows.begin(), in.read.family->rows.end(),
                           [&](const auto& row) { return row.runId == r.info.id; });
    if (it == in.read.family->rows.end()) {
      throw std::runtime_error("no family row for run " + std::to_string(r.info.id));
    }
    t.rows.push_back(*it);
  }
  return t;
}

void familyFigure(QCustomPlot* plot, const FigureInput& in, bool pruning) {
  QStringList labels;
  for (const auto& r : in.runs) labels << r.label;
  buildFamilyProfile(plot, familyRowsOf(in), labels, in.style, pruning, in.csv, in.warnings);
}

std::vector<FigureRow> makeCatalogue() {
  using namespace metrics;
  using L = FigureLayout;
  std::vector<FigureRow> rows;
  rows.push_back({"loss",
                  "Loss curves",
                  {kLossTrain, kLossVal},
                  L::OnePanel,
                  false,
                  1.3,
                  2,
                  [](QCustomPlot* p, const FigureInput& in) {
                    buildLoss(p, in.runs, in.style, in.csv, in.warnings);
                  }});
  rows.push_back({"variance",
                  "Per-layer variance over training",
                  {kVariance},
                  L::PanelPerRun,
                  false,
                  0,
                  0,
                  [](QCustomPlot* p, const FigureInput& in) {
                    buildVariance(p, in.runs, in.style, in.csv, in.warnings);
                  }});
  rows.push_back({"angular",
                  "Angular distance (l, n)",
                  {kAngular},
                  L::PanelPerRun,
                  false,
                  0,
                  0,
                  [](QCustomPlot* p, const FigureInput& in) {
                    buildMatrices(p, in.runs, in.style, in.csv, in.warnings);
                  }});
  rows.push_back({"pruning",
                  "Single-layer pruning",
                  {kPruneDelta, kPruneDeltaError},
                  L::OnePanel,
                  false,
                  0,
                  0,
                  [](QCustomPlot* p, const FigureInput& in) {
                    buildPruning(p, in.runs, in.style, in.csv, in.warnings);
                  }});
  rows.push_back({"block-pruning",
                  "Block pruning (l, n) at the end of each run",
                  {kBlockPrune, kBlockPruneError},
                  L::PanelPerRun,
                  false,
                  0,
                  0,
                  &buildBlockPruning});
  rows.push_back({"lens",
                  "Logit lens: KL to the output per block over training",
                  {kLensKl, kLensTop1},
                  L::PanelPerRun,
                  false,
                  0,
                  0,
                  &buildLens});
  rows.push_back({"pruned-task",
                  "Task accuracy and loss as blocks are removed (eval --task --prune)",
                  {kTaskAccPruned, kTaskAccNormPruned, kTaskLossPruned, kTaskPruneFirst},
                  L::OnePanel,
                  false,
                  1,
                  3,
                  &buildPrunedTask});
  rows.push_back({"family-pruning",
                  "Pruning loss against relative depth (model families)",
                  {},
                  L::OnePanel,
                  true,
                  2.5,
                  0,
                  [](QCustomPlot* p, const FigureInput& in) { familyFigure(p, in, true); }});
  rows.push_back({"family-angular",
                  "Angular distance to the next layer against relative depth (model families)",
                  {},
                  L::OnePanel,
                  true,
                  2.5,
                  0,
                  [](QCustomPlot* p, const FigureInput& in) { familyFigure(p, in, false); }});
  return rows;
}

}  // namespace

const std::vector<FigureRow>& figureCatalogue() {
  static const std::vector<FigureRow> rows = makeCatalogue();
  return rows;
}

const FigureRow* findFigure(const QString& id) {
  for (const auto& row : figureCatalogue()) {
    if (id == QLatin1String(row.id)) return &row;
  }
  return nullptr;
}

QStringList figureIds() {
  QStringList ids;
  for (const auto& row : figureCatalogue()) ids << QString::fromLatin1(row.id);
  return ids;
}

const FigureRow& requireFigure(const QString& id) {
  if (const auto* row = findFigure(id)) return *row;
  throw std::invalid_argument("unknown figure '" + id.toStdString() +
                              "' (known: " + figureIds().join(QStringLiteral(", ")).toStdString() +
                              ", set, study)");
}

QString figureHelp() {
  QString out;
  for (const auto& row : figureCatalogue()) {
    QStringList reads;
    for (const auto& k : row.reads) reads << QString::fromStdString(k);
    out += QStringLiteral("  %1 %2 (reads: %3)\n")
               .arg(QString::fromLatin1(row.id), -16)
               .arg(QString::fromUtf8(row.title))
               .arg(row.familyTable
                        ? QStringLiteral("the models' newest probe rows and import records")
                        : reads.join(QStringLiteral(", ")));
  }
  return out;
}

}  // namespace depthlab::ui
