// The set-up panel's editors generated from the config table (experiment/config_fields.h): the
// widget from the field's type (int: spin box, int64: line edit, double: double spin box or,
// for a value over orders of magnitude, a line edit, bool:
// check box, string with choices: combo box of exactly those, other strings: line edit), its
// range from the field's range, its object name the field's path, its tooltip the field's help
// and a check box's text its label. A few form hints (setupHint) narrow a range to what the
// form offers (a spin box needs a finite top), or set decimals, a suffix or a word for the
// lowest value. FieldEditors moves values both ways between a config and any editor named by a
// path, generated or hand-made (corpus picker, tokenizer, device). Lays nothing out: the panel's
// sections (setup_panel_sections.cpp) place the editors.
#pragma once

#include <QString>

#include <string>
#include <utility>
#include <vector>

#include "experiment/config_fields.h"

class QWidget;

namespace depthlab::ui {

/// What the form offers beyond the table: a narrower range (lo/hi where given), decimals, step,
/// suffix, a text for the lowest value ("all steps" for 0), or a double typed as text.
struct FieldHint {
  double lo = -1e300, hi = 1e300;
  int decimals = -1;    // double spin boxes; -1: 6
  double step = 0;      // 0: the box's own
  const char* suffix = "";
  const char* lowest = "";  // special value text
  bool text = false;        // a double typed as text (a value over orders of magnitude, 1e-6)
};
/// The hint for `path` (defaults when the form has none).
FieldHint setupHint(const std::string& path);

/// The editor for `field`, with its object name, tooltip, range and items set. Int: QSpinBox;
/// int64: QLineEdit taking digits; double: QDoubleSpinBox (QLineEdit where the hint says text,
/// read with the table's checks); bool: QCheckBox (its text the label);
/// string with choices: QComboBox of the choices; other strings: QLineEdit.
QWidget* makeFieldEditor(const experiment::ConfigField& field);
/// The range an int / double editor of `field` offers: the table's, narrowed by setupHint and to
/// what the widget holds (an int, a finite double).
std::pair<double, double> editorRange(const experiment::ConfigField& field);

/// Editors of config fields, each named by its field's path.
class FieldEditors {
 public:
  /// Registers a hand-made `editor` for `path` (a field of configFields()), giving it the
  /// path as object name and the field's help as tooltip.
  void add(const std::string& path, QWidget* editor);
  /// A generated editor for `path`, registered.
  QWidget* make(const std::string& path);
  /// The editor of `path`; nullptr when the form does not show it.
  QWidget* editor(const std::string& path) const;
  /// Every editor shows `c`'s value.
  void show(const experiment::ExperimentConfig& c) const;
  /// Every editor's value into `c`. A text that is not a value of its field (a seed "12a") leaves
  /// `c`'s value and adds an issue naming the field to `problems` (when given).
  void read(experiment::ExperimentConfig& c, std::vector<experiment::ConfigIssue>* problems) const;
  const std::vector<std::pair<const experiment::ConfigField*, QWidget*>>& all() const { return m_editors; }

 private:
  std::vector<std::pair<const experiment::ConfigField*, QWidget*>> m_editors;
};

}  // namespace depthlab::ui
