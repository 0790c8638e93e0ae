// The paper's loss figure (declared in paper_figures.h): every run's train and validation
// losses in the run's colour, the train curves optionally smoothed with the dashboard's EMA
// (the raw curve faint beneath, the weight written in the key), a key of two black entries that
// says which line is train and which validation, and each run's validation line with its own
// dash pattern and marker so two runs' validations at the same values do not hide each other.
// Draws from the runs' series (RunMeta::data), reading no store; styling and fitting at size
// are paper_layout's.
#include <qcustomplot.h>

#include <algorithm>
#include <string>

#include "export/figure_csv.h"
#include "export/paper_figures.h"
#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

// Run k's validation line: a dash pattern (in line widths) and a marker of its own.
void styleValidation(QCPGraph* g, size_t k, double lineWidth) {
  static const QVector<qreal> dashes[] = {{4, 2}, {1.5, 1.5}, {6, 2, 1.5, 2}, {2.5, 3}, {8, 3}};
  static const QCPScatterStyle::ScatterShape shapes[] = {
      QCPScatterStyle::ssCircle, QCPScatterStyle::ssSquare, QCPScatterStyle::ssTriangle,
      QCPScatterStyle::ssDiamond, QCPScatterStyle::ssTriangleInverted};
  QPen pen = g->pen();
  pen.setDashPattern(dashes[k % std::size(dashes)]);
  g->setPen(pen);
  // Solid marker outlines (a dashed pen breaks them), at most ~12 markers a line.
  QCPScatterStyle marker(shapes[k % std::size(shapes)], QPen(pen.color(), lineWidth * 0.8),
                         Qt::white, 3.5 + lineWidth);
  g->setScatterStyle(marker);
  g->setScatterSkip(std::max(0, g->dataCount() / 12 - 1));
}

// The key: what a solid and a dashed line mean, in black, after the runs' entries.
void addKey(QCustomPlot* plot, double smoothing, double lineWidth) {
  auto* train = plot->addGraph();
  train->setPen(QPen(Qt::black, lineWidth * 0.8));
  train->setName(smoothing > 0 ? QStringLiteral("train (EMA %1)").arg(smoothing, 0, 'f', 2)
                               : QStringLiteral("train"));
  auto* val = plot->addGraph();
  QPen dashed(Qt::black, lineWidth * 1.0);
  dashed.setDashPattern({4, 2});
  val->setPen(dashed);
  val->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, lineWidth * 0.8),
                                       Qt::white, 3.5 + lineWidth));
  val->setName(QStringLiteral("validation"));
}

// A scalar series of the run as the reader read it (empty when it has none).
std::vector<store::ScalarPoint> scalarsOf(const RunMeta& r, const char* key) {
  auto it = r.data->scalars.find(key);
  return it == r.data->scalars.end() ? std::vector<store::ScalarPoint>{} : it->second;
}

}  // namespace

void buildLoss(QCustomPlot* plot, const std::vector<RunMeta>& runs, const FigureStyle& s,
               FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("run"), QStringLiteral("series"), QStringLiteral("step"),
                QStringLiteral("value")};
  plot->xAxis->setLabel(QStringLiteral("step"));
  plot->yAxis->setLabel(QStringLiteral("loss"));
  plot->legend->setVisible(true);
  const double smoothing = std::clamp(s.smoothing, 0.0, 0.99);
  std::vector<figures::LossRun> losses;
  std::map<std::string, int> perScheme;
  for (const auto& r : runs) {
    figures::LossRun run{r.label,
                         nextRunColour(r, s, perScheme),
                         Qt::SolidLine,
                         scalarsOf(r, metrics::kLossTrain),
                         scalarsOf(r, metrics::kLossVal),
                         {}};
    for (const auto* key : {metrics::kLossTrain, metrics::kLossVal}) {
      const auto& pts = std::string(key) == metrics::kLossVal ? run.val : run.train;
      if (pts.empty())
        warnings << QStringLiteral("run %1 has no %2").arg(r.info.id).arg(QLatin1String(key));
      for (const auto& p : pts)
        csv.integer(r.info.id).text(key).integer(p.step).value(p.value).endRow();
    }
    if (smoothing > 0) {  // the curve drawn, as drawn
      for (const auto& p : smooth(run.train, smoothing)) {
        csv.integer(r.info.id).text("loss_train_ema").integer(p.step).value(p.value).endRow();
      }
    }
    losses.push_back(std::move(run));
  }
  figures::LossStyle style;
  style.smoothing = smoothing;
  style.rawUnderSmoothed = smoothing > 0;
  style.trainWidth = s.lineWidth * (smoothing > 0 ? 0.9 : 0.7);
  style.valWidth = s.lineWidth * 1.1;
  style.trainAlpha = smoothing > 0 ? 255 : 170;
  style.valMarkers = false;
  style.valInLegend = false;
  style.trainSuffix = QString();
  figures::lossOverlay(plot->xAxis, plot->yAxis, losses, style);
  // lossOverlay adds per run [raw], train, validation: the dashed ones are the validations.
  // They are drawn over every train curve (a later run's train line had covered them).
  plot->addLayer(QStringLiteral("validation"), plot->layer(QStringLiteral("main")),
                 QCustomPlot::limAbove);
  size_t k = 0;
  for (int i = 0; i < plot->graphCount(); ++i) {
    auto* g = plot->graph(i);
    if (g->pen().style() != Qt::DashLine) continue;
    styleValidation(g, k++, s.lineWidth);
    g->setLayer(QStringLiteral("validation"));
  }
  addKey(plot, smoothing, s.lineWidth);
  figures::fitLossAxes(plot->xAxis, plot->yAxis, losses);
  // Room for the markers of the last validation (they were cut in half by the right frame).
  const QCPRange x = plot->xAxis->range();
  plot->xAxis->setRange(x.lower, x.upper + 0.02 * x.size());
}

}  // namespace depthlab::ui
