// Compare's family table: when the compared runs include imported models, per model its family,
// layers, lazy / low / effective layers by E_l (each run's thresholds) and lazy layers by
// pruning loss, as `depthlab-cli report --families` prints it, with Save CSV / Save LaTeX.
// The table itself is experiment::FamilyTable; this file only shows it.
#pragma once

#include "experiment/family_table.h"

class QGroupBox;
class QTableWidget;

namespace depthlab::ui {

/// A group box holding the table of `t` (its QTableWidget named "familyTable") and the save
/// buttons.
QGroupBox* makeFamilyBox(const experiment::FamilyTable& t);

}  // namespace depthlab::ui
