// One description per config field: its section and key (the JSON path "section.key"), the
// member it lives in, its label and help text for the set-up form, and the range validate()
// checks. toJson() and configFromJson() (JSON both ways), validate() (the ranges) and the set-up
// panel (labels, tooltips, object names) all read this table, so a field is described once.
// Checks that involve several fields (heads divide the width, warm-up below steps, ...) and
// fields with a closed set of values (norm, optimizer, device, ...) stay in validate().
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

struct ConfigField {
  const char* section;  // "model"
  const char* key;      // "dModel"
  const char* label;    // "Width": the set-up form's label
  const char* help;     // one line for the form's tooltip
  FieldRef (*ref)(ExperimentConfig&);  // the member inside a config
  std::optional<FieldRange> range;     // checked by validate()

  std::string path() const { return std::string(section) + "." + key; }
};

/// Every field of every section, sections in JSON order, fields in reading order.
const std::vector<ConfigField>& configFields();
/// The field at "section.key"; nullptr when there is none.
const ConfigField* configField(const std::string& path);
/// Sections, in order ("model", "options", "data", "optim", "run", "probes").
const std::vector<std::string>& configSections();

}  // namespace depthlab::experiment
