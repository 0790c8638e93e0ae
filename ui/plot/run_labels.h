// What a run is called on screen and on paper: the figure style's name for the run if it has
// one, else the run's own name when the user renamed it, else its scheme's display name
// ("Pre-LN", "LNS (ours)" from the style). Labels that would repeat within one view get the
// seed (" s2") or, when the seeds agree too, the run id (" #7"), so no two legend entries of a
// view read the same. The dashboard, Compare and paper figures all label runs here.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

#include "export/figure_style.h"
#include "store/store_types.h"

namespace depthlab::ui {

/// One run's label without looking at the others.
QString runLabel(const store::RunInfo& run, const FigureStyle& style = {});
/// Every run's label, in order, distinct within the list.
QStringList runLabels(const std::vector<store::RunInfo>& runs, const FigureStyle& style = {});

}  // namespace depthlab::ui
