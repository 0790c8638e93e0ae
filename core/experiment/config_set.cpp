// See config_set.h.
#include "experiment/config_set.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "experiment/config_fields.h"
#include "util/config_error.h"

namespace depthlab::experiment {

namespace {

using util::ConfigError;

std::string fieldsOf(const std::string& section) {
  std::string out;
  for (const auto& f : configFields()) {
    if (section == f.section) out += (out.empty() ? "" : ", ") + f.path();
  }
  return out;
}

[[noreturn]] void unknownPath(const std::string& path, const std::string& what) {
  const std::string section = path.substr(0, path.find('.'));
  const std::string fields = fieldsOf(section);
  if (!fields.empty()) throw ConfigError(what + ": no field '" + path + "' (" + section + "'s: " + fields + ")");
  std::string sections;
  for (const auto& s : configSections()) sections += (sections.empty() ? "" : ", ") + s;
  throw ConfigError(what + ": no field '" + path + "' (paths are section.key; sections: " + sections +
                    "; `depthlab-cli presets --json` shows every field)");
}

// The number `text` holds, all of it; nullopt otherwise.
std::optional<double> realOf(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The whole number `text` holds, exactly (no rounding through a double); nullopt otherwise,
// out_of_range when it does not fit 64 bits.
std::optional<long long> wholeOf(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size()) return std::nullopt;
  if (errno == ERANGE) throw std::out_of_range(text);
  return v;
}

std::optional<bool> boolOf(const std::string& t) {
  if (t == "true" || t == "1" || t == "yes" || t == "on") return true;
  if (t == "false" || t == "0" || t == "no" || t == "off") return false;
  return std::nullopt;
}

}  // namespace

void setConfigField(ExperimentConfig& c, const std::string& path, const std::string& value,
                    const std::string& what) {
  const ConfigField* f = configField(path);
  if (!f) unknownPath(path, what);
  const FieldRef ref = f->ref(c);
  std::visit(
      [&](auto* member) {
        using T = std::remove_pointer_t<decltype(member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          *member = value;
        } else if constexpr (std::is_same_v<T, bool>) {
          const auto b = boolOf(value);
          if (!b) throw ConfigError(what + ": '" + value + "' is not true or false");
          *member = *b;
        } else if constexpr (std::is_integral_v<T>) {
          std::optional<long long> v;
          try {
            v = wholeOf(value);
          } catch (const std::out_of_range&) {
            throw ConfigError(what + ": " + value + " is out of range");
          }
          if (!v) throw ConfigError(what + ": '" + value + "' is not a whole number");
          if (*v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) {
            throw ConfigError(what + ": " + value + " is out of range");
          }
          if (f->range && !f->range->contains(static_cast<double>(*v))) {
            throw ConfigError(what + ": " + f->range->rule + " (got " + value + ")");
          }
          *member = static_cast<T>(*v);
        } else {
          const auto v = realOf(value);
          if (!v) throw ConfigError(what + ": '" + value + "' is not a number");
          if (f->range && !f->range->contains(*v)) {
            throw ConfigError(what + ": " + f->range->rule + " (got " + value + ")");
          }
          *member = static_cast<T>(*v);
        }
      },
      ref);
}

void applyConfigAssignment(ExperimentConfig& c, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError("--set '" + assignment + "': write section.key=value, e.g. optim.lr=0.003");
  }
  const std::string path = assignment.substr(0, eq);
  setConfigField(c, path, assignment.substr(eq + 1), "--set " + path);
}

}  // namespace depthlab::experiment
