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
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>
#include "data/default_corpus.h"
#include "experiment/presets.h"
#include "experiment/sweep.h"
#include "train/devices.h"

namespace depthlab::ui {

namespace {

QSpinBox* spin(int lo, int hi) {
  auto* s = new QSpinBox;
  s->setRange(lo, hi);
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
  mf->addRow(tr("Preset"), m_preset);
  m_width = spin(8, 16384); m_width->setObjectName(QStringLiteral("model.dModel"));
  m_depth = spin(0, 512); m_depth->setObjectName(QStringLiteral("model.nLayers"));
  m_heads = spin(0, 256); m_heads->setObjectName(QStringLiteral("model.nHeads"));
  m_ffn = spin(1, 65536); m_ffn->setObjectName(QStringLiteral("model.dFF"));
  m_seq = spin(2, 8192); m_seq->setObjectName(QStringLiteral("model.seqLen"));
  m_norm = new QComboBox; m_norm->addItems({QStringLiteral("rmsnorm"), QStringLiteral("layernorm")});
  m_embedStd = new QDoubleSpinBox; m_embedStd->setDecimals(4); m_embedStd->setRange(0.0001, 2.0);
  mf->addRow(tr("Width"), m_width);
  mf->addRow(tr("Depth"), m_depth);
  mf->addRow(tr("Heads"), m_heads);
  mf->addRow(tr("FFN"), m_ffn);
  mf->addRow(tr("Sequence"), m_seq);
  mf->addRow(tr("Norm"), m_norm);
  mf->addRow(tr("Embedding std"), m_embedStd);
  return modelBox;
}

QGroupBox* SetupPanel::makeSchemeBox() {
  // Schemes (multi-select: one paired group) and options
  auto* schemeBox = new QGroupBox(tr("Schemes (trained as one paired group)"));
  auto* sl = new QVBoxLayout(schemeBox);
  for (const auto& s : experiment::kSchemes) {
    auto* cb = new QCheckBox(QString::fromStdString(s));
    cb->setObjectName(QStringLiteral("scheme.") + QString::fromStdString(s));
    if (s == "lns_learnable") cb->setText(cb->text() + tr(" (experimental)"));
    m_schemeBoxes.push_back(cb);
    sl->addWidget(cb);
  }
  m_scaledInit = new QCheckBox(tr("scaled init (o/down std / sqrt(2L))"));
  m_depthScaledInit = new QCheckBox(tr("depth-scaled init (1/sqrt(2l))"));
  m_skipInit = new QCheckBox(tr("SkipInit (branch scalar, 1/sqrt(L))"));
  m_layerScale = new QCheckBox(tr("LayerScale (per-channel, 1e-4)"));
  m_lnsPlacement = new QComboBox;
  for (const auto& p : experiment::kLnsPlacements) m_lnsPlacement->addItem(QString::fromStdString(p));
  for (auto* w : {m_scaledInit, m_depthScaledInit, m_skipInit, m_layerScale}) sl->addWidget(w);
  auto* placement = new QHBoxLayout;
  placement->addWidget(new QLabel(tr("LNS placement")));
  placement->addWidget(m_lnsPlacement, 1);
  sl->addLayout(placement);
  return schemeBox;
}

QGroupBox* SetupPanel::makeTrainingBox() {
  // Optimizer and schedule
  auto* optBox = new QGroupBox(tr("Training"));
  auto* of = new QFormLayout(optBox);
  m_optimizer = new QComboBox; m_optimizer->addItems({QStringLiteral("adam"), QStringLiteral("adamw")});
  m_lr = new QDoubleSpinBox; m_lr->setDecimals(6); m_lr->setRange(0.0, 1.0); m_lr->setSingleStep(1e-4);
  m_lr->setObjectName(QStringLiteral("optim.lr"));
  m_steps = spin(0, 10000000); m_steps->setObjectName(QStringLiteral("optim.steps"));
  m_warmup = spin(0, 10000000); m_warmup->setObjectName(QStringLiteral("optim.warmupSteps"));
  m_batch = spin(0, 65536); m_batch->setObjectName(QStringLiteral("optim.batchSize"));
  m_accum = spin(0, 4096); m_accum->setObjectName(QStringLiteral("optim.gradAccum"));
  of->addRow(tr("Optimizer"), m_optimizer);
  of->addRow(tr("Peak lr"), m_lr);
  of->addRow(tr("Steps"), m_steps);
  of->addRow(tr("Warm-up"), m_warmup);
  of->addRow(tr("Batch"), m_batch);
  of->addRow(tr("Grad accumulation"), m_accum);
  return optBox;
}

QGroupBox* SetupPanel::makeRunBox() {
  // Data, device, probes, seeds, checkpoints
  auto* runBox = new QGroupBox(tr("Data, device, probes"));
  auto* rf = new QFormLayout(runBox);
  m_corpus = new QLineEdit;
  m_corpus->setPlaceholderText(tr("default corpus (King James Bible)"));
  m_corpus->setObjectName(QStringLiteral("data.corpus"));
  auto* pick = new QPushButton(tr("…"));
  auto* corpusRow = new QHBoxLayout;
  corpusRow->addWidget(m_corpus, 1);
  corpusRow->addWidget(pick);
  rf->addRow(tr("Corpus"), corpusRow);
  m_tokenizer = new QComboBox;
  m_tokenizer->setEditable(true);
  m_tokenizer->addItems({QStringLiteral("byte"), QStringLiteral("spm:8000"), QStringLiteral("spm:32000")});
  m_tokenizer->setObjectName(QStringLiteral("data.tokenizer"));
  rf->addRow(tr("Tokenizer"), m_tokenizer);
  m_device = new QComboBox;
  for (const auto& d : train::availableDevices()) {
    m_device->addItem(QString::fromStdString(d.description), QString::fromStdString(d.id));
  }
  m_device->setObjectName(QStringLiteral("run.device"));
  rf->addRow(tr("Device"), m_device);
  m_threads = spin(0, 256); rf->addRow(tr("Threads (0 = default)"), m_threads);
  m_seed = spin(0, 1 << 30); rf->addRow(tr("Seed"), m_seed);
  m_seeds = spin(1, 64); m_seeds->setObjectName(QStringLiteral("seeds"));
  rf->addRow(tr("Seeds (groups)"), m_seeds);
  m_evalEvery = spin(0, 1000000); rf->addRow(tr("Eval every"), m_evalEvery);
  m_checkpointMinutes = new QDoubleSpinBox;
  m_checkpointMinutes->setRange(0, 10000);
  m_checkpointMinutes->setDecimals(1);
  m_checkpointMinutes->setObjectName(QStringLiteral("run.checkpointMinutes"));
  m_checkpointMinutes->setToolTip(tr("Wall time between checkpoints (0 = only at the end)"));
  rf->addRow(tr("Checkpoint every (min)"), m_checkpointMinutes);
  m_checkpointKeep = spin(1, 1000);
  m_checkpointKeep->setObjectName(QStringLiteral("run.checkpointKeep"));
  m_checkpointKeep->setToolTip(tr("Checkpoints kept besides the best and the final"));
  rf->addRow(tr("Checkpoints kept"), m_checkpointKeep);
  m_forwardEvery = spin(0, 1000000); rf->addRow(tr("Variance/angular every"), m_forwardEvery);
  m_angularEvery = spin(0, 1000000); rf->addRow(tr("Angular matrix every"), m_angularEvery);
  m_pruningEvery = spin(0, 1000000); rf->addRow(tr("Pruning sweep every"), m_pruningEvery);
  m_blockPruning = new QCheckBox(tr("block pruning at the end"));
  rf->addRow(QString(), m_blockPruning);
  connect(pick, &QPushButton::clicked, this, [this] {
    auto f = QFileDialog::getOpenFileName(this, tr("Corpus"), QString(),
                                          tr("Text or tokens (*.txt *.bin);;All files (*)"));
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
  auto* save = new QPushButton(tr("Save…"));
  auto* load = new QPushButton(tr("Load…"));
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
  connect(m_launch, &QPushButton::clicked, this, [this] {
    if (!launchEnabled()) return;
    try {
      Q_EMIT launchRequested(groups(), parallelGroups());
    } catch (const std::exception& e) {
      m_issues->setText(QString::fromStdString(e.what()));
    }
  });
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

void SetupPanel::connectEditors() {
  connect(m_preset, &QComboBox::currentIndexChanged, this,
          [this] { applyPreset(m_preset->currentData().toString()); });
  // Every editor revalidates on change.
  for (auto* s : findChildren<QSpinBox*>()) connect(s, &QSpinBox::valueChanged, this, &SetupPanel::revalidate);
  for (auto* s : findChildren<QDoubleSpinBox*>()) connect(s, &QDoubleSpinBox::valueChanged, this, &SetupPanel::revalidate);
  for (auto* c : findChildren<QCheckBox*>()) connect(c, &QCheckBox::toggled, this, &SetupPanel::revalidate);
  for (auto* c : findChildren<QComboBox*>()) connect(c, &QComboBox::currentTextChanged, this, &SetupPanel::revalidate);
  for (auto* e : {m_corpus, m_sweepDepth, m_sweepWidth, m_sweepLr}) {
    connect(e, &QLineEdit::textChanged, this, &SetupPanel::revalidate);
  }
}

}  // namespace depthlab::ui
