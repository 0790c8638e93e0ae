// The words of the "Reproduce the paper…" dialog: a recipe described for reading (title,
// source, settings, schemes with the paper's perplexities, the choices it makes where the
// paper and the official code disagree) and a plan's cost as the dialog shows it. Formatting
// only: the recipes and the plan are experiment/paper_recipes' and experiment/reproduction's.
#pragma once

#include <QString>
#include <QStringList>

#include "experiment/paper_recipes.h"
#include "experiment/reproduction.h"

namespace depthlab::ui {

/// The recipe as rich text for a scrollable panel.
QString recipeDetailsHtml(const experiment::PaperRecipe& recipe);

/// The recipe's schemes over all its arms, each once, in order.
QStringList recipeSchemes(const experiment::PaperRecipe& recipe);

/// The plan's cost lines, the runs already finished, and (when nothing is left) what Launch
/// then does; one paragraph a line.
QString planCostText(const experiment::ReproductionPlan& plan);

/// `arguments` as one shell line after `program` (arguments with spaces quoted).
QString commandLine(const QString& program, const QStringList& arguments);

}  // namespace depthlab::ui
