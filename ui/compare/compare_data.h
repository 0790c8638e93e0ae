// What a comparison shows, read from the run store in one go: each run's losses and the rows of
// its per-layer profiles that Compare draws, the runs' labels, seed groups, differing config keys,
// mismatch warning, layer diagnoses, results and family tables. Read on the store poller's loader
// thread for the window (MainWindow::compareRuns), so the GUI thread only builds and draws the
// view; no widgets here, nothing drawn.
#pragma once

#include <QString>
#include <QStringList>
#include <Qt>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_comparison.h"
#include "diagnosis_table.h"
#include "experiment/family_table.h"
#include "store/run_store.h"

namespace depthlab::ui::compare {

/// One run as Compare draws it.
struct LoadedRun {
  store::RunInfo info;
  std::vector<store::ScalarPoint> lossTrain, lossVal;
  // Of the variance the rows its heatmap columns show; of the other profiles the final row
  // (at the shared step when the runs' planned lengths differ); the pruning row's errors.
  std::map<std::string, store::LayerSeries> layers;
};

struct CompareData {
  std::vector<int64_t> requested;  // the ids asked for, those gone from the store included
  std::vector<LoadedRun> runs;     // those the store still had, in the order asked
  std::map<int64_t, QString> labels;
  std::vector<analysis::SeedGroup> groups;
  std::optional<int64_t> sharedStep;  // finals are taken here when the runs' lengths differ
  analysis::ResultsTable table;
  experiment::FamilyTable families;  // rows only when an imported model is compared
  bool allImported = false;          // every run an imported model: nothing trained to plot
  std::map<std::string, std::vector<std::string>> configDiff;
  QString mismatchText;               // "" when the runs are like for like
  QStringList mismatchLabels;         // "sequence length", "steps": what they differ in
  std::vector<DiagnosisRun> diagnoses;  // each run's, at its final step
  Qt::HANDLE readOn = nullptr;          // the thread that read it (tests: not the GUI's)
};

/// The label with the run's id once: "Pre-LN (#3)", or "LNS #12" where the label has it.
QString labelWithId(const std::map<int64_t, QString>& labels, int64_t runId);

/// Reads everything Compare shows of `runIds` from `store` (ids the store lacks are skipped).
std::shared_ptr<CompareData> loadCompareData(store::RunStore& store, const std::vector<int64_t>& runIds);

}  // namespace depthlab::ui::compare
