// See figure_builders.h.
#include "plot/figure_builders.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "plot/axis_fit.h"
#include "plot/colormaps.h"
#include "plot/plot_helpers.h"
#include "plot/series_adapter.h"
#include "store/metric_catalogue.h"

namespace depthlab::ui::figures {

int layerBars(QCPAxis* x, QCPAxis* y, const std::vector<BarSeries>& series) {
  const double width = 0.8 / static_cast<double>(std::max<size_t>(1, series.size()));
  int L = 0;
  for (size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    if (s.values.empty()) continue;
    L = std::max(L, static_cast<int>(s.values.size()));
    auto* bars = new QCPBars(x, y);
    bars->setName(s.name);
    bars->setWidth(width);
    bars->setPen(Qt::NoPen);
    bars->setBrush(s.colour);
    QVector<double> keys, values;
    for (size_t l = 0; l < s.values.size(); ++l) {
      keys << static_cast<double>(l + 1) - 0.4 + width * (static_cast<double>(k) + 0.5);
      values << s.values[l];
    }
    bars->setData(keys, values, /*alreadySorted=*/true);
    addErrorBars(bars, s.errors, QPen(QColor(30, 30, 30), 1));
  }
  useLengthAwareTicks(x, /*wholeNumbers=*/true);  // layers: never 2.5, 7.5
  return L;
}

QCPErrorBars* addErrorBars(QCPAbstractPlottable* data, const std::vector<float>& errors,
                           const QPen& pen) {
  const bool anyError =
      std::any_of(errors.begin(), errors.end(), [](float e) { return std::isfinite(e); });
  if (!anyError || static_cast<int>(errors.size()) != data->interface1D()->dataCount())
    return nullptr;
  auto* whiskers = new QCPErrorBars(data->keyAxis(), data->valueAxis());
  whiskers->removeFromLegend();
  whiskers->setDataPlottable(data);
  QVector<double> plusMinus;
  for (float e : errors) plusMinus << (std::isfinite(e) ? static_cast<double>(e) : 0.0);
  whiskers->setData(plusMinus);
  whiskers->setWhiskerWidth(0);  // no caps: near-0 deltas stay clean
  // The gap left around a graph's point marker (QCustomPlot's default 10 px hides short bars);
  // bars have no marker, their error bars start at the bar's end.
  whiskers->setSymbolGap(qobject_cast<QCPGraph*>(data) ? 4 : 0);
  whiskers->setPen(pen);
  return whiskers;
}

namespace {

// One step: the step itself as the only tick; several: the default ticker back.
void stepTicks(QCPAxis* x, const store::LayerSeries& s) {
  auto text = x->ticker().dynamicCast<QCPAxisTickerText>();
  if (s.steps.size() == 1) {
    if (!text) {
      text = QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText);
      x->setTicker(text);
    }
    text->clear();
    text->addTick(static_cast<double>(s.steps.front()), QString::number(s.steps.front()));
  } else if (text) {
    x->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    useLengthAwareTicks(x);  // as the dashboard's step axes have it
  }
}

}  // namespace

double layerCurves(QCPAxis* x, QCPAxis* y, const store::LayerSeries& s, double lineWidth,
                   int columns, std::optional<std::pair<double, double>> window,
                   const std::vector<DecimatedSeries>* overview) {
  if (s.steps.empty() || s.nLayers <= 0) return 0;
  auto* plot = x->parentPlot();
  const double from = window ? window->first : static_cast<double>(s.steps.front());
  const double to = window ? window->second : static_cast<double>(s.steps.back());
  // The loader's overview serves the whole run at up to kOverviewColumns columns; a zoom
  // (a window inside the run) or a wider panel reads the full series.
  const bool useOverview = overview && !window && columns > 0 && columns <= kOverviewColumns &&
                           overview->size() == static_cast<size_t>(s.nLayers);
  double top = 0;
  for (int l = 0; l < s.nLayers; ++l) {
    auto* g = plot->addGraph(x, y);
    g->setName(QStringLiteral("layer %1").arg(l + 1));
    g->setPen(QPen(layerColor(l, s.nLayers), lineWidth));
    if (useOverview) {
      const auto& o = (*overview)[static_cast<size_t>(l)];
      for (double v : o.values) top = std::max(top, v);
      setGraphData(g, decimateMinMax(o, from, to, columns));
    } else {
      std::vector<store::ScalarPoint> pts;  // (steps) layer l's values over training
      pts.reserve(s.steps.size());
      for (size_t i = 0; i < s.steps.size(); ++i) {
        pts.push_back(
            {s.steps[i], s.values[i * static_cast<size_t>(s.nLayers) + static_cast<size_t>(l)]});
        top = std::max(top, static_cast<double>(pts.back().value));
      }
      if (columns > 0) {
        setGraphData(g, decimateMinMax(pts, from, to, columns));
      } else {
        for (const auto& p : pts) g->addData(static_cast<double>(p.step), p.value);
      }
    }
    // One probe step (an imported model, a run's first probe): a line of one point draws
    // nothing, so each layer is a dot, and the step is the axis' one tick.
    if (s.steps.size() == 1)
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, std::max(4.0, 4 * lineWidth)));
  }
  stepTicks(x, s);
  return top;
}

namespace {

// The plot's colour scale, or a new one at (row, column) of its layout.
QCPColorScale* colourScaleOf(QCustomPlot* plot, int row, int column, bool* made) {
  *made = false;
  for (int i = 0; i < plot->plotLayout()->elementCount(); ++i) {
    if (auto* cs = qobject_cast<QCPColorScale*>(plot->plotLayout()->elementAt(i))) return cs;
  }
  auto* bar = new QCPColorScale(plot);
  plot->plotLayout()->addElement(row, column, bar);
  bar->setBarWidth(8);
  *made = true;
  return bar;
}

}  // namespace

QCPColorMap* colourMapOn(QCPAxis* x, QCPAxis* y) {
  auto* plot = x->parentPlot();
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* m = qobject_cast<QCPColorMap*>(plot->plottable(i));
    if (m && m->keyAxis() == x && m->valueAxis() == y) return m;
  }
  auto* m = new QCPColorMap(x, y);
  m->setGradient(viridisGradient());
  m->setInterpolate(false);
  return m;
}

ColourRule colourRuleFor(const std::string& metric) {
  ColourRule rule;
  for (auto kind : {metrics::Kind::PerLayer, metrics::Kind::Matrix, metrics::Kind::Scalar}) {
    if (const auto* m = metrics::find(metric, kind)) {
      rule.diverging = m->colourMap == metrics::ColourMap::Diverging;
      rule.logWhenSpread = m->scale == metrics::Scale::Log;
      rule.smallIsBright = m->colourMap == metrics::ColourMap::SmallBright;
      break;
    }
  }
  return rule;
}

namespace {

QCPColorGradient gradientOf(const ColourRule& rule) {
  return rule.diverging ? divergingGradient() : viridisGradient(rule.smallIsBright);
}

}  // namespace

Heatmap layerHeatmap(QCPAxis* x, QCPAxis* y, const store::LayerSeries& s, int maxColumns,
                     const std::string& metric) {
  Heatmap h;
  h.metric = metric;
  h.map = colourMapOn(x, y);
  h.range = fillLayerHeatmap(h.map, s, maxColumns);
  stepTicks(x, s);
  useLengthAwareTicks(y, /*wholeNumbers=*/true);  // layers
  return h;
}

Heatmap matrixHeatmap(QCPAxis* x, QCPAxis* y, const store::Matrix& m, bool rowNormalise,
                      const std::string& metric) {
  Heatmap h;
  h.metric = metric;
  h.map = colourMapOn(x, y);
  h.range = fillMatrixHeatmap(h.map, m, rowNormalise);
  useLengthAwareTicks(x, /*wholeNumbers=*/true);  // rows and columns: layers, offsets
  useLengthAwareTicks(y, /*wholeNumbers=*/true);
  return h;
}

namespace {

// `base` (a diverging gradient over [-1, 1]) with its colours moved to where a symmetric-log
// scale of half-range `limit` and linear half-width `linear` puts them, over a linear data
// range [-limit, limit]: fine levels, so the narrow band about 0 keeps its colours.
QCPColorGradient symlogGradient(QCPColorGradient base, double limit, double linear) {
  QCPColorGradient g = base;
  QMap<double, QColor> stops;
  constexpr int kStops = 48;  // per side, even in log(1 + |v| / linear)
  const double span = std::log1p(limit / linear);
  for (int i = 0; i <= kStops; ++i) {
    const double t = static_cast<double>(i) / kStops;        // scale position, 0..1
    const double v = linear * std::expm1(t * span) / limit;  // value / limit, 0..1
    for (const double sign : {-1.0, 1.0}) {
      stops[0.5 + 0.5 * sign * v] = QColor::fromRgb(base.color(sign * t, QCPRange(-1, 1)));
    }
  }
  g.setColorStops(stops);
  g.setLevelCount(4096);
  return g;
}

}  // namespace

void shareColourRange(const std::vector<Heatmap>& maps) {
  if (maps.empty()) return;
  double lo = maps.front().range.first, hi = maps.front().range.second;
  for (const auto& h : maps) {
    lo = std::min(lo, h.range.first);
    hi = std::max(hi, h.range.second);
  }
  const ColourRule rule = colourRuleFor(maps.front().metric);
  auto type = QCPAxis::stLinear;
  int clipped = 0;
  double linear = 0;  // a symmetric-log scale's linear half-width (0: linear)
  if (rule.diverging) {
    std::vector<double> magnitudes;
    for (const auto& h : maps) {
      auto* d = h.map->data();
      for (int k = 0; k < d->keySize(); ++k) {
        for (int v = 0; v < d->valueSize(); ++v) {
          const double c = d->cell(k, v);
          if (std::isfinite(c) && d->alpha(k, v) > 0) magnitudes.push_back(std::abs(c));
        }
      }
    }
    const double m =
        std::max(1e-12, magnitudes.empty() ? std::max(std::abs(lo), std::abs(hi))
                                           : divergingColourLimit(magnitudes, &clipped));
    if (clipped == 0) linear = symlogLinearWidth(std::move(magnitudes), m);
    lo = -m;
    hi = m;
  } else if (rule.logWhenSpread && lo > 0 && hi / lo >= 100) {
    type = QCPAxis::stLogarithmic;
  }
  // The only place a heatmap's gradient is set: set twice per draw (plain, then symmetric-log),
  // a map would redraw its cached image every time. Symmetric-log: the map keeps its values
  // (hover, CSV) and a linear data range; its gradient's stops sit where the symmetric-log scale
  // puts the diverging colours; heatmapColourBar draws the bar on the log scale itself.
  const QCPColorGradient gradient =
      linear > 0 ? symlogGradient(gradientOf(rule), hi, linear) : gradientOf(rule);
  for (const auto& h : maps) {
    if (linear > 0 && h.map->colorScale()) h.map->setColorScale(nullptr);
    h.map->setGradient(gradient);
    h.map->setDataScaleType(type);
    h.map->setDataRange(QCPRange(lo, hi));
    h.map->setProperty(kClippedCellsProperty, clipped);
    h.map->setProperty(kSymlogProperty, linear);
  }
}

double symlogPosition(double v, double limit, double linear) {
  const double t = std::log1p(std::abs(v) / linear) / std::log1p(limit / linear);
  return std::copysign(std::min(1.0, t), v);
}

double symlogLinearWidth(std::vector<double> magnitudes, double limit) {
  magnitudes.erase(
      std::remove_if(magnitudes.begin(), magnitudes.end(), [](double m) { return !(m > 0); }),
      magnitudes.end());
  if (magnitudes.size() < 4 || !(limit > 0)) return 0;
  const auto mid = magnitudes.begin() + static_cast<std::ptrdiff_t>(magnitudes.size() / 2);
  std::nth_element(magnitudes.begin(), mid, magnitudes.end());
  return limit >= 30 * *mid ? *mid / 4 : 0;
}

double divergingColourLimit(std::vector<double> magnitudes, int* clipped) {
  if (clipped) *clipped = 0;
  if (magnitudes.empty()) return 0;
  const size_t n = magnitudes.size(), most = n / 10;  // at most a tenth of the cells
  const size_t top = std::min(n, most + 1);
  std::partial_sort(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(top),
                    magnitudes.end(), std::greater<>());
  for (size_t k = 1; k <= most && k < n; ++k) {
    if (magnitudes[k] > 0 && magnitudes[k - 1] >= 10 * magnitudes[k]) {
      if (clipped) *clipped = static_cast<int>(k);
      return magnitudes[k];
    }
  }
  return magnitudes.front();
}

QStringList lossOverlay(QCPAxis* x, QCPAxis* y, const std::vector<LossRun>& runs,
                        const LossStyle& st) {
  auto* plot = x->parentPlot();
  // The decimated curves by their counts ("2009 of 20010 points"), in order, each count once.
  std::vector<std::pair<QString, QStringList>> byCount;
  const std::function<double(double)>* keyOf = nullptr;  // the current run's
  auto add = [&](const std::vector<store::ScalarPoint>& pts, const QString& name, const QPen& pen,
                 bool legend) -> QCPGraph* {
    if (pts.empty()) return nullptr;
    auto* g = plot->addGraph(x, y);
    g->setName(name);
    g->setPen(pen);
    if (st.columns > 0) {
      const double from = st.window ? st.window->first : static_cast<double>(pts.front().step);
      const double to = st.window ? st.window->second : static_cast<double>(pts.back().step);
      auto d = decimateMinMax(pts, from, to, st.columns);
      if (d.decimated()) {
        const QString count =
            QStringLiteral("%1 of %2 points").arg(d.keys.size()).arg(d.sourcePoints);
        auto it = std::find_if(byCount.begin(), byCount.end(),
                               [&](const auto& e) { return e.first == count; });
        if (it == byCount.end())
          byCount.emplace_back(count, QStringList{name});
        else
          it->second << name;
      }
      if (keyOf && *keyOf) {
        for (auto& k : d.keys) k = (*keyOf)(k);
      }
      setGraphData(g, d);
    } else {
      for (const auto& p : pts) {
        const double step = static_cast<double>(p.step);
        g->addData(keyOf && *keyOf ? (*keyOf)(step) : step, p.value);
      }
    }
    if (!legend) g->removeFromLegend();
    return g;
  };
  for (const auto& r : runs) {
    keyOf = &r.keyOf;
    if (st.rawUnderSmoothed) {
      QColor faint = r.colour;
      faint.setAlpha(60);
      add(r.train, r.name + st.trainSuffix + QStringLiteral(" (raw)"), QPen(faint, 1), false);
    }
    QColor trainColour = r.colour;
    trainColour.setAlpha(st.trainAlpha);
    add(st.smoothing > 0 ? smooth(r.train, st.smoothing) : r.train, r.name + st.trainSuffix,
        QPen(trainColour, st.trainWidth, r.trainStyle), true);
    if (auto* g = add(r.val, r.name + st.valSuffix, QPen(r.colour, st.valWidth, Qt::DashLine),
                      st.valInLegend)) {
      // Solid outlines: the dashed line pen broke 4-px circles into stray dashes, and Qt's dash
      // stroker per marker was a third of Compare's first frame (8 runs x 200 validations).
      if (st.valMarkers) {
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(r.colour, st.valWidth),
                                           Qt::NoBrush, 4));
      }
    }
  }
  QStringList notes;
  for (const auto& [count, names] : byCount)
    notes << names.join(QStringLiteral(", ")) + QStringLiteral(": ") + count;
  return notes;
}

namespace {

// A colour bar on symmetric-log positions in [-1, 1]: the diverging gradient evenly, ticks at
// 0, the linear width, each decade up to `limit` and `limit`, each labelled with its value.
void symlogColourBar(QCPColorScale* bar, double limit, double linear) {
  bar->setGradient(divergingGradient());
  bar->setDataScaleType(QCPAxis::stLinear);
  bar->setDataRange(QCPRange(-1, 1));
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  // The ends first, then the decades from the top, then the linear width; a mark closer than
  // a fifth of the half-bar to one already placed is left out (labels would overlap).
  std::vector<double> marks = {limit};
  for (double d = std::pow(10.0, std::floor(std::log10(limit))); d > linear; d /= 10) {
    marks.push_back(d);
  }
  marks.push_back(linear);
  std::vector<double> placed = {0.0};
  ticker->addTick(0, QStringLiteral("0"));
  for (const double v : marks) {
    const double t = symlogPosition(v, limit, linear);
    if (std::any_of(placed.begin(), placed.end(), [t](double p) { return std::abs(t - p) < 0.2; }))
      continue;
    placed.push_back(t);
    const QString text = QString::number(v, 'g', 2);
    ticker->addTick(t, text);
    ticker->addTick(-t, QStringLiteral("\u2212") + text);
  }
  bar->axis()->setTicker(ticker);
}

}  // namespace

QCPColorScale* heatmapColourBar(QCPColorMap* map, const QString& label, int row, int column) {
  auto* plot = map->parentPlot();
  bool made = false;
  auto* bar = colourScaleOf(plot, row, column, &made);
  if (made) {  // the bar lines up with the plot's axis rect
    auto* group = new QCPMarginGroup(plot);
    plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    bar->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  }
  const int clipped = map->property(kClippedCellsProperty).toInt();
  bar->setLabel(clipped > 0 ? label + QStringLiteral("\n%1 %2 beyond \u00b1%3")
                                          .arg(clipped)
                                          .arg(clipped == 1 ? QStringLiteral("cell")
                                                            : QStringLiteral("cells"))
                                          .arg(map->dataRange().upper, 0, 'g', 2)
                            : label);
  const double linear = map->property(kSymlogProperty).toDouble();
  if (linear > 0) {  // symmetric-log: the bar stands alone, on the log scale's positions
    if (map->colorScale()) map->setColorScale(nullptr);
    symlogColourBar(bar, map->dataRange().upper, linear);
    bar->setLabel(bar->label() +
                  QStringLiteral("\nsym. log, linear \u00b1%1").arg(linear, 0, 'g', 2));
    return bar;
  }
  if (map->colorScale() != bar) {
    const auto range = map->dataRange();
    const auto gradient = map->gradient();
    const auto type = map->dataScaleType();
    map->setColorScale(bar);  // linked from now on: the map takes the bar's range and colours
    bar->setGradient(gradient);
    bar->setDataScaleType(type);
    bar->setDataRange(range);
  }
  if (bar->axis()->ticker().dynamicCast<QCPAxisTickerText>()) {  // was symmetric-log
    bar->axis()->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  }
  // Decades on a log scale, plain numbers otherwise.
  const bool log = bar->dataScaleType() == QCPAxis::stLogarithmic;
  const bool logTicker = !bar->axis()->ticker().dynamicCast<QCPAxisTickerLog>().isNull();
  if (log != logTicker) {
    bar->axis()->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                               : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    bar->axis()->setNumberFormat(log ? QStringLiteral("eb") : QStringLiteral("gb"));
    bar->axis()->setNumberPrecision(log ? 0 : 6);  // "10^-2", not "1.000000·10^-2"
  }
  return bar;
}

QCPColorScale* layerColourBar(QCustomPlot* plot, int layers, int row, int column) {
  bool made = false;
  auto* bar = colourScaleOf(plot, row, column, &made);
  if (made) {
    bar->setLabel(QStringLiteral("layer"));
    bar->setGradient(viridisGradient());
  }
  bar->setDataRange(QCPRange(1, std::max(2, layers)));
  return bar;
}

}  // namespace depthlab::ui::figures
