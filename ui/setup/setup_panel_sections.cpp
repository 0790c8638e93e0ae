// SetupPanel's sections (model, schemes, training, data/device/probes, sweep, footer) and the
// wiring of their editors; see setup_panel.h. Builds widgets only: what the values mean and how
// they become configs is in setup_panel.cpp.
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
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include "data/default_corpus.h"
#include "experiment/config_fields.h"
#include "experiment/presets.h"
#include "experiment/sweep.h"
#include "model/scheme_catalogue.h"
#include "plot/plot_theme.h"
#include "train/devices.h"

namespace depthlab::ui {

namespace {

// The field table's label for `path` (experiment/config_fields.h); the editor takes the path
// as its object name and the field's help as its tooltip.
QString describe(QWidget* editor, const char* path) {
  editor->setObjectName(QString::fromLatin1(path));
  const auto* field = experiment::configField(path);
  if (!field) return QString::fromLatin1(path);  // a form row without a table entry: a bug
  editor->setToolTip(QString::fromUtf8(field->help));
  return QString::fromUtf8(field->label);
}

QSpinBox* spin(int lo, int hi) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
  // A number typed outside the range becomes the nearest allowed one when the focus leaves
  // (the old value came back without a word); setup_messages.h says so while it is typed.
  s->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
  return s;
}

}  // namespace

QGroupBox* SetupPanel::makeModelBox() {
  // Model: preset, shape, norm
  auto* modelBox = new QGroupBox(tr("Model"));
  auto* mf = new QFormLayout(modelBox);
  m_preset = new QComboBox;
  for (const auto& p : experiment::presets()) {
    m_preset->addItem(QStringLiteral("%1  (%2M params)")
                          .arg(QString::fromStdString(p.name))
                          .arg(static_cast<double>(experiment::parameterCount(p.config.model)) / 1e6, 0, 'f', 2),
                      QString::fromStdString(p.name));
  }
  m_preset->setObjectName(QStringLiteral("preset"));
  m_preset->setToolTip(tr("A starting point: every field below can be changed (changed fields turn bold)"));
  for (int i = 0; i < m_preset->count(); ++i) {
    for (const auto& p : experiment::presets()) {
      if (QString::fromStdString(p.name) == m_preset->itemData(i).toString()) {
        m_preset->setItemData(i, QString::fromStdString(p.description), Qt::ToolTipRole);
      }
    }
  }
  m_name = new QLineEdit;
  m_name->setObjectName(QStringLiteral("name"));
  m_name->setToolTip(tr("Names the launch's group, its dashboard tab and its runs; must be new "
                        "(the default is the first free \"<preset> N\")"));
  connect(m_name, &QLineEdit::textEdited, this, [this](const QString& t) { m_nameEdited = !t.trimmed().isEmpty(); });
  mf->addRow(tr("Group name"), m_name);
  mf->addRow(tr("Preset"), m_preset);
  m_presetDescription = new QLabel;
  m_presetDescription->setObjectName(QStringLiteral("presetDescription"));
  m_presetDescription->setWordWrap(true);
  m_presetDescription->setStyleSheet(mutedTextStyle(palette()));
  mf->addRow(QString(), m_presetDescription);
  m_width = spin(8, 16384);
  m_depth = spin(0, 512);
  m_heads = spin(0, 256);
  m_ffn = spin(1, 65536);
  m_seq = spin(2, 8192);
  m_norm = new QComboBox; m_norm->addItems({QStringLiteral("rmsnorm"), QStringLiteral("layernorm")});
  m_embedStd = new QDoubleSpinBox; m_embedStd->setDecimals(4); m_embedStd->setRange(0.0001, 2.0);
  mf->addRow(describe(m_width, "model.dModel"), m_width);
  mf->addRow(describe(m_depth, "model.nLayers"), m_depth);
  mf->addRow(describe(m_heads, "model.nHeads"), m_heads);
  mf->addRow(describe(m_ffn, "model.dFF"), m_ffn);
  mf->addRow(describe(m_seq, "model.seqLen"), m_seq);
  mf->addRow(describe(m_norm, "model.norm"), m_norm);
  mf->addRow(describe(m_embedStd, "model.embedStd"), m_embedStd);
  return modelBox;
}

QGroupBox* SetupPanel::makeSchemeBox() {
  // Schemes (multi-select: one paired group)
  auto* schemeBox = new QGroupBox(tr("Schemes (trained as one paired group)"));
  auto* sl = new QVBoxLayout(schemeBox);
  for (const auto& e : model::schemeCatalogue()) {
    auto* cb = new QCheckBox(QString::fromStdString(e.id));
    cb->setObjectName(QStringLiteral("scheme.") + QString::fromStdString(e.id));
    if (e.experimental) cb->setText(cb->text() + tr(" (experimental)"));
    cb->setToolTip(QString::fromStdString(e.displayName + ": " + e.description + "\n" + e.reference));
    m_schemeBoxes.push_back(cb);
    sl->addWidget(cb);
  }
  return schemeBox;
}

QGroupBox* SetupPanel::makeOptionsBox() {
  // Init and branch options: apply to every scheme of the group
  auto* optionsBox = new QGroupBox(tr("Init and branch options (every scheme)"));
  auto* sl = new QVBoxLayout(optionsBox);
  m_scaledInit = new QCheckBox;
  m_scaledInit->setText(describe(m_scaledInit, "options.scaledInit"));
  m_depthScaledInit = new QCheckBox;
  m_depthScaledInit->setText(describe(m_depthScaledInit, "options.depthScaledInit"));
  m_skipInit = new QCheckBox;
  m_skipInit->setText(describe(m_skipInit, "options.skipInit"));
  m_layerScale = new QCheckBox;
  m_layerScale->setText(describe(m_layerScale, "options.layerScale"));
  m_lnsPlacement = new QComboBox;
  for (const auto& p : experiment::kLnsPlacements) m_lnsPlacement->addItem(QString::fromStdString(p));
  for (auto* w : {m_scaledInit, m_depthScaledInit, m_skipInit, m_layerScale}) sl->addWidget(w);
  auto* placement = new QHBoxLayout;
  placement->addWidget(new QLabel(describe(m_lnsPlacement, "options.lnsPlacement")));
  placement->addWidget(m_lnsPlacement, 1);
  sl->addLayout(placement);
  return optionsBox;
}

QGroupBox* SetupPanel::makeTrainingBox() {
  // Optimizer and schedule
  auto* optBox = new QGroupBox(tr("Training"));
  auto* of = new QFormLayout(optBox);
  m_optimizer = new QComboBox; m_optimizer->addItems({QStringLiteral("adam"), QStringLiteral("adamw")});
  m_lr = new QDoubleSpinBox; m_lr->setDecimals(6); m_lr->setRange(0.0, 1.0); m_lr->setSingleStep(1e-4);
  m_steps = spin(0, 10000000);
  m_warmup = spin(0, 10000000);
  // Visible, so a clone of a run trained further (its schedule shorter than its steps) says so.
  m_schedule = spin(0, 10000000);
  m_schedule->setSpecialValueText(tr("all steps"));
  m_batch = spin(0, 65536);
  m_accum = spin(0, 4096);
  of->addRow(describe(m_optimizer, "optim.optimizer"), m_optimizer);
  of->addRow(describe(m_lr, "optim.lr"), m_lr);
  of->addRow(describe(m_steps, "optim.steps"), m_steps);
  of->addRow(describe(m_schedule, "optim.scheduleSteps"), m_schedule);
  of->addRow(describe(m_warmup, "optim.warmupSteps"), m_warmup);
  of->addRow(describe(m_batch, "optim.batchSize"), m_batch);
  of->addRow(describe(m_accum, "optim.gradAccum"), m_accum);
  return optBox;
}

QGroupBox* SetupPanel::makeRunBox() {
  // Data, device, probes, seeds, checkpoints
  auto* runBox = new QGroupBox(tr("Data, device, probes"));
  auto* rf = new QFormLayout(runBox);
  m_corpus = new QLineEdit;
  m_corpus->setPlaceholderText(tr("default corpus (King James Bible)"));
  auto* pick = new QPushButton(tr("…"));
  pick->setToolTip(tr("Choose a corpus file"));
  auto* corpusRow = new QHBoxLayout;
  corpusRow->addWidget(m_corpus, 1);
  corpusRow->addWidget(pick);
  rf->addRow(describe(m_corpus, "data.corpus"), corpusRow);
  m_tokenizer = new QComboBox;
  m_tokenizer->setEditable(true);
  m_tokenizer->addItems({QStringLiteral("byte"), QStringLiteral("spm:8000"), QStringLiteral("spm:32000")});
  rf->addRow(describe(m_tokenizer, "data.tokenizer"), m_tokenizer);
  // What spm:N trains on; only spm:N trains a tokenizer, so the box is live for it alone.
  m_tokenizerSample = spin(1, 100000);
  m_tokenizerSample->setSuffix(tr(" MB"));
  rf->addRow(describe(m_tokenizerSample, "data.tokenizerSampleMB"), m_tokenizerSample);
  auto trainsTokenizer = [this](const QString& t) {
    static const QRegularExpression spmN(QStringLiteral("^spm:[0-9]+$"));
    m_tokenizerSample->setEnabled(spmN.match(t.trimmed()).hasMatch());
  };
  connect(m_tokenizer, &QComboBox::currentTextChanged, this, trainsTokenizer);
  trainsTokenizer(m_tokenizer->currentText());
  m_device = new QComboBox;
  for (const auto& d : train::availableDevices()) {
    m_device->addItem(QString::fromStdString(d.description), QString::fromStdString(d.id));
  }
  rf->addRow(describe(m_device, "run.device"), m_device);
  // Data-parallel ranks: one per GPU on CUDA (as many as this machine has), processes on the CPU.
  m_processes = spin(1, 64);
  rf->addRow(describe(m_processes, "run.processes"), m_processes);
  auto limitRanks = [this] {
    int gpus = 0;
    for (const auto& d : train::availableDevices()) gpus += d.id.rfind("cuda:", 0) == 0 ? 1 : 0;
    const bool cuda = m_device->currentData().toString().startsWith(QStringLiteral("cuda"));
    m_processes->setMaximum(cuda ? std::max(1, gpus) : 64);
    m_processes->setSuffix(cuda ? tr(" GPU(s)") : tr(" process(es)"));
  };
  connect(m_device, &QComboBox::currentIndexChanged, this, limitRanks);
  limitRanks();
  m_threads = spin(0, 256);
  rf->addRow(describe(m_threads, "run.threads"), m_threads);
  m_seed = spin(0, 1 << 30);
  rf->addRow(describe(m_seed, "run.seed"), m_seed);
  m_seeds = spin(1, 64); m_seeds->setObjectName(QStringLiteral("seeds"));
  m_seeds->setToolTip(tr("One paired group per seed: seed, seed+1, ..."));
  rf->addRow(tr("Seeds (groups)"), m_seeds);
  m_evalEvery = spin(0, 1000000);
  rf->addRow(describe(m_evalEvery, "run.evalEvery"), m_evalEvery);
  m_checkpointMinutes = new QDoubleSpinBox;
  m_checkpointMinutes->setRange(0, 10000);
  m_checkpointMinutes->setDecimals(1);
  rf->addRow(describe(m_checkpointMinutes, "run.checkpointMinutes"), m_checkpointMinutes);
  m_checkpointKeep = spin(1, 1000);
  rf->addRow(describe(m_checkpointKeep, "run.checkpointKeep"), m_checkpointKeep);
  m_forwardEvery = spin(0, 1000000);
  rf->addRow(describe(m_forwardEvery, "probes.forwardEvery"), m_forwardEvery);
  m_angularEvery = spin(0, 1000000);
  rf->addRow(describe(m_angularEvery, "probes.angularMatrixEvery"), m_angularEvery);
  m_pruningEvery = spin(0, 1000000);
  rf->addRow(describe(m_pruningEvery, "probes.pruningEvery"), m_pruningEvery);
  m_pruneSequences = spin(0, 1000000);
  m_pruneSequences->setSpecialValueText(tr("all"));
  rf->addRow(describe(m_pruneSequences, "probes.pruneSequences"), m_pruneSequences);
  m_blockPruning = new QCheckBox;
  m_blockPruning->setText(describe(m_blockPruning, "probes.blockPruningAtEnd"));
  rf->addRow(QString(), m_blockPruning);
  connect(pick, &QPushButton::clicked, this, [this] {
    auto f = QFileDialog::getOpenFileName(this, tr("Corpus"), QString(),
                                          tr("Text, JSON Lines or tokens (*.txt *.jsonl *.jsonl.gz *.jsonl.zst *.gz *.zst *.bin *.dltok);;"
                                             "All files (*)"));
    if (!f.isEmpty()) m_corpus->setText(f);
  });
  return runBox;
}

QGroupBox* SetupPanel::makeSweepBox() {
  // Sweep grid
  auto* sweepBox = new QGroupBox(tr("Sweep (comma-separated lists; empty = the value above)"));
  auto* swf = new QFormLayout(sweepBox);
  m_sweepDepth = new QLineEdit; m_sweepDepth->setObjectName(QStringLiteral("sweep.depth"));
  m_sweepDepth->setPlaceholderText(tr("e.g. 12, 24, 48"));
  m_sweepWidth = new QLineEdit; m_sweepWidth->setObjectName(QStringLiteral("sweep.width"));
  m_sweepLr = new QLineEdit; m_sweepLr->setObjectName(QStringLiteral("sweep.lr"));
  m_sweepDepth->setToolTip(tr("One group per depth (the groups' names get -L<depth>)"));
  m_sweepWidth->setToolTip(tr("One group per width (names get -d<width>)"));
  m_sweepLr->setToolTip(tr("One group per peak learning rate (names get -lr<value>)"));
  m_sweepLr->setPlaceholderText(tr("e.g. 1e-3, 3e-3"));
  m_parallel = spin(1, 16);
  m_parallel->setToolTip(tr("Groups trained at once on a GPU; CPU runs one group at a time"));
  swf->addRow(tr("Depths"), m_sweepDepth);
  swf->addRow(tr("Widths"), m_sweepWidth);
  swf->addRow(tr("Learning rates"), m_sweepLr);
  swf->addRow(tr("Parallel groups (GPU)"), m_parallel);
  return sweepBox;
}

QWidget* SetupPanel::makeFooter() {
  // What is wrong, what it will cost, and the buttons
  m_issues = new QLabel;
  m_issues->setObjectName(QStringLiteral("issues"));
  m_issues->setStyleSheet(QStringLiteral("color: #c0392b;"));
  m_issues->setWordWrap(true);
  m_estimate = new QLabel;
  m_estimate->setWordWrap(true);
  m_launch = new QPushButton(tr("Launch paired group"));
  m_launch->setObjectName(QStringLiteral("launch"));
  m_launch->setToolTip(tr("Train the checked schemes as one paired group per seed (Ctrl+Return)"));
  auto* save = new QPushButton(tr("Save…"));
  save->setToolTip(tr("Save this set-up as a JSON config (depthlab-cli train --config reads it)"));
  auto* load = new QPushButton(tr("Load…"));
  load->setToolTip(tr("Load a JSON config into the form"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(save);
  buttons->addWidget(load);
  buttons->addStretch(1);
  buttons->addWidget(m_launch);
  auto* footer = new QWidget;
  auto* v = new QVBoxLayout(footer);
  v->setContentsMargins(0, 0, 0, 0);
  v->addWidget(m_issues);
  v->addWidget(m_estimate);
  v->addLayout(buttons);
  connect(m_launch, &QPushButton::clicked, this, &SetupPanel::launch);
  connect(save, &QPushButton::clicked, this, [this] {
    auto f = QFileDialog::getSaveFileName(this, tr("Save config"), QString(), tr("JSON (*.json)"));
    if (!f.isEmpty()) saveTo(f);
  });
  connect(load, &QPushButton::clicked, this, [this] {
    auto f = QFileDialog::getOpenFileName(this, tr("Load config"), QString(), tr("JSON (*.json)"));
    if (f.isEmpty()) return;
    try {
      loadFrom(f);
    } catch (const std::exception& e) {
      m_issues->setText(QString::fromStdString(e.what()));
    }
  });
  return footer;
}

void SetupPanel::launch() {
  if (!launchEnabled()) return;
  try {
    Q_EMIT launchRequested(groups(), parallelGroups());
  } catch (const std::exception& e) {
    m_issues->setText(QString::fromStdString(e.what()));
  }
}

void SetupPanel::connectEditors() {
  connect(m_preset, &QComboBox::currentIndexChanged, this,
          [this] { applyPreset(m_preset->currentData().toString()); });
  // Every editor revalidates on change.
  for (auto* s : findChildren<QSpinBox*>()) {
    connect(s, &QSpinBox::valueChanged, this, &SetupPanel::revalidate);
    // Out of range as typed: the box's own signals wait for a value it accepts.
    if (auto* edit = s->findChild<QLineEdit*>()) connect(edit, &QLineEdit::textEdited, this, &SetupPanel::revalidate);
  }
  for (auto* s : findChildren<QDoubleSpinBox*>()) connect(s, &QDoubleSpinBox::valueChanged, this, &SetupPanel::revalidate);
  for (auto* c : findChildren<QCheckBox*>()) connect(c, &QCheckBox::toggled, this, &SetupPanel::revalidate);
  for (auto* c : findChildren<QComboBox*>()) connect(c, &QComboBox::currentTextChanged, this, &SetupPanel::revalidate);
  for (auto* e : {m_corpus, m_name, m_sweepDepth, m_sweepWidth, m_sweepLr}) {
    connect(e, &QLineEdit::textChanged, this, &SetupPanel::revalidate);
  }
}

}  // namespace depthlab::ui
