// The logit-lens figure (nostalgebraist 2020; Belrose et al., arXiv 2303.08112, Fig. 2 kind):
// for each run, layer x step, the KL divergence of the model's output from the logit lens at
// each block (what the stream after block l predicts through the final norm and head), a panel
// per run, one colour scale for all. Dark where the lens already says what the model will: where
// that dark band starts is the depth at which the prediction settles. A run probed at one step
// (an import) is one column. The CSV holds every value with its step and the top-1 agreement
// where stored. A figure of the catalogue (figure_catalogue.cpp): its row and this builder.
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

const store::LayerSeries* seriesOf(const RunMeta& r, const char* metric) {
  auto it = r.data->layers.find(metric);
  return it == r.data->layers.end() || it->second.steps.empty() ? nullptr : &it->second;
}

// The value of layer l at the k-th step of `s`, or NaN where `s` is absent or has no such step.
double valueAt(const store::LayerSeries* s, int64_t step, int l) {
  if (!s || l >= s->nLayers) return std::nan("");
  for (size_t k = 0; k < s->steps.size(); ++k) {
    if (s->steps[k] == step) {
      return s->values[k * static_cast<size_t>(s->nLayers) + static_cast<size_t>(l)];
    }
  }
  return std::nan("");
}

}  // namespace

void buildLens(QCustomPlot* plot, const FigureInput& in) {
  in.csv.header = {QStringLiteral("run"), QStringLiteral("layer"), QStringLiteral("step"),
                   QStringLiteral("kl_to_output_nats"), QStringLiteral("top1_agreement")};
  QStringList titles;
  for (const auto& r : in.runs) titles << r.label;
  const int columns = paper::panelColumns(static_cast<int>(in.runs.size()), in.style.widthPt);
  auto rects = paper::panelGrid(plot, titles, columns);
  std::vector<figures::Heatmap> maps;
  for (size_t i = 0; i < in.runs.size(); ++i) {
    const auto& run = in.runs[i];
    auto* rect = rects[i];
    rect->axis(QCPAxis::atBottom)->setLabel(QStringLiteral("step"));
    rect->axis(QCPAxis::atLeft)
        ->setLabel(i % static_cast<size_t>(columns) == 0 ? QStringLiteral("block") : QString());
    const auto* kl = seriesOf(run, metrics::kLensKl);
    if (!kl) {
      in.warnings << QStringLiteral(
                         "run %1 has no logit-lens probe (probes.lensEvery, or analyze "
                         "--probes lens)")
                         .arg(run.info.id);
      continue;
    }
    const auto* top1 = seriesOf(run, metrics::kLensTop1);
    maps.push_back(figures::layerHeatmap(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft),
                                         *kl, static_cast<int>(kl->steps.size()),
                                         metrics::kLensKl));
    for (int l = 0; l < kl->nLayers; ++l) {
      for (size_t k = 0; k < kl->steps.size(); ++k) {
        const int64_t step = kl->steps[k];
        in.csv.integer(run.info.id)
            .integer(l + 1)
            .integer(step)
            .value(kl->values[k * static_cast<size_t>(kl->nLayers) + static_cast<size_t>(l)])
            .value(valueAt(top1, step, l))
            .endRow();
      }
    }
    // Whole cells: the steps' span (half a column beyond each end), blocks 1..L.
    const double first = static_cast<double>(kl->steps.front());
    const double last = static_cast<double>(kl->steps.back());
    const double half =
        kl->steps.size() > 1 ? (last - first) / (2.0 * (kl->steps.size() - 1)) : 0.5;
    rect->axis(QCPAxis::atBottom)->setRange(first - half, last + half);
    rect->axis(QCPAxis::atLeft)->setRange(0.5, kl->nLayers + 0.5);
    for (auto type : {QCPAxis::atBottom, QCPAxis::atLeft}) rect->axis(type)->setOffset(3);
  }
  if (maps.empty()) return;
  figures::shareColourRange(maps);
  auto* bar =
      figures::heatmapColourBar(maps.front().map, QStringLiteral("KL to output (nats)"), 0, 1);
  for (const auto& m : maps) m.map->setColorScale(bar);
  paper::placeColourBar(bar, in.style);
}

}  // namespace depthlab::ui
