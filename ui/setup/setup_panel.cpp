// SetupPanel; see setup_panel.h.
#include "setup/setup_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>


#include "data/default_corpus.h"
#include "experiment/presets.h"
#include "experiment/sweep.h"
#include "train/devices.h"

namespace depthlab::ui {

SetupPanel::SetupPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  scroll->setWidget(body);
  outer->addWidget(scroll, 1);
  layout->addWidget(makeModelBox());
  layout->addWidget(makeSchemeBox());
  layout->addWidget(makeTrainingBox());
  layout->addWidget(makeRunBox());
  layout->addWidget(makeSweepBox());
  layout->addStretch(1);
  outer->addWidget(makeFooter());
  connectEditors();

  m_preset->setCurrentIndex(m_preset->findData(QStringLiteral("cpu-demo")));
  applyPreset(QStringLiteral("cpu-demo"));
}

void SetupPanel::applyPreset(const QString& name) {
  auto c = experiment::presetConfig(name.toStdString());
  if (c) setConfig(*c);
}

void SetupPanel::setConfig(const experiment::ExperimentConfig& c) {
  m_loading = true;
  m_base = c;
  m_width->setValue(c.model.dModel);
  m_depth->setValue(c.model.nLayers);
  m_heads->setValue(c.model.nHeads);
  m_ffn->setValue(c.model.dFF);
  m_seq->setValue(c.model.seqLen);
  m_norm->setCurrentText(QString::fromStdString(c.model.norm));
  m_embedStd->setValue(c.model.embedStd);
  setSchemes(c.schemes);
  m_scaledInit->setChecked(c.options.scaledInit);
  m_depthScaledInit->setChecked(c.options.depthScaledInit);
  m_skipInit->setChecked(c.options.skipInit);
  m_layerScale->setChecked(c.options.layerScale);
  m_lnsPlacement->setCurrentText(QString::fromStdString(c.options.lnsPlacement));
  m_optimizer->setCurrentText(QString::fromStdString(c.optim.optimizer));
  m_lr->setValue(c.optim.lr);
  m_steps->setValue(c.optim.steps);
  m_warmup->setValue(c.optim.warmupSteps);
  m_batch->setValue(c.optim.batchSize);
  m_accum->setValue(c.optim.gradAccum);
  m_corpus->setText(QString::fromStdString(c.data.corpus));
  m_tokenizer->setCurrentText(QString::fromStdString(c.data.tokenizer));
  int dev = m_device->findData(QString::fromStdString(c.run.device));
  m_device->setCurrentIndex(dev >= 0 ? dev : 0);
  m_threads->setValue(c.run.threads);
  m_seed->setValue(static_cast<int>(c.run.seed));
  m_evalEvery->setValue(c.run.evalEvery);
  m_checkpointMinutes->setValue(c.run.checkpointMinutes);
  m_checkpointKeep->setValue(c.run.checkpointKeep);
  m_forwardEvery->setValue(c.probes.forwardEvery);
  m_angularEvery->setValue(c.probes.angularMatrixEvery);
  m_pruningEvery->setValue(c.probes.pruningEvery);
  m_blockPruning->setChecked(c.probes.blockPruningAtEnd);
  m_loading = false;
  revalidate();
}

void SetupPanel::setSchemes(const std::vector<std::string>& schemes) {
  for (auto* cb : m_schemeBoxes) {
    const std::string name = cb->objectName().mid(7).toStdString();
    cb->setChecked(std::find(schemes.begin(), schemes.end(), name) != schemes.end());
  }
}

experiment::ExperimentConfig SetupPanel::config() const {
  auto c = m_base;
  c.model.dModel = m_width->value();
  c.model.nLayers = m_depth->value();
  c.model.nHeads = m_heads->value();
  c.model.dFF = m_ffn->value();
  c.model.seqLen = m_seq->value();
  c.model.norm = m_norm->currentText().toStdString();
  c.model.embedStd = m_embedStd->value();
  c.schemes.clear();
  for (auto* cb : m_schemeBoxes) {
    if (cb->isChecked()) c.schemes.push_back(cb->objectName().mid(7).toStdString());
  }
  c.options.scaledInit = m_scaledInit->isChecked();
  c.options.depthScaledInit = m_depthScaledInit->isChecked();
  c.options.skipInit = m_skipInit->isChecked();
  c.options.layerScale = m_layerScale->isChecked();
  c.options.lnsPlacement = m_lnsPlacement->currentText().toStdString();
  c.optim.optimizer = m_optimizer->currentText().toStdString();
  c.optim.lr = m_lr->value();
  c.optim.steps = m_steps->value();
  c.optim.warmupSteps = m_warmup->value();
  c.optim.batchSize = m_batch->value();
  c.optim.gradAccum = m_accum->value();
  c.data.corpus = m_corpus->text().trimmed().toStdString();
  c.data.tokenizer = m_tokenizer->currentText().trimmed().toStdString();
  c.run.device = m_device->currentData().toString().toStdString();
  c.run.threads = m_threads->value();
  c.run.seed = m_seed->value();
  c.run.evalEvery = m_evalEvery->value();
  c.run.checkpointMinutes = m_checkpointMinutes->value();
  c.run.checkpointKeep = m_checkpointKeep->value();
  c.probes.forwardEvery = m_forwardEvery->value();
  c.probes.angularMatrixEvery = m_angularEvery->value();
  c.probes.pruningEvery = m_pruningEvery->value();
  c.probes.blockPruningAtEnd = m_blockPruning->isChecked();
  return c;
}

int SetupPanel::seedCount() const { return m_seeds->value(); }

int SetupPanel::parallelGroups() const {
  return config().run.device == "cpu" ? 1 : m_parallel->value();
}

void SetupPanel::setSweep(const QString& depths, const QString& widths, const QString& lrs) {
  m_sweepDepth->setText(depths);
  m_sweepWidth->setText(widths);
  m_sweepLr->setText(lrs);
}

std::vector<experiment::ExperimentConfig> SetupPanel::groups() const {
  experiment::SweepSpec spec;
  spec.depths = experiment::parseIntList(m_sweepDepth->text().toStdString(), "sweep.depth");
  spec.widths = experiment::parseIntList(m_sweepWidth->text().toStdString(), "sweep.width");
  spec.lrs = experiment::parseDoubleList(m_sweepLr->text().toStdString(), "sweep.lr");
  spec.seeds = seedCount();
  auto base = config();
  if (base.name.empty()) base.name = base.preset.empty() ? "custom" : base.preset;
  return experiment::expandSweep(base, spec);
}

std::vector<experiment::ConfigIssue> SetupPanel::issues() const {
  auto c = config();
  if (c.data.tokenizer == "byte") c.model.vocabSize = 256;
  return experiment::validate(c);
}

bool SetupPanel::launchEnabled() const { return m_launch->isEnabled(); }
QString SetupPanel::estimateText() const { return m_estimate->text(); }

void SetupPanel::revalidate() {
  if (m_loading) return;
  auto problems = issues();
  std::vector<experiment::ExperimentConfig> grid;
  if (problems.empty()) {
    try {
      grid = groups();
    } catch (const std::exception& e) {
      std::string msg = e.what();
      const std::string field = msg.rfind("sweep.", 0) == 0 ? msg.substr(0, msg.find(':')) : "sweep";
      problems.push_back({field, msg});
    }
  }
  // Red frame on the offending editors, one message per problem.
  for (auto* w : findChildren<QWidget*>()) {
    if (!w->objectName().contains(QLatin1Char('.'))) continue;
    bool bad = false;
    for (const auto& i : problems) bad = bad || QString::fromStdString(i.field) == w->objectName();
    if (qobject_cast<QSpinBox*>(w) || qobject_cast<QDoubleSpinBox*>(w) || qobject_cast<QLineEdit*>(w) ||
        qobject_cast<QComboBox*>(w)) {
      w->setStyleSheet(bad ? QStringLiteral("border: 1px solid #c0392b;") : QString());
    }
  }
  QStringList lines;
  for (const auto& i : problems) lines << QString::fromStdString(i.message);
  m_issues->setText(lines.join(QLatin1Char('\n')));
  m_launch->setEnabled(problems.empty());
  if (problems.empty()) {
    QStringList est;
    double total = 0;
    const auto c = config();
    for (const auto& g : grid) {
      for (const auto& s : g.schemes) total += estimateRun(g, s).seconds;
    }
    for (const auto& s : c.schemes) {
      auto e = estimateRun(c, s);
      est << tr("%1: %2M params, ~%3 MB, ~%4 min")
                 .arg(QString::fromStdString(s))
                 .arg(static_cast<double>(e.params) / 1e6, 0, 'f', 2)
                 .arg(e.memoryMB, 0, 'f', 0)
                 .arg(e.seconds / 60.0, 0, 'f', 1);
    }
    QStringList names;
    for (const auto& g : grid) names << QString::fromStdString(g.name);
    est << tr("%n paired group(s), ~%1 min in all on this device: ", nullptr, static_cast<int>(grid.size()))
                   .arg(total / 60.0 / parallelGroups(), 0, 'f', 1) +
               (names.size() > 6 ? names.mid(0, 6).join(QStringLiteral(", ")) + QStringLiteral(", …")
                                 : names.join(QStringLiteral(", ")));
    m_estimate->setText(est.join(QLatin1Char('\n')));
  } else {
    m_estimate->clear();
  }
  Q_EMIT configChanged();
}

void SetupPanel::setField(const QString& field, double value) {
  for (auto* s : findChildren<QSpinBox*>()) {
    if (s->objectName() == field) s->setValue(static_cast<int>(value));
  }
  for (auto* s : findChildren<QDoubleSpinBox*>()) {
    if (s->objectName() == field) s->setValue(value);
  }
}

void SetupPanel::saveTo(const QString& path) const {
  experiment::saveConfigFile(config(), path.toStdString());
}

void SetupPanel::loadFrom(const QString& path) {
  setConfig(experiment::loadConfigFile(path.toStdString()));
}

}  // namespace depthlab::ui
