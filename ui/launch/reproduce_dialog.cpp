// See reproduce_dialog.h.
#include "launch/reproduce_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QSplitter>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "data/corpus.h"
#include "data/corpus_sources.h"
#include "experiment/paper_recipes.h"
#include "experiment/reproduction.h"
#include "flow_layout.h"
#include "launch/reproduce_text.h"
#include "plot/plot_theme.h"
#include "train/devices.h"

namespace depthlab::ui {

QStringList reproduceArguments(const ReproduceChoices& c) {
  QStringList a{QStringLiteral("reproduce"), c.recipe};
  if (!c.corpus.isEmpty()) a << QStringLiteral("--corpus") << c.corpus;
  if (!c.tokenizer.isEmpty()) a << QStringLiteral("--tokenizer") << c.tokenizer;
  a << QStringLiteral("--device") << c.device;
  if (!c.allSchemes) a << QStringLiteral("--schemes") << c.schemes.join(QLatin1Char(','));
  if (c.force) a << QStringLiteral("--force");
  return a;
}

QString reproduceCorpusProblem(const QString& corpus) {
  if (corpus.isEmpty()) {
    return QObject::tr(
        "Choose a corpus: the recipes read one document a row, and the lab's default "
        "corpus is one text file, one document.");
  }
  const QFileInfo f(corpus);
  if (!f.exists()) return QObject::tr("The corpus %1 does not exist.").arg(corpus);
  if (f.isDir() || data::isTokenFile(corpus.toStdString())) return {};
  data::SourceFormat format;
  data::Compression compression;
  data::classifySource(f.fileName().toStdString(), format, compression);
  if (format == data::SourceFormat::Text) {
    return QObject::tr(
               "%1 is one text file, which the recipes read as one document (one document a "
               "row, as the paper): give a .jsonl file (a document a record) or a folder of "
               "files, such as C4's en/*.json.gz.")
        .arg(f.fileName());
  }
  return {};
}

QString reproduceInputProblem(const ReproduceChoices& c) {
  if (QString corpus = reproduceCorpusProblem(c.corpus); !corpus.isEmpty()) return corpus;
  static const QRegularExpression known(QStringLiteral("^(byte|spm:.+)$"));
  if (!c.tokenizer.isEmpty()) {
    if (!known.match(c.tokenizer).hasMatch()) {
      return QObject::tr(
                 "Unknown tokenizer '%1': give byte, spm:N (train one of N pieces) or "
                 "spm:/path/spiece.model.")
          .arg(c.tokenizer);
    }
    static const QRegularExpression pieces(QStringLiteral("^spm:[0-9]+$"));
    const QString model = c.tokenizer.mid(4);
    if (c.tokenizer.startsWith(QStringLiteral("spm:")) && !pieces.match(c.tokenizer).hasMatch() &&
        !QFileInfo(model).isFile()) {
      return QObject::tr("The tokenizer model %1 does not exist.").arg(model);
    }
  }
  if (c.schemes.isEmpty()) return QObject::tr("Tick at least one scheme to train.");
  return {};
}

ReproduceDialog::ReproduceDialog(store::RunStore& store, const QString& corpus,
                                 const QString& tokenizer, QWidget* parent)
    : QDialog(parent), m_store(store) {
  setObjectName(QStringLiteral("reproduceDialog"));
  setWindowTitle(tr("Reproduce the paper"));
  m_typing = new QTimer(this);
  m_typing->setSingleShot(true);
  m_typing->setInterval(300);
  connect(m_typing, &QTimer::timeout, this, &ReproduceDialog::replan);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(makeRecipeArea(), 1);
  layout->addWidget(makeChoicesBox());
  layout->addWidget(makeCostBox());
  auto* buttons = new QDialogButtonBox;
  m_launch = buttons->addButton(tr("Launch"), QDialogButtonBox::AcceptRole);
  m_launch->setObjectName(QStringLiteral("launch"));
  m_launch->setToolTip(
      tr("Run depthlab-cli reproduce in the background; its runs appear in the "
         "Runs tab, tagged reproduce:<recipe>"));
  buttons->addButton(QDialogButtonBox::Cancel);
  connect(m_launch, &QPushButton::clicked, this, &ReproduceDialog::launch);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);

  m_corpus->setText(corpus);
  m_tokenizer->setText(tokenizer);
  connect(m_recipes, &QListWidget::currentRowChanged, this, &ReproduceDialog::showRecipe);
  m_recipes->setCurrentRow(0);
  // Large enough to read the recipe without scrolling much, within the screen it opens on.
  const QRect screen =
      (parent ? parent->screen() : QGuiApplication::primaryScreen())->availableGeometry();
  resize(std::min(1000, screen.width() * 9 / 10), std::min(820, screen.height() * 9 / 10));
}

QWidget* ReproduceDialog::makeRecipeArea() {
  auto* split = new QSplitter(Qt::Horizontal);
  m_recipes = new QListWidget;
  m_recipes->setObjectName(QStringLiteral("recipes"));
  for (const auto& r : experiment::paperRecipes()) {
    auto* item = new QListWidgetItem(QString::fromStdString(r.name), m_recipes);
    item->setToolTip(QString::fromStdString(r.title));
  }
  m_recipes->setMinimumWidth(150);
  m_details = new QTextBrowser;
  m_details->setObjectName(QStringLiteral("recipeDetails"));
  m_details->setOpenLinks(false);
  split->addWidget(m_recipes);
  split->addWidget(m_details);
  split->setStretchFactor(1, 1);
  split->setSizes({180, 800});
  split->setChildrenCollapsible(false);
  split->setMinimumHeight(160);
  return split;
}

QWidget* ReproduceDialog::makeChoicesBox() {
  auto* box = new QGroupBox(tr("Run it here"));
  auto* form = new QFormLayout(box);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  m_corpus = new QLineEdit;
  m_corpus->setObjectName(QStringLiteral("corpus"));
  m_corpus->setPlaceholderText(
      tr("a .jsonl file (a document a record) or a folder of files, "
         "such as C4's en/*.json.gz"));
  m_corpus->setToolTip(
      tr("The recipes read one document a row: a JSON Lines file (one record a "
         "document), a folder of files (one a document, or JSON Lines), a token store"));
  auto* browse = new QPushButton(tr("Browse…"));
  connect(browse, &QPushButton::clicked, this, [this] {
    const auto f = QFileDialog::getOpenFileName(
        this, tr("Corpus"), QFileInfo(m_corpus->text()).absolutePath(),
        tr("Text or JSON Lines (*.txt *.jsonl *.json *.gz *.zst);;All files (*)"));
    if (!f.isEmpty()) m_corpus->setText(f);
  });
  auto* corpusRow = new QHBoxLayout;
  corpusRow->addWidget(m_corpus, 1);
  corpusRow->addWidget(browse);
  form->addRow(tr("Corpus"), corpusRow);

  m_tokenizer = new QLineEdit;
  m_tokenizer->setObjectName(QStringLiteral("tokenizer"));
  m_tokenizer->setToolTip(
      tr("byte, spm:N (a SentencePiece model of N pieces trained on the corpus) "
         "or spm:/path/spiece.model (T5's, to compare with the paper's numbers)"));
  form->addRow(tr("Tokenizer"), m_tokenizer);

  m_device = new QComboBox;
  m_device->setObjectName(QStringLiteral("device"));
  for (const auto& d : train::availableDevices()) {
    m_device->addItem(QString::fromStdString(d.description), QString::fromStdString(d.id));
  }
  if (m_device->count() > 1)
    m_device->setCurrentIndex(1);  // the first GPU: the recipes are GPU-sized
  form->addRow(tr("Device"), m_device);

  m_schemeBox = new QWidget;
  m_schemeBox->setObjectName(QStringLiteral("schemes"));
  new FlowLayout(m_schemeBox);
  m_schemeBox->layout()->setContentsMargins(0, 0, 0, 0);
  form->addRow(tr("Schemes"), m_schemeBox);

  m_force = new QCheckBox(tr("Force"));
  m_force->setObjectName(QStringLiteral("force"));
  auto* forceWhat =
      new QLabel(tr("Start even where the plan refuses: a paper-size recipe on a CPU "
                    "(weeks of training), or a corpus smaller than the recipe reads "
                    "(read more than once, unlike the paper's C4)."));
  forceWhat->setWordWrap(true);
  form->addRow(m_force, forceWhat);

  connect(m_corpus, &QLineEdit::textChanged, m_typing, qOverload<>(&QTimer::start));
  connect(m_tokenizer, &QLineEdit::textChanged, m_typing, qOverload<>(&QTimer::start));
  connect(m_device, &QComboBox::currentIndexChanged, this, &ReproduceDialog::replan);
  connect(m_force, &QCheckBox::toggled, this, &ReproduceDialog::replan);
  return box;
}

QWidget* ReproduceDialog::makeCostBox() {
  auto* box = new QGroupBox(tr("What it will cost here"));
  auto* v = new QVBoxLayout(box);
  m_cost = new QLabel;
  m_cost->setObjectName(QStringLiteral("cost"));
  m_cost->setWordWrap(true);
  m_cost->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_refusalLabel = new QLabel;
  m_refusalLabel->setObjectName(QStringLiteral("refusal"));
  m_refusalLabel->setWordWrap(true);
  m_refusalLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_refusalLabel->setStyleSheet(QStringLiteral("color: #c00000; font-weight: bold;"));
  m_command = new QLabel;
  m_command->setObjectName(QStringLiteral("command"));
  m_command->setWordWrap(true);
  m_command->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_command->setStyleSheet(mutedTextStyle(palette()));
  v->addWidget(m_cost);
  v->addWidget(m_refusalLabel);
  v->addWidget(m_command);
  return box;
}

void ReproduceDialog::showRecipe(int index) {
  const auto& recipes = experiment::paperRecipes();
  if (index < 0 || index >= static_cast<int>(recipes.size())) return;
  const auto& r = recipes[static_cast<size_t>(index)];
  m_details->setHtml(recipeDetailsHtml(r));
  QString tokenizer;
  try {
    tokenizer = QString::fromStdString(r.config(0).data.tokenizer);
  } catch (const std::exception&) {}
  m_tokenizer->setPlaceholderText(tr("recipe's: %1 — spm:/path/spiece.model for T5's tokenizer")
                                      .arg(tokenizer.isEmpty() ? tr("byte") : tokenizer));
  for (auto* c : m_schemes) delete c;
  m_schemes.clear();
  for (const auto& s : recipeSchemes(r)) {
    auto* c = new QCheckBox(s, m_schemeBox);
    c->setObjectName(QStringLiteral("scheme_") + s);
    c->setChecked(true);
    QStringList arms;  // where the recipe trains it (Fig. 4: pre_ln twice)
    for (const auto& arm : r.arms) {
      if (std::find(arm.schemes.begin(), arm.schemes.end(), s.toStdString()) != arm.schemes.end()) {
        arms << (arm.label.empty() ? tr("the main arm") : QString::fromStdString(arm.label));
      }
    }
    c->setToolTip(tr("Train %1 (in %2)").arg(s, arms.join(QStringLiteral(", "))));
    connect(c, &QCheckBox::toggled, this, &ReproduceDialog::replan);
    m_schemeBox->layout()->addWidget(c);
    m_schemes.push_back(c);
  }
  replan();
}

bool ReproduceDialog::selectRecipe(const QString& name) {
  const auto found = m_recipes->findItems(name, Qt::MatchExactly);
  if (found.isEmpty()) return false;
  m_recipes->setCurrentItem(found.front());
  return true;
}

ReproduceChoices ReproduceDialog::choices() const {
  ReproduceChoices c;
  if (auto* item = m_recipes->currentItem()) c.recipe = item->text();
  c.corpus = m_corpus->text().trimmed();
  c.tokenizer = m_tokenizer->text().trimmed();
  c.device = m_device->currentData().toString();
  if (c.device.isEmpty()) c.device = QStringLiteral("cpu");
  for (auto* s : m_schemes) {
    if (s->isChecked())
      c.schemes << s->text();
    else
      c.allSchemes = false;
  }
  c.force = m_force->isChecked();
  return c;
}

QString ReproduceDialog::costText() const { return m_cost->text(); }

namespace {

// The plan's cost text for `c`, and its refusal ("" when it may start). A corpus that is not
// there is left out of the plan (its cost is then without the token store).
std::pair<QString, QString> planFor(store::RunStore& store, const ReproduceChoices& c) {
  experiment::ReproduceOptions o;
  if (QFileInfo::exists(c.corpus)) o.corpus = c.corpus.toStdString();
  o.tokenizer = c.tokenizer.toStdString();
  o.device = c.device.toStdString();
  if (!c.allSchemes) {
    for (const auto& s : c.schemes) o.schemes.push_back(s.toStdString());
  }
  o.force = c.force;
  o.checkCorpus = false;
  const auto& recipe = experiment::requireRecipe(c.recipe.toStdString());
  try {
    return {planCostText(experiment::planReproduction(store, recipe, o)), QString()};
  } catch (const std::exception& e) {
    QString refusal = QString::fromStdString(e.what());
    QString cost;
    if (!o.force) {
      if (recipe.paperSize && o.device == "cpu") {
        refusal += QObject::tr(" Here: choose a GPU as the device, or tick Force.");
      }
      o.force = true;  // what it would cost when forced, beside the refusal
      try {
        cost = planCostText(experiment::planReproduction(store, recipe, o));
      } catch (const std::exception&) {}
    }
    return {cost, refusal};
  }
}

}  // namespace

void ReproduceDialog::replan() {
  m_typing->stop();
  const ReproduceChoices c = choices();
  if (c.recipe.isEmpty()) return;
  const QString problem = reproduceInputProblem(c);
  auto [cost, refusal] = c.schemes.isEmpty() ? std::pair<QString, QString>() : planFor(m_store, c);
  if (!problem.isEmpty())
    refusal = refusal.isEmpty() ? problem : problem + QLatin1Char('\n') + refusal;
  if (!cost.isEmpty()) {
    cost += tr("\nAt the end: the report beside the paper's numbers, and the figures in %1")
                .arg(QFileInfo(QString::fromStdString(m_store.path()))
                         .dir()
                         .filePath(QStringLiteral("reproduce-") + c.recipe));
  }
  m_refusal = refusal;
  m_cost->setText(cost.isEmpty() ? tr("—") : cost);
  m_refusalLabel->setText(refusal);
  m_refusalLabel->setVisible(!refusal.isEmpty());
  m_launch->setEnabled(refusal.isEmpty());
  m_command->setText(tr("Runs: %1")
                         .arg(commandLine(QStringLiteral("depthlab-cli"),
                                          QStringList{QStringLiteral("--db"),
                                                      QString::fromStdString(m_store.path())} +
                                              arguments())));
}

void ReproduceDialog::launch() {
  replan();  // the store may have moved on since the last change (a run finished, another began)
  if (!m_refusal.isEmpty()) return;
  const ReproduceChoices c = choices();
  emit launchRequested(c.recipe, reproduceArguments(c));
  accept();
}

}  // namespace depthlab::ui
