// See run_labels.h.
#include "plot/run_labels.h"

#include <map>

#include "experiment/group_names.h"

namespace depthlab::ui {

QString runLabel(const store::RunInfo& run, const FigureStyle& style) {
  const QString named = style.runNames.value(run.id);
  if (!named.isEmpty()) return named;
  if (experiment::isRenamed(run.name, run.groupName, run.scheme, run.seed)) {
    return QString::fromStdString(run.name);
  }
  if (run.scheme.empty()) return QString::fromStdString(run.name);
  return schemeDisplayName(style, QString::fromStdString(run.scheme));
}

QStringList runLabels(const std::vector<store::RunInfo>& runs, const FigureStyle& style) {
  QStringList labels;
  for (const auto& r : runs) labels << runLabel(r, style);
  // Repeated labels: by seed where the seeds tell them apart, else by id.
  std::map<QString, std::vector<size_t>> same;
  for (size_t i = 0; i < runs.size(); ++i) same[labels[static_cast<int>(i)]].push_back(i);
  for (const auto& [label, idx] : same) {
    if (idx.size() < 2) continue;
    std::map<int64_t, int> seeds;
    for (size_t i : idx) ++seeds[runs[i].seed];
    for (size_t i : idx) {
      QString& l = labels[static_cast<int>(i)];
      if (seeds[runs[i].seed] == 1) l += QStringLiteral(" s%1").arg(runs[i].seed);
      else l += QStringLiteral(" #%1").arg(runs[i].id);
    }
  }
  return labels;
}

}  // namespace depthlab::ui
