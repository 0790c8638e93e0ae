// Setting one config field from text, by its path in the config table ("optim.lr=0.003"):
// what `train --set` does, and how train's own flags (--steps, --threads, ...) are checked, so
// a range is stated once, in config_fields.cpp. The value is read by the field's type (whole
// numbers, numbers, true/false, text) and checked against the field's range; closed sets and
// checks across fields stay in validate(). Does not touch the store.
#pragma once

#include <string>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

/// Sets the field at `path` of `c` from `value`; throws util::ConfigError starting with `what`
/// (e.g. "--set optim.lr" or "--steps"): an unknown path (naming the section's fields, or the
/// sections), text that is not a value of the field's type, a value outside its range.
void setConfigField(ExperimentConfig& c, const std::string& path, const std::string& value,
                    const std::string& what);
/// "section.key=value" -> setConfigField(c, "section.key", "value", "--set section.key").
void applyConfigAssignment(ExperimentConfig& c, const std::string& assignment);

}  // namespace depthlab::experiment
