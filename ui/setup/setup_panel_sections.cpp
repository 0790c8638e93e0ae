// SetupPanel's sections (model, schemes, training, data/device/probes, sweep, footer) and the
// wiring of their editors; see setup_panel.h. Lays out the editors the config table generates
// (setup_fields.h; the options section shows every field of the table's "options") beside the
// hand-made ones (preset, group name, scheme boxes and sets, corpus picker, tokenizer, device,
// seeds, sweep). What the values mean and how they become configs is in setup_panel.cpp.
#include "setup/setup_panel.h"
#include "setup/setup_fields.h"

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
#include "model/scheme_sets.h"
#include "plot/plot_theme.h"
#include "train/devices.h"

namespace depthlab::ui {

namespace {

QSpinBox* spin(int lo, int hi) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
  // A number typed outside the range becomes the nearest allowed one when the focus leaves
  // (the old value came back without a word); setup_messages.h says so while it is typed.
  s->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
  return s;
}

QString labelOf(const std::string& path) {
  const auto* field = experiment::configField(path);
  return field ? QString::fromUtf8(field->label) : QString::fromStdString(path);
}

// A generated editor per path, one form row each (a check box: its own text, no label).
void addFieldRows(QFormLayout* form, FieldEditors& fields, std::initializer_list<const char*> paths) {
  for (const char* path : paths) {
    QWidget* editor = fields.make(path);
    if (!editor) continue;  // a path the table lacks
    if (qobject_cast<QCheckBox*>(editor)) form->addRow(QString(), editor);
    else form->addRow(labelOf(path), editor);
  }
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
  addFieldRows(mf, m_fields, {"model.dModel", "model.nLayers", "model.nHeads", "model.dFF",
                              "model.seqLen", "model.norm", "model.embedStd"});
  return modelBox;
}

QGroupBox* SetupPanel::makeSchemeBox() {
  // Schemes (multi-select: one paired group), and the catalogue's named sets
  auto* schemeBox = new QGroupBox(tr("Schemes (trained as one paired group)"));
  auto* sl = new QVBoxLayout(schemeBox);
  m_schemeSet = new QComboBox;
  m_schemeSet->setObjectName(QStringLiteral("schemeSet"));
  m_schemeSet->setToolTip(tr("Checks exactly the schemes of a named set (train --scheme <set>)"));
  m_schemeSet->addItem(tr("(your choice)"), QString());
  for (const auto& set : model::schemeSets()) {
    QString schemes;
    for (const auto& id : set.schemes) schemes += (schemes.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromStdString(id);
    m_schemeSet->addItem(QString::fromStdString(set.displayName), QString::fromStdString(set.id));
    m_schemeSet->setItemData(m_schemeSet->count() - 1,
                             QString::fromStdString(set.description) + QStringLiteral("\n") + schemes,
                             Qt::ToolTipRole);
  }
  connect(m_schemeSet, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (const auto* set = model::findSchemeSet(m_schemeSet->itemData(i).toString().toStdString())) {
      setSchemes(set->schemes);
    }
  });
  auto* setRow = new QHBoxLayout;
  setRow->addWidget(new QLabel(tr("Set")));
  setRow->addWidget(m_schemeSet, 1);
  sl->addLayout(setRow);
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
  // Init and branch options: apply to every scheme of the group. Every field of the table's
  // "options" section, in its order: the switches first, then the values.
  auto* optionsBox = new QGroupBox(tr("Init and branch options (every scheme)"));
  auto* sl = new QVBoxLayout(optionsBox);
  auto* values = new QFormLayout;
  for (const auto& f : experiment::configFields()) {
    if (std::string(f.section) != "options") continue;
    QWidget* editor = m_fields.make(f.path());
    if (qobject_cast<QCheckBox*>(editor)) sl->addWidget(editor);
    else values->addRow(QString::fromUtf8(f.label), editor);
  }
  sl->addLayout(values);
  return optionsBox;
}

QGroupBox* SetupPanel::makeTrainingBox() {
  // Optimizer and schedule. The schedule length is visible, so a clone of a run trained
  // further (its schedule shorter than its steps) says so.
  auto* optBox = new QGroupBox(tr("Training"));
  auto* of = new QFormLayout(optBox);
  addFieldRows(of, m_fields, {"optim.optimizer", "optim.lr", "optim.steps", "optim.scheduleSteps",
                              "optim.warmupSteps", "optim.batchSize", "optim.gradAccum"});
  return optBox;
}

QGroupBox* SetupPanel::makeRunBox() {
  // Data, device, probes, seeds, checkpoints
  auto* runBox = new QGroupBox(tr("Data, device, probes"));
  auto* rf = new QFormLayout(runBox);
  m_corpus = qobject_cast<QLineEdit*>(m_fields.make("data.corpus"));
  m_corpus->setPlaceholderText(tr("default corpus (King James Bible)"));
  auto* pick = new QPushButton(tr("…"));
  pick->setToolTip(tr("Choose a corpus file"));
  auto* corpusRow = new QHBoxLayout;
  corpusRow->addWidget(m_corpus, 1);
  corpusRow->addWidget(pick);
  rf->addRow(labelOf("data.corpus"), corpusRow);
  m_tokenizer = new QComboBox;  // an editable list: byte, spm:N or a model's path
  m_tokenizer->setEditable(true);
  m_tokenizer->addItems({QStringLiteral("byte"), QStringLiteral("spm:8000"), QStringLiteral("spm:32000")});
  m_fields.add("data.tokenizer", m_tokenizer);
  rf->addRow(labelOf("data.tokenizer"), m_tokenizer);
  // What spm:N trains on; only spm:N trains a tokenizer, so the box is live for it alone.
  addFieldRows(rf, m_fields, {"data.tokenizerSampleMB"});
  auto trainsTokenizer = [this](const QString& t) {
    static const QRegularExpression spmN(QStringLiteral("^spm:[0-9]+$"));
    m_fields.editor("data.tokenizerSampleMB")->setEnabled(spmN.match(t.trimmed()).hasMatch());
  };
  connect(m_tokenizer, &QComboBox::currentTextChanged, this, trainsTokenizer);
  trainsTokenizer(m_tokenizer->currentText());
  m_device = new QComboBox;  // this machine's devices (cpu, cuda:N), by description
  for (const auto& d : train::availableDevices()) {
    m_device->addItem(QString::fromStdString(d.description), QString::fromStdString(d.id));
  }
  m_fields.add("run.device", m_device);
  rf->addRow(labelOf("run.device"), m_device);
  // Data-parallel ranks: one per GPU on CUDA (as many as this machine has), processes on the CPU.
  addFieldRows(rf, m_fields, {"run.processes"});
  auto limitRanks = [this] {
    auto* ranks = qobject_cast<QSpinBox*>(m_fields.editor("run.processes"));
    int gpus = 0;
    for (const auto& d : train::availableDevices()) gpus += d.id.rfind("cuda:", 0) == 0 ? 1 : 0;
    const bool cuda = m_device->currentData().toString().startsWith(QStringLiteral("cuda"));
    ranks->setMaximum(cuda ? std::max(1, gpus) : static_cast<int>(editorRange(*experiment::configField("run.processes")).second));
    ranks->setSuffix(cuda ? tr(" GPU(s)") : tr(" process(es)"));
  };
  connect(m_device, &QComboBox::currentIndexChanged, this, limitRanks);
  limitRanks();
  addFieldRows(rf, m_fields, {"run.threads", "run.seed"});
  m_seeds = spin(1, 64); m_seeds->setObjectName(QStringLiteral("seeds"));
  m_seeds->setToolTip(tr("One paired group per seed: seed, seed+1, ..."));
  rf->addRow(tr("Seeds (groups)"), m_seeds);
  addFieldRows(rf, m_fields, {"run.evalEvery", "run.checkpointMinutes", "run.checkpointKeep",
                              "probes.forwardEvery", "probes.angularMatrixEvery",
                              "probes.pruningEvery", "probes.pruneSequences",
                              "probes.blockPruningAtEnd"});
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
  for (auto* e : {m_name, m_sweepDepth, m_sweepWidth, m_sweepLr}) {
    connect(e, &QLineEdit::textChanged, this, &SetupPanel::revalidate);
  }
  for (const auto& [field, editor] : m_fields.all()) {  // the table's text fields: corpus, seed
    if (auto* e = qobject_cast<QLineEdit*>(editor)) connect(e, &QLineEdit::textChanged, this, &SetupPanel::revalidate);
  }
}

}  // namespace depthlab::ui
