// CompareView: side-by-side comparison of any stored runs (schemes, sizes, seeds): overlaid
// loss curves with one colour per scheme (or per run, or per value of a differing config key);
// final per-layer profiles (variance, adjacent angular distance, pruning delta) overlaid, by
// layer or by relative depth; a difference heatmap of per-layer variance (the two sides chosen
// by the user; default Pre-LN vs LNS of the same seed) on blue-white-red centred at 0;
// seed groups with mean and a chosen band plus Welch's t-test and a bootstrap interval on the
// final validation loss; the config keys that differ; final loss against depth per scheme
// with the LNS gain; and a Table-1-style results table (CSV / LaTeX). Missing metrics are
// listed, never fatal. Runs of different corpus, tokenizer, sequence length or steps get a
// warning above everything (analysis::mismatchWarning); the loss plot's hover lists every
// run's value at the step; each run's layer diagnosis (compare_diagnosis.h) closes the page.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "analysis/run_comparison.h"
#include "compare/compare_data.h"
#include "compare/compare_diagnosis.h"
#include "compare/compare_hover.h"
#include "experiment/family_table.h"
#include "store/run_store.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QCustomPlot;
class QLabel;
class QTableWidget;
class QCPTextElement;
class QCPAxis;

namespace depthlab::ui {

class CompareView : public QWidget {
  Q_OBJECT
 public:
  /// Reads the runs from `store` here and shows them (tests, a store in memory).
  CompareView(store::RunStore& store, std::vector<int64_t> runIds, QWidget* parent = nullptr);
  /// A comparison whose data is read elsewhere (the window: on the store poller's loader
  /// thread): says it is reading until setData brings the data.
  explicit CompareView(std::vector<int64_t> runIds, QWidget* parent = nullptr);
  /// Builds the view from what loadCompareData read and draws it (once; later calls do nothing).
  void setData(std::shared_ptr<compare::CompareData> data);
  /// The read failed: says so in place of the comparison.
  void setLoadError(const QString& message);
  /// Whether setData has built the view (the accessors below answer empty before).
  bool isLoaded() const { return m_loaded; }
  /// The thread that read its data (tests: the loader's, not the GUI's); null before.
  Qt::HANDLE readOn() const { return m_readOn; }

  void redraw();
  /// The runs it shows, by id (those the store still had when it loaded).
  std::vector<int64_t> runIds() const {
    if (!m_loaded) return m_requested;  // while it reads: those asked for
    std::vector<int64_t> ids;
    for (const auto& r : m_runs) ids.push_back(r.info.id);
    return ids;
  }
  const std::map<QString, QCustomPlot*>& plots() const { return m_plots; }
  QString missingText() const;
  /// The warning that the runs differ in corpus, tokenizer, sequence length or steps ("" when
  /// they do not), as the window shows it above the plots and before the LNS gain.
  QString mismatchText() const;
  /// The loss plot's hover at `step`: every run's (smoothed) train and validation loss at the
  /// nearest step it logged.
  QString stepHoverText(double step) const;
  QString statsText() const;
  const analysis::ResultsTable& resultsTable() const { return m_table; }
  QTableWidget* configDiffTable() const { return m_diff; }
  QTableWidget* resultsView() const { return m_results; }
  /// Colours curves by a differing config key ("" = by scheme, "#run" = one colour per run).
  void setColorBy(const QString& key);
  /// The difference heatmap's sides: it shows variance of `b` minus variance of `a`.
  void setDifferencePair(int64_t a, int64_t b);
  std::pair<int64_t, int64_t> differencePair() const;
  /// The difference heatmap's title ("variance: LNS s1 minus Pre-LN s1").
  QString differenceTitle() const;
  /// Each run's label (renamed runs by their name), by run id.
  QString labelOf(int64_t runId) const;
  /// The label with the run's id once: "Pre-LN (#3)", or "LNS #12" where the label has it.
  QString labelWithId(int64_t runId) const;

 Q_SIGNALS:
  /// setData has built and drawn the view.
  void loaded();

 private:
  using Loaded = compare::LoadedRun;
  void takeData(compare::CompareData&& data);
  QWidget* makeControls();
  void addPlots(QGridLayout* grid);
  void addTables(QGridLayout* grid);
  QColor colorOf(const store::RunInfo& run) const;
  void drawMissing();
  void drawLoss();
  void drawConfigDiff();
  void drawResultsTable();
  void drawSeedBands(QCustomPlot* loss);
  void drawProfiles();
  void drawHeatmaps();
  void drawDifference();
  static QString latestStepOf(const Loaded& run);  // "step 600", or "imported"
  // The difference map's x axis: steps, or one tick naming each side's latest probe.
  void setDifferenceStepAxis(QCPAxis* x, const std::optional<QString>& snapshotTick);
  void drawGroups();        // the seed groups' plot and statistics, then drawDepthScaling
  QString groupTestLine() const;  // Welch's t-test of the first two groups of two seeds or more
  void drawDepthScaling();  // final loss against depth per scheme, the LNS gain

  std::vector<int64_t> m_requested;
  bool m_loaded = false;
  Qt::HANDLE m_readOn = nullptr;
  QLabel* m_loading = nullptr;  // "Reading 3 runs…" until the data is in
  std::vector<Loaded> m_runs;
  std::vector<std::string> m_profiles;  // the final profiles shown (profiles() some run has)
  std::vector<analysis::SeedGroup> m_groups;
  std::optional<int64_t>
      m_sharedStep;  // the step finals are taken at when the runs' lengths differ
  analysis::ResultsTable m_table;
  experiment::FamilyTable m_families;  // rows only when an imported model is compared
  // Every run an imported model: the training panels (loss, seeds, depth, statistics, results,
  // variance over steps) have nothing to show and are hidden; profiles, families and the
  // diagnosis stay.
  bool m_allImported = false;
  std::map<QString, QCustomPlot*> m_plots;
  QCheckBox* m_relativeDepth = nullptr;
  QComboBox* m_band = nullptr;
  QComboBox* m_colorBy = nullptr;  // "scheme" or a config key that differs
  QComboBox* m_diffA = nullptr;    // the difference heatmap's sides (run ids)
  QComboBox* m_diffB = nullptr;
  QCPTextElement* m_diffTitle = nullptr;
  std::map<int64_t, QString> m_labels;
  std::map<std::string, std::vector<std::string>> m_configDiff;
  QLabel* m_missing = nullptr;
  QLabel* m_mismatch = nullptr;
  QString m_mismatchText;
  QStringList m_mismatchLabels;  // "sequence length", "steps": what the runs differ in
  QCPTextElement* m_depthWarning = nullptr;  // over the depth-scaling panel
  std::vector<compare::HoverRun> m_hover;         // the loss curves as drawn, for the hover
  std::vector<compare::DiagnosisRun> m_diagnoses;  // each run's, at its final step
  QLabel* m_stats = nullptr;
  QLabel* m_gain = nullptr;
  QTableWidget* m_diff = nullptr;
  QTableWidget* m_results = nullptr;
};

}  // namespace depthlab::ui
