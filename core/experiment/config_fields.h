// One description per config field: its section and key (the JSON path "section.key"), the
// member it lives in, its label and help text for the set-up form, and the range validate()
// checks, or the closed set of values it takes (its choices). toJson() and configFromJson()
// (JSON both ways), validate() (ranges and choices) and the set-up panel (its editors: widget,
// range, items, label, tooltip, object name) all read this table, so a field is described once.
// Checks that involve several fields (heads divide the width, warm-up below steps, ...) and
// values that are patterns rather than a list (device cuda:N, tokenizer spm:N) stay in validate().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

/// A numeric range: lo <= v (lo < v when loOpen) and v <= hi (v < hi when hiOpen).
struct FieldRange {
  double lo = -1e300, hi = 1e300;
  bool loOpen = false, hiOpen = false;
  const char* rule = "";  // validate()'s words when v is outside: "must be at least 1"
  bool contains(double v) const;  // false for NaN
};

using FieldRef = std::variant<int*, int64_t*, double*, bool*, std::string*>;

/// The closed set of values a string field takes; empty values: any string.
struct FieldChoices {
  const char* noun = "";            // validate()'s word for the value: "norm", "optimizer"
  std::vector<std::string> values;  // in the order the form offers them
};

struct ConfigField {
  const char* section;  // "model"
  const char* key;      // "dModel"
  const char* label;    // "Width": the set-up form's label
  const char* help;     // one line for the form's tooltip
  FieldRef (*ref)(ExperimentConfig&);  // the member inside a config
  std::optional<FieldRange> range;     // checked by validate()
  FieldChoices choices = {};           // string fields with a closed set; checked by validate()

  std::string path() const { return std::string(section) + "." + key; }
  /// Whether `value` is one of the choices (always, for a field without any).
  bool offers(const std::string& value) const;
  /// validate()'s words for `value` outside the choices: "unknown norm 'x' (known: rmsnorm,
  /// layernorm)".
  std::string choiceRule(const std::string& value) const;
};

/// Every field of every section, sections in JSON order, fields in reading order.
const std::vector<ConfigField>& configFields();
/// The field at "section.key"; nullptr when there is none.
const ConfigField* configField(const std::string& path);
/// The choices of `section`'s fields that `c` does not keep to: one issue per field, naming
/// the field and every choice (what validate() reports for them).
std::vector<ConfigIssue> choiceIssues(const ExperimentConfig& c, const std::string& section);
/// Sections, in order ("model", "options", "data", "optim", "run", "probes").
const std::vector<std::string>& configSections();

}  // namespace depthlab::experiment
