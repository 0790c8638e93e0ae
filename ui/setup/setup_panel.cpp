// SetupPanel; see setup_panel.h.
#include "setup/setup_panel.h"
#include "setup/setup_messages.h"

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

#include <QAbstractSpinBox>
#include <QApplication>
#include <QScrollBar>
#include <QWheelEvent>

#include <variant>

#include "data/default_corpus.h"
#include "data/tokenizer.h"
#include "experiment/config_fields.h"
#include "experiment/group_names.h"
#include "experiment/preflight.h"
#include "experiment/presets.h"
#include "experiment/sweep.h"
#include "model/scheme_sets.h"
#include "train/devices.h"

namespace depthlab::ui {

SetupPanel::SetupPanel(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  m_scroll = new QScrollArea;
  m_scroll->setWidgetResizable(true);
  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  m_scroll->setWidget(body);
  outer->addWidget(m_scroll, 1);
  layout->addWidget(makeModelBox());
  layout->addWidget(makeSchemeBox());
  layout->addWidget(makeOptionsBox());
  layout->addWidget(makeTrainingBox());
  layout->addWidget(makeRunBox());
  layout->addWidget(makeSweepBox());
  layout->addWidget(makeAdvancedBox());  // last: it takes the fields no box above placed
  layout->addStretch(1);
  outer->addWidget(makeFooter());
  connectEditors();
  // The wheel scrolls the panel; it edits a spin or combo box only once that box has focus.
  for (auto* w : findChildren<QWidget*>()) {
    if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w)) {
      w->setFocusPolicy(Qt::StrongFocus);
      w->installEventFilter(this);
    }
  }

  m_preset->setCurrentIndex(m_preset->findData(QStringLiteral("cpu-demo")));
  applyPreset(QStringLiteral("cpu-demo"));
}

QSize SetupPanel::sizeHint() const {
  const QMargins outer = layout()->contentsMargins();
  const int width = m_scroll->widget()->minimumSizeHint().width() +
                    m_scroll->verticalScrollBar()->sizeHint().width() + 2 * m_scroll->frameWidth() +
                    outer.left() + outer.right();
  return {width, QWidget::sizeHint().height()};
}

bool SetupPanel::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::Wheel) {
    auto* w = qobject_cast<QWidget*>(watched);
    if (w && !w->hasFocus()) {
      QApplication::sendEvent(m_scroll->verticalScrollBar(), event);  // scroll instead
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

void SetupPanel::applyPreset(const QString& name) {
  auto c = experiment::presetConfig(name.toStdString());
  if (!c) return;
  c->name.clear();  // the group name stays the panel's own
  setConfig(*c);
}

QString SetupPanel::presetDescription() const { return m_presetDescription->text(); }

void SetupPanel::setTakenGroupNames(std::set<std::string> names) {
  if (names == m_takenNames) return;
  m_takenNames = std::move(names);
  refreshDefaultName();
  revalidate();
}

void SetupPanel::refreshDefaultName() {
  if (m_nameEdited) return;
  const std::string preset = m_base.preset.empty() ? "custom" : m_base.preset;
  // "<preset> N": the first N whose group name (and, with several seeds or a sweep, the
  // names derived from it) nobody uses.
  for (int n = 1;; ++n) {
    const std::string candidate = preset + " " + std::to_string(n);
    bool free = !m_takenNames.count(candidate);
    for (const auto& t : m_takenNames) free = free && t.rfind(candidate + "-", 0) != 0;
    if (free) {
      QSignalBlocker block(m_name);
      m_name->setText(QString::fromStdString(candidate));
      return;
    }
  }
}

QString SetupPanel::groupName() const { return m_name->text().trimmed(); }

void SetupPanel::setGroupName(const QString& name) {
  m_nameEdited = !name.isEmpty();
  {
    QSignalBlocker block(m_name);
    m_name->setText(name);
  }
  if (!m_nameEdited) refreshDefaultName();
  revalidate();
}

void SetupPanel::setTimeCalibration(const experiment::TimeCalibration& cpu,
                                    const experiment::TimeCalibration& gpu) {
  m_cpuCalibration = cpu;
  m_gpuCalibration = gpu;
  revalidate();
}

namespace {

bool sameValue(const experiment::ConfigField& f, experiment::ExperimentConfig& a,
               experiment::ExperimentConfig& b) {
  return std::visit(
      [&](auto* pa) {
        auto rb = f.ref(b);
        auto* pb = std::get<std::remove_pointer_t<decltype(pa)>*>(rb);
        return *pa == *pb;
      },
      f.ref(a));
}

}  // namespace

QStringList SetupPanel::changedFromPreset() const {
  QStringList out;
  auto preset = experiment::presetConfig(m_base.preset.empty() ? "cpu-demo" : m_base.preset);
  if (!preset) return out;
  auto now = config();
  if (now.data.tokenizer == "byte") now.model.vocabSize = preset->model.vocabSize;
  for (const auto& f : experiment::configFields()) {
    if (!findChild<QWidget*>(QString::fromStdString(f.path()))) continue;  // not on the form
    if (!sameValue(f, now, *preset)) out << QString::fromStdString(f.path());
  }
  for (const auto& s : experiment::kSchemes) {
    const bool in = std::find(now.schemes.begin(), now.schemes.end(), s) != now.schemes.end();
    const bool was =
        std::find(preset->schemes.begin(), preset->schemes.end(), s) != preset->schemes.end();
    if (in != was) out << QStringLiteral("scheme.") + QString::fromStdString(s);
  }
  return out;
}

void SetupPanel::markChangedFields() {
  auto preset = experiment::presetConfig(m_base.preset.empty() ? "cpu-demo" : m_base.preset);
  const QStringList changed = changedFromPreset();
  for (auto* w : findChildren<QWidget*>()) {
    const QString path = w->objectName();
    if (!path.contains(QLatin1Char('.')) || path.startsWith(QLatin1String("sweep."))) continue;
    const bool differs = changed.contains(path);
    if (w->property("differsFromPreset").toBool() == differs) continue;
    w->setProperty("differsFromPreset", differs);
    QFont f = w->font();
    f.setBold(differs);
    w->setFont(f);
    // The tooltip says the preset's value: strip an earlier note, add the new one.
    QString tip = w->toolTip().section(QStringLiteral("\n(changed from the preset"), 0, 0);
    if (differs && preset) {
      tip += tr("\n(changed from the preset %1)").arg(QString::fromStdString(preset->preset));
    }
    w->setToolTip(tip);
  }
}

void SetupPanel::setConfig(const experiment::ExperimentConfig& c) {
  m_loading = true;
  m_base = c;
  if (!c.name.empty())
    setGroupName(QString::fromStdString(c.name));
  else if (!m_nameEdited)
    refreshDefaultName();
  {
    QSignalBlocker block(m_preset);
    const int i = m_preset->findData(QString::fromStdString(c.preset));
    if (i >= 0) m_preset->setCurrentIndex(i);
    m_presetDescription->clear();  // the description of the preset the set-up starts from
    for (const auto& p : experiment::presets()) {
      if (p.name == c.preset) m_presetDescription->setText(QString::fromStdString(p.description));
    }
  }
  m_fields.show(c);
  setSchemes(c.schemes);
  m_loading = false;
  revalidate();
}

void SetupPanel::setSchemes(const std::vector<std::string>& schemes) {
  for (auto* cb : m_schemeBoxes) {
    const std::string name = cb->objectName().mid(7).toStdString();
    cb->setChecked(std::find(schemes.begin(), schemes.end(), name) != schemes.end());
  }
}

bool SetupPanel::checkSchemeSet(const std::string& setId) {
  const int i = m_schemeSet->findData(QString::fromStdString(setId));
  if (i <= 0) return false;
  m_schemeSet->setCurrentIndex(i);
  if (const auto* set = model::findSchemeSet(setId))
    setSchemes(set->schemes);  // again, if it was current
  return true;
}

void SetupPanel::syncSchemeSet() {
  std::set<std::string> checked;
  for (auto* cb : m_schemeBoxes) {
    if (cb->isChecked()) checked.insert(cb->objectName().mid(7).toStdString());
  }
  int match = 0;
  for (int i = 1; i < m_schemeSet->count(); ++i) {
    const auto* set = model::findSchemeSet(m_schemeSet->itemData(i).toString().toStdString());
    if (set && std::set<std::string>(set->schemes.begin(), set->schemes.end()) == checked)
      match = i;
  }
  QSignalBlocker block(m_schemeSet);
  m_schemeSet->setCurrentIndex(match);
}

experiment::ExperimentConfig SetupPanel::readForm(
    std::vector<experiment::ConfigIssue>* problems) const {
  auto c = m_base;
  c.name = m_name->text().trimmed().toStdString();
  m_fields.read(c, problems);
  c.schemes.clear();
  for (auto* cb : m_schemeBoxes) {
    if (cb->isChecked()) c.schemes.push_back(cb->objectName().mid(7).toStdString());
  }
  return c;
}

experiment::ExperimentConfig SetupPanel::config() const { return readForm(nullptr); }

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
  std::vector<experiment::ConfigIssue> typed;  // text that is no value of its field
  auto c = readForm(&typed);
  if (c.data.tokenizer == "byte") c.model.vocabSize = data::kByteVocab;
  auto out = experiment::validate(c);
  for (auto& i : typed) out.push_back(std::move(i));
  if (c.name.empty()) {
    out.push_back({"name", "Group name: give the group a name (it names its tab and its runs)."});
  } else if (m_takenNames.count(c.name)) {
    out.push_back(
        {"name", "Group name: \"" + c.name +
                     "\" is already used; every launch is its own group, so pick another name."});
  }
  for (auto& i : experiment::preflightIssues(c)) out.push_back(std::move(i));
  return out;
}

bool SetupPanel::launchEnabled() const { return m_launch->isEnabled(); }
QString SetupPanel::estimateText() const { return m_estimate->text(); }

void SetupPanel::revalidate() {
  if (m_loading) return;
  syncSchemeSet();
  auto problems = issues();
  addTypedOutOfRange(&problems);
  std::vector<experiment::ExperimentConfig> grid;
  if (problems.empty()) grid = launchGrid(&problems);
  showProblems(problems);
  if (problems.empty()) {
    m_estimate->setText(estimateFor(grid));
  } else {
    m_estimate->clear();
  }
  markChangedFields();
  Q_EMIT configChanged();
}

void SetupPanel::addTypedOutOfRange(std::vector<experiment::ConfigIssue>* problems) const {
  for (const auto* box : findChildren<QSpinBox*>()) {  // typed, not yet taken: said now
    const QString typed = typedOutOfRange(box, fieldLabel(this, box->objectName()));
    if (!typed.isEmpty())
      problems->push_back({box->objectName().toStdString(), typed.toStdString()});
  }
}

std::vector<experiment::ExperimentConfig> SetupPanel::launchGrid(
    std::vector<experiment::ConfigIssue>* problems) const {
  std::vector<experiment::ExperimentConfig> grid;
  try {
    grid = groups();
    for (const auto& g : grid) {
      if (grid.size() > 1 && m_takenNames.count(g.name)) {
        problems->push_back({"name", "Group name: the launch would make group \"" + g.name +
                                         "\", which is already used; pick another name."});
        break;
      }
    }
  } catch (const std::exception& e) {
    std::string msg = e.what();
    const std::string field = msg.rfind("sweep.", 0) == 0 ? msg.substr(0, msg.find(':')) : "sweep";
    problems->push_back({field, msg});
  }
  return grid;
}

void SetupPanel::showProblems(const std::vector<experiment::ConfigIssue>& problems) {
  // Red frame on the offending editors, one message per problem.
  for (auto* w : findChildren<QWidget*>()) {
    if (!w->objectName().contains(QLatin1Char('.')) && w->objectName() != QLatin1String("name"))
      continue;
    bool bad = false;
    for (const auto& i : problems) bad = bad || QString::fromStdString(i.field) == w->objectName();
    if (qobject_cast<QSpinBox*>(w) || qobject_cast<QDoubleSpinBox*>(w) ||
        qobject_cast<QLineEdit*>(w) || qobject_cast<QComboBox*>(w)) {
      w->setStyleSheet(bad ? QStringLiteral("border: 1px solid #c0392b;") : QString());
    }
  }
  QStringList lines;
  for (const auto& i : problems) lines << withFieldLabels(QString::fromStdString(i.message), this);
  m_issues->setText(lines.join(QLatin1Char('\n')));
  m_launch->setEnabled(problems.empty());
}

QStringList SetupPanel::sizeLines(const experiment::ExperimentConfig& c,
                                  const std::vector<experiment::ExperimentConfig>& grid,
                                  const experiment::TimeCalibration& cal) const {
  QStringList est;
  if (grid.size() <= 1) {
    for (const auto& s : c.schemes) {
      auto e = estimateRun(c, s, cal);
      est << tr("%1: %2M params, ~%3 MB")
                 .arg(QString::fromStdString(s))
                 .arg(static_cast<double>(e.params) / 1e6, 0, 'f', 2)
                 .arg(e.memoryMB, 0, 'f', 0);
    }
    return est;
  }
  // A sweep: each group's size (its schemes' largest), not the form's own shape, which
  // no group may have ("pre_ln: 1.22M params" above a sweep over depths 6 and 12).
  const size_t shown = std::min<size_t>(grid.size(), 6);
  for (size_t i = 0; i < shown; ++i) {
    experiment::RunEstimate largest;
    for (const auto& s : grid[i].schemes) {
      const auto e = estimateRun(grid[i], s, cal);
      largest.params = std::max(largest.params, e.params);
      largest.memoryMB = std::max(largest.memoryMB, e.memoryMB);
    }
    est << tr("%1: %2M params, ~%3 MB a run")
               .arg(QString::fromStdString(grid[i].name))
               .arg(static_cast<double>(largest.params) / 1e6, 0, 'f', 2)
               .arg(largest.memoryMB, 0, 'f', 0);
  }
  if (grid.size() > shown)
    est << tr("… and %n more group(s)", nullptr, static_cast<int>(grid.size() - shown));
  return est;
}

QString SetupPanel::estimateFor(const std::vector<experiment::ExperimentConfig>& grid) const {
  double total = 0;
  const auto c = config();
  const auto& cal = c.run.device == "cpu" ? m_cpuCalibration : m_gpuCalibration;
  for (const auto& g : grid) {
    for (const auto& s : g.schemes) total += estimateRun(g, s, cal).seconds;
  }
  QStringList est = sizeLines(c, grid, cal);
  QStringList names;
  for (const auto& g : grid) names << QString::fromStdString(g.name);
  est << tr("%n paired group(s), ~%1 in all on this device: ", nullptr,
            static_cast<int>(grid.size()))
                 .arg(
                     QString::fromStdString(experiment::formatDuration(total / parallelGroups()))) +
             (names.size() > 6 ? names.mid(0, 6).join(QStringLiteral(", ")) + QStringLiteral(", …")
                               : names.join(QStringLiteral(", ")));
  est << (cal.groups > 0
              ? tr("(time calibrated on %n earlier group(s) on this machine: x%1 the FLOP-rate "
                   "guess)",
                   nullptr, cal.groups)
                    .arg(cal.factor, 0, 'f', 2)
              : tr("(time: a FLOP-rate guess until a group has finished on this machine)"));
  return est.join(QLatin1Char('\n'));
}

void SetupPanel::setField(const QString& field, double value) {
  for (auto* s : findChildren<QSpinBox*>()) {
    if (s->objectName() == field) s->setValue(static_cast<int>(value));
  }
  for (auto* s : findChildren<QDoubleSpinBox*>()) {
    if (s->objectName() == field) s->setValue(value);
  }
  if (auto* e = qobject_cast<QLineEdit*>(m_fields.editor(field.toStdString()))) {
    e->setText(QString::number(value, 'g', 17));
  }
}

void SetupPanel::saveTo(const QString& path) const {
  experiment::saveConfigFile(config(), path.toStdString());
}

void SetupPanel::loadFrom(const QString& path) {
  setConfig(experiment::loadConfigOverPreset(path.toStdString()));
}

}  // namespace depthlab::ui
