// Compare's step hover, as TensorBoard's and W&B's: over the loss plot a vertical line follows
// the pointer and the tooltip lists every run's value at the nearest step it logged -- the
// train loss as drawn (smoothed) and the validation loss -- so runs are read off at one step
// without chasing each curve. Text and line only; the curves are drawn elsewhere.
#pragma once

#include <QColor>
#include <QString>

#include <functional>
#include <vector>

#include "store/store_types.h"

class QCustomPlot;

namespace depthlab::ui::compare {

struct HoverRun {
  QString label;                          // "Pre-LN (#3)"
  std::vector<store::ScalarPoint> train;  // as drawn (smoothed where the plot smooths)
  std::vector<store::ScalarPoint> val;
};

/// The point of `points` (sorted by step) whose step is nearest `step` (a tie: the later);
/// nullptr when empty.
const store::ScalarPoint* nearestPoint(const std::vector<store::ScalarPoint>& points, double step);

/// "step 120 (train smoothed, EMA 0.9)" then one line per run: "Pre-LN (#3): train 2.311 at
/// 120 · val 2.402 at 100" ("–" for a curve it has none of). `smoothing` 0: "train".
QString stepHoverText(const std::vector<HoverRun>& runs, double step, double smoothing);

/// Over `plot`'s axis rect, a vertical line at the pointer's step and a tooltip with
/// `textAt(step)`; both go when the pointer leaves the data area.
void installStepHover(QCustomPlot* plot, std::function<QString(double)> textAt);

}  // namespace depthlab::ui::compare
