// SetupPanel: the experiment set-up form. Edits an ExperimentConfig (group name, preset, model
// shape, schemes as a multi-select, init/branch options, optimizer and schedule, corpus and
// tokenizer, device, probe cadence, seeds; the fields' editors generated from the config table,
// setup_fields.h; a named scheme set checks its schemes), validates it as you type (values, and
// what the launch needs from the disk: corpus, tokenizer model, checkpoint folder and space; a red
// message names the field; Launch is disabled while invalid), marks values that differ from the
// preset, and estimates parameters, memory and time (calibrated on this machine's earlier
// groups). Spin and combo boxes take the mouse wheel only when focused: scrolling the panel
// never edits it. Save / load as JSON. It launches nothing itself: it emits launchRequested.
#pragma once

#include <QWidget>

#include <vector>

#include <set>
#include <string>

#include "experiment/experiment_config.h"
#include "experiment/resource_estimate.h"
#include "setup/setup_fields.h"

class QCheckBox;
class QComboBox;
class QGroupBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;

namespace depthlab::ui {

class SetupPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SetupPanel(QWidget* parent = nullptr);

  experiment::ExperimentConfig config() const;
  void setConfig(const experiment::ExperimentConfig& c);
  int seedCount() const;
  /// The paired groups a launch would start: the sweep grid (depth x width x lr x seed)
  /// expanded from the form; throws ConfigError when a sweep list is malformed.
  std::vector<experiment::ExperimentConfig> groups() const;
  /// Groups to train at once (GPU only; CPU runs one group at a time).
  int parallelGroups() const;
  /// Issues of the current form (empty when valid); what the red label shows.
  std::vector<experiment::ConfigIssue> issues() const;
  bool launchEnabled() const;
  QString estimateText() const;
  /// Sets a field by name (tests and "clone this run"): e.g. "model.nHeads", 3.
  void setField(const QString& field, double value);
  void setSchemes(const std::vector<std::string>& schemes);
  /// Checks exactly the schemes of the named set (model::schemeSets()); false for an unknown id.
  bool checkSchemeSet(const std::string& setId);
  void setSweep(const QString& depths, const QString& widths, const QString& lrs);
  void saveTo(const QString& path) const;
  void loadFrom(const QString& path);  // throws ConfigError
  /// Group names in use (the store's, and launches still queued): the default group name is
  /// the first free "<preset> N", and a typed name in use is an issue.
  void setTakenGroupNames(std::set<std::string> names);
  /// The group name a launch would use now.
  QString groupName() const;
  void setGroupName(const QString& name);
  /// Measured / estimated time of this machine's earlier groups (see calibrateTime).
  void setTimeCalibration(const experiment::TimeCalibration& cpu,
                          const experiment::TimeCalibration& gpu);
  /// Config paths ("optim.lr", "scheme.lns", ...) whose value differs from the preset's.
  QStringList changedFromPreset() const;
  /// The preset's description, as the panel shows it.
  QString presetDescription() const;
  /// Launches what the form says (as the Launch button; nothing when invalid).
  void launch();
  /// Wide enough for every field without a horizontal scroll bar (the window's first width
  /// for the set-up dock).
  QSize sizeHint() const override;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 Q_SIGNALS:
  void launchRequested(const std::vector<depthlab::experiment::ExperimentConfig>& groups,
                       int parallel);
  void configChanged();

 private:
  // The panel's sections, built once by the constructor.
  QGroupBox* makeModelBox();
  QGroupBox* makeSchemeBox();
  QGroupBox* makeOptionsBox();
  QGroupBox* makeTrainingBox();
  QGroupBox* makeRunBox();
  QGroupBox* makeSweepBox();
  QGroupBox* makeAdvancedBox();  // setup_advanced.cpp: every field not placed above
  QWidget* makeFooter();
  void connectEditors();
  void applyPreset(const QString& name);
  /// Validates the form: red frames and messages on the problems, Launch enabled only when
  /// there are none, the estimate shown then (see the helpers below).
  void revalidate();
  /// Adds a problem for each spin box whose typed text is out of its range (not yet taken).
  void addTypedOutOfRange(std::vector<experiment::ConfigIssue>* problems) const;
  /// The groups a launch would start; a malformed sweep or a group name in use adds a problem.
  std::vector<experiment::ExperimentConfig> launchGrid(
      std::vector<experiment::ConfigIssue>* problems) const;
  /// Red frames on the offending editors, the messages in the issues label, Launch enabled.
  void showProblems(const std::vector<experiment::ConfigIssue>& problems);
  /// The estimate label's text for a valid form: sizes, total time, calibration.
  QString estimateFor(const std::vector<experiment::ExperimentConfig>& grid) const;
  /// Parameters and memory: a line a scheme of the form, or a line a group of a sweep.
  QStringList sizeLines(const experiment::ExperimentConfig& c,
                        const std::vector<experiment::ExperimentConfig>& grid,
                        const experiment::TimeCalibration& cal) const;
  void markChangedFields();
  void refreshDefaultName();
  void syncSchemeSet();  // the set combo names the set the checked schemes are, if any
  /// The form's config; text that is no value of its field adds an issue to `problems`.
  experiment::ExperimentConfig readForm(std::vector<experiment::ConfigIssue>* problems) const;

  QComboBox* m_preset = nullptr;
  QLabel* m_presetDescription = nullptr;
  QLineEdit* m_name = nullptr;
  bool m_nameEdited = false;  // the user typed a name: no longer the automatic default
  std::set<std::string> m_takenNames;
  experiment::TimeCalibration m_cpuCalibration, m_gpuCalibration;
  QScrollArea* m_scroll = nullptr;
  FieldEditors m_fields;  // every config field the form shows, generated or hand-made
  QSpinBox* m_seeds = nullptr;
  QComboBox *m_device = nullptr, *m_tokenizer = nullptr, *m_schemeSet = nullptr;
  QLineEdit* m_corpus = nullptr;
  QLineEdit *m_sweepDepth, *m_sweepWidth, *m_sweepLr;
  QSpinBox* m_parallel = nullptr;
  std::vector<QCheckBox*> m_schemeBoxes;
  QLabel* m_issues = nullptr;
  QLabel* m_estimate = nullptr;
  QPushButton* m_launch = nullptr;
  experiment::ExperimentConfig m_base;  // fields the form does not show come from here
  bool m_loading = false;
};

/// Rough per-run estimates for the set-up panel: experiment::estimateRun (core).
using experiment::estimateRun;
using experiment::RunEstimate;

}  // namespace depthlab::ui
