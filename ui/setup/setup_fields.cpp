// The set-up panel's generated editors; see setup_fields.h.
#include "setup/setup_fields.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpressionValidator>
#include <QSpinBox>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <type_traits>
#include <variant>

#include "experiment/config_set.h"

namespace depthlab::ui {

namespace {

constexpr double kIntLo = std::numeric_limits<int>::min();
constexpr double kIntHi = std::numeric_limits<int>::max();
constexpr double kDoubleTop = 1e6;  // a double spin box's top where neither table nor hint says

const std::map<std::string, FieldHint>& hints() {
  // {lo, hi, decimals, step, suffix, lowest}
  static const std::map<std::string, FieldHint> h = {
      {"model.dModel", {8, 16384}},
      {"model.nLayers", {-1e300, 512}},
      {"model.nHeads", {0, 256}},  // the table states no range: validate() says "must be positive"
      {"model.dFF", {-1e300, 65536}},
      {"model.seqLen", {-1e300, 8192}},
      {"model.embedStd", {0.0001, 2.0, 4}},
      {"options.mixLnAlpha", {-1e300, 1e300, 2, 0.05}},
      {"options.layerScaleInit", {-1e300, 1e300, -1, 0, "", "", true}},
      {"options.lnsLearnableLr", {-1e300, 1e300, -1, 0, "", "", true}},
      {"options.dytAlphaAttn", {-1e300, 1e300, 2, 0.1, "", "by width"}},
      {"options.dytAlphaOther", {-1e300, 1e300, 2, 0.1, "", "by width"}},
      {"optim.lr", {-1e300, 1.0, 6, 1e-4}},
      // Values over orders of magnitude (the Advanced section's): typed as text, so 1e-8 is
      // not shown (and read back) as 0.000000.
      {"model.normEps", {-1e300, 1e300, -1, 0, "", "", true}},
      {"model.ropeBase", {-1e300, 1e300, -1, 0, "", "", true}},
      {"optim.eps", {-1e300, 1e300, -1, 0, "", "", true}},
      // What 0 means, in the box (the table's help says it too).
      {"model.nKvHeads", {-1e300, 256, -1, 0, "", "= heads"}},
      {"model.headDim", {-1e300, 4096, -1, 0, "", "width / heads"}},
      {"run.checkpointEvery", {-1e300, 1e7, -1, 0, "", "by wall time only"}},
      {"probes.jacobianEvery", {-1e300, 1e6, -1, 0, "", "never"}},
      {"optim.steps", {-1e300, 1e7}},
      {"optim.scheduleSteps", {-1e300, 1e7, -1, 0, "", "all steps"}},
      {"optim.warmupSteps", {-1e300, 1e7}},
      {"optim.batchSize", {-1e300, 65536}},
      {"optim.gradAccum", {-1e300, 4096}},
      {"data.tokenizerSampleMB", {-1e300, 100000, -1, 0, " MB"}},
      {"run.processes", {-1e300, 64}},
      {"run.threads", {-1e300, 256}},
      {"run.evalEvery", {-1e300, 1e6}},
      {"run.checkpointMinutes", {-1e300, 10000, 1}},
      {"run.checkpointKeep", {-1e300, 1000}},
      {"probes.forwardEvery", {-1e300, 1e6}},
      {"probes.angularMatrixEvery", {-1e300, 1e6}},
      {"probes.lensEvery", {-1e300, 1e6}},
      {"probes.pruningEvery", {-1e300, 1e6}},
      {"probes.pruneSequences", {-1e300, 1e6, -1, 0, "", "all"}},
  };
  return h;
}

template <typename T>
constexpr bool kWhole = std::is_integral_v<T> && !std::is_same_v<T, bool>;

}  // namespace

FieldHint setupHint(const std::string& path) {
  const auto it = hints().find(path);
  return it == hints().end() ? FieldHint{} : it->second;
}

std::pair<double, double> editorRange(const experiment::ConfigField& field) {
  const FieldHint hint = setupHint(field.path());
  double lo = hint.lo, hi = hint.hi;
  if (field.range) {
    lo = std::max(lo, field.range->lo);
    hi = std::min(hi, field.range->hi);
  }
  experiment::ExperimentConfig probe;
  const bool whole = !std::holds_alternative<double*>(field.ref(probe));
  if (whole) {
    // An open end moves to the next whole number inside.
    const bool loOpen = field.range && field.range->loOpen && lo == field.range->lo;
    const bool hiOpen = field.range && field.range->hiOpen && hi == field.range->hi;
    lo = std::max(kIntLo, loOpen ? std::floor(lo) + 1 : std::ceil(lo));
    hi = std::min(kIntHi, hiOpen ? std::ceil(hi) - 1 : std::floor(hi));
  } else {
    // An open end stays: the box offers it and validate() names the rule.
    lo = std::max(lo, -kDoubleTop);
    hi = std::min(hi, kDoubleTop);
  }
  return {lo, hi};
}

QWidget* makeFieldEditor(const experiment::ConfigField& field) {
  const FieldHint hint = setupHint(field.path());
  const auto [lo, hi] = editorRange(field);
  experiment::ExperimentConfig probe;
  QWidget* editor = std::visit(
      [&](auto* member) -> QWidget* {
        using T = std::remove_pointer_t<decltype(member)>;
        if constexpr (std::is_same_v<T, bool>) {
          return new QCheckBox(QString::fromUtf8(field.label));
        } else if constexpr (std::is_same_v<T, int>) {
          auto* s = new QSpinBox;
          s->setRange(static_cast<int>(lo), static_cast<int>(hi));
          // A number typed outside the range becomes the nearest allowed one when the focus
          // leaves; setup_messages.h says so while it is typed.
          s->setCorrectionMode(QAbstractSpinBox::CorrectToNearestValue);
          s->setSuffix(QString::fromUtf8(hint.suffix));
          s->setSpecialValueText(QString::fromUtf8(hint.lowest));
          if (hint.step > 0) s->setSingleStep(static_cast<int>(hint.step));
          return s;
        } else if constexpr (std::is_same_v<T, double>) {
          if (hint.text) return new QLineEdit;  // read by the --set parser: the table's range
          auto* s = new QDoubleSpinBox;
          s->setDecimals(hint.decimals >= 0 ? hint.decimals : 6);
          s->setRange(lo, hi);
          s->setSuffix(QString::fromUtf8(hint.suffix));
          s->setSpecialValueText(QString::fromUtf8(hint.lowest));
          if (hint.step > 0) s->setSingleStep(hint.step);
          return s;
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (field.choices.values.empty()) return new QLineEdit;
          auto* combo = new QComboBox;
          for (const auto& v : field.choices.values) combo->addItem(QString::fromStdString(v));
          return combo;
        } else {  // int64: more digits than a spin box holds
          auto* edit = new QLineEdit;
          const bool negative = !field.range || field.range->lo < 0;
          edit->setValidator(new QRegularExpressionValidator(
              QRegularExpression(negative ? QStringLiteral("-?[0-9]{0,19}")
                                          : QStringLiteral("[0-9]{0,19}")),
              edit));
          return edit;
        }
      },
      field.ref(probe));
  editor->setObjectName(QString::fromStdString(field.path()));
  editor->setToolTip(QString::fromUtf8(field.help));
  return editor;
}

void FieldEditors::add(const std::string& path, QWidget* editor) {
  const auto* field = experiment::configField(path);
  if (!field || !editor) return;  // a path the table lacks: nothing to move
  editor->setObjectName(QString::fromStdString(path));
  editor->setToolTip(QString::fromUtf8(field->help));
  m_editors.emplace_back(field, editor);
}

QWidget* FieldEditors::make(const std::string& path) {
  const auto* field = experiment::configField(path);
  if (!field) return nullptr;
  QWidget* editor = makeFieldEditor(*field);
  m_editors.emplace_back(field, editor);
  return editor;
}

QWidget* FieldEditors::editor(const std::string& path) const {
  for (const auto& [field, editor] : m_editors) {
    if (field->path() == path) return editor;
  }
  return nullptr;
}

void FieldEditors::show(const experiment::ExperimentConfig& config) const {
  auto c = config;  // the table's accessors take a mutable config
  for (const auto& [field, editor] : m_editors) {
    std::visit(
        [&, w = editor](auto* member) {
          using T = std::remove_pointer_t<decltype(member)>;
          if (auto* box = qobject_cast<QCheckBox*>(w)) {
            if constexpr (std::is_same_v<T, bool>) box->setChecked(*member);
          } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
            if constexpr (kWhole<T>)
              spin->setValue(
                  static_cast<int>(std::clamp<T>(*member, spin->minimum(), spin->maximum())));
          } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) {
            if constexpr (std::is_same_v<T, double>) dspin->setValue(*member);
          } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            if constexpr (std::is_same_v<T, std::string>) {
              const QString v = QString::fromStdString(*member);
              int i = combo->findData(v);
              if (i < 0) i = combo->findText(v);
              if (i >= 0)
                combo->setCurrentIndex(i);
              else if (combo->isEditable())
                combo->setCurrentText(v);
              else
                combo->setCurrentIndex(0);
            }
          } else if (auto* edit = qobject_cast<QLineEdit*>(w)) {
            if constexpr (std::is_same_v<T, std::string>)
              edit->setText(QString::fromStdString(*member));
            else if constexpr (std::is_same_v<T, double>)
              edit->setText(QString::number(*member, 'g', QLocale::FloatingPointShortest));
            else if constexpr (kWhole<T>)
              edit->setText(QString::number(static_cast<qlonglong>(*member)));
          }
        },
        field->ref(c));
  }
}

void FieldEditors::read(experiment::ExperimentConfig& c,
                        std::vector<experiment::ConfigIssue>* problems) const {
  for (const auto& [field, editor] : m_editors) {
    std::visit(
        [&, f = field, w = editor](auto* member) {
          using T = std::remove_pointer_t<decltype(member)>;
          if (auto* box = qobject_cast<QCheckBox*>(w)) {
            if constexpr (std::is_same_v<T, bool>) *member = box->isChecked();
          } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
            if constexpr (kWhole<T>) *member = static_cast<T>(spin->value());
          } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) {
            if constexpr (std::is_same_v<T, double>) *member = dspin->value();
          } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            const QVariant data = combo->currentData();
            const QString text = data.isValid() ? data.toString() : combo->currentText().trimmed();
            if constexpr (std::is_same_v<T, std::string>) *member = text.toStdString();
          } else if (auto* edit = qobject_cast<QLineEdit*>(w)) {
            const std::string text = edit->text().trimmed().toStdString();
            if constexpr (std::is_same_v<T, std::string>) {
              *member = text;
            } else {
              // Numbers typed as text: the --set parser, with the table's checks.
              try {
                experiment::setConfigField(c, f->path(), text, f->path());
              } catch (const std::exception& e) {
                if (problems) problems->push_back({f->path(), e.what()});
              }
            }
          }
        },
        field->ref(c));
  }
}

}  // namespace depthlab::ui
