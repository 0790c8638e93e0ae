// The value-axis fits of the per-layer bar charts and profiles and of the loss panels (declared
// in figure_builders.h): ranges with headroom over the points and their error bars; the few
// points ten times above all others, and loss spikes above where every run started, run off the
// axis with their values written beside them. Draws no data.
#include <qcustomplot.h>

#include <QFontMetricsF>
#include <QPointer>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "plot/figure_builders.h"
#include "plot/plot_helpers.h"

namespace depthlab::ui::figures {

namespace {

// One point of a bar chart or a profile (a bar's top, a graph's point) and its error (0 where
// none).
struct DrawnPoint {
  QCPAbstractPlottable* data;
  double key, value, error;
};

std::vector<DrawnPoint> pointsOn(QCPAxis* y) {
  std::vector<DrawnPoint> out;
  auto* plot = y->parentPlot();
  std::map<QCPAbstractPlottable*, QCPErrorBars*> errorsOf;
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* e = qobject_cast<QCPErrorBars*>(plot->plottable(i)); e && e->valueAxis() == y) {
      errorsOf[e->dataPlottable()] = e;
    }
  }
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* p = plot->plottable(i);
    if (p->valueAxis() != y || !(qobject_cast<QCPBars*>(p) || qobject_cast<QCPGraph*>(p))) continue;
    const auto it = errorsOf.find(p);
    const auto* data = p->interface1D();
    for (int k = 0; k < data->dataCount(); ++k) {
      const double v = data->dataMainValue(k);
      if (!std::isfinite(v)) continue;
      double e = 0;
      if (it != errorsOf.end() && k < it->second->dataCount())
        e = it->second->data()->at(k).errorPlus;
      out.push_back({p, data->dataMainKey(k), v, std::isfinite(e) ? e : 0.0});
    }
  }
  return out;
}

// Positions `p` at plot key `key` on `x` and at `ratio` of the axis rect from its top (from its
// bottom where `up` is false).
void placeAtFrame(QCPItemPosition* p, QCPAxis* x, QCPAxis* y, double key, double ratio, bool up) {
  p->setAxes(x, y);
  p->setAxisRect(y->axisRect());
  p->setTypeX(QCPItemPosition::ptPlotCoords);
  p->setTypeY(QCPItemPosition::ptAxisRectRatio);
  p->setCoords(key, up ? ratio : 1 - ratio);
}

// A fit's text at `key` against the top frame (the bottom one where `up` is false), in a darker
// `colour`, `stacked` lines from the frame; `horizontal` says which side of `key` it starts.
QCPItemText* addFitLabel(QCPAxis* x, QCPAxis* y, double key, bool up, Qt::Alignment horizontal,
                         const QString& text, const QColor& colour, int stacked) {
  auto* label = new QCPItemText(y->parentPlot());
  placeAtFrame(label->position, x, y, key, 0, up);
  label->setPositionAlignment(horizontal | (up ? Qt::AlignTop : Qt::AlignBottom));
  label->setText(text);
  label->setColor(colour.darker(140));
  label->setClipToAxisRect(true);
  label->setProperty(kFitMarkProperty, true);
  label->setProperty(kStackedLinesProperty, up ? stacked : -stacked);
  setMarkFont(label, y->tickLabelFont());
  return label;
}

// A point running off the top (or bottom) of the axis: its value beside it in its colour,
// `stacked` lines below (above) the frame (the values of one layer stack in series order); a
// bar also gets a white break across it near the frame, and its value goes right of its
// layer's group (l - 0.4 .. l + 0.4).
void markOffScale(QCPAxis* x, QCPAxis* y, const DrawnPoint& point, int stacked) {
  auto* plot = y->parentPlot();
  const bool up = point.value > 0;
  auto place = [&](QCPItemPosition* p, double key, double ratio) {
    placeAtFrame(p, x, y, key, ratio, up);
  };
  auto* bars = qobject_cast<QCPBars*>(point.data);
  QColor colour = point.data->pen().color();
  if (bars) {
    const double half = bars->width() / 2;
    auto* cut = new QCPItemLine(plot);
    place(cut->start, point.key - half - 0.03, 0.09);
    place(cut->end, point.key + half + 0.03, 0.05);
    cut->setPen(QPen(Qt::white, 3));
    cut->setProperty(kFitMarkProperty, true);
    colour = bars->brush().color();
  }
  addFitLabel(x, y, bars ? std::round(point.key) + 0.42 : point.key, up, Qt::AlignLeft,
              QString::number(point.value, 'g', 3), colour, stacked);
}

// Fits the linear value axis `y` over its bars' and graphs' points, their error bars and
// `keepInView`, with 5% headroom; points 10x or more above all others (at most a tenth) run
// off it, marked (markOffScale). Returns their number.
int fitValuesOverOutliers(QCPAxis* x, QCPAxis* y, const std::vector<double>& keepInView) {
  auto* plot = y->parentPlot();
  for (int i = plot->itemCount() - 1; i >= 0; --i) {  // the last fit's marks
    if (plot->item(i)->property(kFitMarkProperty).toBool()) plot->removeItem(i);
  }
  y->rescale();  // bars from 0, every point and error bar's ends
  QCPRange r = y->range();
  if (y->scaleType() == QCPAxis::stLogarithmic) {
    if (r.lower > 0 && r.upper > r.lower)
      y->setRange(r.lower, r.upper * std::pow(r.upper / r.lower, 0.05));
    return 0;
  }
  const auto points = pointsOn(y);
  std::vector<double> magnitudes;
  bool bars = false;  // bars stand on 0; graphs' points get room below too
  for (const auto& p : points) {
    magnitudes.push_back(std::abs(p.value));
    bars = bars || qobject_cast<QCPBars*>(p.data);
  }
  int clipped = 0;
  const double limit = divergingColourLimit(magnitudes, &clipped);
  if (clipped > 0) {  // the range of the others (and 0 under bars)
    // (members set one by one: QCPRange's constructor swaps a lower above the upper)
    r.lower = bars ? 0.0 : INFINITY;
    r.upper = bars ? 0.0 : -INFINITY;
    for (const auto& p : points) {
      if (std::abs(p.value) > limit) continue;
      r.lower = std::min(r.lower, p.value - p.error);
      r.upper = std::max(r.upper, p.value + p.error);
    }
  }
  for (double v : keepInView) {
    if (std::isfinite(v)) r.lower = std::min(r.lower, v), r.upper = std::max(r.upper, v);
  }
  const double pad = 0.05 * (r.size() > 0 ? r.size() : std::max(1.0, std::abs(r.upper)));
  y->setRange(r.lower < 0 || !bars ? r.lower - pad : r.lower, r.upper + pad);
  if (clipped > 0) {
    // (layer, upwards) -> values so far: a bar's layer is its group's (l - 0.4 .. l + 0.4), a
    // graph point's its key (l, or l / L on a relative axis).
    std::map<std::pair<long long, bool>, int> perLayer;
    for (const auto& p : points) {
      if (std::abs(p.value) <= limit) continue;
      const long long layer =
          qobject_cast<QCPBars*>(p.data) ? 1000 * std::llround(p.key) : std::llround(p.key * 1000);
      markOffScale(x, y, p, perLayer[{layer, p.value > 0}]++);
    }
  }
  return clipped;
}

}  // namespace

namespace {

// resetZoom's fit for these axes: `fit` while both still exist (a plot that rebuilt its axis
// rects since), else every axis rescaled.
void setAxesRefit(QCPAxis* x, QCPAxis* y, std::function<void(QCPAxis*, QCPAxis*)> fit) {
  auto* plot = y->parentPlot();
  setRefit(plot, [plot, px = QPointer<QCPAxis>(x), py = QPointer<QCPAxis>(y), fit] {
    if (px && py)
      fit(px, py);
    else
      plot->rescaleAxes();
  });
}

}  // namespace

int fitLayerBarAxes(QCPAxis* x, QCPAxis* y, int layers, const std::vector<double>& keepInView) {
  setAxesRefit(x, y, [layers, keepInView](QCPAxis* a, QCPAxis* b) {
    fitLayerBarAxes(a, b, layers, keepInView);
  });
  x->setRange(0.4, std::max(1, layers) + 0.6);
  return fitValuesOverOutliers(x, y, keepInView);
}

int fitLayerProfileAxes(QCPAxis* x, QCPAxis* y, double keyMargin) {
  setAxesRefit(x, y, [keyMargin](QCPAxis* a, QCPAxis* b) { fitLayerProfileAxes(a, b, keyMargin); });
  x->rescale();
  const QCPRange k = x->range();
  x->setRange(k.lower - keyMargin, k.upper + keyMargin);
  return fitValuesOverOutliers(x, y, {});
}

namespace {

// A loss run's highest finite point (train or validation): its step, x key and value.
struct LossPeak {
  QString name;
  QColor colour;
  int64_t step = 0;
  double key = 0, value = -INFINITY;
};

// The fit of fitLossAxes once its runs are reduced to `start` (the highest starting loss) and
// their peaks.
int fitLossRange(QCPAxis* x, QCPAxis* y, double start, const std::vector<LossPeak>& peaks,
                 bool fitKeys) {
  auto* plot = y->parentPlot();
  for (int i = plot->itemCount() - 1; i >= 0; --i) {  // the last fit's marks on these axes
    auto* item = plot->item(i);
    if (!item->property(kFitMarkProperty).toBool()) continue;
    auto* t = qobject_cast<QCPItemText*>(item);
    if (t && t->position->valueAxis() == y) plot->removeItem(i);
  }
  if (fitKeys) x->rescale();
  y->rescale();
  const bool log = y->scaleType() == QCPAxis::stLogarithmic;
  // On a log axis the same rule in decades.
  auto to = [log](double v) { return log ? std::log10(v) : v; };
  auto from = [log](double t) { return log ? std::pow(10.0, t) : t; };
  const QCPRange r = y->range();
  if ((log && (r.lower <= 0 || start <= 0)) || !std::isfinite(start) || r.upper <= r.lower) {
    return 0;
  }
  const double lo = to(r.lower), hi = to(r.upper), top = to(std::max(start, r.lower));
  // A spike less than a quarter of the curves' span above the start stays in view.
  if (hi <= top + 0.25 * (top - lo)) {
    const double room = 0.05 * (hi - lo);
    y->setRange(from(lo - room), from(hi + room));
    return 0;
  }
  const double pad = 0.05 * std::max(top - lo, 1e-9);
  y->setRange(from(lo - pad), from(top + pad));
  int stacked = 0;
  const QCPRange keys = x->range();
  for (const auto& p : peaks) {
    if (!(to(p.value) > top + pad)) continue;
    // Left of its peak when the peak sits in the right third (the text would leave the frame).
    const bool right = keys.size() > 0 && p.key > keys.lower + 0.66 * keys.size();
    auto* label = addFitLabel(x, y, p.key, /*up=*/true, right ? Qt::AlignRight : Qt::AlignLeft,
                              QStringLiteral("\u2191 %1: %2 at step %3")
                                  .arg(p.name, QString::number(p.value, 'g', 3))
                                  .arg(p.step),
                              p.colour, stacked++);
    label->setVisible(!userZoomed(plot));
  }
  return stacked;
}

}  // namespace

int fitLossAxes(QCPAxis* x, QCPAxis* y, const std::vector<LossRun>& runs, bool fitKeys) {
  double start = -INFINITY;
  std::vector<LossPeak> peaks;
  for (const auto& r : runs) {
    const auto& first = r.train.empty() ? r.val : r.train;
    for (const auto& p : first) {
      if (std::isfinite(p.value)) {
        start = std::max(start, p.value);
        break;
      }
    }
    LossPeak peak{r.name, r.colour};
    for (const auto* series : {&r.train, &r.val}) {
      for (const auto& p : *series) {
        if (std::isfinite(p.value) && p.value > peak.value) {
          peak.value = p.value;
          peak.step = p.step;
        }
      }
    }
    if (!std::isfinite(peak.value)) continue;
    peak.key = r.keyOf ? r.keyOf(static_cast<double>(peak.step)) : static_cast<double>(peak.step);
    peaks.push_back(peak);
  }
  setAxesRefit(x, y, [start, peaks](QCPAxis* a, QCPAxis* b) {
    fitLossRange(a, b, start, peaks, /*fitKeys=*/true);
  });
  return fitLossRange(x, y, start, peaks, fitKeys);
}

void setMarkFont(QCPItemText* label, const QFont& font) {
  label->setFont(font);
  // Stacked by padding (no background: it would cover the value above): whole lines of
  // this font on the plot's device, as the axes measure their labels.
  const int stacked = label->property(kStackedLinesProperty).toInt();
  const int line = static_cast<int>(std::ceil(QFontMetricsF(font, label->parentPlot()).height()));
  label->setPadding(QMargins(1, std::max(0, stacked) * line, 1, std::max(0, -stacked) * line));
}

}  // namespace depthlab::ui::figures
